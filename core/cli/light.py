"""What read-only commands can learn without the settings model: the backend id, and a document's text.

``import pydantic`` and building the settings models cost more than a whole ``memdesk show`` or
keyword search may take. For the built-in backends whose documents are the project's files
(:data:`FILE_BACKENDS`), neither command needs them: the backend id is read from ``config.json``
as plain JSON, and the document is read as the file backend reads it. Anything this module cannot
decide (an unreadable config, another backend) returns ``None`` and the command takes the full path,
which reports the problem as usual.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

#: Backends whose documents are the project's files and whose search is memdesk's derived index.
FILE_BACKENDS = frozenset({"file", "readonly", "qmd"})


#: memdesk's own settings file (core.settings.store.own.OWN_PATH) and Fusion's database (fusion_db.DB_PATH).
OWN_FILE = (".fusion", "memdesk", "settings.json")
FUSION_DB = (".fusion", "fusion.db")


#: The user's Fusion connections file and Fusion's home (core.settings.store.connections: CONNECTIONS_FILE,
#: FUSION_HOME_ENV): copies, so an append does not import the connections module to learn two names.
CONNECTIONS_FILE = "fusion.json"
FUSION_HOME_ENV = "MEMDESK_FUSION_HOME"

#: Largest settings file read here; a bigger one is left to the full settings code, which says why.
MAX_JSON = 1 << 20


def _json_object(path: str, root: Path) -> dict | None:
    """The JSON object in ``path`` (``{}`` when absent), ``None`` when it is not one.

    Project files are untrusted: a FIFO or device is never waited on (``O_NONBLOCK``, regular files
    only), a file over :data:`MAX_JSON` is not read, and a link out of the project is not followed;
    each gives ``None``, so the full settings code takes over and names the problem.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        real, top = os.path.realpath(path), os.path.realpath(root)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_JSON or not real.startswith(top + os.sep):
            return None
        doc = json.loads(os.read(fd, MAX_JSON + 1).decode("utf-8") or "{}")
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        os.close(fd)
    return doc if isinstance(doc, dict) else None


def _simple_store(root: Path) -> bool:
    """Whether the settings are in ``config.json`` alone: no Fusion database and no running Fusion to ask."""
    if os.path.exists(os.path.join(root, *FUSION_DB)):
        return False
    from core.storage import userdirs

    fusion_home = Path(os.environ.get(FUSION_HOME_ENV) or Path.home() / ".fusion")  # connections.fusion_home()
    return not (userdirs.user_config_dir() / CONNECTIONS_FILE).exists() and \
        not (fusion_home / "settings.json").exists()


def configured_backend(root: Path) -> str | None:
    """The backend id memdesk's own settings (else ``config.json``) name, or the layout's default, read as
    plain JSON.

    ``None`` when a file cannot be read as a settings object: the full settings code then says why.
    """
    own = _json_object(os.path.join(root, *OWN_FILE), root)
    doc = _json_object(os.path.join(root, ".fusion", "config.json"), root)
    if own is None or doc is None:
        return None
    settings: dict = doc["settings"] if isinstance(doc.get("settings"), dict) else doc
    backend = own.get("memoryBackend", settings.get("memoryBackend", settings.get("memoryBackendType")))
    if backend is None:
        from core.documents.layout import detect_layout

        return "qmd" if detect_layout(root) == "layered" else "file"
    return backend if isinstance(backend, str) else None


def file_backend(root: Path) -> str | None:
    """The configured backend when it is one of :data:`FILE_BACKENDS`, else ``None``."""
    backend = configured_backend(root)
    return backend if backend in FILE_BACKENDS else None


def read_document(root: Path, relpath: str, backend_id: str) -> str:
    """Read a document as the file backends do (``""`` when absent); ``MemoryBackendError`` otherwise."""
    from core.errors import MemoryBackendError, PathOutsideRootError
    from core.storage import fileio

    try:
        path = fileio.resolve_in_root(root, relpath)
    except PathOutsideRootError as exc:
        raise MemoryBackendError(str(exc), "INVALID_CONFIG", backend_id, exc) from exc
    return fileio.read_text(path, backend_id) or ""


# -- the settings of an append, without the settings model ---------------------------------------------
# Bounds and default of core.settings (tests/core/cli/test_cli_imports.py keeps the two in step).
DEFAULT_INSIGHT_SCHEDULE = "0 2 * * *"
_INT_BOUNDS = {"insightExtractionMinIntervalMs": (0, 3650 * 86_400_000), "historyRetentionDays": (0, 36_500),
               "historyMinVersions": (1, 10_000)}
_BOOLS = ("memoryEnabled", "insightExtractionEnabled")
#: Settings only the model checks (cron schedules, enums, folders): their presence takes the full path.
_MODEL_ONLY = ("memoryDreamsEnabled", "memoryDreamsSchedule", "memoryAutoSummarizeEnabled",
               "memoryAutoSummarizeThresholdChars", "memoryAutoSummarizeSchedule", "memoryBackupEnabled",
               "memoryBackupSchedule", "memoryBackupRetention", "memoryBackupDir", "memoryBackupScope",
               "agentMemoryInclusionMode")
