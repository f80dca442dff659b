"""Dreams and compaction run by memdesk: Fusion's bytes, the ledger, the conservation check, apply/rebase.

Formats checked against Fusion (Runfusion/Fusion): ``packages/core/src/memory-dreams.ts`` at
``f4de01a1531bbcfd1aedddbd8c2598a19a8ee619`` and ``packages/core/src/memory/memory-compaction.ts`` at
``34e0e664d2013e8337f8367ab7bf4c18eb2fee00``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.consolidation import (
    RunCancelled,
    apply_proposal,
    list_consolidations,
    load,
    run_compact,
    run_dream,
)
from core.consolidation.fusion import build_dream_prompt, parse_dream_reply
from core.consolidation.policy import Policy, save_policy
from core.consolidation.scheduled import settle_unattended
from core.documents.layout import SEED_SCAFFOLD
from core.project import Project
from core.providers import OfflineProvider, OpenAIProvider
from tests.core.chat_server import Scripted

NOW = datetime(2026, 8, 21, 4, 0, 0, 123000, tzinfo=UTC)
STAMP = "2026-08-21T04:00:00.123Z"
MEM = ".fusion/memory"


def files(root: Path) -> dict[str, bytes]:
    """Every file under .fusion/ except memdesk's own state."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / ".fusion").rglob("*"))
            if p.is_file() and "memdesk" not in p.parts}


def model(server) -> OpenAIProvider:
    return OpenAIProvider("model", server.base_url, "test-model", timeout_s=10)


@pytest.fixture
def layered(layered_project: Path) -> Path:
    for path in layered_project.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return layered_project


def test_offline_dream_stages_then_applies_fusion_bytes(layered):
    before = files(layered)
    dreams0 = (layered / MEM / "DREAMS.md").read_bytes()
    memory0 = (layered / MEM / "MEMORY.md").read_bytes()
    # A fact already dreamed on 2026-08-18 turns up again: recurring, so promoted to MEMORY.md.
    recurring = "- Tests that share one SQLite file across stores see no events from each other."
    with (layered / MEM / "2026-08-20.md").open("a") as f:
        f.write(f"\n{recurring}\n")
    before = files(layered)
    project = Project(layered)
    outcome = run_dream(project, OfflineProvider(), now=NOW)
    assert outcome.status == "staged", outcome.message
    assert files(layered) == before  # staged only
    proposal = outcome.proposal
    assert set(proposal.paths) == {f"{MEM}/2026-08-19.md", f"{MEM}/2026-08-20.md", f"{MEM}/DREAMS.md",
                                   f"{MEM}/MEMORY.md"}
    assert proposal.lost_facts == ()
    result = apply_proposal(project, proposal.id)
    assert result.status == "applied"
    for day in ("2026-08-19", "2026-08-20"):
        assert (layered / MEM / f"{day}.md").read_bytes() == \
            f"# Daily Memory {day}\n\n<!-- Processed into dreams on {STAMP} -->\n".encode()
    dreams = (layered / MEM / "DREAMS.md").read_bytes()
    assert dreams.startswith(dreams0)
    added = dreams[len(dreams0):].decode()
    assert added.startswith("\n## 2026-08-19\n\n") and "\n\n## 2026-08-20\n\n" in added and added.endswith("\n")
    assert "`packages/dashboard/app/hooks/useProjectHealth.ts`" in added  # paths carried forward
    assert "FN-1657" in added and "FN-1529" in added  # task ids carried forward
    memory = (layered / MEM / "MEMORY.md").read_bytes()
    assert memory == memory0 + f"\n## Dream Updates 2026-08-20\n\n{recurring}\n".encode()
    # The 2026-08-18 note was already processed: untouched; the run is recorded in history.
    assert (layered / MEM / "2026-08-18.md").read_bytes() == before[f"{MEM}/2026-08-18.md"]
    sources = {v.source for v in project.list_versions()}
    assert "dream" in sources
    ledger = {(e.path.rsplit("/", 1)[-1], e.fate) for e in proposal.ledger}
    assert ("2026-08-20.md", "promoted") in ledger and ("2026-08-19.md", "merged") in ledger


