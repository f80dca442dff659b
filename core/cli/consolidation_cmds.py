"""``memdesk dream``, ``memdesk compact``, and the consolidation side of ``memdesk proposals show|apply|reject``.

``dream`` and ``compact`` stage one proposal and print its id; nothing is written to memory until
``memdesk proposals apply ID`` (all changes, or ``--change N`` …). ``show`` prints the changes, the
ledger and the conservation check (``--json``: ``changes``, ``ledger``, ``lostFacts``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from core.cli.common import CliError, add_common, cli_project, emit_json, fail_from, project_root


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``dream`` and ``compact``."""
    p = add_common(subparsers.add_parser("dream", help="dream over the daily notes; stage a proposal for review"))
    who = p.add_mutually_exclusive_group()
    who.add_argument("--agent", metavar="ID", help="that agent's own memory (default: the project's)")
    who.add_argument("--all-agents", action="store_true", help="the project's memory and every agent's")
    p.add_argument("--provider", metavar="NAME", help="provider from your user config ('offline': no model)")
    p.set_defaults(func=cmd_dream)
    p = add_common(subparsers.add_parser("compact", help="compact one document; stage a proposal for review"))
    p.add_argument("--file", required=True, metavar="PATH", help="the document (MEMORY.md, DREAMS.md, memory.md, …)")
    p.add_argument("--provider", metavar="NAME", help="provider from your user config ('offline': no model)")
    p.set_defaults(func=cmd_compact)
    p = add_common(subparsers.add_parser("rewrites", help="other programs' rewrites of memory: list, check, undo"))
    p.add_argument("action", nargs="?", choices=("list", "undo"), default="list")
    p.add_argument("run", nargs="?", help="the run to undo (its id from the list)")
    p.set_defaults(func=cmd_rewrites)
    p = add_common(subparsers.add_parser("consolidation-policy",
                                         help="when scheduled dreams and compactions may apply themselves"))
    p.add_argument("--unattended", choices=("on", "off"), help="let scheduled runs apply themselves when safe")
    p.add_argument("--max-change-bytes", type=int, metavar="N", help="largest change an unattended run may apply")
    p.set_defaults(func=cmd_policy)
    p = add_common(subparsers.add_parser("backups", help="Fusion's memory backups: list, or stage a restore"))
    p.add_argument("action", nargs="?", choices=("list", "restore"), default="list")
    p.add_argument("name", nargs="?", help="the backup to restore (memory-<stamp>)")
    p.set_defaults(func=cmd_backups)


def add_proposal_actions(actions: argparse._SubParsersAction, add_action: Any) -> None:
    """Add ``proposals apply ID [--change N …]`` (``show`` and ``reject`` dispatch here by id)."""
    a = add_action(actions, "apply", "apply a dream or compaction proposal (all changes, or --change N)")
    a.add_argument("id")
    a.add_argument("--change", "-c", type=int, action="append", metavar="N", help="change number (repeat)")
    a.add_argument("--allow-loss", action="store_true", help="apply even though facts would be lost (seen in show)")
    a.set_defaults(func=cmd_apply)


def _provider(name: str | None) -> Any:
    from core.providers import ProviderError, resolve_provider

    try:
        return resolve_provider(name)
    except ProviderError as exc:
        raise CliError(exc.message, 2 if exc.kind == "config" else 1) from exc


def _report(outcomes: list[Any], as_json: bool) -> int:
    if as_json:
        emit_json(outcomes if len(outcomes) > 1 else outcomes[0])
    failed = [o for o in outcomes if not o.ok]
    for outcome in outcomes:
        if not as_json and outcome.ok:
            print(outcome.message)
            if outcome.proposal is not None:
                print(f"Review it: memdesk proposals show {outcome.proposal.id}")
    if failed:
        raise CliError(failed[0].message, 2 if failed[0].status == "refused" else 1)
    return 0


def _run(func: Any, *args: Any, **kwargs: Any) -> Any:
    from core.consolidation import RunCancelled
    from core.providers import ProviderError

    try:
        return func(*args, **kwargs)
    except RunCancelled as exc:
        raise CliError("cancelled; nothing was staged or written", 1) from exc
    except ProviderError as exc:
        raise CliError(f"{exc.message}; nothing was written", 1) from exc
    except Exception as exc:
        raise fail_from(exc) from exc


