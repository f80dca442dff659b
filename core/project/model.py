"""One open project (design §3a): its documents, settings, backend, insights and history, under every surface.

The GUI, the CLI and the servers all work through :class:`Project`. Every memory read and write of
every operation goes through the resolved backend for that document, so the ``readonly`` backend
refuses all of them and a backend that keeps memory itself (``sqlite`` without its mirror) still
serves what it holds. Each operation returns what it changed (:class:`Changes`) so a surface knows
what to refresh. Constructing a project creates nothing on disk.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.backends.base import MemoryBackend, install_import_screen
from core.backends.registry import MemoryBackendRegistry, default_registry, resolve_memory_backend
from core.documents.layout import Layout
from core.errors import MemoryBackendError, SettingsError
from core.firewall import lazy_screen, screen_import
from core.logs import get_logger
from core.project.history import _MAX_VERSION_ID as _MAX_VERSION_ID
from core.project.history import ProjectHistory
from core.project.reads import _BAD_QUERY_CHAR as _BAD_QUERY_CHAR
from core.project.reads import MAX_QUERY as MAX_QUERY
from core.project.results import AppendLayer as AppendLayer
from core.project.results import AppendOutcome as AppendOutcome
from core.project.results import AppendStatus as AppendStatus
from core.project.results import Changes
from core.project.results import MemoryDisabledError as MemoryDisabledError
from core.project.results import WriteResult as WriteResult
from core.storage import fileio
from core.storage.pipeline import Screen

if TYPE_CHECKING:  # core.settings imports pydantic: a project given its settings never needs it
    from core.settings.model import ProjectSettings

CONFIG_PATH = ".fusion/config.json"  # core.settings.CONFIG_PATH (a test keeps the two in step)

log = get_logger(__name__)
install_import_screen(screen_import)  # mirror imports and other hosts' changes pass the firewall too


class Project(ProjectHistory):
    """One project folder: layout, settings, resolved backend, and every memory operation over them.

    Its operations are in parts by role: reads and search (:mod:`core.project.reads`), writes and appends
    (:mod:`core.project.writes`), history (:mod:`core.project.history`); set-up, settings and the backend here.
    """

    #: Who writes when a caller names no author (the app and the CLI set it: "operator:USER", "cli:USER"),
    #: so History's Author column is filled for their writes too.
    default_author: str | None = None

    def __init__(self, root: str | os.PathLike[str], registry: MemoryBackendRegistry | None = None, *,
                 settings: ProjectSettings | None = None) -> None:
        root_p = Path(root).expanduser()
        if not root_p.is_dir():
            raise MemoryBackendError(f"project folder {str(root)!r} does not exist or is not a folder",
                                     "NOT_FOUND", "file")
        self.root = root_p.resolve()
        self.closed = False
        #: The write pipeline's screen stage (:mod:`core.storage.pipeline`): the firewall installs its own here.
        self.screen: Screen = lazy_screen(self.root)  # the memory firewall (core.firewall, issue 20)
        self.registry = registry or default_registry()
        self.layout = Layout(self.root)
        self.settings_error: SettingsError | None = None
        #: Where Fusion's settings of this project live (:class:`core.settings.store.StoreInfo`), once read.
        self.settings_store: Any = None
        self.settings = settings if settings is not None else self._load_settings()
        self.backend: MemoryBackend = resolve_memory_backend(self.settings, self.root, self.registry)

    # -- set-up ------------------------------------------------------------------------------------
    def _load_settings(self) -> ProjectSettings:
        from core.settings.model import read_settings
        from core.settings.store import detect_store

        try:
            self.settings_error = None
            store = detect_store(self.root)
            self.settings_store = store.info
            return read_settings(self.root, store).settings
        except SettingsError as exc:
            from core.settings.model import ProjectSettings

            self.settings_error = exc
            log.warning("settings unreadable, using defaults: %s", exc)
            return ProjectSettings()

    def reload(self) -> Changes:
        """Read the settings again and re-resolve the backend (after a change made elsewhere)."""
        self.layout = Layout(self.root)
        self.settings = self._load_settings()
        self._replace_backend(resolve_memory_backend(self.settings, self.root, self.registry))
        return Changes(settings=True)

    def adopt_settings(self, settings: ProjectSettings, store: Any, error: SettingsError | None = None) -> Changes:
        """Take settings read elsewhere (a watcher noticed a change made outside this process), re-resolving
        the backend when its choice moved."""
        before = self.settings
        self.settings, self.settings_store, self.settings_error = settings, store, error
        if (settings.memory_backend, settings.memory_backend_config) != (
                before.memory_backend, before.memory_backend_config):
            self._replace_backend(resolve_memory_backend(settings, self.root, self.registry))
        return Changes(settings=True)

    def _replace_backend(self, backend: MemoryBackend) -> None:
        old, self.backend = self.backend, backend
        if old is not backend:
            try:
                old.shutdown()
            except Exception as exc:
                log.warning("backend %s shutdown failed: %s", old.id, exc)

    def close(self) -> None:
        """Release the backend's resources (a closed project is never handed out again by :func:`open_project`)."""
        self.closed = True
        try:
            self.backend.shutdown()
        except Exception as exc:
            log.warning("backend %s shutdown failed: %s", self.backend.id, exc)

    # -- settings ----------------------------------------------------------------------------------
    def update_settings(self, patch: Mapping[str, Any], *, base: Mapping[str, Any] | None = None) -> Changes:
        """Save a settings patch (``SettingsError`` on bad input, nothing changed) and re-resolve the backend.

        Each key goes where it lives (:func:`core.settings.update_settings`; ``base``: the values the
        change was made against, for the stale-write check). Switching memory on creates the long-term
        file when it is missing (never fatal). The extraction schedule is kept in step by
        :class:`core.store.ProjectStore`, which sits above.
        """
        from core.settings.model import update_settings_read

        before = self.settings
        read = update_settings_read(self.root, patch, base=base)
        self.settings, self.settings_store = read.settings, read.store
        self.settings_error = None
        changes = Changes(settings=True)
        if (self.settings.memory_backend, self.settings.memory_backend_config) != (
                before.memory_backend, before.memory_backend_config):
            self._replace_backend(resolve_memory_backend(self.settings, self.root, self.registry))
        if self.settings.memory_enabled and not before.memory_enabled:
            try:
                if self.writable() is None and not self.exists():
                    changes = changes | self.create_document()
            except Exception as exc:  # non-fatal: the setting is saved; the file can be created later
                log.warning("memory file not created (non-fatal): %s", exc)
        return changes


