"""``memdesk fusion connect|disconnect|status``: tell memdesk where a running Fusion is, and see which store
a project's settings use.

Fusion offers a local program its daemon's address and token only through its own global settings
(``daemonHost``/``daemonPort``/``daemonToken``), which memdesk reads when they are there. Otherwise the
operator gives the URL and token once; they are kept in the user config (``fusion.json``), never in the
project. memdesk checks the connection answers before keeping it, and never guesses a port.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from core.cli.common import CliError, add_common, emit_json, project_root


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``fusion`` with ``connect``, ``disconnect`` and ``status``."""
    p = subparsers.add_parser("fusion", help="connect memdesk to a running Fusion; show where settings live")
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    c = add_common(actions.add_parser("connect", help="keep a running Fusion's URL and token for this project"))
    c.add_argument("--url", required=True, help="Fusion's base URL, e.g. http://127.0.0.1:4040")
    c.add_argument("--token", help="Fusion's daemon token (default: $FUSION_DAEMON_TOKEN)")
    c.add_argument("--project-id", help="the project's id in Fusion (default: found by its path)")
    c.add_argument("--all-projects", action="store_true", help="use this Fusion for every project")
    c.set_defaults(func=cmd_connect)
    d = add_common(actions.add_parser("disconnect", help="forget the Fusion kept for this project"))
    d.add_argument("--all-projects", action="store_true", help="forget the one kept for every project")
    d.set_defaults(func=cmd_disconnect)
    s = add_common(actions.add_parser("status", help="which store the project's settings use"))
    s.set_defaults(func=cmd_status)
    p.set_defaults(func=lambda args: cmd_status(args) if hasattr(args, "project") else _usage(p))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def cmd_connect(args: argparse.Namespace) -> int:
    """Check the Fusion answers for this project, then keep its URL and token in the user config."""
    from core.errors import SettingsError
    from core.settings.store.connections import FusionConnection, check_url, save_connection
    from core.settings.store.detect import probe

    root = project_root(args)
    try:
        url = check_url(args.url)
    except SettingsError as exc:
        raise CliError(str(exc), 2) from exc
    token = args.token or os.environ.get("FUSION_DAEMON_TOKEN") or None
    store, reason = probe(root, FusionConnection(url, token, args.project_id))
    if store is None:
        raise CliError(f"not connected: {reason}", 1)
    project_id = store.client.conn.project_id  # type: ignore[attr-defined]
    path = save_connection(None if args.all_projects else root, url, token, project_id)
    if args.json:
        emit_json({"connected": True, "url": url, "projectId": project_id, "userConfig": str(path)})
    else:
        print(f"Connected: settings of {root} now go through Fusion at {url}"
              f"{f' (project {project_id})' if project_id else ''}; kept in {path}")
    return 0


def cmd_disconnect(args: argparse.Namespace) -> int:
    from core.settings.store.connections import forget_connection

    root: Path | None = None if args.all_projects else project_root(args)
    found = forget_connection(root)
    if args.json:
        emit_json({"disconnected": found})
    else:
        print("Forgotten." if found else "No Fusion was kept for it.")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from core.settings.store.detect import detect_store

    info = detect_store(project_root(args)).info
    if args.json:
        emit_json({"store": info.to_json()})
    else:
        print(f"settings: {info.plain_name}" + (f" — read-only: {info.read_only}" if info.read_only else ""))
    return 0
