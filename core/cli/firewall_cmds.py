"""``memdesk policy``, ``memdesk inbox`` and ``memdesk scan``: the memory firewall from the command line.

``policy`` shows and sets the per-writer, per-rule actions (memdesk's own state, never Fusion's
settings). ``inbox`` lists, shows, accepts (``--redact``, or edited with ``edit``) and rejects held
writes. ``scan`` reports the rules' findings on memory that already exists and exits 1 when it
finds something, for CI.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from core.cli.common import CliError, add_action, add_common, cli_path, cli_project, emit_json, project_root


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``policy``, ``inbox`` and ``scan`` commands."""
    p = add_common(subparsers.add_parser("policy", help="the memory firewall's policy: allow/warn/hold/refuse "
                                                        "per writer and rule"))
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    add_action(actions, "show", "every writer's action for every rule (the default)")
    s = add_action(actions, "set", "set WRITER's action for RULE")
    s.add_argument("writer", help="operator, cli, token, mcp, program, memdesk, agents, *, or KIND:NAME")
    s.add_argument("rule", help="secret, injection, near-duplicate, contradiction, error, or a rule name")
    s.add_argument("value", metavar="ACTION", help="allow, warn, hold or refuse")
    u = add_action(actions, "unset", "remove WRITER's action for RULE (back to the default)")
    u.add_argument("writer")
    u.add_argument("rule")
    p.set_defaults(func=cmd_policy)

    p = add_common(subparsers.add_parser("inbox", help="writes the memory firewall held for review"))
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    ls = add_action(actions, "list", "pending items (the default); --all for every item")
    ls.add_argument("--all", action="store_true", help="accepted and rejected items too")
    sh = add_action(actions, "show", "one item: writer, document, rules, text (a secret stays masked)")
    sh.add_argument("id")
    sh.add_argument("--reveal", action="store_true", help="show a held secret in clear")
    ac = add_action(actions, "accept", "write the item through the pipeline again")
    ac.add_argument("id")
    ac.add_argument("--redact", action="store_true", help="replace each secret by [REDACTED:rule] first")
    ed = add_action(actions, "edit", "accept the item with new text (--text, or standard input)")
    ed.add_argument("id")
    ed.add_argument("--text", default=None)
    mg = add_action(actions, "merge", "replace the near-duplicate entry with the item's text, in place")
    mg.add_argument("id")
    mg.add_argument("--redact", action="store_true", help="replace each secret by [REDACTED:rule] first")
    sp = add_action(actions, "supersede", "mark the contradicted entry [superseded DATE], then accept the item")
    sp.add_argument("id")
    sp.add_argument("--redact", action="store_true", help="replace each secret by [REDACTED:rule] first")
    rj = add_action(actions, "reject", "drop the item (a held secret is deleted)")
    rj.add_argument("id")
    p.set_defaults(func=cmd_inbox)

    p = add_common(subparsers.add_parser("scan", help="run the memory firewall's rules on existing memory; "
                                                      "exit 1 when anything is found"))
    p.add_argument("--file", "-f", metavar="PATH", default=None, help="one memory document (default: all)")
    p.set_defaults(func=cmd_scan)


def cmd_policy(args: argparse.Namespace) -> int:
    from core.firewall.policy import PolicyError, load_policy, set_rule

    root = project_root(args)
    action = getattr(args, "action", None) or "show"
    try:
        if action == "set":
            policy = set_rule(root, args.writer, args.rule, args.value)
        elif action == "unset":
            policy = set_rule(root, args.writer, args.rule, None)
        else:
            policy = load_policy(root)
    except PolicyError as exc:
        raise CliError(str(exc), 2) from exc
    table = policy.effective()
    if args.json:
        emit_json({"overrides": policy.rules, "effective": table})
        return 0
    rules = list(next(iter(table.values())))
    print(f"{'writer':<10}" + "".join(f"{r:<16}" for r in rules))
    for writer, row in table.items():
        print(f"{writer:<10}" + "".join(f"{row[r]:<16}" for r in rules))
    for writer, row in policy.rules.items():
        for rule, value in row.items():
            print(f"override: {writer} {rule} {value}")
    return 0


