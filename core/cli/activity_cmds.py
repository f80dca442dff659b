"""``memdesk activity``: who wrote and who read the project's memory, newest first.

Writes come from the project's history (appends and replacements, with their author); reads from the
read log of ``memdesk serve`` and ``memdesk mcp`` (:mod:`core.storage.readlog`: client, token, document, hash,
lines; never text). ``--open ID`` prints exactly the text a read served; ``--at TIME`` with ``--client``
prints the text of that client's last read at or before TIME.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from core.cli.common import CliError, add_common, cli_project, emit_json, fail_from


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``memdesk activity``."""
    p = add_common(subparsers.add_parser("activity", help="who wrote and who read the memory (newest first)"))
    p.add_argument("--reads", action="store_true", help="only the reads agents made through memdesk's servers")
    p.add_argument("--writes", action="store_true", help="only the writes (appends and replacements)")
    p.add_argument("--state", action="store_true", help="only the changes to memdesk's own state files (settings, "
                                                        "policies, proposals…; the state log)")
    p.add_argument("--client", metavar="NAME", help="only this client or token (its name contains NAME)")
    p.add_argument("--since", metavar="TIME", help="only since TIME: ISO 8601 (2026-12-01T09:00Z) or 30m, 24h, 7d "
                                                    "(default 7d)")
    p.add_argument("--limit", type=int, default=100, help="most rows to print (default 100)")
    p.add_argument("--open", type=int, metavar="ID", help="print exactly the text read ID served")
    p.add_argument("--at", metavar="TIME", help="with --client: print the text of the client's last read at or "
                                                "before TIME (--file narrows it to one document)")
    p.add_argument("--file", metavar="PATH", help="only this document")
    p.set_defaults(func=cmd_activity)


def _since(value: str | None, default: str = "7d") -> Any:
    from core.server.changes import parse_since
    from core.server.refusals import Refusal

    try:
        return parse_since(value or default)
    except Refusal as exc:
        raise CliError(exc.reason.split("; next")[0].replace("since ", "--since ", 1), 2) from exc


def _print_text(project: Any, event: Any) -> int:
    from core.storage.readlog import version_read

    text = version_read(project, event)
    if text is None:
        raise CliError(f"read {event.id} served {event.path} with hash {event.hash[:12]}…, and memdesk no longer "
                       "holds that version (history pruned it, or the file was changed outside memdesk and not "
                       "only appended to)", 1)
    sys.stdout.write(text)
    return 0


def _state_rows(root: Any, since: Any, client: str | None) -> list[dict[str, Any]]:
    """The project's state log since ``since`` (a damaged line is skipped with a notice)."""
    from datetime import datetime

    from core.storage import statefiles

    skipped: list[str] = []
    rows = []
    for c in statefiles.read_log(root, skipped=skipped):
        try:
            if datetime.fromisoformat(c.at) < since:
                continue
        except ValueError:
            continue
        if client and client.lower() not in c.writer.lower():
            continue
        rows.append({"kind": "state", "at": c.at, "path": c.path, "client": c.writer, "source": c.source,
                     "label": f"{c.file} ({c.source}, {c.size:,} bytes)", "size": c.size})
    for notice in skipped[:3]:
        print(f"memdesk: {notice}", file=sys.stderr)
    return rows


def _flagged(change: Any) -> dict[str, Any]:
    """A firewall report's warning line and flags (:mod:`core.firewall.imports`); nothing for any other change."""
    if change.source != "firewall-import" or not change.text:
        return {}
    import json

    warning, _, flags = change.text.partition("\n")
    try:
        return {"warning": warning, "flags": json.loads(flags)}
    except ValueError:
        return {"warning": warning}


def cmd_activity(args: argparse.Namespace) -> int:
    """Print the activity (or one read's text)."""
    from core.storage import readlog

    project = cli_project(args)
    rel = project.resolve_path(args.file) if args.file else None
    try:
        if args.open is not None:
            found = [e for e in readlog.query(root=project.root, limit=1_000_000) if e.id == args.open]
            if not found:
                raise CliError(f"no read {args.open} of this project in the read log", 2)
            return _print_text(project, found[0])
        if args.at is not None:
            if not args.client:
                raise CliError("--at needs --client NAME (whose read to open)", 2)
            from datetime import UTC

            at = _since(args.at).astimezone(UTC)
            reads = [e for e in readlog.query(root=project.root, client=args.client, path=rel, limit=10_000)
                     if e.at <= at.isoformat(timespec="milliseconds")]
            if not reads:
                raise CliError(f"no read by {args.client!r} at or before {args.at} in the read log", 1)
            print(f"memdesk: read {reads[0].id} by {reads[0].client or reads[0].token} at {reads[0].at}: "
                  f"{reads[0].path} lines {reads[0].start_line}-{reads[0].end_line}", file=sys.stderr)
            return _print_text(project, reads[0])
        since = _since(args.since)
        rows: list[dict[str, Any]] = []
        if args.state:
            rows += _state_rows(project.root, since, args.client)
        if not args.writes and not args.state:
            for e in readlog.query(root=project.root, client=args.client, since=since, path=rel, limit=args.limit):
                rows.append({"kind": "read", **e.to_json()})
        if not args.reads and not args.state:
            from core.server.changes import recent_changes

            for c in recent_changes(project, since, path=rel, limit=args.limit).changes:
                if args.client and args.client.lower() not in (c.author or "").lower():
                    continue
                rows.append({"kind": c.kind, "at": c.time, "path": c.path, "client": c.author, "source": c.source,
                             "label": c.label, "size": c.size, **_flagged(c)})
    except CliError:
        raise
    except Exception as exc:
        raise fail_from(exc) from exc
    rows.sort(key=lambda r: r["at"], reverse=True)
    rows = rows[:args.limit]
    if args.json:
        emit_json(rows)
        return 0
    if not rows:
        print("no activity" + (f" by {args.client!r}" if args.client else "") + " in this span")
    for r in rows:
        when = r["at"][:19].replace("T", " ")
        if r["kind"] == "read":
            who = readlog.client_label(r["client"]) or "?"
            if r["token"] and r["token"] not in who:
                who = f"{readlog.client_label(r['token'])} ({who})"
            print(f"{when}  read     {r['path']}  lines {r['startLine']}-{r['endLine']} of {r['totalLines']}  "
                  f"{r['hash'][:12]}  by {who} via {r['via']}  [#{r['id']}]")
        else:
            print(f"{when}  {r['kind']:<7}  {r['path']}  {r['label']}  by {readlog.client_label(r['client']) or '?'}")
            if r.get("warning"):  # the memory firewall's report on imported text (never the secret itself)
                print(f"    {r['warning']}")
    return 0