def cmd_dream(args: argparse.Namespace) -> int:
    """Stage a dream proposal for the project, one agent, or the project and every agent."""
    from core.consolidation import list_agents, run_dream
    from core.documents.layout import check_agent_id

    project = cli_project(args)
    provider = _provider(args.provider)
    if args.agent is not None:
        try:
            agents: list[str | None] = [check_agent_id(args.agent)]
        except Exception as exc:
            raise fail_from(exc) from exc
        if agents[0] not in list_agents(project):
            raise CliError(f"no agent {args.agent!r} has memory here (agents: "
                           f"{', '.join(list_agents(project)) or 'none'})", 2)
    else:
        agents = [None, *list_agents(project)] if args.all_agents else [None]
    outcomes = [_run(run_dream, project, provider, agent=agent) for agent in agents]
    return _report(outcomes, args.json)


def cmd_compact(args: argparse.Namespace) -> int:
    """Stage a compaction proposal for one document."""
    from core.consolidation import run_compact

    project = cli_project(args)
    try:
        path = project.resolve_path(args.file)
    except Exception as exc:
        raise CliError(f"--file: {getattr(exc, 'message', exc)}", 2) from exc
    provider = _provider(args.provider)
    return _report([_run(run_compact, project, path, provider)], args.json)


def is_consolidation(args: argparse.Namespace) -> bool:
    """Whether ``args.id`` names a consolidation proposal (else it is an extraction's)."""
    from core.consolidation import exists

    return exists(project_root(args), args.id)


def _load(args: argparse.Namespace) -> Any:
    from core.consolidation import load

    try:
        return load(project_root(args), args.id)
    except Exception as exc:
        from core.proposals import ProposalError

        if isinstance(exc, ProposalError):
            raise CliError(exc.message, 1 if exc.code == "CORRUPT" else 2) from exc
        raise fail_from(exc) from exc


def cmd_show(args: argparse.Namespace) -> int:
    """Print a consolidation proposal: changes, ledger and the conservation check."""
    proposal = _load(args)
    if args.json:
        data = proposal.to_json()
        data.pop("documents", None)
        data["documents"] = [{"path": d.path, "created": d.before is None} for d in proposal.documents]
        emit_json(data)
        return 0
    print(f"{proposal.id}  {proposal.kind}  {proposal.scope}  {proposal.status}  ({proposal.provider})")
    print(proposal.summary)
    if proposal.extra.get("waitReason"):
        print(f"Waits for review: {proposal.extra['waitReason']}")
    if proposal.message:
        print(proposal.message)
    for change in proposal.changes:
        print(f"\nChange {change.number}: {change.path} (-{len(change.removed)} +{len(change.added)} lines at "
              f"line {change.old_start + 1})")
        for line in change.removed[:8]:
            print(f"  - {line[:150]}")
        if len(change.removed) > 8:
            print(f"  - … {len(change.removed) - 8} more")
        for line in change.added[:8]:
            print(f"  + {line[:150]}")
        if len(change.added) > 8:
            print(f"  + … {len(change.added) - 8} more")
    print(f"\nLedger ({len(proposal.ledger)} entries removed or rewritten):")
    for entry in proposal.ledger:
        first = " ".join(entry.text.split("\n", 1)[0].split())[:90]
        print(f"  {entry.path.rsplit('/', 1)[-1]}:{entry.line}  {first}  → {entry.describe()}")
    lost = proposal.lost_facts
    if lost:
        print(f"\n{len(lost)} fact{'s' if len(lost) != 1 else ''} would be lost:")
        for fact in lost:
            print(f"  {fact.path.rsplit('/', 1)[-1]}:{fact.line}  {fact.kind} {fact.fact!r}  in: {fact.entry[:80]}")
    else:
        print(f"\nConservation check: all {proposal.facts_total} distinctive facts survive (or are marked dropped).")
    return 0


def cmd_apply(args: argparse.Namespace) -> int:
    """Apply a consolidation proposal; exit 1 on a conflict or when facts would be lost."""
    from core.consolidation import apply_proposal
    from core.proposals import ProposalError

    if not is_consolidation(args):
        raise CliError(f"no dream or compaction proposal {args.id!r} (an extraction's prune is applied with "
                       "`memdesk proposals apply-prune ID`)", 2)
    project = cli_project(args)
    try:
        outcome = apply_proposal(project, args.id, args.change, allow_loss=args.allow_loss, author="cli")
    except ProposalError as exc:
        raise CliError(exc.message, 1 if exc.code == "CORRUPT" else 2) from exc
    except Exception as exc:
        raise fail_from(exc) from exc
    if args.json:
        emit_json(outcome)
    if not outcome.applied:
        raise CliError(outcome.message, 1)
    if not args.json:
        print(outcome.message)
    return 0


