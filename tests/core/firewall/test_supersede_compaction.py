"""Offline compaction drops entries marked ``[superseded DATE]`` (docs/firewall.md) and its ledger says
what superseded each one: the kept entry most like it, or none when no kept entry is."""

from __future__ import annotations

from pathlib import Path

from core.consolidation import apply_proposal, run_compact
from core.project import Project
from core.providers import OfflineProvider

OLD = "- [superseded 2026-11-30] Narwhal lease expiry uses the worker clock for every claimed job"
NEW = "- Narwhal lease expiry uses the DB clock `now()` for every claimed job, never the worker clock"
LONE = "[superseded 2026-11-29] Deploys of the narwhal service go out on Fridays"


def test_offline_compaction_drops_superseded_entries_and_names_what_superseded_them(real_project: Path):
    path = real_project / ".fusion/memory.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text + f"\n{OLD}\n\n{NEW}\n\n<!-- 2026-11-20 -->\n{LONE}\n", encoding="utf-8")
    old_line = path.read_text(encoding="utf-8").split("\n").index(OLD) + 1
    project = Project(real_project)
    proposal = run_compact(project, ".fusion/memory.md", OfflineProvider()).proposal
    assert proposal is not None
    told = sorted((e.line, e.fate, e.describe()) for e in proposal.ledger)
    assert len(told) == 2
    (line, fate, said), (_, fate2, said2) = told
    assert (line, fate) == (old_line, "superseded") and fate2 == "superseded"
    assert said.startswith("superseded by line ") and said.endswith(" of memory.md (marked [superseded 2026-11-30])")
    assert said2 == "superseded (marked [superseded 2026-11-29])"
    assert proposal.lost_facts == ()
    apply_proposal(project, proposal.id)
    after = path.read_text(encoding="utf-8")
    assert "[superseded" not in after and NEW in after
    target = int(said.split("line ")[1].split(" ")[0])
    assert after.split("\n")[target - 1] == NEW  # the line the ledger names is the entry that superseded it
    assert after.startswith(text.rstrip("\n"))  # the real memory itself is untouched
