"""The write pipeline's door for memdesk's own state files (issue 19, item 1; design §6 "One door").

Memory documents go through :mod:`core.storage.pipeline`; everything memdesk keeps for itself (its settings,
Fusion's ``config.json`` copy, proposals, the firewall's policy and inbox, tokens, bindings…) goes
through here, with the same stages:

* **what**: only a file named in :data:`REGISTRY`. The name comes from the code, never from input; a
  family (``proposal``, ``fusion-cache``) takes a key that must match its pattern (no ``/``, no ``..``).
* **where**: a project file must stay inside the project, a user file inside the user's config folder
  (:func:`core.storage.userdirs.user_config_dir`): every folder on the way and the file itself are resolved,
  a link out is refused, and so is a target that is not a regular file or has other hard links.
  A refusal is one line naming the file, and nothing is created or changed.
* **lock** (the file's own lock, reentrant) and **read** under it when the caller gives the hash it
  started from (``CONFLICT`` when the file changed since).
* **write** once, atomically (temp file in the same folder, fsync, rename).
* **record**: files kept with history (``history=True``, such as the settings) keep their previous
  version in ``history.db`` with source and author; every change is one line in the scope's state log
  (:data:`LOG_NAME`: when, which file, writer, source, size, hash), read back by :func:`read_log`.
* **report**: a :class:`StateWrite` saying what changed.

A CI test (``tests/core/test_write_contract.py``) fails on any module that calls the file layer's
writers (``fileio.atomic_write_bytes``, ``fileio.replace_text``…) for a state file around this door.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, NamedTuple

from core.errors import MemoryBackendError, PathOutsideRootError
from core.logs import get_logger
from core.storage import fileio, userdirs
from core.storage.locks import FileLock, file_lock
from core.storage.safepath import file_kind, os_reason, resolve_both_in_root

log = get_logger(__name__)

Scope = Literal["project", "user", "fusion-home"]
#: Fusion's home folder (its global ``settings.json``): ``$MEMDESK_FUSION_HOME``, else ``$HOME/.fusion``.
FUSION_HOME_ENV = "MEMDESK_FUSION_HOME"
KiB, MiB = 1024, 1024 * 1024
# Key patterns as text, compiled (and cached by ``re``) when a key is first checked: an append checks none.
_ID = r"^[0-9A-Za-z][0-9A-Za-z-]{0,63}$"  # core.proposals.model.PROPOSAL_ID_RE
_DIGEST = r"^[0-9a-f]{32}$"
#: A mirror note's key: the mirror's key (a project key, or ``sqlite``), "/", the document's path with "/" as "__".
#: One slash only, and every name ends in the note's suffix, so a key can name no folder and no other file.
_MIRROR = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}/[A-Za-z0-9._-]{1,240}$"


class StateFile:
    """One of memdesk's named state files: where it lives, its size limit and how its changes are kept.

    A plain class, not a dataclass: this module is imported by every ``memdesk append``, and building a
    dataclass costs a short command more than the rest of this module.
    """

    __slots__ = ("name", "scope", "path", "what", "max_size", "history", "new_file_mode", "key")

    def __init__(self, name: str, scope: Scope, path: str, what: str, max_size: int = MiB, *, history: bool = False,
                 new_file_mode: int | None = None, key: str | None = None) -> None:
        self.name, self.scope, self.what = name, scope, what
        self.path = path  # relative to the project root or to the user's config folder; "{key}" in a family
        self.max_size = max_size
        self.history = history  # keep the previous version in history.db (project scope)
        self.new_file_mode = new_file_mode  # a new file's mode less the umask (None: 0600)
        self.key = key  # the pattern a family's keys must match

    def relpath(self, key: str | None = None) -> str:
        """The file's path for ``key`` (a family) or its one path; :class:`StateRefused` on a bad key."""
        if self.key is None:
            if key is not None:
                raise StateRefused(f"{self.what} takes no key; nothing was written")
            return self.path
        if not isinstance(key, str) or not re.match(self.key, key):
            raise StateRefused(f"{_shown(key)} is not a valid name for {self.what}; nothing was written")
        return self.path.replace("{key}", key)


