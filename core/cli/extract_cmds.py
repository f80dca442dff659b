"""``memdesk extract``, ``memdesk proposals`` and ``memdesk run-scheduled``.

``extract`` runs one extraction and stores its proposal; ``proposals`` lists what waits for review
and accepts or rejects it; ``run-scheduled`` runs the extraction when the project's schedule says it
is due (for cron or a systemd timer). Exit codes: 0 success, 1 failure, 2 bad input.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from core.cli.common import CliError, add_action, add_common, emit_json, fail_from, project_root


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``extract``, ``proposals`` and ``run-scheduled``."""
    p = add_common(subparsers.add_parser("extract", help="run one insight extraction and store it for review"))
    p.add_argument("--provider", metavar="NAME", help="provider from your user config (default: your default; "
                   "'offline' is the rule-based one)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_extract)

    p = subparsers.add_parser("proposals", help="list and review what extractions proposed")
    add_common(p)
    p.add_argument("--all", dest="include_reviewed", action="store_true", help="list reviewed proposals too")
    p.set_defaults(func=cmd_list)
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    a = add_action(actions, "list", "list proposals waiting for review (default)")
    a.add_argument("--all", dest="include_reviewed", action="store_true", default=argparse.SUPPRESS,
                   help="include reviewed proposals")
    a.set_defaults(func=cmd_list)
    a = add_action(actions, "show", "show one proposal")
    a.add_argument("id")
    a.set_defaults(func=cmd_show)
    for name, func, text in (("accept", cmd_accept, "merge insights into .fusion/memory-insights.md"),
                             ("reject", cmd_reject, "reject insights")):
        a = add_action(actions, name, text)
        a.add_argument("id")
        which = a.add_mutually_exclusive_group()
        which.add_argument("--insight", "-i", type=int, action="append", metavar="N", help="insight number (repeat)")
        which.add_argument("--all", action="store_true", help="every pending insight")
        a.set_defaults(func=func)
    for name, func, text in (("apply-prune", cmd_apply_prune, "apply the proposed prune (old memory kept in history)"),
                             ("reject-prune", cmd_reject_prune, "reject the proposed prune")):
        a = add_action(actions, name, text)
        a.add_argument("id")
        a.set_defaults(func=func)

    from core.cli import consolidation_cmds  # dream and compaction proposals are reviewed here too

    consolidation_cmds.add_proposal_actions(actions, add_action)

    p = add_common(subparsers.add_parser("run-scheduled", help="run the extraction if the schedule says it is due"))
    p.set_defaults(func=cmd_run_scheduled)


def _fail(exc: Exception) -> CliError:
    """Turn a proposal, provider or core error into a one-line :class:`CliError`."""
    from core.proposals import ProposalError
    from core.providers import ProviderError

    if isinstance(exc, ProposalError):
        return CliError(exc.message, 1 if exc.code == "CORRUPT" else 2)
    if isinstance(exc, ProviderError):
        return CliError(exc.message, 2 if exc.kind == "config" else 1)
    return fail_from(exc)


class _NoTracebacks(logging.Filter):
    """Drops log records that carry a traceback: the failure is reported in the run's one-line error."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.exc_info


@contextmanager
def _one_line_errors() -> Iterator[None]:
    """While a run goes, keep ``log.exception`` tracebacks off stderr (``MEMDESK_DEBUG=1`` keeps them)."""
    if os.environ.get("MEMDESK_DEBUG"):
        yield
        return
    handlers = logging.getLogger().handlers
    quiet = _NoTracebacks()
    for handler in handlers:
        handler.addFilter(quiet)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(quiet)


def _progress(quiet: bool) -> Any:
    last: list[str] = [""]

    def report(pct: int, msg: str) -> None:
        if not quiet and msg != last[0] and sys.stderr.isatty():
            last[0] = msg
            print(f"\r[{pct:3d}%] {msg[:70]:<70}", end="", file=sys.stderr, flush=True)
    return report


def cmd_extract(args: argparse.Namespace) -> int:
    """Run one extraction with the chosen provider and store its proposal; exit 1 when it fails."""
    from core.automation.extraction import run_extraction
    from core.providers import resolve_provider

    root = project_root(args)
    try:
        provider = resolve_provider(args.provider)
    except Exception as exc:
        raise _fail(exc) from exc
    with _one_line_errors():
        run = run_extraction(root, provider, progress=_progress(args.quiet))
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    if args.json:
        emit_json(run)
    elif run.ok:
        print(run.message)
        if run.proposal_id:
            print(f"Review it: memdesk proposals show {run.proposal_id}")
    if not run.ok:
        raise CliError(f"extraction {run.status}: {run.message}", 1)
    return 0


def _short(proposal: Any) -> str:
    pending = len(proposal.pending_insights)
    return (f"{proposal.id}  {proposal.created_at[:16].replace('T', ' ')}  {proposal.provider:<10} "
            f"{pending}/{len(proposal.insights)} insights pending  prune: {proposal.prune_status}")


def cmd_list(args: argparse.Namespace) -> int:
    """List proposals (pending ones unless --all)."""
    from core.proposals import list_proposals

    root = project_root(args)
    warnings: list[str] = []
    proposals = list_proposals(root, pending_only=not args.include_reviewed, warnings=warnings)
    for warning in warnings:
        print(f"memdesk: warning: {warning}", file=sys.stderr)
    from core.cli.consolidation_cmds import list_lines

    consolidations = list_lines(args, args.include_reviewed)
    if args.json:
        emit_json(proposals)
    elif consolidations:
        for line in [*map(_short, proposals), *consolidations]:
            print(line)
    elif not proposals:
        print("Nothing waits for review." if not args.include_reviewed else "No proposals.")
    else:
        for proposal in proposals:
            print(_short(proposal))
    return 0


def _load(args: argparse.Namespace) -> Any:
    from core.proposals import load_proposal

    try:
        return load_proposal(project_root(args), args.id)
    except Exception as exc:
        raise _fail(exc) from exc


def cmd_show(args: argparse.Namespace) -> int:
    """Print a proposal: its insights with their numbers and statuses, and the prune's state."""
    from core.cli import consolidation_cmds
    from core.proposals import is_stale

    if consolidation_cmds.is_consolidation(args):
        return consolidation_cmds.cmd_show(args)
    proposal = _load(args)
    if args.json:
        emit_json(proposal)
        return 0
    print(_short(proposal))
    print(f"Summary: {proposal.summary}")
    for item in proposal.insights:
        source = f" (source: {item.insight.source})" if item.insight.source else ""
        print(f"  #{item.number} [{item.status}] {item.insight.category}: {item.insight.content}{source}")
    if proposal.duplicate_count:
        print(f"  ({proposal.duplicate_count} more already in the insights file)")
    stale = proposal.prune_status == "pending" and is_stale(project_root(args), proposal)
    print(f"Prune: {'stale' if stale else proposal.prune_status} — {proposal.prune_message}")
    if proposal.pruned_memory is not None:
        print(f"  proposed memory: {len(proposal.pruned_memory):,} characters")
    return 0


def _numbers(args: argparse.Namespace) -> list[int] | None:
    if args.all:
        return None
    if not args.insight:
        raise CliError("say which insights: --insight N (repeatable) or --all", 2)
    return args.insight


def _review(args: argparse.Namespace, accept: bool) -> int:
    from core.proposals import accept_insights, reject_insights

    root = project_root(args)
    numbers = _numbers(args)
    try:
        review = accept_insights(root, args.id, numbers) if accept else reject_insights(root, args.id, numbers)
    except Exception as exc:
        raise _fail(exc) from exc
    if args.json:
        emit_json(review)
    else:
        print(review.message)
    return 0


def cmd_accept(args: argparse.Namespace) -> int:
    """Merge the chosen insights into the insights file."""
    return _review(args, True)


def cmd_reject(args: argparse.Namespace) -> int:
    """Reject the chosen insights (or a whole dream or compaction proposal)."""
    from core.cli import consolidation_cmds

    if consolidation_cmds.is_consolidation(args):
        return consolidation_cmds.cmd_reject(args)
    return _review(args, False)


def _prune(args: argparse.Namespace, apply: bool) -> int:
    from core.proposals import apply_prune, reject_prune

    root = project_root(args)
    try:
        review = apply_prune(root, args.id) if apply else reject_prune(root, args.id)
    except Exception as exc:
        raise _fail(exc) from exc
    if args.json:
        emit_json(review)
    if apply and not review.applied:
        raise CliError(review.message, 1)
    if not args.json:
        print(review.message)
    return 0


def cmd_apply_prune(args: argparse.Namespace) -> int:
    """Apply the proposal's prune; exit 1 when it is stale, invalid or already decided."""
    return _prune(args, True)


def cmd_reject_prune(args: argparse.Namespace) -> int:
    """Reject the proposal's prune."""
    return _prune(args, False)


def cmd_run_scheduled(args: argparse.Namespace) -> int:
    """Run what is due; exit 0 when nothing was due or the run succeeded, 1 when it failed."""
    from core.automation.schedule import run_scheduled

    root = project_root(args)
    try:
        outcome = run_scheduled(root)
    except Exception as exc:
        raise _fail(exc) from exc
    if args.json:
        emit_json(outcome)
    if outcome.status == "failed":
        raise CliError(outcome.message, 1)
    if not args.json:
        print(outcome.message)
    return 0
