"""Unattended runs: ``memdesk run-scheduled`` runs the extraction when it is due and stores its proposal.

A run is due when insight extraction is enabled in the project's settings, the cron schedule has a
fire time in ``(lastRunAt, now]`` (or nothing ran yet), and ``should_trigger_extraction`` agrees
(minimum interval elapsed and the memory grew enough). The schedule record is kept in sync in
``.fusion/memdesk/automations.json``; the last run in ``.fusion/memdesk/schedule-state.json``
(``{"lastRunAt", "lastMemorySize", "lastStatus", "lastMessage"}``). Cron times are UTC.

The provider comes from the user's config, never from the project. A prune is applied unattended
only when the user turned ``autoApplyPrune`` on in their own config, and only when it is valid, not
stale and conservative (it removes at most half of the entries and of the bytes, see
:func:`core.insights.prune.unattended_prune_refusal`); otherwise it waits for review like everything else.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from croniter import croniter

from core.automation.extraction import ExtractionRun, run_extraction
from core.insights import read_working_memory, should_trigger_extraction, sync_insight_extraction_automation
from core.insights._text import iso_timestamp, parse_timestamp, to_utc
from core.insights.prune import unattended_prune_refusal
from core.proposals import Proposal, PruneReview, apply_prune, update_proposal
from core.providers import Provider, resolve_provider
from core.settings.model import load_settings
from core.settings.user_config import UserConfig, load_user_config
from core.storage import fileio, statefiles

__all__ = ["SCHEDULE_STATE_PATH", "ScheduledOutcome", "read_schedule_state", "run_scheduled"]

log = logging.getLogger(__name__)

SCHEDULE_STATE_PATH = f"{fileio.MEMDESK_DIR}/schedule-state.json"

ScheduleStatus = Literal["disabled", "not_due", "busy", "ran", "failed"]


@dataclass(frozen=True)
class ScheduledOutcome:
    """What ``run_scheduled`` did: ``status`` disabled|not_due|busy|ran|failed and why.

    ``run`` is the extraction (when one ran); ``prune`` the unattended prune (when one was tried).
    """

    status: ScheduleStatus
    message: str
    run: ExtractionRun | None = None
    prune: PruneReview | None = None
    next_due: str | None = None


def read_schedule_state(root: Path | str) -> dict[str, Any]:
    """Return the last scheduled run's record (``{}`` when none or unreadable); never raises."""
    try:
        text = fileio.read_text(fileio.resolve_in_root(root, SCHEDULE_STATE_PATH))
        data = json.loads(text) if text and text.strip() else {}
        return data if isinstance(data, dict) else {}
    except Exception as exc:  # a broken record only means "never ran"
        log.warning("ignoring %s: %s", SCHEDULE_STATE_PATH, exc)
        return {}


def _write_state(root: Path | str, state: dict[str, Any]) -> None:
    text = json.dumps(state, indent=2, ensure_ascii=False) + "\n"
    statefiles.write("schedule-state", root, text, source="schedule")


def _cron_due(cron: str, last_run: datetime | None, now: datetime) -> tuple[bool, datetime | None]:
    """Whether the cron fires in ``(last_run, now]``, and its next fire time after ``now``."""
    upcoming = croniter(cron, now).get_next(datetime)
    if last_run is None:
        return True, upcoming
    return croniter(cron, last_run).get_next(datetime) <= now, upcoming