_M = fileio.MEMDESK_DIR
REGISTRY: dict[str, StateFile] = {f.name: f for f in (
    # -- in the project (.fusion/memdesk/ and Fusion's own files memdesk writes) --------------------------
    StateFile("settings", "project", f"{_M}/settings.json", "memdesk's settings", 256 * KiB, history=True),
    StateFile("fusion-config", "project", ".fusion/config.json", "the project settings", MiB, history=True,
              new_file_mode=0o666),  # Fusion's file, which Fusion and its agents read: created as Fusion creates it
    StateFile("schedule-state", "project", f"{_M}/schedule-state.json", "the extraction schedule's state", 64 * KiB),
    StateFile("automations", "project", f"{_M}/automations.json", "the automations", 256 * KiB, history=True),
    StateFile("firewall-policy", "project", f"{_M}/firewall-policy.json", "the firewall policy", 256 * KiB),
    StateFile("inbox", "project", f"{_M}/inbox.json", "the firewall inbox", 32 * MiB),
    StateFile("consolidation-policy", "project", f"{_M}/consolidation.json", "the consolidation policy", 64 * KiB,
              history=True),
    StateFile("consolidation-state", "project", f"{_M}/consolidation-state.json", "the consolidation state",
              64 * KiB),
    StateFile("proposal", "project", f"{_M}/proposals/{{key}}.json", "an extraction proposal", 4 * MiB,
              history=True, key=_ID),
    StateFile("consolidation", "project", f"{_M}/consolidations/{{key}}.json", "a consolidation proposal",
              24 * MiB, key=_ID),
    StateFile("audit-report", "project", ".fusion/memory-audit.md", "the audit report"),
    StateFile("audit-state", "project", ".fusion/memory-audit-state.json", "the audit state"),
    StateFile("audit-report-layered", "project", ".fusion/memory/memory-audit.md", "the audit report"),
    StateFile("audit-state-layered", "project", ".fusion/memory/memory-audit-state.json", "the audit state"),
    StateFile("history", "project", f"{_M}/history.db", "the history database", 0),  # SQLite: see history_db
    StateFile("state-log", "project", f"{_M}/state-log.jsonl", "the project's state log", 256 * KiB),
    # The database backends' mirror notes (core.backends.mirror_ledger, core.backends.pg.mirror): written on every
    # append under the document's own lock, so through put_note/overwrite_note/remove_note (what, where, one
    # write), with no history and no state-log line (a lost note costs a whole-text look, never text).
    StateFile("mirror-ledger", "project", f"{_M}/mirror/{{key}}.ledger", "a mirror ledger note", 4 * KiB,
              key=_MIRROR),
    StateFile("mirror-entry", "project", f"{_M}/mirror/{{key}}.ledger.append", "a mirror's pending entry",
              fileio.MAX_FILE_SIZE + 4 * KiB, key=_MIRROR),
    StateFile("mirror-mark", "project", f"{_M}/mirror/{{key}}.sha256", "a mirror's last-mirrored mark", KiB,
              key=_MIRROR),
    # -- in the user's config folder (never in a project) -------------------------------------------------
    StateFile("user-config", "user", "config.json", "your memdesk config"),
    StateFile("tokens", "user", "tokens.json", "the HTTP tokens", 4 * MiB),
    StateFile("bindings", "user", "bindings.json", "the confirmed team bindings", 4 * MiB),
    StateFile("connections", "user", "connections.json", "the team connections"),
    StateFile("fusion-connections", "user", "fusion.json", "the Fusion connections"),
    StateFile("fusion-cache", "user", "fusion-cache/{key}.json", "Fusion's last settings read", key=_DIGEST),
    StateFile("firewall-key", "user", "firewall.key", "the firewall key", KiB),
    StateFile("reads", "user", "reads.db", "the read log", 0),  # SQLite (core.storage.readlog): located here, then opened
    StateFile("user-state-log", "user", "state-log.jsonl", "your state log", 256 * KiB),
    # -- in Fusion's home folder (never in a project): Fusion's GlobalSettingsStore file, which Fusion reads --
    StateFile("fusion-global", "fusion-home", "settings.json", "Fusion's global settings", MiB),
)}
#: The log a scope's changes are recorded in (a change in Fusion's home is recorded in the user's log, never there).
LOG_NAME = {"project": "state-log", "user": "user-state-log", "fusion-home": "user-state-log"}


