"""When an unattended consolidation may apply itself: memdesk's own setting, in its state folder.

``.fusion/memdesk/consolidation.json``: ``{"unattended": false, "maxChangeBytes": 65536}``. Fusion's
store is never written. An unattended run (scheduled) applies its proposal only when the setting is on,
the conservation check finds nothing lost, and the change (bytes removed plus added) is under the
threshold; otherwise it waits for review with the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core.consolidation.model import ConsolidationProposal
from core.errors import MemoryBackendError, SettingsError
from core.storage import fileio, statefiles

__all__ = ["POLICY_PATH", "Policy", "change_policy", "load_policy", "save_policy", "wait_reason"]

POLICY_PATH = f"{fileio.MEMDESK_DIR}/consolidation.json"
DEFAULT_MAX_CHANGE_BYTES = 64 * 1024


@dataclass(frozen=True)
class Policy:
    """Whether unattended runs apply themselves, and the largest change they may apply."""

    unattended: bool = False
    max_change_bytes: int = DEFAULT_MAX_CHANGE_BYTES

    def to_json(self) -> dict[str, Any]:
        """camelCase JSON, as stored."""
        return {"unattended": self.unattended, "maxChangeBytes": self.max_change_bytes}


def load_policy(root: Path | str) -> Policy:
    """The project's policy (defaults when the file is absent); ``SettingsError`` when it is malformed."""
    try:
        text = fileio.read_in_root(root, POLICY_PATH, max_size=64 * 1024)
    except MemoryBackendError as exc:
        raise SettingsError(f"{POLICY_PATH}: {exc}") from exc
    if text is None:
        return Policy()
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SettingsError(f"{POLICY_PATH} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{POLICY_PATH} does not hold a JSON object")
    unattended = data.get("unattended", False)
    limit = data.get("maxChangeBytes", DEFAULT_MAX_CHANGE_BYTES)
    if not isinstance(unattended, bool):
        raise SettingsError(f'{POLICY_PATH}: "unattended" must be true or false')
    if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= fileio.MAX_FILE_SIZE * 4:
        raise SettingsError(f'{POLICY_PATH}: "maxChangeBytes" must be a whole number of bytes from 0 to '
                            f"{fileio.MAX_FILE_SIZE * 4:,}")
    return Policy(unattended, limit)


def save_policy(root: Path | str, policy: Policy) -> None:
    """Store the policy in memdesk's state."""
    if not 0 <= policy.max_change_bytes <= fileio.MAX_FILE_SIZE * 4:
        raise SettingsError(f"maxChangeBytes must be from 0 to {fileio.MAX_FILE_SIZE * 4:,}")
    statefiles.write("consolidation-policy", root, json.dumps(policy.to_json(), indent=2) + "\n", source="settings")


def change_policy(root: Path | str, *, unattended: bool | None = None, max_change_bytes: int | None = None) -> Policy:
    """Change the given fields (``None``: keep) and save, reading, changing and writing as one under the file's
    lock: the app's switch and ``memdesk consolidation policy`` changing different fields at once both stay."""
    with statefiles.lock("consolidation-policy", root):
        policy = load_policy(root)
        policy = replace(policy, unattended=policy.unattended if unattended is None else unattended,
                         max_change_bytes=policy.max_change_bytes if max_change_bytes is None else max_change_bytes)
        save_policy(root, policy)
    return policy


def wait_reason(policy: Policy, proposal: ConsolidationProposal) -> str | None:
    """Why an unattended run must wait for review (``None``: it may apply itself)."""
    if not policy.unattended:
        return "unattended runs are off (memdesk consolidation policy)"
    if proposal.lost_facts:
        n = len(proposal.lost_facts)
        return f"{n} fact{'s' if n != 1 else ''} would be lost"
    if proposal.change_bytes > policy.max_change_bytes:
        return (f"the change is {fileio.format_size(proposal.change_bytes)}, over the "
                f"{fileio.format_size(policy.max_change_bytes)} limit for unattended runs")
    return None
