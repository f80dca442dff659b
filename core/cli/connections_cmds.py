"""``memdesk connections set|list|test|remove`` (the user's named database connections) and
``memdesk backend move --to postgres|file`` (a project's memory into the shared database and back).

A DSN's password is never printed: listings and messages show the DSN with ``password=****``.
"""

from __future__ import annotations

import argparse
import sys

from core.cli.common import CliError, add_common, emit_json, fail_from, project_root, read_stdin_text
from core.errors import SettingsError
from core.settings.connections import (
    connections_path,
    get_connection,
    list_connections,
    remove_connection,
    scrub,
    set_connection,
    test_connection,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``connections`` and ``backend``."""
    p = subparsers.add_parser("connections", help="your named database connections (kept in your user config)")
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    s = _json(actions.add_parser("set", help="add or replace connection NAME"))
    s.add_argument("name")
    s.add_argument("--dsn", required=True, help="libpq DSN: postgresql://USER:PASSWORD@HOST:PORT/DB or key=value "
                                             "pairs; '-' reads it from stdin (keeps the password out of the "
                                             "shell history and the process list)")
    s.set_defaults(func=cmd_set)
    _json(actions.add_parser("list", help="list connections (passwords masked)")).set_defaults(func=cmd_list)
    t = _json(actions.add_parser("test", help="connect with NAME and report the server"))
    t.add_argument("name")
    t.set_defaults(func=cmd_test)
    r = _json(actions.add_parser("remove", help="remove connection NAME"))
    r.add_argument("name")
    r.set_defaults(func=cmd_remove)
    p.set_defaults(func=cmd_list, json=False)

    b = subparsers.add_parser("backend", help="move a project's memory between backends")
    bactions = b.add_subparsers(dest="action", metavar="ACTION", parser_class=type(b))
    m = add_common(bactions.add_parser("move", help="move the memory into PostgreSQL (--to postgres) or back "
                                                    "to files (--to file), verified by hashes"))
    m.add_argument("--to", required=True, choices=("postgres", "file"))
    m.add_argument("--connection", metavar="NAME", help="connection to move into (with --to postgres)")
    m.add_argument("--project-key", metavar="KEY", help="the project's key in the database (default: folder name)")
    m.add_argument("--replace", action="store_true",
                   help="with --to postgres: replace documents the key already holds (kept in its history)")
    m.set_defaults(func=cmd_move)
    c = add_common(bactions.add_parser("confirm", help="bind this folder to the team connection and project key "
                                                       "its settings name (until then it is read-only)"))
    c.set_defaults(func=cmd_confirm)
    b.set_defaults(func=lambda args: _usage(b))


def _json(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    return parser


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _settings_fail(exc: SettingsError) -> CliError:
    return CliError(str(exc), 2)


def cmd_set(args: argparse.Namespace) -> int:
    """Store connection NAME (validated first; a bad DSN saves nothing)."""
    dsn = read_stdin_text().strip() if args.dsn == "-" else args.dsn
    try:
        conn = set_connection(args.name, dsn)
    except SettingsError as exc:
        raise CliError(scrub(str(exc), dsn), 2) from exc
    if args.json:
        emit_json({"name": conn.name, "dsn": conn.redacted, "file": str(connections_path())})
    else:
        print(f"connection {conn.name!r} saved: {conn.redacted}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """Print every connection with its DSN masked."""
    try:
        conns = list_connections()
    except SettingsError as exc:
        raise _settings_fail(exc) from exc
    if getattr(args, "json", False):
        emit_json([{"name": c.name, "dsn": c.redacted} for c in conns])
        return 0
    if not conns:
        print(f"no connections (add one with 'memdesk connections set NAME --dsn DSN'; kept in {connections_path()})")
    for c in conns:
        print(f"{c.name:<16} {c.redacted}")
    return 0


def cmd_test(args: argparse.Namespace) -> int:
    """Connect with NAME; exit 1 when the server cannot be reached or refuses the login."""
    try:
        result = test_connection(args.name)
    except SettingsError as exc:
        raise _settings_fail(exc) from exc
    if args.json:
        emit_json({"name": args.name, "ok": result.ok, "message": result.message,
                   "serverVersion": result.server_version, "schemaVersion": result.schema_version})
    elif result.ok:
        print(result.message)
    if not result.ok:
        raise CliError(result.message, 1)
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    """Remove connection NAME."""
    try:
        remove_connection(args.name)
    except SettingsError as exc:
        raise _settings_fail(exc) from exc
    if args.json:
        emit_json({"name": args.name, "removed": True})
    else:
        print(f"connection {args.name!r} removed")
    return 0


def cmd_confirm(args: argparse.Namespace) -> int:
    """Record the operator's confirmation of the project's team binding in the user config (core.settings.bindings)."""
    from core.settings.bindings import confirm, confirmed, team_of
    from core.settings.model import load_settings

    root = project_root(args)
    try:
        settings = load_settings(root)
        team = team_of(settings.memory_backend_config)
        if team is None:
            raise CliError(f"the settings of {root} name no team connection (memoryBackendConfig.connection); "
                           "nothing to confirm", 2)
        before = confirmed(root)
        path = confirm(root, *team)
    except SettingsError as exc:
        raise _settings_fail(exc) from exc
    connection, key = team
    if args.json:
        emit_json({"project": str(root), "connection": connection, "projectKey": key,
                   "backend": settings.memory_backend, "previous": list(before) if before else None})
        return 0
    print(f'bound {root} to the team connection "{connection}" and project key "{key}" '
          f'(backend "{settings.memory_backend}"); kept in {path}')
    return 0


def cmd_move(args: argparse.Namespace) -> int:
    """Move the project's memory and print each document's verified hash."""
    from core.project.backend_move import move_to_files, move_to_postgres

    root = project_root(args)
    dsn = None
    try:
        if args.to == "postgres":
            if not args.connection:
                raise CliError("--to postgres needs --connection NAME (see 'memdesk connections list')", 2)
            dsn = get_connection(args.connection).dsn
            report = move_to_postgres(root, args.connection, args.project_key, replace=args.replace)
        else:
            report = move_to_files(root)
    except CliError:
        raise
    except Exception as exc:
        err = fail_from(exc)
        raise CliError(scrub(err.message, dsn), err.exit_code) from exc
    if args.json:
        emit_json(report.to_json())
        return 0
    where = f'PostgreSQL (project key "{report.project_key}")' if args.to == "postgres" else "files"
    print(f"moved {len(report.documents)} document(s) and {report.versions_copied} history version(s) to {where}; "
          "every document verified by hash:")
    for path, digest in report.documents.items():
        same = "  (already there)" if path in report.unchanged else ""
        print(f"  {digest[:12]}  {path}{same}")
    for path, why in report.skipped.items():
        print(f"memdesk: skipped the stored row {path!r}: {why}", file=sys.stderr)
    back = ("memdesk backend move --to file" if args.to == "postgres" else
            f"memdesk backend move --to postgres --connection NAME --project-key {report.project_key}")
    print(f"to undo: {back}")
    return 0
