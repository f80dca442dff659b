"""core.review: what is left of the old in-memory review path (the review itself is tested on core.proposals)."""

from __future__ import annotations

import json
from pathlib import Path

from core.insights import MEMORY_AUDIT_PATH, MEMORY_AUDIT_STATE_PATH, MEMORY_WORKING_PATH
from core.review import reject_prune


def test_reject_records_the_outcome_keeps_memory_and_the_recorded_extraction(sample_project: Path) -> None:
    state_path = sample_project / MEMORY_AUDIT_STATE_PATH
    extraction = {"runAt": "2026-11-28T02:00:00.000Z", "success": True, "insightCount": 3, "duplicateCount": 1,
                  "skippedCount": 0, "summary": "Three new insights from the week"}
    state_path.write_text(json.dumps({"extraction": extraction, "updatedAt": "2026-11-28T02:00:01.000Z"}))
    before = (sample_project / MEMORY_WORKING_PATH).read_bytes()
    outcome = reject_prune(sample_project, "drops the TP-388 notes we still need")
    assert not outcome.applied
    assert (sample_project / MEMORY_WORKING_PATH).read_bytes() == before
    state = json.loads(state_path.read_text())
    assert state["extraction"] == extraction
    assert state["pruning"]["reason"] == "Rejected by the operator: drops the TP-388 notes we still need"
    assert state["pruning"]["originalSize"] == len(before.decode())
    assert "Rejected by the operator" in (sample_project / MEMORY_AUDIT_PATH).read_text()
