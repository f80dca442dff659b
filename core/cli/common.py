"""Shared pieces of the CLI: the error type, ``--project``/``--json`` options, the project's backend and
output helpers."""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import MemoryBackendError, PathOutsideRootError, SettingsError
from core.frozen import Record
from core.storage.safepath import database_reason

if TYPE_CHECKING:
    from core.backends import MemoryBackend
    from core.project.model import Project

# Exit codes: 0 success, 1 failure, 2 bad input.
BAD_INPUT_CODES = {"INVALID_CONFIG", "QUOTA_EXCEEDED", "NOT_FOUND", "CAPABILITY_UNSUPPORTED", "READ_ONLY"}


class CliError(Exception):
    """An error to report as one line on stderr with an exit code."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


def add_common(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``--project PATH`` and ``--json`` to a subcommand parser."""
    parser.add_argument("--project", "-p", default=".", metavar="PATH",
                        help="project root folder (default: the current folder)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    return parser


def add_action(actions: argparse._SubParsersAction, name: str, text: str) -> argparse.ArgumentParser:
    """Add an action parser (``memdesk proposals show``) whose ``--project``/``--json`` override the parent's
    only when given."""
    parser = actions.add_parser(name, help=text)
    parser.add_argument("--project", "-p", default=argparse.SUPPRESS, metavar="PATH",
                        help="project root folder (default: the current folder)")
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print machine-readable JSON")
    return parser


def project_root(args: argparse.Namespace) -> Path:
    """Return the ``--project`` folder, or raise a bad-input error when it is not a folder."""
    root = Path(args.project).expanduser()
    if not root.is_dir():
        raise CliError(f"project folder {str(root)!r} does not exist or is not a folder", 2)
    from core.storage.statefiles import set_process_writer
    from core.storage.userdirs import local_author

    set_process_writer(local_author("cli"))  # the state log's writer of this command's state changes
    return root.resolve()


def project_backend(root: Path) -> MemoryBackend:
    """The project's memory backend from its settings, with a warning on stderr when it fell back to the file
    backend; unreadable settings raise a :class:`CliError`."""
    # Imported here, not at the top: a command that needs no backend (a keyword search over the
    # derived index) then never imports pydantic, which alone costs more than the whole search.
    from core.backends import default_registry, resolve_memory_backend
    from core.settings.model import load_settings

    try:
        settings = load_settings(root)
    except Exception as exc:
        raise fail_from(exc) from exc
    backend = resolve_memory_backend(settings, root, default_registry())
    if backend.fallback_reason:
        print(f"memdesk: warning: {backend.fallback_reason}; using the {backend.id} backend", file=sys.stderr)
    return backend


def cli_project(args: argparse.Namespace, *, light: bool = False) -> Project:
    """The ``--project`` folder as a :class:`~core.project.Project` (creating nothing), with a warning on
    stderr when its backend fell back to ``file``.

    ``light``: on a file backend with plainly valid settings, read them without the settings model
    (:func:`core.cli.light.light_settings`), so a command that only appends never imports pydantic.
    """
    from core.project.model import Project

    root = project_root(args)
    try:
        settings = None
        if light:
            from core.cli.light import light_settings

            settings = light_settings(root)
        if settings is None:  # the full settings path (another backend, a client library): logging set up first
            from core.logs import configure_now

            configure_now()
        project = Project(root, settings=settings)  # type: ignore[arg-type]
    except Exception as exc:
        raise fail_from(exc) from exc
    if project.settings_error is not None:
        raise fail_from(project.settings_error)
    if project.fallback_reason:
        print(f"memdesk: warning: {project.fallback_reason}; using the {project.backend.id} backend", file=sys.stderr)
    from core.storage.userdirs import local_author

    project.default_author = local_author("cli")  # History's Author column for the CLI's writes
    return project


def cli_path(project: Project, args: argparse.Namespace) -> str:
    """The document named by ``--file`` (normalised as design §2a says), or the long-term one."""
    try:
        return project.resolve_path(getattr(args, "file", None))
    except MemoryBackendError as exc:
        raise CliError(f"--file: {exc.message}", 2) from exc


def add_file_option(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``--file PATH`` (a memory document; default: the layout's long-term file)."""
    parser.add_argument("--file", "-f", metavar="PATH", default=None,
                        help="memory document (MEMORY.md, a daily note YYYY-MM-DD.md, DREAMS.md, "
                             "agent-memory/ID/FILE …; default: the long-term memory); see `memdesk files`")
    return parser


def to_jsonable(value: Any) -> Any:
    """Convert dataclasses, paths and sets to JSON-friendly values."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, Record):  # every field, as dataclasses.asdict gives a dataclass's
        return {k: to_jsonable(getattr(value, k)) for k in value._fields}
    if hasattr(type(value), "__dataclass_fields__") and not isinstance(value, type):  # a dataclass instance
        from dataclasses import (
            asdict,  # here: `import dataclasses` costs a short command ~5 ms (inspect, ast, dis)
        )

        return {k: to_jsonable(v) for k, v in asdict(value).items()}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value) if isinstance(value, set | frozenset) else value
        return [to_jsonable(v) for v in items]
    if isinstance(value, Path):
        return str(value)
    return value


def emit_json(value: Any) -> None:
    """Print ``value`` as indented JSON."""
    print(json.dumps(to_jsonable(value), indent=2, ensure_ascii=False))


def fail_from(exc: BaseException) -> CliError:
    """Turn a core exception into a one-line :class:`CliError` that names the file and the fix.

    Raw errors (SQLite's, the OS's, ``RecursionError``, ``MemoryError``) name no file themselves, so
    the file is found where memdesk knows it: the error's ``filename``, or the database the failing
    code had open.
    """
    if isinstance(exc, CliError):  # already one line with its exit code (a command's own, re-raised)
        return exc
    if isinstance(exc, SettingsError | PathOutsideRootError):
        return CliError(str(exc), 2)
    if isinstance(exc, MemoryBackendError):
        from core.storage.fileio import TargetRefused  # a document that is a FIFO or hard link: bad state

        bad = exc.code in BAD_INPUT_CODES or _state_refusal(exc) or isinstance(exc, TargetRefused)
        return CliError(f"{exc.message} [{exc.code}]", 2 if bad else 1)
    sqlite3 = sys.modules.get("sqlite3")  # a SQLite error comes only from a process that imported it
    if sqlite3 is not None and isinstance(exc, sqlite3.Error):
        return CliError(database_reason(exc, _database_of(exc)), 1)
    if isinstance(exc, OSError):
        refusal = exc.__cause__  # the read log reports the door's refusal as an OSError (core.storage.readlog)
        if isinstance(refusal, MemoryBackendError) and _state_refusal(refusal):
            return CliError(f"{refusal.message} [{refusal.code}]", 2)
        return CliError(_os_line(exc), 1)
    if isinstance(exc, RecursionError):
        return CliError("a file or reply is nested too deeply to read (RecursionError); check the JSON files "
                        "under .fusion/ that the command reads", 1)
    if isinstance(exc, MemoryError):
        return CliError("out of memory (MemoryError): a file under .fusion/ is too big for the memory available; "
                        "check the sizes of the project's memory files", 1)
    if isinstance(exc, ModuleNotFoundError):
        return CliError(missing_module_line(exc), 1)
    if isinstance(exc, UnicodeError):
        return CliError(f"text that is not valid UTF-8 ({type(exc).__name__}: {_safe(exc)}); memdesk reads and "
                        "writes UTF-8 only", 2)
    return CliError(f"{type(exc).__name__}: {_safe(exc)}", 1)


def _state_refusal(exc: MemoryBackendError) -> bool:
    """Whether ``exc`` is the state door refusing bad state (a FIFO, a hard link, a link out, a file too big where a
    state file belongs): exit 2 like every bad input, whatever its code. A refusal caused by the system (an
    ``OSError`` such as a full disk or a lock held too long, a database error) stays a failure (exit 1)."""
    from core.storage.statefiles import StateRefused

    if not isinstance(exc, StateRefused):
        return False
    cause: BaseException | None = exc
    for _ in range(8):  # the chain of wrapped causes: MemoryBackendError around the OS's error
        cause = getattr(cause, "cause", None) or getattr(cause, "__cause__", None)
        if cause is None:
            return True
        if not isinstance(cause, MemoryBackendError | UnicodeError | ValueError):
            return False
    return True


#: The install extra that brings each optional top-level module (pyproject.toml's optional-dependencies).
EXTRAS = {"psycopg": "postgres", "psycopg_pool": "postgres", "wordllama": "semantic", "numpy": "semantic",
          "fastapi": "servers", "uvicorn": "servers", "httpx": "servers", "mcp": "servers"}


def missing_module_line(exc: ModuleNotFoundError) -> str:
    """What to install for a missing optional module, in one line (never the bare ``ModuleNotFoundError``)."""
    module = (exc.name or "").split(".")[0]
    extra = EXTRAS.get(module)
    if extra is None:
        return f"the Python module {module or exc.name!r} is not installed ({_safe(exc)}); reinstall memdesk"
    return (f"this needs the {extra!r} extra (the Python module {module!r} is not installed): "
            f"pip install 'memdesk[{extra}]', or pip install -e \".[{extra}]\" in a checkout (run.sh installs it)")


def _safe(exc: BaseException) -> str:
    try:
        return " ".join(str(exc).split())
    except Exception:  # an exception that cannot print itself
        return "(no message)"


def _os_line(exc: OSError) -> str:
    """An OS error on one line, naming its file and what to do."""
    name = exc.filename if exc.filename is not None else "a file"
    reason = exc.strerror or _safe(exc)
    if isinstance(exc, PermissionError):
        return f"cannot use {name}: {reason}; check the owner and mode of the file and of its folder"
    if isinstance(exc, FileExistsError | NotADirectoryError):
        return f"{name}: {reason}: a file is where memdesk needs a folder, or one of its parents is not a folder; move it aside"
    if isinstance(exc, IsADirectoryError):
        return f"{name} is a folder where memdesk needs a file; move it aside"
    if exc.errno == errno.ELOOP:
        return f"{name} is a symbolic link loop; replace it with a regular file"
    if exc.errno == errno.ENOSPC:
        return f"cannot write {name}: {reason}; free some space and try again"
    return f"{name}: {reason}"


def _database_of(exc: BaseException) -> str:
    """The database file the failing code had open (memdesk's own databases only), for the message."""
    tb = exc.__traceback__
    found = "a memdesk database under .fusion/memdesk/"
    while tb is not None:
        frame = tb.tb_frame
        for value in frame.f_locals.values():
            if isinstance(value, Path | str) and str(value).endswith(".db") and len(str(value)) < 4096:
                found = str(value)
        if os.path.join("core", "storage", "history", "") in frame.f_code.co_filename and not found.endswith(".db"):
            found = ".fusion/memdesk/history.db"
        tb = tb.tb_next
    return found


def check_utf8_arguments(argv: list[str]) -> None:
    """Refuse an argument that is not valid UTF-8 (a path given to ``--project`` may be any bytes)."""
    after_project = False
    for position, arg in enumerate(argv, start=1):
        is_path = after_project or arg.startswith(("--project=", "-p="))
        after_project = arg in ("--project", "-p")
        if is_path:
            continue
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError as exc:
            raw = arg.encode("utf-8", "surrogateescape")
            bad = raw[len(arg[: exc.start].encode("utf-8", "surrogateescape"))]
            shown = raw.decode("utf-8", "backslashreplace")
            raise CliError(f"argument {position} ('{shown}') is not valid UTF-8 (byte 0x{bad:02x}); pass UTF-8 "
                           "text — nothing was done", 2) from exc


def read_stdin_text() -> str:
    """Read all of stdin as UTF-8 text, or fail with a clear message."""
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"stdin is not valid UTF-8 (byte offset {exc.start}); nothing was written", 2) from exc
