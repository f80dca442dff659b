"""Dreams and compaction on Fusion's schedules, while memdesk is open or serving, applied only when safe.

Fusion's settings say when: ``memoryDreamsEnabled`` / ``memoryDreamsSchedule`` (default ``0 4 * * *``)
and ``memoryAutoSummarizeEnabled`` / ``memoryAutoSummarizeSchedule`` (``0 3 * * *``) with
``memoryAutoSummarizeThresholdChars`` (50,000: only a long-term memory at least that long is compacted,
as Fusion's auto-summarize does). The last runs are kept in memdesk's state
(``.fusion/memdesk/consolidation-state.json``). A scheduled run is unattended: its proposal is applied
only when :func:`core.consolidation.policy.wait_reason` finds no reason to wait; otherwise it waits for
review, its reason kept on the proposal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from croniter import croniter

from core.consolidation import store
from core.consolidation.apply import apply_proposal
from core.consolidation.fusion import (
    DEFAULT_AUTO_SUMMARIZE_SCHEDULE,
    DEFAULT_AUTO_SUMMARIZE_THRESHOLD,
    DEFAULT_MEMORY_DREAMS_SCHEDULE,
)
from core.consolidation.policy import Policy, load_policy, wait_reason
from core.consolidation.run import RunOutcome, list_agents, run_compact, run_dream
from core.insights._text import iso_timestamp, parse_timestamp
from core.storage import fileio, statefiles

if TYPE_CHECKING:
    from pathlib import Path

    from core.project.model import Project
    from core.providers import Provider

__all__ = ["STATE_PATH", "DueRun", "due_runs", "fusion_setting", "run_due", "settle_unattended"]

STATE_PATH = f"{fileio.MEMDESK_DIR}/consolidation-state.json"


def fusion_setting(project: Project, key: str, default: Any) -> Any:
    """A Fusion setting memdesk's model may not know: the model's field, else the raw config, else ``default``."""
    field = "".join("_" + c.lower() if c.isupper() else c for c in key)
    value = getattr(project.settings, field, None)
    if value is not None:
        return value
    try:
        text = fileio.read_in_root(project.root, ".fusion/config.json", max_size=1 << 20)
        data = json.loads(text) if text else {}
    except Exception:
        return default
    if isinstance(data, dict) and isinstance(data.get("settings"), dict):
        data = data["settings"]
    return data.get(key, default) if isinstance(data, dict) else default


def _state(project: Project) -> dict[str, Any]:
    return _read_state(project.root)


def _read_state(root: Path | str) -> dict[str, Any]:
    try:
        text = fileio.read_in_root(root, STATE_PATH, max_size=64 * 1024)
        data = json.loads(text) if text else {}
    except Exception:
        return {}
    return data if isinstance(data, dict) else {}


def note_runs(root: Path | str, runs: dict[str, str], *, only_new: bool = False) -> None:
    """Record when runs happened (``{kind: timestamp}``; with ``only_new``, only kinds not noted yet), reading,
    changing and writing the state as one under its lock: the app's schedule and ``memdesk serve`` note at once."""
    with statefiles.lock("consolidation-state", root):
        state = _read_state(root)
        state.update({k: v for k, v in runs.items() if not (only_new and k in state)})
        statefiles.write("consolidation-state", root, json.dumps(state, indent=2) + "\n", source="schedule")


@dataclass(frozen=True)
class DueRun:
    """A run the schedule says is due: ``kind`` dream | compact, and its cron."""

    kind: str
    cron: str


def _due(cron: str, last: str | None, now: datetime) -> bool:
    if not croniter.is_valid(cron):
        return False
    last_run = parse_timestamp(last) if last else None
    if last_run is None:  # never ran: due when the last scheduled time has passed since memdesk started watching
        return False
    return croniter(cron, last_run).get_next(datetime) <= now