def _inbox(args: argparse.Namespace):  # noqa: ANN202 - core.firewall imported lazily
    from core.firewall.inbox import Inbox
    from core.storage.userdirs import user_config_dir

    return Inbox(project_root(args), user_config_dir())


def cmd_inbox(args: argparse.Namespace) -> int:
    from core.firewall import review
    from core.firewall.inbox import InboxConflict, InboxError

    action = getattr(args, "action", None) or "list"
    try:
        inbox = _inbox(args)
        if action == "list":
            items = inbox.items(status=None if getattr(args, "all", False) else "pending")
            if args.json:
                emit_json([i.summary() for i in items])
            elif not items:
                print("The inbox is empty.")
            for item in items if not args.json else ():
                s = item.summary()
                rules = ", ".join(sorted({f["rule"] for f in s["flags"]}))
                who = s["writer"].get("name") or s["writer"].get("kind")
                print(f"{s['id']}  {s['status']:<8} {s['path']}  {who}  {rules}")
            return 0
        if action == "show":
            item = inbox.get(args.id)
            body = inbox.text_of(item) if args.reveal else item.data.get("redacted") or ""
            if args.json:
                emit_json({**item.summary(), "text": body, "revealed": bool(args.reveal)})
                return 0
            s = item.summary()
            print(f"{s['id']} ({s['status']}) to {s['path']} by {s['writer'].get('kind')}"
                  f"{':' + s['writer']['name'] if s['writer'].get('name') else ''} via {s['source']}")
            for f in s["flags"]:
                print(f"  {f['kind']}: {f['rule']} at line {f['line']} {tuple(f['span'])}: {f['message']}")
            print(body)
            return 0
        if action in ("accept", "edit"):
            edited = None
            if action == "edit":
                edited = args.text if args.text is not None else sys.stdin.read()
            project = cli_project(args)
            done = review.accept(project, inbox, args.id, redacted=getattr(args, "redact", False), edited=edited)
            if args.json:
                emit_json(done.to_json())
            else:
                print(f"{done.item.id}: {done.status} to {done.path}")
            return 0
        if action in ("merge", "supersede"):
            project = cli_project(args)
            act = review.merge if action == "merge" else review.supersede
            done = act(project, inbox, args.id, redacted=args.redact)
            if args.json:
                emit_json(done.to_json())
            else:
                print(f"{done.item.id}: {done.item.data.get('resolution')}")
            return 0
        if action == "reject":
            item = review.reject(inbox, args.id)
            if args.json:
                emit_json(item.summary())
            else:
                print(f"{item.id}: rejected")
            return 0
    except InboxError as exc:  # a damaged inbox or key, an unknown or settled item: bad state or input
        raise CliError(str(exc), 1 if isinstance(exc, InboxConflict) else 2) from exc
    except Exception as exc:  # a refused or conflicting write: one line, exit 1 or 2
        from core.cli.common import fail_from

        raise fail_from(exc) from exc
    raise CliError(f"unknown inbox action {action!r}", 2)


def cmd_scan(args: argparse.Namespace) -> int:
    from core.firewall.scan import scan_document

    project = cli_project(args)
    paths = [cli_path(project, args)] if args.file else [d.path for d in project.documents() if d.size is not None]
    report: list[dict[str, Any]] = []
    for rel in paths:
        text = project.read(rel)
        report.append({"path": rel, "flags": [f.to_json() for f in scan_document(text)]})
    total = sum(len(r["flags"]) for r in report)
    if args.json:
        emit_json({"documents": report, "findings": total})
    else:
        for r in report:
            for f in r["flags"]:
                print(f"{r['path']}:{f['line']}: {f['kind']} {f['rule']}: {f['message']}")
        print(f"{total} finding(s) in {len(report)} document(s)")
    return 1 if total else 0