def run_scheduled(
    root: Path | str,
    *,
    now: datetime | None = None,
    provider: Provider | None = None,
    user_config: UserConfig | None = None,
) -> ScheduledOutcome:
    """Run the extraction if it is due and store its proposal; apply the prune only if the user opted in.

    Raises :class:`~core.errors.SettingsError` for a broken project or user config and
    :class:`~core.providers.ProviderError` for an unknown default provider; a run that fails is
    reported in the outcome.
    """
    moment = to_utc(now) if now is not None else datetime.now(UTC)
    settings = load_settings(root)
    record = sync_insight_extraction_automation(root, settings)
    if record is None:
        return ScheduledOutcome("disabled", "insight extraction is off for this project (insightExtractionEnabled)")
    lock = fileio.file_lock(root, SCHEDULE_STATE_PATH)
    try:
        lock.acquire(timeout=0)
    except TimeoutError:  # core.storage.locks.LockTimeout (filelock's Timeout where it serves)
        return ScheduledOutcome("busy", "another scheduled run of this project is in progress")
    try:
        return _run_locked(root, settings, record["cronExpression"], moment, provider, user_config)
    finally:
        lock.release()


def _run_locked(root: Path | str, settings: Any, cron: str, moment: datetime, provider: Provider | None,
                user_config: UserConfig | None) -> ScheduledOutcome:
    state = read_schedule_state(root)
    last_run_text = state.get("lastRunAt") if isinstance(state.get("lastRunAt"), str) else None
    last_size = state.get("lastMemorySize") if isinstance(state.get("lastMemorySize"), int) else None
    cron_due, upcoming = _cron_due(cron, parse_timestamp(last_run_text), moment)
    next_due = iso_timestamp(upcoming) if upcoming else None
    if not cron_due:
        return ScheduledOutcome("not_due", f"not due: the schedule {cron!r} next fires at {next_due} (UTC)",
                                next_due=next_due)
    size = len(read_working_memory(root))
    if not should_trigger_extraction(last_run_text, settings, size, last_size, moment):
        why = ("the working memory is empty" if size == 0 else
               f"the minimum interval has not elapsed or the memory grew less than 1000 characters "
               f"({size - (last_size or 0):+,} since the last run)")
        return ScheduledOutcome("not_due", f"not due: {why}", next_due=next_due)

    config = user_config or load_user_config()
    chosen = provider or resolve_provider(None, config)
    run = run_extraction(root, chosen, now=moment, origin="scheduled")
    new_state: dict[str, Any] = {"lastRunAt": run.run_at, "lastStatus": run.status, "lastMessage": run.message}
    # The growth baseline moves only on success, so a failed run is retried at the next fire time.
    new_state["lastMemorySize"] = size if run.ok else last_size
    _write_state(root, new_state)
    if not run.ok:
        return ScheduledOutcome("failed", f"extraction failed: {run.message}", run, next_due=next_due)

    prune: PruneReview | None = None
    message = f"extraction ran: {run.message}"
    if run.proposal_id and run.prune_status == "pending":
        held = _hold_unattended_prune(root, run.proposal_id) if config.auto_apply_prune else None
        if held:
            message += f"; the prune waits for the operator (autoApplyPrune is on, but {held})"
        elif config.auto_apply_prune:
            prune = apply_prune(root, run.proposal_id, now=moment)
            message += f"; unattended prune (autoApplyPrune is on): {prune.message}"
        else:
            message += "; the prune waits for review (autoApplyPrune is off)"
    return ScheduledOutcome("ran", message, run, prune, next_due)


def _layout_of(root: Path | str) -> str:
    # TODO(layout): the lead swaps this for core.documents.layout.detect_layout when the project model lands.
    return "layered" if (Path(root) / ".fusion" / "memory").is_dir() else "seed"


def _hold_unattended_prune(root: Path | str, proposal_id: str) -> str | None:
    """Keep a drastic prune pending (with the reason in the proposal) instead of applying it unattended."""
    def change(proposal: Proposal) -> tuple[Proposal, str | None]:
        if proposal.pruned_memory is None:
            return proposal, None
        reason = unattended_prune_refusal(read_working_memory(root), proposal.pruned_memory,
                                          layout=_layout_of(root))
        if reason is None:
            return proposal, None
        note = f"Not applied unattended: {reason}"
        return replace(proposal, prune_message=note), reason

    return update_proposal(root, proposal_id, change)