class StateRefused(MemoryBackendError):
    """A state write the door refused (what or where): nothing was created or changed."""

    def __init__(self, message: str, code: str = "INVALID_CONFIG", backend_id: str = "state",
                 cause: BaseException | None = None) -> None:
        super().__init__(message, code, backend_id, cause)


# The functional form (UP014 asks for the class form): real types, not the strings typing compiles one
# by one for the class form under `from __future__ import annotations` (issue 19 item 7).
StateWrite = NamedTuple("StateWrite", [  # noqa: UP014
    ("name", str),
    ("path", str),
    ("target", Path),
    ("changed", bool),
    ("size", int),
])
StateWrite.__doc__ = 'What a state write did: the file (path as shown), its real target, and whether bytes changed.'


def _shown(value: object) -> str:
    text = value if isinstance(value, str) and value.isprintable() else repr(value)
    return text if len(text) <= 120 else text[:120] + "..."


def state_file(name: str) -> StateFile:
    """The registry entry ``name`` (stage "what"); a name not in the registry is a programming error."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise StateRefused(f"{_shown(name)} is not one of memdesk's state files; nothing was written") from None


def project_paths() -> frozenset[str]:
    """The project-relative paths of the single (non-family) project state files."""
    return frozenset(f.path for f in REGISTRY.values() if f.scope == "project" and f.key is None)


def name_of(relpath: str) -> str:
    """The registry name of the single project state file at ``relpath`` (paths the layout gives)."""
    for f in REGISTRY.values():
        if f.scope == "project" and f.key is None and f.path == relpath:
            return f.name
    raise StateRefused(f"{_shown(relpath)} is not one of memdesk's state files; nothing was written")


_process_writer = "memdesk"


def set_process_writer(writer: str) -> None:
    """Who this process's state writes are recorded as when a caller names no writer (``cli:ana`` for the CLI,
    ``operator:ana`` for the app; ``memdesk`` until a surface says so)."""
    global _process_writer
    _process_writer = writer


def user_dir() -> Path:
    """The user's config folder, where the user-scope files live."""
    return userdirs.user_config_dir()


def fusion_home_dir() -> Path:
    """Fusion's home folder, where Fusion's ``GlobalSettingsStore`` keeps ``settings.json``: ``$MEMDESK_FUSION_HOME``,
    else ``$HOME/.fusion`` (Fusion's ``defaultGlobalDir()``, ``packages/core/src/config/global-settings.ts``)."""
    return Path(os.environ.get(FUSION_HOME_ENV) or Path.home() / ".fusion")


# -- stage "where" ----------------------------------------------------------------------------------------
def _base(sf: StateFile, root: Path | str | None, directory: Path | None) -> Path:
    if sf.scope == "project":
        if root is None:
            raise TypeError(f"{sf.name} is a project state file: give the project root")
        return Path(root)
    if directory is not None:
        return Path(directory)
    return fusion_home_dir() if sf.scope == "fusion-home" else user_dir()


def _outside(sf: StateFile, exc: PathOutsideRootError) -> str:
    """The confinement's reason in the scope's words: a user file's base is the user's config folder, not a project."""
    if sf.scope == "project":
        return str(exc)
    if sf.scope == "fusion-home":
        return str(exc).replace("the project root", "Fusion's home folder").replace("inside the project", "inside it")
    return (str(exc).replace("the project root", "your memdesk config folder")
            .replace("inside the project", "inside that folder"))


def _refused(sf: StateFile, rel: str, why: str, code: str = "INVALID_CONFIG",
             cause: BaseException | None = None) -> StateRefused:
    why = why.rstrip(". ")
    tail = "" if "nothing was written" in why else "; nothing was written"
    return StateRefused(f"cannot write {sf.what} ({rel}): {why}{tail}", code, "state", cause)