def cmd_reject(args: argparse.Namespace) -> int:
    """Reject a consolidation proposal."""
    from core.consolidation import reject_proposal

    project = cli_project(args)
    try:
        outcome = reject_proposal(project, args.id)
    except Exception as exc:
        raise fail_from(exc) from exc
    if args.json:
        emit_json(outcome)
    else:
        print(outcome.message, file=sys.stdout if outcome.status == "rejected" else sys.stderr)
    return 0 if outcome.status == "rejected" else 1


def list_lines(args: argparse.Namespace, include_reviewed: bool) -> list[str]:
    """One line per consolidation proposal, for ``memdesk proposals`` (pending ones unless ``include_reviewed``)."""
    from core.consolidation import list_consolidations

    out = []
    for p in list_consolidations(project_root(args), pending_only=not include_reviewed):
        out.append(f"{p.id}  {p.created_at[:16].replace('T', ' ')}  {p.provider:<10} {p.kind} {p.scope}: "
                   f"{len(p.changes)} changes, {len(p.lost_facts)} facts would be lost  [{p.status}]")
    return out


def cmd_rewrites(args: argparse.Namespace) -> int:
    """List other programs' runs with what each lost, or stage undoing one."""
    from core.consolidation.programs import check_run, program_runs, stage_undo

    project = cli_project(args)
    runs = program_runs(project)
    if args.action == "undo":
        run = next((r for r in runs if r.id == args.run), None)
        if run is None:
            raise CliError(f"no run {args.run!r} (see `memdesk rewrites`)", 2)
        proposal = _run(stage_undo, project, run)
        print(f"Staged undo proposal {proposal.id}: {len(proposal.changes)} changes\n"
              f"Review it: memdesk proposals show {proposal.id}")
        return 0
    checked = [(run, check_run(project, run)) for run in runs]
    if args.json:
        emit_json([{**run.to_json(), "lostFacts": [f.to_json() for f in c.lost_facts],
                    "ledger": [e.to_json() for e in c.ledger]} for run, c in checked])
        return 0
    if not checked:
        print("No rewrite by another program is in history.")
    for run, c in checked:
        print(f"{run.id}  {run.describe()}: {', '.join(run.paths)}; {len(c.lost_facts)} facts lost")
    return 0


def cmd_backups(args: argparse.Namespace) -> int:
    """List Fusion's memory backups, or stage restoring one (review it with ``proposals show``)."""
    from core.consolidation.backups import list_backups, stage_restore

    project = cli_project(args)
    if args.action == "restore":
        if not args.name:
            raise CliError("say which backup: memdesk backups restore memory-<stamp>", 2)
        proposal = _run(stage_restore, project, args.name)
        print(f"Staged restore proposal {proposal.id}: {len(proposal.changes)} changes, "
              f"{len(proposal.lost_facts)} facts would be lost\nReview it: memdesk proposals show {proposal.id}")
        return 0
    backups = list_backups(project)
    if args.json:
        emit_json(backups)
    elif not backups:
        print("No Fusion memory backup under .fusion/backups/memory/.")
    for b in backups if not args.json else ():
        print(f"{b.name}  {b.scope}: {len(b.files)} documents")
    return 0


def cmd_policy(args: argparse.Namespace) -> int:
    """Show or change the unattended policy (memdesk's own state, never Fusion's settings)."""
    from core.consolidation.policy import POLICY_PATH, change_policy, load_policy
    from core.errors import SettingsError

    root = project_root(args)
    try:
        if args.unattended is not None or args.max_change_bytes is not None:
            policy = change_policy(root, unattended=None if args.unattended is None else args.unattended == "on",
                                   max_change_bytes=args.max_change_bytes)
        else:
            policy = load_policy(root)
    except SettingsError as exc:
        raise CliError(str(exc), 2) from exc
    except Exception as exc:
        raise fail_from(exc) from exc
    if args.json:
        emit_json(policy)
    else:
        print(f"unattended: {'on' if policy.unattended else 'off'}; max change: {policy.max_change_bytes:,} bytes "
              f"({POLICY_PATH})")
    return 0
