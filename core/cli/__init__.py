"""The headless ``memdesk`` commands: ``memdesk <command> [--project PATH] [--json] ...``.

Each module in :data:`COMMAND_MODULES` exposes ``register(subparsers)``, adding subcommands whose
handler (``set_defaults(func=...)``) takes the parsed args and returns an exit code: 0 success,
1 failure, 2 bad input. Errors are one clear line on stderr.

Commands are registered lazily: :data:`COMMANDS` says which module holds each command, and a run
imports only the module of the command it was given (a keyword search never imports the model
providers, the extraction code or pydantic-heavy modules it does not use). ``memdesk --help``, no
command, or a command not in the table imports them all, so a module added to
:data:`COMMAND_MODULES` works before it is added to the table.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import NoReturn

from core.cli.common import CliError, check_utf8_arguments, fail_from
from core.cli.finish import FAST_EXIT_COMMANDS
from core.logs import configure as configure_logging
from core.logs import configure_now as configure_logging_now

COMMAND_MODULES = (
    "core.cli.memory_cmds",
    "core.cli.settings_cmds",
    "core.cli.insights_cmds",
    "core.cli.search_cmds",
    "core.cli.extract_cmds",
    "core.cli.providers_cmds",
    "core.cli.budget_cmds",
    "core.cli.serve_cmds",
    "core.cli.connections_cmds",
    "core.cli.fusion_cmds",
    "core.cli.firewall_cmds",
    "core.cli.consolidation_cmds",
    "core.cli.activity_cmds",
)

#: Which module registers each command.
COMMANDS: dict[str, str] = {
    **dict.fromkeys(("show", "write", "append", "files", "migrate", "backends"), "core.cli.memory_cmds"),
    "settings": "core.cli.settings_cmds",
    **dict.fromkeys(("prune", "audit"), "core.cli.insights_cmds"),
    **dict.fromkeys(("search", "history", "reindex"), "core.cli.search_cmds"),
    **dict.fromkeys(("extract", "proposals", "run-scheduled"), "core.cli.extract_cmds"),
    "providers": "core.cli.providers_cmds",
    "budget": "core.cli.budget_cmds",
    **dict.fromkeys(("serve", "mcp", "tokens"), "core.cli.serve_cmds"),
    "activity": "core.cli.activity_cmds",
    **dict.fromkeys(("connections", "backend"), "core.cli.connections_cmds"),
    "fusion": "core.cli.fusion_cmds",
    **dict.fromkeys(("policy", "inbox", "scan"), "core.cli.firewall_cmds"),
    **dict.fromkeys(("dream", "compact", "rewrites", "backups", "consolidation-policy"),
                    "core.cli.consolidation_cmds"),
}


def terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size().columns`` gives it (``$COLUMNS``, the terminal, 80)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help layout, its width found without ``shutil``: argparse makes a formatter for every
    argument added, and the first one's ``import shutil`` costs a short command a millisecond."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         terminal_columns() - 2 if width is None else width)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> NoReturn:  # one line, exit 2
        raise CliError(f"{self.prog}: {message}", 2)


def command_of(argv: list[str]) -> str | None:
    """The command named in ``argv`` (its first word that is not an option), or ``None``."""
    return next((a for a in argv if not a.startswith("-")), None)


class _Unused:
    """Stands for the parser of a command that is not run: every call is taken and changes nothing."""

    def __getattr__(self, name: str) -> object:
        return self._take

    def _take(self, *args: object, **kwargs: object) -> _Unused:
        return self


class _OneCommand:
    """The subcommands of a run that names its command: only that command's parser is really built.

    A module registers all its commands; building the parsers of the others (an ``ArgumentParser``
    each, with argparse's translations looked up for every title) is a tenth of a short command.
    """

    def __init__(self, subparsers: argparse._SubParsersAction, command: str) -> None:
        self._subparsers, self._command = subparsers, command

    def add_parser(self, name: str, **kwargs: object) -> object:
        if name == self._command:
            return self._subparsers.add_parser(name, **kwargs)  # type: ignore[arg-type]
        return _Unused()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Build the argument parser: with only ``command``'s parser when it is known, else with every module."""
    parser = _Parser(prog="memdesk", description="Look after the memory of AI coding agents.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    names = (COMMANDS[command],) if command in COMMANDS else COMMAND_MODULES
    for name in names:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue  # a feature not installed in this build
            raise
        module.register(_OneCommand(subparsers, command) if command in COMMANDS else subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one headless command and return its exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    configure_logging(level=40, format="%(message)s")  # logging.ERROR; applied when something first logs
    if command_of(args_list) not in FAST_EXIT_COMMANDS:  # a short command imports logging only if it logs
        configure_logging_now()
    try:
        check_utf8_arguments(args_list)
        wants_help = args_list[:1] in (["-h"], ["--help"])
        parser = build_parser(None if wants_help else command_of(args_list))
        args = parser.parse_args(args_list)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a reader that went away (`| head`) shows here, not at exit
        return code
    except CliError as exc:
        if _broken_pipe(exc):
            return _reader_gone()
        print(f"memdesk: {exc.message}" if not exc.message.startswith("memdesk") else exc.message,
              file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("memdesk: interrupted", file=sys.stderr)
        return 1
    except (Exception, RecursionError, MemoryError) as exc:  # one line, never a traceback
        if _broken_pipe(exc):
            return _reader_gone()
        if os.environ.get("MEMDESK_DEBUG"):
            raise
        error = fail_from(exc)
        print(f"memdesk: {error.message}", file=sys.stderr)
        return error.exit_code


def _broken_pipe(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what caused it) is the reader of our output having gone away (``| head``)."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, BrokenPipeError):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def _reader_gone() -> int:
    """The reader closed the pipe: stop quietly, as `| head` expects (no "Broken pipe", no traceback at exit)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 0