# -- a small per-process cache for the seed-named wrappers ------------------------------------------
_cache: dict[tuple[int, str, int], tuple[str, Project]] = {}
_cache_lock = threading.Lock()


def _config_stamp(root: Path) -> str:
    try:  # untrusted: a FIFO or device is never waited on, and the size is capped (fileio.read_bytes)
        data = fileio.read_bytes(root / CONFIG_PATH, max_size=fileio.MAX_FILE_SIZE) or b""
    except MemoryBackendError as exc:
        data = f"unreadable: {exc.code}".encode()
    layered = "L" if (root / ".fusion" / "memory").is_dir() else "S"
    from core.settings.store.stamp import local_stamp  # memdesk's own settings and Fusion's database too

    return layered + fileio.sha256_hex(data) + local_stamp(root)


def open_project(root: str | os.PathLike[str], registry: MemoryBackendRegistry | None = None) -> Project:
    """The one :class:`Project` of ``root`` in this process (issue 19: one project model, so one backend, per root).

    The GUI's session, each server and the seed-named functions (``read_working_memory(root)`` …) all
    get the same object. When the project's settings or layout changed since (its stamp), the same
    project reloads them and re-resolves its backend instead of a second model being made. A project
    with its own ``registry`` (a test's, a plugin host's) is shared only with callers giving the same one.
    """
    real = Path(root).expanduser().resolve()
    key = (os.getpid(), str(real), id(registry) if registry is not None else 0)
    stamp = _config_stamp(real)
    with _cache_lock:
        hit = _cache.get(key)
    if hit is not None and not hit[1].closed:
        if hit[0] != stamp:
            hit[1].reload()
            with _cache_lock:
                _cache[key] = (stamp, hit[1])
        return hit[1]
    project = Project(real, registry)
    with _cache_lock:
        raced = _cache.get(key)
        if raced is not None and raced is not hit and not raced[1].closed:  # another thread made it meanwhile
            winner = raced[1]
        else:
            _cache[key] = (stamp, project)
            winner = project
    if winner is not project:
        project.close()
    return winner


def adopted(project: Project) -> bool:
    """Whether ``project`` is the one :func:`open_project` hands out for its root."""
    with _cache_lock:
        return any(hit[1] is project for hit in _cache.values())


def forget_project(root: str | os.PathLike[str]) -> None:
    """Drop (and close) the shared projects of ``root``: the next :func:`open_project` builds a new one."""
    real = str(Path(root).expanduser().resolve())
    with _cache_lock:
        keys = [k for k in _cache if k[0] == os.getpid() and k[1] == real]
        hits = [_cache.pop(k) for k in keys]
    for hit in hits:
        hit[1].close()