def locate(name: str, root: Path | str | None = None, *, key: str | None = None,
           directory: Path | None = None) -> tuple[Path, str, Path]:
    """Stages "what" and "where": (base folder, relative path, real target) of a state file, creating nothing.

    Refused (:class:`StateRefused`, one line naming the file): a folder on the way or the file itself
    that is a link out of the base, something that is not a folder on the way, a target that is not a
    regular file or that has other hard links.
    """
    sf = state_file(name)
    rel = sf.relpath(key)
    base = _base(sf, root, directory)
    if sf.scope != "project":
        try:
            base.mkdir(parents=True, exist_ok=True)  # the user's own folder (or Fusion's home), outside any project
        except OSError as exc:
            raise _refused(sf, str(base / rel), os_reason(base, exc, "create"), "WRITE_FAILED", exc) from exc
    shown = rel if sf.scope == "project" else str(base / rel)
    try:
        _logical, target = resolve_both_in_root(base, rel)
    except PathOutsideRootError as exc:
        raise _refused(sf, shown, _outside(sf, exc), cause=exc) from exc
    parts = Path(rel).parts
    for i in range(1, len(parts)):  # a file where a folder belongs is named before anything is created
        step = Path(base).resolve().joinpath(*parts[:i])
        if os.path.lexists(step) and not step.is_dir():
            raise _refused(sf, shown, f"{'/'.join(parts[:i])} is {file_kind(os.lstat(step).st_mode)}, not a folder")
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return base, rel, target
    except OSError as exc:
        raise _refused(sf, shown, os_reason(rel, exc, "write"), "WRITE_FAILED", exc) from exc
    if not stat.S_ISREG(st.st_mode):
        raise _refused(sf, shown, f"it is {file_kind(st.st_mode)}, not a regular file (replace it with one)",
                       "WRITE_FAILED")
    if st.st_nlink > 1:
        raise _refused(sf, shown, f"it has {st.st_nlink - 1} other hard link(s), so writing it would change another "
                       "file too (give it its own copy first)", "WRITE_FAILED")
    return base, rel, target


def read(name: str, root: Path | str | None = None, *, key: str | None = None,
         directory: Path | None = None) -> str | None:
    """The state file's text (``None`` when absent), read as untrusted: confined, a regular file, at most its
    size limit, valid UTF-8; otherwise one line naming the file (``READ_FAILED``)."""
    sf = state_file(name)
    rel = sf.relpath(key)
    base = _base(sf, root, directory)
    shown = rel if sf.scope == "project" else str(base / rel)
    try:
        _logical, target = resolve_both_in_root(base, rel)
    except PathOutsideRootError as exc:
        raise StateRefused(f"cannot read {sf.what} ({shown}): {_outside(sf, exc)}", "READ_FAILED", "state",
                           exc) from exc
    try:
        return fileio.read_text(target, "state", max_size=sf.max_size or None)
    except MemoryBackendError as exc:
        message = str(exc).replace(str(target), shown)
        raise StateRefused(f"cannot read {sf.what}: {message}", exc.code, "state", exc) from exc


# -- lock -------------------------------------------------------------------------------------------------
@contextmanager
def lock(name: str, root: Path | str | None = None, *, key: str | None = None,
         directory: Path | None = None) -> Iterator[None]:
    """Hold the state file's lock (reentrant): a project file's under ``.fusion/memdesk/locks``, a user file's
    under the user folder's ``locks/``. For a read-modify-write around :func:`write`."""
    base, rel, _target = locate(name, root, key=key, directory=directory)
    if state_file(name).scope == "project":
        with file_lock(base, rel, "state"):
            yield
        return
    if state_file(name).scope == "fusion-home":  # memdesk's own lock file in its own folder, never in Fusion's
        locks, _ = _user_lock_dir(state_file(name), user_dir(), rel)
        path = str(locks / ("fusion-home__" + rel.replace("/", "__") + ".lock"))
    else:
        locks, _ = _user_lock_dir(state_file(name), base, rel)
        path = str(locks / (rel.replace("/", "__") + ".lock"))
    with _user_locks_guard:  # one instance per lock file and process, so a holder can take it again
        held = _user_locks.get((os.getpid(), path))
        if held is None:
            held = _user_locks[(os.getpid(), path)] = FileLock(path, timeout=fileio.LOCK_TIMEOUT_S)
    try:
        held.acquire()
    except OSError as exc:  # a planted link or a folder where the lock file belongs: never followed
        raise _refused(state_file(name), str(base / rel), os_reason(path, exc, "lock")
                       if not isinstance(exc, TimeoutError) else f"{path} is held by another writer; try again",
                       "WRITE_FAILED", exc) from exc
    try:
        yield
    finally:
        held.release()


