"""``memdesk budget``: what each agent will actually load of each memory document, and where it stops.

    memdesk budget [--file PATH] [--consumer NAME] [--json]     per document and consumer
    memdesk budget --list-consumers [--json]                    the table of consumers and their limits
    memdesk budget --set-consumers PATH IDS                     who reads PATH (comma list; 'default')
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from core.budget import (
    SETTING_KEY,
    all_consumers,
    chosen_consumer_ids,
    consumers_patch,
    document_budget,
    get_consumer,
    line_count,
)
from core.budget.report import ConsumerBudget
from core.cli.common import CliError, add_common, cli_project, emit_json, fail_from
from core.storage import fileio

if TYPE_CHECKING:
    from core.project.model import Project

SECTIONS_SHOWN = 6
_UNIT_WORDS = {"chars": "characters", "utf16": "characters (UTF-16 units)", "tokens": "tokens (bytes / 4)"}


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``memdesk budget``."""
    p = add_common(subparsers.add_parser(
        "budget", help="show how much of each memory document each agent loads, and where the cut falls"))
    p.add_argument("--file", "-f", metavar="PATH", help="one document (default: every document of the project)")
    p.add_argument("--consumer", "-c", action="append", metavar="NAME",
                   help="check this consumer (repeat or comma-separate; default: the project's choice)")
    p.add_argument("--list-consumers", action="store_true", help="print the consumers and their load limits")
    p.add_argument("--set-consumers", nargs=2, metavar=("PATH", "IDS"),
                   help="choose who reads PATH: comma-separated consumer ids, or 'default'")
    p.set_defaults(func=cmd_budget)


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for item in values or () for v in item.split(",") if v.strip()]


def cmd_budget(args: argparse.Namespace) -> int:
    """Dispatch to the report, the consumer table or the per-document choice."""
    if args.list_consumers:
        return _list_consumers(args)
    project = cli_project(args)
    try:
        if args.set_consumers:
            return _set_consumers(args, project)
        return _report(args, project)
    finally:
        project.close()


def _list_consumers(args: argparse.Namespace) -> int:
    try:
        table = all_consumers()
    except Exception as exc:
        raise fail_from(exc) from exc
    if args.json:
        emit_json([{"id": c.id, "name": c.name, "builtin": c.builtin,
                    "rules": [r.model_dump(mode="json", by_alias=True, exclude_none=True) for r in c.rules]}
                   for c in table.values()])
        return 0
    for c in table.values():
        print(f"{c.id} — {c.name}{'' if c.builtin else ' (user-defined)'}")
        for r in c.rules:
            limits = ", ".join(f"{v:,} {_UNIT_WORDS.get(k, k)}" for k, v in r.limits().items()) or "no cut"
            window = f"; {r.read_window:,} lines a read" if r.read_window else ""
            print(f"  {', '.join(r.applies_to)}: {limits}{window} ({r.load}) — {r.what}")
            if r.source:
                print(f"    source: {r.source}")
    return 0


def _set_consumers(args: argparse.Namespace, project: Project) -> int:
    path, ids = args.set_consumers
    reset = ids.strip().lower() == "default"
    wanted = [] if reset else _split([ids])
    if not wanted and not reset:
        raise CliError("give consumer ids (for example fusion,claude-code) or 'default'", 2)
    try:
        rel = project.resolve_path(path)
        project.update_settings(consumers_patch(project.settings, rel, wanted))
    except Exception as exc:
        raise fail_from(exc) from exc
    chosen = chosen_consumer_ids(rel, project.settings)
    if args.json:
        emit_json({"path": rel, "consumers": chosen, SETTING_KEY: project.settings.memdesk_budget_consumers})
    else:
        print(f"{rel} is read by: {', '.join(chosen)}{' (the defaults)' if reset else ''}")
    return 0


def _report(args: argparse.Namespace, project: Project) -> int:
    override = _split(args.consumer)
    try:
        table = all_consumers()
        for cid in override:
            get_consumer(cid, table)
        listed = [(d.path, d.label) for d in project.documents()]
        docs = [(project.resolve_path(args.file), None)] if args.file else listed
        labels = dict(listed)
        out = []
        for rel, label in docs:
            text = project.read(rel)
            ids = override or chosen_consumer_ids(rel, project.settings)
            budgets = document_budget(text, rel, [table[i] for i in ids if i in table])
            out.append((rel, label or labels.get(rel, ""), text, budgets))
    except Exception as exc:
        raise fail_from(exc) from exc
    if args.json:
        emit_json({"documents": [
            {"path": rel, "label": label, "lines": line_count(text), "bytes": len(text.encode("utf-8")),
             "consumers": [b.to_json() for b in budgets]} for rel, label, text, budgets in out]})
        return 0
    if not out:
        print("No memory documents in this project yet.", file=sys.stderr)
    for rel, label, text, budgets in out:
        size = fileio.format_size(len(text.encode("utf-8")))
        print(f"{rel}{f' ({label})' if label else ''} — {line_count(text):,} lines, {size}")
        for b in budgets:
            _print_budget(b)
    return 0


def _print_budget(b: ConsumerBudget) -> None:
    print(f"  {b.consumer_name} ({b.consumer_id}): {b.what}")
    print(f"    {b.cut_text()}")
    if b.measures:
        print(f"    {b.usage_text()}")
    if b.sections:
        shown = ", ".join(f"{s.title or '(untitled)'} (line {s.line:,}, {'wholly' if s.wholly else 'partly'})"
                          for s in b.sections[:SECTIONS_SHOWN])
        more = len(b.sections) - SECTIONS_SHOWN
        print(f"    past the cut: {shown}{f', and {more} more' if more > 0 else ''}")
    for note in b.notes:
        print(f"    note: {note}")