def test_agent_dream_uses_agent_formats(layered):
    project = Project(layered)
    outcome = run_dream(project, OfflineProvider(), agent="executor-7", now=NOW)
    assert outcome.status == "staged", outcome.message
    apply_proposal(project, outcome.proposal.id)
    base = layered / ".fusion/agent-memory/executor-7"
    assert (base / "2026-08-20.md").read_bytes() == \
        f"# Agent Daily Memory 2026-08-20\n\n<!-- Processed into dreams on {STAMP} -->\n".encode()
    dreams = (base / "DREAMS.md").read_text()
    assert dreams.startswith("# Agent Memory Dreams\n\n<!-- Synthesized patterns from this agent's daily notes. -->\n"
                             "\n## 2026-08-20\n\n")
    assert not (layered / MEM / "2026-08-19.md").read_text().count("Processed")  # the project's notes untouched


def test_model_dream_gets_fusions_prompt_and_losses_are_shown(layered, chat_server):
    chat_server.script(Scripted("## DREAMS\n\n- Polling hooks keep `loading` for the first fetch (FN-1734).\n\n"
                                "## LONG_TERM_UPDATES\n\n- Propagate `searchQuery` to every data hook.\n"),
                       Scripted("## DREAMS\n\nProject switches reset tasks.\n\n## LONG_TERM_UPDATES\n"))
    project = Project(layered)
    before = files(layered)
    outcome = run_dream(project, model(chat_server), now=NOW)
    assert outcome.status == "staged"
    first = chat_server.requests[0].body["messages"][1]["content"]
    daily = (layered / MEM / "2026-08-19.md").read_text()
    assert first == build_dream_prompt("2026-08-19", (layered / MEM / "MEMORY.md").read_text(), daily,
                                       (layered / MEM / "DREAMS.md").read_text())
    assert first.startswith("You are processing project memory in an OpenClaw-style memory system.\n\n")
    lost = {f.fact for f in outcome.proposal.lost_facts}
    assert "packages/dashboard/app/hooks/useProjectHealth.ts" in lost and "FN-1657" in lost
    assert all(f.line >= 1 and f.path.endswith(".md") for f in outcome.proposal.lost_facts)
    refused = apply_proposal(project, outcome.proposal.id)
    assert refused.status == "refused" and "would be lost" in refused.message
    assert files(layered) == before
    apply_proposal(project, outcome.proposal.id, allow_loss=True)
    assert (layered / MEM / "DREAMS.md").read_text().endswith(
        "\n## 2026-08-19\n\n- Polling hooks keep `loading` for the first fetch (FN-1734).\n"
        "\n## 2026-08-20\n\nProject switches reset tasks.\n")


@pytest.mark.parametrize("reply, reason", [
    ("Here are my thoughts on the day.", "no '## DREAMS' section"),
    ("## DREAMS\n\n## LONG_TERM_UPDATES\n", "both empty"),
    ("## DREAMS\n\n" + "x" * 1_100_000, "over the"),
])
def test_bad_dream_reply_is_refused_and_nothing_changes(layered, chat_server, reply, reason):
    chat_server.script(Scripted(reply))
    before = files(layered)
    outcome = run_dream(Project(layered), model(chat_server), now=NOW)
    assert outcome.status == "refused" and reason in outcome.message
    assert files(layered) == before and list_consolidations(layered) == []


@pytest.mark.parametrize("reply, reason", [
    ("", "empty"),
    ("# Project Memory\n\n## Decisions\n\n- one\n", "drops 3 sections"),
    ("Sure! I compacted it for you.", "drops"),
])
def test_bad_compaction_reply_is_refused(layered, chat_server, reply, reason):
    chat_server.script(Scripted(reply))
    before = files(layered)
    outcome = run_compact(Project(layered), "MEMORY.md", model(chat_server))
    assert outcome.status == "refused" and reason in outcome.message
    assert files(layered) == before