_user_locks: dict[tuple[int, str], FileLock] = {}
_user_locks_guard = threading.Lock()


def _user_lock_dir(sf: StateFile, base: Path, rel: str) -> tuple[Path, Path]:
    try:
        logical, real = resolve_both_in_root(base, "locks")
    except PathOutsideRootError as exc:
        raise _refused(sf, str(base / rel), _outside(sf, exc), cause=exc) from exc
    if os.path.lexists(real) and not real.is_dir():
        raise _refused(sf, str(base / rel), f"{logical} is not a folder")
    real.mkdir(parents=True, exist_ok=True)
    return real, logical


# -- write and record -------------------------------------------------------------------------------------
def write(name: str, root: Path | str | None, text: str | bytes, *, source: str, key: str | None = None,
          writer: str | None = None, expected_hash: str | None = None, directory: Path | None = None,
          exclusive: bool = False, max_size: int | None = None) -> StateWrite:
    """Replace the state file ``name`` (``key`` for a family) with ``text`` through every stage.

    ``root`` is the project (``None`` for a user file; ``directory`` stands in for the user's config
    folder). ``expected_hash`` is the :func:`core.storage.fileio.content_hash` of the text the caller started
    from (``CONFLICT`` when the file changed since); ``exclusive`` refuses a file that exists already
    (``CONFLICT``). ``writer`` (``kind`` or ``kind:name``; the process's, :func:`set_process_writer`, when
    ``None``) and ``source`` go to the record.
    """
    sf = state_file(name)
    writer = writer or _process_writer
    base, rel, target = locate(name, root, key=key, directory=directory)
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    limit = max_size or sf.max_size
    fileio.check_size(data, rel, "state", limit=limit, hint=f"{sf.what} is too big to keep")
    shown = rel if sf.scope == "project" else str(base / rel)
    with lock(name, root, key=key, directory=directory):
        _base2, _rel2, target = locate(name, root, key=key, directory=directory)  # again, under the lock
        raw = fileio.read_bytes(target, "state", max_size=max(limit, fileio.MAX_READ_SIZE))
        if exclusive and raw is not None:
            raise _refused(sf, shown, "it exists already", "CONFLICT")
        if expected_hash is not None and fileio.sha256_hex(raw or b"") != expected_hash:
            raise MemoryBackendError(f"{shown} changed on disk since it was read; nothing was written, try again",
                                     "CONFLICT", "state")
        if raw == data:
            return StateWrite(name, shown, target, False, len(data))
        if sf.scope == "project" and rel.startswith(fileio.MEMDESK_DIR):
            fileio.ensure_state_dir(base, "", "state")
        wait = None
        if sf.history and raw and sf.scope == "project":
            wait = keep_previous(Path(base), rel, raw, source, writer, None, "state")
        try:
            fileio.atomic_write_bytes(target, data, wait, new_file_mode=sf.new_file_mode)
        except OSError as exc:
            raise _refused(sf, shown, os_reason(rel, exc, "write"), "WRITE_FAILED", exc) from exc
    if name not in LOG_NAME.values():
        _record(sf, root, directory, rel, writer, source, data)
    return StateWrite(name, shown, target, True, len(data))


