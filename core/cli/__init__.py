"""The headless ``memdesk`` commands: ``memdesk <command> [--project PATH] [--json] ...``.

Each module in :data:`COMMAND_MODULES` exposes ``register(subparsers)``, adding subcommands whose
handler (``set_defaults(func=...)``) takes the parsed args and returns an exit code: 0 success,
1 failure, 2 bad input. Errors are one clear line on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from core.cli.common import CliError

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
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        raise CliError(f"{self.prog}: {message}", 2)


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every available command module registered."""
    parser = _Parser(prog="memdesk", description="Look after the memory of AI coding agents.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue  # a feature not installed in this build
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one headless command and return its exit code."""
    logging.basicConfig(level=logging.ERROR, format="%(message)s")
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser()
        args = parser.parse_args(args_list)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"memdesk: {exc.message}" if not exc.message.startswith("memdesk") else exc.message,
              file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("memdesk: interrupted", file=sys.stderr)
        return 1