def test_model_compaction_sends_fusions_system_prompt(layered, chat_server):
    text = (layered / MEM / "MEMORY.md").read_text()
    lines = text.split("\n")
    victim = next(i for i, line in enumerate(lines) if "`" in line and line.startswith("- "))
    compacted = "\n".join(lines[:victim] + lines[victim + 1:])
    chat_server.script(Scripted(compacted))
    outcome = run_compact(Project(layered), "MEMORY.md", model(chat_server))
    messages = chat_server.requests[0].body["messages"]
    assert messages[0]["content"].startswith("You are a memory distillation assistant for a software development")
    assert messages[1]["content"] == text
    ledger = outcome.proposal.ledger
    assert [(e.line, e.fate) for e in ledger] == [(victim + 1, "removed")]
    assert outcome.proposal.lost_facts and all(f.line == victim + 1 for f in outcome.proposal.lost_facts)


def test_offline_compaction_of_seed_memory_merges_and_keeps_every_fact(real_project):
    path = real_project / ".fusion/memory.md"
    text = path.read_text()
    dup = "- Always run `pnpm test --filter @fusion/core` before a merge (see FN-1734)."
    near = "- Always run `pnpm test --filter @fusion/core` before merging (see FN-1734)."
    extra = (f"\n{dup}\n\n{dup}\n\n{near}\n\n- Waiting on review for this session, probably nothing\n\n"
             "- **Lease expiry clock**: use the app clock\n\n- **Lease expiry clock**: use the DB clock `now()`\n")
    path.write_text(text + extra)
    project = Project(real_project)
    outcome = run_compact(project, ".fusion/memory.md", OfflineProvider())
    proposal = outcome.proposal
    fates = sorted((e.fate, e.reason) for e in proposal.ledger)
    assert fates == [("dropped", "transient session note with no id, path or number"),
                     ("merged", "exact duplicate"), ("merged", "near duplicate"),
                     ("superseded", "same subject, newer value")]
    assert proposal.lost_facts == ()
    apply_proposal(project, proposal.id)
    after = path.read_text()
    assert after.count(dup) == 1 and near not in after and "use the DB clock `now()`" in after
    assert "use the app clock" not in after
    assert [line for line in after.split("\n") if line.startswith("## ")] == \
        [line for line in text.split("\n") if line.startswith("## ")]
    assert after.startswith(text.rstrip("\n"))  # the real memory itself had nothing to compact


def test_rebase_onto_an_append_and_conflict_on_an_edit(layered):
    project = Project(layered)
    proposal = run_dream(project, OfflineProvider(), now=NOW).proposal
    # An agent appends to DREAMS.md meanwhile: the dream block goes after it, as Fusion's append would.
    with (layered / MEM / "DREAMS.md").open("a") as f:
        f.write("\n- appended by an agent\n")
    dreams_change = next(c.number for c in proposal.changes if c.path.endswith("DREAMS.md"))
    result = apply_proposal(project, proposal.id, [dreams_change])
    assert result.rebased == (f"{MEM}/DREAMS.md",)
    text = (layered / MEM / "DREAMS.md").read_text()
    assert text.index("- appended by an agent") < text.index("## 2026-08-19")
    # An agent adds to a daily note: resetting it now would lose that, so it is a conflict and nothing is written.
    with (layered / MEM / "2026-08-20.md").open("a") as f:
        f.write("\n- FN-2001 the new note\n")
    before = files(layered)
    result = apply_proposal(project, proposal.id)
    assert result.status == "conflict" and "2026-08-20.md" in result.message
    assert files(layered) == before
    assert load(layered, proposal.id).status == "conflict"


def test_cancel_mid_run_leaves_nothing(layered):
    before = files(layered)
    calls = []

    def cancel() -> bool:
        calls.append(1)
        return len(calls) > 2

    with pytest.raises(RunCancelled):
        run_dream(Project(layered), OfflineProvider(), now=NOW, cancel=cancel)
    assert files(layered) == before and list_consolidations(layered) == []


