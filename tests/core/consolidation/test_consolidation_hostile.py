"""Hostile input to consolidation (issue 21, bad input): a tampered proposal file, a daily note that is a
link out of the project or a FIFO, a note swapped for a link after staging. Each is refused with one line
naming the problem, or skipped; nothing is written outside the project, no memory document changes."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.consolidation import apply_proposal, run_dream
from core.errors import MemoryBackendError
from core.project import Project
from core.proposals import ProposalError
from core.providers import OfflineProvider, ProviderError
from core.storage.history import versions as history

NOW = datetime(2026, 8, 21, 4, 0, 0, tzinfo=UTC)
MEM = ".fusion/memory"


@pytest.fixture
def layered(layered_project: Path, tmp_path: Path) -> Path:
    for path in layered_project.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    (tmp_path / "outside.md").write_text("OUTSIDE\n", encoding="utf-8")
    return layered_project


def everything(tmp_path: Path) -> dict[str, bytes]:
    """Every plain file under the test's folder (the project and what is beside it), memdesk's state aside."""
    return {str(p.relative_to(tmp_path)): p.read_bytes() for p in sorted(tmp_path.rglob("*"))
            if p.is_file() and not p.is_symlink() and "memdesk" not in p.parts}


def _tamper(d: dict, how: str) -> None:
    first = d["documents"][0]
    if how in ("dotdot", "absolute", "inner-dotdot"):  # the document and its changes, so the path check is met
        old = first["path"]
        _tamper_path(d, how)
        for change in d["changes"]:
            if change["path"] == old:
                change["path"] = first["path"]
        return
    _tamper_rest(d, how)


def _tamper_path(d: dict, how: str) -> None:
    first = d["documents"][0]
    if how == "dotdot":
        first["path"] = "../outside.md"
    elif how == "absolute":
        first["path"] = str(Path("/tmp") / "memdesk-hostile.md")
    elif how == "inner-dotdot":
        first["path"] = f"{MEM}/../../../outside.md"


def _tamper_rest(d: dict, how: str) -> None:
    first = d["documents"][0]
    if how == "huge-number":
        d["changes"][0]["number"] = 10**30
    elif how == "number-as-text":
        d["changes"][0]["number"] = "1"
    elif how == "number-nan":
        d["changes"][0]["number"] = float("nan")
    elif how == "number-as-bool":
        d["changes"][0]["number"] = True
    elif how == "hunk-out-of-range":
        d["changes"][0]["index"] = 10**9
    elif how == "changes-not-a-list":
        d["changes"] = "all of them"
    elif how == "after-not-text":
        first["after"] = 5
    elif how == "after-huge":
        first["after"] = "x" * 2_000_000
    elif how == "document-twice":
        d["documents"].append(dict(first, after=""))
    elif how == "change-of-another-document":
        d["changes"][0]["path"] = f"{MEM}/MEMORY.md"
    elif how == "same-number-twice":
        d["changes"][1]["number"] = d["changes"][0]["number"]
    elif how == "applied-unknown-change":
        d["appliedChanges"] = [999]
    elif how == "status-with-nul":
        d["status"] = "pending\u0000"


@pytest.mark.parametrize("how, said", [
    ("dotdot", "not a memory document"), ("absolute", "not a memory document"),
    ("inner-dotdot", "not a memory document"), ("huge-number", '"number"'), ("number-as-text", '"number"'),
    ("number-as-bool", '"number"'), ("number-nan", '"number"'), ("hunk-out-of-range", "no hunk"), ("changes-not-a-list", '"changes"'),
    ("after-not-text", '"after"'), ("after-huge", "limit"), ("document-twice", "names a document twice"),
    ("change-of-another-document", "which the proposal does not hold"),
    ("same-number-twice", "numbers two changes the same"), ("applied-unknown-change", "no such change"),
    ("status-with-nul", "unknown status"),
])
def test_a_tampered_proposal_is_refused_in_one_line_and_nothing_changes(layered, tmp_path, how, said):
    project = Project(layered)
    proposal = run_dream(project, OfflineProvider(), now=NOW).proposal
    assert proposal is not None and len(proposal.changes) >= 2
    path = layered / ".fusion/memdesk/consolidations" / f"{proposal.id}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    _tamper(data, how)
    path.write_text(json.dumps(data), encoding="utf-8")
    before = everything(tmp_path)
    try:
        outcome = apply_proposal(project, proposal.id)
        message = outcome.message
        assert outcome.status == "refused"
    except (ProposalError, MemoryBackendError) as exc:
        message = str(exc)
    assert said in message and "\n" not in message, message
    assert everything(tmp_path) == before
    assert not Path("/tmp/memdesk-hostile.md").exists()


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_a_daily_note_that_is_a_link_out_or_a_fifo_is_skipped_never_followed(layered, tmp_path, kind):
    note = layered / MEM / "2026-08-19.md"
    note.unlink()
    if kind == "link":
        note.symlink_to(tmp_path / "outside.md")
    else:
        os.mkfifo(note)  # a read would block: it must not be opened
    outcome = run_dream(Project(layered), OfflineProvider(), now=NOW)
    assert outcome.status == "staged"
    assert all(not d.path.endswith("2026-08-19.md") for d in outcome.proposal.documents)
    apply_proposal(Project(layered), outcome.proposal.id, allow_loss=True)
    assert (tmp_path / "outside.md").read_text(encoding="utf-8") == "OUTSIDE\n"
    assert note.is_symlink() if kind == "link" else note.is_fifo()


def test_a_note_swapped_for_a_link_after_staging_is_not_written_through(layered, tmp_path):
    project = Project(layered)
    proposal = run_dream(project, OfflineProvider(), now=NOW).proposal
    note = layered / MEM / "2026-08-19.md"
    note.unlink()
    note.symlink_to(tmp_path / "outside.md")  # the base moved on: to a link out of the project
    before = everything(tmp_path)
    with pytest.raises(MemoryBackendError, match="leaves the project root"):
        apply_proposal(project, proposal.id, allow_loss=True)
    assert everything(tmp_path) == before  # what was written before the refusal was put back


def test_a_forged_ledger_cannot_lose_text_history_keeps_what_it_replaced(layered):
    """A proposal file that calls every line of MEMORY.md "dropped" excuses its facts (the ledger is the
    proposal's own word), but the write goes through the pipeline: the text before is in history."""
    project = Project(layered)
    proposal = run_dream(project, OfflineProvider(), now=NOW).proposal
    path = layered / ".fusion/memdesk/consolidations" / f"{proposal.id}.json"
    rel = f"{MEM}/MEMORY.md"
    current = (layered / rel).read_text(encoding="utf-8")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["documents"] = [{"path": rel, "before": current, "after": "# Project Memory\n"}]
    data["changes"] = [{"number": 1, "path": rel, "index": 0, "removed": [], "added": []}]
    data["ledger"] = [{"path": rel, "line": k + 1, "text": line, "fate": "dropped", "reason": "forged"}
                      for k, line in enumerate(current.splitlines())]
    data["lostFacts"] = []
    path.write_text(json.dumps(data), encoding="utf-8")
    assert apply_proposal(project, proposal.id).status == "applied"
    kept = [history.get_version(layered, v.id)[1] for v in history.list_versions(layered, rel)]
    assert current in kept


def _model(server):
    from core.providers import OpenAIProvider

    return OpenAIProvider("model", server.base_url, "test-model", timeout_s=10)


@pytest.mark.parametrize("scripted", [
    {"body": b"<html>502 Bad Gateway</html>"},  # not JSON
    {"body": b"{" + b" " * (9 * 1024 * 1024) + b"}"},  # over the provider's reply cap
    {"content": "## DREAMS\n\n- a lone surrogate \ud800 here\n\n## LONG_TERM_UPDATES\n\n- x\n"},
    {"content": None},
    {"status": 500, "content": "boom"},
])
def test_a_hostile_model_reply_is_refused_and_nothing_is_written(layered, tmp_path, chat_server, scripted):
    from core.consolidation import list_consolidations
    from tests.core.chat_server import Scripted

    chat_server.script(*[Scripted(**scripted)] * 3)  # the same answer for every daily note asked about
    before = everything(tmp_path)
    try:
        outcome = run_dream(Project(layered), _model(chat_server), now=NOW)
        status, message = outcome.status, outcome.message
    except ProviderError as exc:  # the provider's failure, said in one line (the CLI and the app show it)
        status, message = "refused", exc.message
    assert status == "refused", (status, message)
    assert message and "\n" not in message.strip(), message
    assert everything(tmp_path) == before and list_consolidations(layered) == []


def test_a_reply_with_a_lone_surrogate_is_refused_by_name_for_dreams_and_compaction(layered, tmp_path, chat_server):
    from core.consolidation import run_compact
    from tests.core.chat_server import Scripted

    before = everything(tmp_path)
    chat_server.script(*[Scripted("## DREAMS\n\n- half an emoji \ud83d here\n\n## LONG_TERM_UPDATES\n\n- x\n")] * 3)
    dream = run_dream(Project(layered), _model(chat_server), now=NOW)
    text = (layered / MEM / "MEMORY.md").read_text(encoding="utf-8")
    chat_server.script(Scripted(text.replace("## ", "## \ud83d ", 1)))
    compact = run_compact(Project(layered), "MEMORY.md", _model(chat_server))
    for outcome in (dream, compact):
        assert outcome.status == "refused" and "lone surrogate" in outcome.message, outcome.message
    assert everything(tmp_path) == before


def test_a_backup_copy_over_the_document_limit_is_refused_at_staging_by_name(layered, tmp_path):
    from core.consolidation.backups import stage_restore
    from core.consolidation.store import list_consolidations

    snap = layered / ".fusion/backups/memory/memory-2026-08-20T04-00-00-000Z"
    snap.mkdir(parents=True)
    (snap / "MEMORY.md").write_text("- x\n" * 400_000, encoding="utf-8")  # 1.6 MB
    before = everything(tmp_path)
    with pytest.raises(MemoryBackendError, match="MEMORY.md") as caught:
        stage_restore(Project(layered), snap.name)
    assert "\n" not in str(caught.value)
    assert everything(tmp_path) == before and list_consolidations(layered) == []
