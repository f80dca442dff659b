"""Shared pieces of the CLI: the error type, ``--project``/``--json`` options, the project's backend and
output helpers."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import MemoryBackendError, PathOutsideRootError, SettingsError

if TYPE_CHECKING:
    from core.backends import MemoryBackend
    from core.project import Project

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
    return root.resolve()


def project_backend(root: Path) -> MemoryBackend:
    """The project's memory backend from its settings, with a warning on stderr when it fell back to the file
    backend; unreadable settings raise a :class:`CliError`."""
    # Imported here, not at the top: a command that needs no backend (a keyword search over the
    # derived index) then never imports pydantic, which alone costs more than the whole search.
    from core.backends import default_registry, resolve_memory_backend
    from core.settings import load_settings

    try:
        settings = load_settings(root)
    except Exception as exc:
        raise fail_from(exc) from exc
    backend = resolve_memory_backend(settings, root, default_registry())
    if backend.fallback_reason:
        print(f"memdesk: warning: {backend.fallback_reason}; using the file backend", file=sys.stderr)
    return backend


def cli_project(args: argparse.Namespace) -> Project:
    """The ``--project`` folder as a :class:`~core.project.Project` (creating nothing), with a warning on
    stderr when its backend fell back to ``file``."""
    from core.project import Project

    root = project_root(args)
    try:
        project = Project(root)
    except Exception as exc:
        raise fail_from(exc) from exc
    if project.settings_error is not None:
        raise fail_from(project.settings_error)
    if project.fallback_reason:
        print(f"memdesk: warning: {project.fallback_reason}; using the file backend", file=sys.stderr)
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
    if is_dataclass(value) and not isinstance(value, type):
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


def fail_from(exc: Exception) -> CliError:
    """Turn a core exception into a :class:`CliError` with the right exit code."""
    if isinstance(exc, SettingsError | PathOutsideRootError):
        return CliError(str(exc), 2)
    if isinstance(exc, MemoryBackendError):
        return CliError(f"{exc.message} [{exc.code}]", 2 if exc.code in BAD_INPUT_CODES else 1)
    return CliError(f"{type(exc).__name__}: {exc}", 1)


def read_stdin_text() -> str:
    """Read all of stdin as UTF-8 text, or fail with a clear message."""
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"stdin is not valid UTF-8 (byte offset {exc.start}); nothing was written", 2) from exc