def test_partial_apply_then_the_rest(layered):
    project = Project(layered)
    proposal = run_dream(project, OfflineProvider(), now=NOW).proposal
    daily = next(c.number for c in proposal.changes if c.path.endswith("2026-08-19.md"))
    refused = apply_proposal(project, proposal.id, [daily])  # resetting a note alone would lose its facts
    assert refused.status == "refused" and "FN-1734" in refused.message
    rest = [c.number for c in proposal.changes if c.number != daily]
    assert apply_proposal(project, proposal.id, rest).status == "partly-applied"
    assert apply_proposal(project, proposal.id, [daily]).status == "applied"
    assert "Processed into dreams" in (layered / MEM / "2026-08-19.md").read_text()


def test_unattended_applies_only_safe_small_changes(layered, chat_server):
    project = Project(layered)
    save_policy(layered, Policy(unattended=True, max_change_bytes=1_000_000))
    outcome = settle_unattended(project, run_dream(project, OfflineProvider(), now=NOW, origin="scheduled"),
                                Policy(unattended=True, max_change_bytes=1_000_000))
    assert outcome.status == "applied"
    # A lossy model reply waits, with its reason kept on the proposal.
    (layered / MEM / "2026-08-22.md").write_text("# Daily Memory 2026-08-22\n\n- FN-9 moved `src/a.ts` to `src/b.ts`\n")
    chat_server.script(Scripted("## DREAMS\n\n- moved a file\n"))
    later = datetime(2026, 8, 23, tzinfo=UTC)
    waiting = settle_unattended(project, run_dream(project, model(chat_server), now=later, origin="scheduled"),
                                Policy(unattended=True))
    assert waiting.status == "staged" and "would be lost" in waiting.details["waitReason"]
    assert "FN-9" in (layered / MEM / "2026-08-22.md").read_text()
    assert load(layered, waiting.proposal.id).extra["waitReason"] == waiting.details["waitReason"]


def test_seed_layout_has_no_dreams(real_project):
    outcome = run_dream(Project(real_project), OfflineProvider())
    assert outcome.status == "refused" and "layered" in outcome.message


def test_parse_dream_reply_matches_fusions_extraction():
    reply = parse_dream_reply("intro\n## dreams\n\n  A\n\n## LONG_TERM_UPDATES\nB  \n")
    assert (reply.dreams, reply.long_term_updates) == ("A", "B")
    assert SEED_SCAFFOLD.startswith("# Project Memory")


def test_notes_waiting_in_a_pending_proposal_are_not_staged_twice(layered):
    project = Project(layered)
    first = run_dream(project, OfflineProvider(), now=NOW)
    assert first.status == "staged"
    assert run_dream(project, OfflineProvider(), now=NOW).status == "nothing"
    from core.consolidation import reject_proposal

    reject_proposal(project, first.proposal.id)
    assert run_dream(project, OfflineProvider(), now=NOW).status == "staged"  # rejected: free to dream again


def test_fusion_schedule_runs_dreams_unattended_where_allowed(layered):
    import json

    from core.consolidation.scheduled import due_runs, run_due

    config = layered / ".fusion/config.json"
    data = json.loads(config.read_text())
    data["settings"].update({"memoryDreamsEnabled": True, "memoryDreamsSchedule": "0 4 * * *"})
    config.write_text(json.dumps(data))
    save_policy(layered, Policy(unattended=True, max_change_bytes=1_000_000))
    project = Project(layered)
    assert due_runs(project, datetime(2026, 8, 21, 3, 0, tzinfo=UTC)) == []  # starts counting now
    assert run_due(project, OfflineProvider(), datetime(2026, 8, 21, 3, 30, tzinfo=UTC)) == []
    outcomes = run_due(project, OfflineProvider(), datetime(2026, 8, 21, 4, 1, tzinfo=UTC))
    assert [o.status for o in outcomes][0] == "applied"  # the project's dream; then each agent's
    assert "Processed into dreams on 2026-08-21T04:01:00.000Z" in (layered / MEM / "2026-08-19.md").read_text()
    assert run_due(project, OfflineProvider(), datetime(2026, 8, 21, 5, 0, tzinfo=UTC)) == []  # ran already


