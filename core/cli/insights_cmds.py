"""``memdesk prune validate|apply FILE`` and ``memdesk audit``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from core.cli.common import CliError, add_common, emit_json, fail_from, project_root
from core.errors import MemoryBackendError
from core.storage import fileio


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``prune`` and ``audit``."""
    p = subparsers.add_parser("prune", help="validate or apply a proposed prune of the memory")
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    for name, func, text in (("validate", cmd_validate, "check a prune candidate without writing"),
                             ("apply", cmd_apply, "validate and apply a prune candidate")):
        a = add_common(actions.add_parser(name, help=text))
        a.add_argument("file", help="the candidate: a markdown file, or an AI reply (JSON with prunedMemory)")
        a.set_defaults(func=func)
    a = add_common(subparsers.add_parser("audit", help="run the memory audit and print the report"))
    a.add_argument("--write", action="store_true", help="also write .fusion/memory-audit.md")
    a.set_defaults(func=cmd_audit)


def _read_candidate(path_str: str) -> str:
    path = Path(path_str).expanduser()
    try:
        text = fileio.read_text(path)
    except MemoryBackendError as exc:
        raise CliError(str(exc), 2) from exc
    if text is None:
        raise CliError(f"candidate file {path_str!r} does not exist", 2)
    stripped = text.lstrip()
    if stripped.startswith("{") or stripped.startswith("```"):
        from core.insights import InsightParseError, parse_insight_extraction_response

        try:
            result = parse_insight_extraction_response(text)
        except InsightParseError as exc:
            raise CliError(f"{path_str}: {exc}", 2) from exc
        if not result.pruned_memory:
            raise CliError(f"{path_str}: the AI reply has no prunedMemory to apply", 2)
        return result.pruned_memory
    return text


def cmd_validate(args: argparse.Namespace) -> int:
    """Print the validation of a prune candidate; exit 1 when it is invalid."""
    from core.insights import validate_prune_candidate

    project_root(args)
    result = validate_prune_candidate(_read_candidate(args.file))
    if args.json:
        emit_json(result)
    else:
        verdict = "valid" if result.valid else "INVALID"
        print(f"{verdict}: {result.reason} ({result.size:,} characters)")
    return 0 if result.valid else 1


def cmd_apply(args: argparse.Namespace) -> int:
    """Apply a prune candidate (old memory kept in history) and record the outcome in the audit."""
    from core.insights import apply_memory_pruning, record_audit

    root = project_root(args)
    candidate = _read_candidate(args.file)
    try:
        outcome = apply_memory_pruning(root, candidate)
        record_audit(root, pruning=outcome)
    except Exception as exc:
        raise fail_from(exc) from exc
    if args.json:
        emit_json(outcome)
    elif outcome.applied:
        print(f"Pruned: {outcome.original_size:,} → {outcome.new_size:,} characters ({outcome.size_delta:+,})")
    else:
        print(f"Not applied: {outcome.reason}")
    return 0 if outcome.applied else 1


def cmd_audit(args: argparse.Namespace) -> int:
    """Print the audit report (markdown, or JSON with --json)."""
    from core.insights import generate_memory_audit, render_memory_audit_markdown

    root = project_root(args)
    try:
        report = generate_memory_audit(root)
        markdown = render_memory_audit_markdown(report)
        if args.write:
            from core.insights.audit import write_memory_audit

            write_memory_audit(root, markdown)
    except Exception as exc:
        raise fail_from(exc) from exc
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        print(markdown)
    return 0