_OWN = ("memoryBackend", "memoryBackendConfig", "historyRetentionDays", "historyMinVersions", "memdeskBudgetConsumers")
_FIELDS = {"memoryEnabled": "memory_enabled", "memoryBackend": "memory_backend",
           "memoryBackendConfig": "memory_backend_config", "insightExtractionEnabled": "insight_extraction_enabled",
           "insightExtractionSchedule": "insight_extraction_schedule",
           "insightExtractionMinIntervalMs": "insight_extraction_min_interval_ms",
           "historyRetentionDays": "history_retention_days", "historyMinVersions": "history_min_versions",
           "memdeskBudgetConsumers": "memdesk_budget_consumers", "memoryBackendType": "memory_backend_type"}


class LightSettings:
    """A project's settings read as plain JSON, for a command on a file backend (``memdesk append``).

    It answers what :class:`core.project.Project` and the budget check ask (``memory_enabled``, the
    backend, ``memdesk_budget_consumers``) and builds the full :class:`core.settings.ProjectSettings`
    for anything else. Made only from settings :func:`light_settings` found valid as the model would.
    """

    def __init__(self, data: dict[str, object], raw: dict[str, object] | None = None) -> None:
        self._data = data
        self._raw = {**(raw or {}), **data}
        self.memory_enabled = data.get("memoryEnabled", True)
        self.memory_backend = data.get("memoryBackend", "file")
        self.memory_backend_config = data.get("memoryBackendConfig", {})
        self.memdesk_budget_consumers = data.get("memdeskBudgetConsumers", {})
        self.model_fields_set = {_FIELDS[key] for key in data}
        self._full: object = None

    def __getattr__(self, name: str) -> object:
        if name.startswith("_"):
            raise AttributeError(name)
        if self._full is None:
            from core.settings.model import coerce_settings

            self._full = coerce_settings(self._raw)
        return getattr(self._full, name)


def light_settings(root: Path) -> LightSettings | None:
    """The project's settings when its backend is one of :data:`FILE_BACKENDS` and every setting given is
    plainly valid; ``None`` otherwise (the full settings code then reads them, and names any problem)."""
    from core.storage import fileio

    if not _simple_store(root):
        return None
    try:
        text = fileio.read_in_root(root, ".fusion/config.json")
        doc = json.loads(text) if text and text.strip() else {}
        own_text = fileio.read_in_root(root, "/".join(OWN_FILE))
        own = json.loads(own_text) if own_text and own_text.strip() else {}
    except Exception:  # unreadable, not JSON, nested too deep …: the settings code says why
        return None
    if not isinstance(doc, dict) or not isinstance(own, dict):
        return None
    if isinstance(doc.get("settings"), dict) and ("nextId" in doc or len(doc) <= 2):
        raw = doc["settings"]
    elif "settings" in doc and "nextId" in doc:
        return None
    else:
        raw = doc
    raw = {**raw, **{k: v for k, v in own.items() if k in _OWN}}
    data = _plain_settings(raw)
    if data is None:
        return None
    settings = LightSettings(data, raw)
    backend = settings.memory_backend
    if "memoryBackend" not in data:
        from core.documents.layout import detect_layout

        backend = "qmd" if detect_layout(root) == "layered" else "file"
    return settings if backend in FILE_BACKENDS else None


def _plain_settings(raw: dict[str, object]) -> dict[str, object] | None:
    """``raw``'s known settings (camelCase, ``None`` dropped, the legacy backend key read) when each is
    valid the way :class:`core.settings.ProjectSettings` checks it; ``None`` when any needs the model."""
    data = {k: v for k, v in raw.items() if v is not None}
    if "memoryBackend" not in data and data.get("memoryBackendType"):
        data["memoryBackend"] = data["memoryBackendType"]
    if any(key in _FIELDS.values() or key in _MODEL_ONLY for key in data):  # snake_case keys: the model's business
        return None
    data = {k: v for k, v in data.items() if k in _FIELDS}
    for key, value in data.items():
        if key in _BOOLS:
            ok = type(value) is bool
        elif key in _INT_BOUNDS:
            low, high = _INT_BOUNDS[key]
            ok = type(value) is int and low <= value <= high
        elif key == "memoryBackend":
            ok = isinstance(value, str) and bool(value.strip())
        elif key == "memoryBackendType":
            ok = isinstance(value, str)
        elif key == "memoryBackendConfig":
            ok = isinstance(value, dict)
        elif key == "insightExtractionSchedule":
            ok = value == DEFAULT_INSIGHT_SCHEDULE  # another schedule needs croniter to check
        else:  # memdeskBudgetConsumers: {path: [consumer ids]}
            ok = isinstance(value, dict) and all(
                type(k) is str and isinstance(v, list) and all(type(i) is str for i in v) for k, v in value.items())
        if not ok:
            return None
    return data