def test_an_entry_already_in_long_term_memory_is_kept_not_lost(layered):
    memory = (layered / MEM / "MEMORY.md").read_text()
    from core.consolidation.entries import scan

    line = next(e.text for e in scan(memory) if e.kind == "bullet" and "\n" not in e.text and "`" in e.text)
    (layered / MEM / "2026-08-22.md").write_text(f"# Daily Memory 2026-08-22\n\n{line}\n")
    for name in ("2026-08-19.md", "2026-08-20.md"):
        (layered / MEM / name).write_text(f"# Daily Memory {name[:-3]}\n\n<!-- Processed into dreams on x -->\n")
    project = Project(layered)
    proposal = run_dream(project, OfflineProvider(), now=datetime(2026, 8, 23, tzinfo=UTC)).proposal
    assert f"{MEM}/MEMORY.md" not in proposal.paths
    assert [e.fate for e in proposal.ledger] == ["kept"] and proposal.lost_facts == ()
    assert apply_proposal(project, proposal.id).status == "applied"


def test_an_agents_model_dream_names_the_agent_in_fusions_prompt(layered, chat_server):
    chat_server.script(Scripted("## DREAMS\n\n- reviewer picked up CSS Testing Patterns\n\n## LONG_TERM_UPDATES\n"))
    outcome = run_dream(Project(layered), model(chat_server), agent="reviewer", now=NOW)
    prompt = chat_server.requests[0].body["messages"][1]["content"]
    assert prompt.startswith("You are processing private memory for agent reviewer (reviewer) in an OpenClaw-style "
                             "memory system.\n\nRead today's daily notes and existing long-term memory.")
    assert "\n## Daily Notes\n\n# Daily Memory 2026-08-20\n" in prompt
    assert outcome.status == "staged" and outcome.proposal.lost_facts == ()


def test_a_dream_that_would_overflow_dreams_md_is_refused(layered):
    dreams = layered / MEM / "DREAMS.md"
    dreams.write_text(dreams.read_text() + "\n" + "- an old dream line about `x`\n" * 30_000)  # ~0.9 MiB
    big = "".join(f"- note {k}: `config.key{k}` matters\n" for k in range(6000))
    (layered / MEM / "2026-08-22.md").write_text(f"# Daily Memory 2026-08-22\n\n{big}")
    before = files(layered)
    outcome = run_dream(Project(layered), OfflineProvider(), now=datetime(2026, 8, 23, tzinfo=UTC))
    assert outcome.status == "refused" and "DREAMS.md" in outcome.message and "limit" in outcome.message
    assert files(layered) == before and list_consolidations(layered) == []


def test_a_tampered_proposal_naming_another_file_is_never_applied(layered):
    import json

    project = Project(layered)
    proposal = run_dream(project, OfflineProvider(), now=NOW).proposal
    path = layered / ".fusion/memdesk/consolidations" / f"{proposal.id}.json"
    data = json.loads(path.read_text())
    old = data["documents"][0]["path"]
    data["documents"][0]["path"] = ".fusion/config.json"
    for change in data["changes"]:  # its changes too (else the file is refused as inconsistent on load)
        if change["path"] == old:
            change["path"] = ".fusion/config.json"
    path.write_text(json.dumps(data))
    config = (layered / ".fusion/config.json").read_bytes()
    result = apply_proposal(project, proposal.id)
    assert result.status == "refused" and "not a memory document" in result.message
    assert (layered / ".fusion/config.json").read_bytes() == config


def test_offline_compaction_of_an_agents_memory(layered):
    path = layered / ".fusion/agent-memory/reviewer/MEMORY.md"
    text = path.read_text()
    dup = "- Check `migrations/0042_leases.sql` before approving (FN-2002)."
    path.write_text(text + f"\n{dup}\n\n{dup}\n")
    project = Project(layered)
    outcome = run_compact(project, "agent-memory/reviewer/MEMORY.md", OfflineProvider())
    assert outcome.proposal.paths == (".fusion/agent-memory/reviewer/MEMORY.md",)
    assert [e.reason for e in outcome.proposal.ledger] == ["exact duplicate"] and not outcome.proposal.lost_facts
    apply_proposal(project, outcome.proposal.id)
    assert path.read_text() == text + f"\n{dup}\n"