def due_runs(project: Project, now: datetime | None = None) -> list[DueRun]:
    """The runs due now by Fusion's settings (a schedule never seen before starts counting from now)."""
    moment = now or datetime.now(UTC)
    state = _state(project)
    out: list[DueRun] = []
    started: dict[str, str] = {}
    for kind, enabled_key, cron_key, default in (
            ("dream", "memoryDreamsEnabled", "memoryDreamsSchedule", DEFAULT_MEMORY_DREAMS_SCHEDULE),
            ("compact", "memoryAutoSummarizeEnabled", "memoryAutoSummarizeSchedule", DEFAULT_AUTO_SUMMARIZE_SCHEDULE)):
        if fusion_setting(project, enabled_key, False) is not True:
            continue
        cron = fusion_setting(project, cron_key, default)
        if not isinstance(cron, str):
            continue
        if kind not in state:
            started[kind] = iso_timestamp(moment)
        elif _due(cron, state.get(kind), moment):
            out.append(DueRun(kind, cron))
    if started:
        note_runs(project.root, started, only_new=True)  # a start another process noted first stays
    return out


def settle_unattended(project: Project, outcome: RunOutcome, policy: Policy) -> RunOutcome:
    """Apply an unattended run's proposal when nothing argues against it; else keep why it waits."""
    proposal = outcome.proposal
    if proposal is None:
        return outcome
    reason = wait_reason(policy, proposal)
    if reason is None:
        applied = apply_proposal(project, proposal.id, author="memdesk (unattended)")
        if applied.applied:
            return replace(outcome, status="applied", message=f"Applied unattended: {applied.message}")
        reason = applied.message

    def keep(p: Any) -> tuple[Any, None]:
        return replace(p, extra={**p.extra, "waitReason": reason}), None

    store.update(project.root, proposal.id, keep)
    return replace(outcome, message=f"{outcome.message}; waits for review: {reason}",
                   details={**outcome.details, "waitReason": reason})


def run_due(project: Project, provider: Provider, now: datetime | None = None) -> list[RunOutcome]:
    """Run whatever is due (dreams for the project and every agent; compaction of MEMORY.md over the threshold)."""
    moment = now or datetime.now(UTC)
    policy = load_policy(project.root)
    outcomes: list[RunOutcome] = []
    due = due_runs(project, moment)
    for run in due:
        if run.kind == "dream" and project.layout.layered:
            for agent in [None, *list_agents(project)]:
                outcome = run_dream(project, provider, agent=agent, now=moment, origin="scheduled")
                outcomes.append(settle_unattended(project, outcome, policy))
        elif run.kind == "compact":
            threshold = fusion_setting(project, "memoryAutoSummarizeThresholdChars", DEFAULT_AUTO_SUMMARIZE_THRESHOLD)
            text = project.read(project.memory_path)
            if isinstance(threshold, int) and len(text) >= threshold:
                outcome = run_compact(project, project.memory_path, provider, now=moment, origin="scheduled")
                outcomes.append(settle_unattended(project, outcome, policy))
    if due:
        note_runs(project.root, {run.kind: iso_timestamp(moment) for run in due})
    return outcomes


class ScheduledRuns:
    """Runs what is due for some projects every ``interval_s`` on a daemon thread (``memdesk serve``).

    The provider is the user's default (:func:`core.providers.resolve_provider`), resolved at each tick
    so a changed config is taken; any failure is logged and the next tick tries again.
    """

    def __init__(self, roots: list[Any], interval_s: float = 60.0) -> None:
        import threading

        self.roots = list(roots)
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="memdesk-consolidation", daemon=True)

    def start(self) -> ScheduledRuns:
        """Start ticking."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop after the current tick."""
        self._stop.set()

    def tick(self) -> list[RunOutcome]:
        """One pass over every project (what the thread does each interval)."""
        import logging

        from core.project.model import Project
        from core.providers import resolve_provider

        outcomes: list[RunOutcome] = []
        for root in self.roots:
            try:
                project = Project(root)
                try:
                    if due_runs(project):
                        outcomes += run_due(project, resolve_provider())
                finally:
                    project.close()
            except Exception as exc:  # a broken project or provider must not stop the others
                logging.getLogger(__name__).warning("scheduled consolidation of %s failed: %s", root, exc)
        return outcomes

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.tick()