def keep_previous(root: Path, relpath: str, raw: bytes, source: str, author: str | None, digest: str | None,
                  backend_id: str, seen: str | bytes | None = None) -> Callable[[], object]:
    """Start recording ``raw`` as the previous version of ``relpath``; return the wait the rename does first.

    ``seen``: the new text, noted as what memdesk last wrote in the same commit (core.storage.history.versions.record_version)."""
    import sqlite3

    from core.storage.history import versions as history
    from core.storage.safepath import database_reason

    pending = history.record_version_soon(root, relpath, raw, source, author=author, digest=digest, seen=seen)

    def wait() -> object:
        try:
            return pending.result()
        except sqlite3.Error as exc:
            raise MemoryBackendError(
                f"the previous version of {relpath} cannot be kept in history: "
                f"{database_reason(exc, history.HISTORY_DB)}. Nothing was written",
                "WRITE_FAILED", backend_id, exc) from exc

    return wait


def _record(sf: StateFile, root: Path | str | None, directory: Path | None, rel: str, writer: str, source: str,
            data: bytes) -> None:
    """One line in the scope's state log (best effort: a lost record never fails the write it records)."""
    import json
    from datetime import UTC, datetime

    line = json.dumps({"at": datetime.now(UTC).isoformat(timespec="milliseconds"), "file": sf.name, "path": rel,
                       "writer": writer, "source": source, "size": len(data),
                       "sha256": fileio.sha256_hex(data)[:16]}, ensure_ascii=True) + "\n"
    name = LOG_NAME[sf.scope]
    if sf.scope == "fusion-home":
        directory = None  # the user's own log, not a file in Fusion's folder
    try:
        with lock(name, root, directory=directory):
            base, log_rel, target = locate(name, root, directory=directory)
            limit = REGISTRY[name].max_size
            try:
                size = os.lstat(target).st_size
            except FileNotFoundError:
                size = 0
            if size + len(line) <= limit:  # the usual case: one O_APPEND, a third of an atomic replace
                fd = fileio.open_regular_for_append(base, log_rel, backend_id="state")
                try:
                    fileio.write_all(fd, line.encode("ascii"))
                finally:
                    os.close(fd)
                return
            old = fileio.read_bytes(target, "state", max_size=fileio.MAX_READ_SIZE) or b""
            old = old[-(limit // 2):]  # keep the newest half: a log, not an archive
            old = old[old.find(b"\n") + 1:]
            write(name, root, old + line.encode("ascii"), source="log", directory=directory)
    except (MemoryBackendError, OSError, fileio.AppendFailed) as exc:
        log.warning("the change to %s was written but not logged: %s", rel, exc)


# The functional form (UP014 asks for the class form): real types, not the strings typing compiles one
# by one for the class form under `from __future__ import annotations` (issue 19 item 7).
StateChange = NamedTuple("StateChange", [  # noqa: UP014
    ("at", str),
    ("file", str),
    ("path", str),
    ("writer", str),
    ("source", str),
    ("size", int),
])
StateChange.__doc__ = 'One line of a state log: when, which file, who, why, and the new size.'


def read_log(root: Path | str | None = None, *, directory: Path | None = None,
             skipped: list[str] | None = None) -> list[StateChange]:
    """The state log of the project (or, with ``root=None``, the user's), oldest first.

    Read as untrusted: capped at its limit, each line checked (a JSON object of the right fields);
    a bad line is left out and named in ``skipped``; an unreadable log raises one line naming it.
    """
    import json

    name = LOG_NAME["project" if root is not None else "user"]
    _base, rel, target = locate(name, root, directory=directory)
    data = fileio.read_bytes(target, "state", max_size=REGISTRY[name].max_size * 2) or b""
    out: list[StateChange] = []
    for n, raw in enumerate(data.splitlines(), 1):
        try:
            item = json.loads(raw)
            fields = {k: item[k] for k in ("at", "file", "path", "writer", "source")}
            if not all(isinstance(v, str) and len(v) <= 1024 for v in fields.values()) or \
                    not isinstance(item["size"], int) or isinstance(item["size"], bool):
                raise ValueError("a field has the wrong type")
            out.append(StateChange(**fields, size=item["size"]))
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            if skipped is not None:
                skipped.append(f"{rel} line {n} skipped: {str(exc)[:100]}")
    return out


# -- notes: per-write state under a document's lock (the mirror ledger) -----------------------------------
NOTES = frozenset({"mirror-ledger", "mirror-entry", "mirror-mark"})


def _note(name: str, root: Path | str, key: str) -> tuple[StateFile, str, Path, bool]:
    """Stages "what" and "where" of a note: a family in :data:`NOTES`, its key by pattern, the path confined to
    the project with links out refused (one line naming the note). Returns the note's path by name (its folders
    inside the project) and whether a note of its own is there. A link inside the project or a hard-linked file
    at the note's name is replaced by name, never written through; a FIFO, folder or device is refused.
    Cheaper than :func:`locate`: a note is looked at several times an append."""
    sf = state_file(name)
    if name not in NOTES:
        raise StateRefused(f"{sf.what} is not a note; write it with statefiles.write")
    rel = sf.relpath(key)
    try:
        logical, _real = resolve_both_in_root(root, rel)
    except PathOutsideRootError as exc:
        raise _refused(sf, rel, str(exc), cause=exc) from exc
    try:
        st = os.lstat(logical)
    except (FileNotFoundError, NotADirectoryError):
        return sf, rel, logical, False
    except OSError as exc:
        raise _refused(sf, rel, os_reason(rel, exc, "write"), "WRITE_FAILED", exc) from exc
    if stat.S_ISLNK(st.st_mode):
        return sf, rel, logical, False
    if not stat.S_ISREG(st.st_mode):
        raise _refused(sf, rel, f"it is {file_kind(st.st_mode)}, not a regular file (remove it)", "WRITE_FAILED")
    return sf, rel, logical, st.st_nlink == 1


def check_note(name: str, root: Path | str, *, key: str) -> Path:
    """Stages "what" and "where" of a note, writing nothing: its real target, or :class:`StateRefused` (one line)."""
    return _note(name, root, key)[2]


def read_note(name: str, root: Path | str, *, key: str) -> bytes | None:
    """The note's bytes (``None`` when absent), read as untrusted: confined, a regular file, at most its limit."""
    sf, rel, target, own = _note(name, root, key)
    if not own:  # absent, a link or another file's hard link: not a note memdesk wrote
        return None
    try:
        return fileio.read_bytes(target, "state", max_size=sf.max_size)
    except MemoryBackendError as exc:
        raise StateRefused(f"cannot read {sf.what} ({rel}): {exc}", exc.code, "state", exc) from exc


def put_note(name: str, root: Path | str, data: bytes, *, key: str) -> None:
    """Replace the note with ``data`` atomically (its folder made inside the project); the caller holds the
    document's lock. :class:`StateRefused` (one line naming the note) when it cannot be written."""
    sf, rel, target, _own = _note(name, root, key)
    fileio.check_size(data, rel, "state", limit=sf.max_size, hint=f"{sf.what} is too big to keep")
    if not target.parent.is_dir():  # made step by step inside the project, a file or link in the way named
        try:
            fileio.ensure_state_dir(Path(root), rel[len(fileio.MEMDESK_DIR) + 1:].rpartition("/")[0], "state")
        except MemoryBackendError as exc:
            raise _refused(sf, rel, str(exc), exc.code, exc) from exc
    try:
        fileio.atomic_write_bytes(target, data)
    except OSError as exc:
        raise _refused(sf, rel, os_reason(rel, exc, "write"), "WRITE_FAILED", exc) from exc


def overwrite_note(name: str, root: Path | str, data: bytes, *, key: str, truncate: bool = False,
                   max_size: int | None = None, sync: bool = False) -> bool:
    """Write ``data`` over the start of the note in place (see :func:`core.storage.fileio.overwrite_in_place`);
    ``False`` when there is no plain note to overwrite (then :func:`put_note`)."""
    _sf, _rel, target, own = _note(name, root, key)
    return own and fileio.overwrite_in_place(target, data, truncate=truncate, max_size=max_size, sync=sync)


def remove_note(name: str, root: Path | str, *, key: str) -> bool:
    """Remove the note (only its name: a link is refused, never followed); ``False`` when it was not there."""
    sf, rel, target, _own = _note(name, root, key)
    try:
        return fileio.remove_file(target)
    except OSError as exc:
        raise _refused(sf, rel, os_reason(rel, exc, "remove"), "WRITE_FAILED", exc) from exc
