"""The supersede marker as the preview, the load budget and every agent's loader see it (docs/firewall.md)."""

from __future__ import annotations

from core.budget.registry import all_consumers
from core.budget.report import budget_for
from core.firewall.similarity import split_entries
from core.firewall.supersede import mark, marker

DOC = "# Project Memory\n\n## Context\n\n- Use the DB clock for lease expiry\n- Use the app server clock for lease expiry\n"


def _marked() -> str:
    return mark(DOC, next(iter(split_entries(DOC))))


def test_every_loader_loads_the_marked_entry_and_the_budget_counts_the_marker():
    marked = _marked()
    assert marked.count(marker()) == 1
    for consumer in all_consumers().values():
        for path in (".fusion/memory.md", ".fusion/memory/MEMORY.md"):
            before = budget_for(DOC, path, consumer)
            after = budget_for(marked, path, consumer)
            assert after.loaded_all == before.loaded_all, consumer.id
            assert after.total_lines == before.total_lines, consumer.id  # the marker adds no line
            grew = {m.unit: m.used - b.used for m, b in zip(after.measures, before.measures, strict=True)}
            for unit in ("bytes", "chars", "utf16"):
                if unit in grew:
                    assert grew[unit] == len(marker()) + 1, (consumer.id, unit)
            if "tokens" in grew:
                assert grew["tokens"] > 0, consumer.id


def test_the_offline_prune_offers_to_drop_superseded_entries_and_never_makes_them_insights():
    from core.providers.offline import rule_based_reply

    doc = ("# Project Memory\n\n## Architecture\n\n- [superseded 2026-12-01] Use the DB clock for lease expiry\n"
           "- Use the app server clock for lease expiry\n\n## Conventions\n\n- Tabs\n\n## Pitfalls\n\n- Flaky CI\n\n"
           "## Context\n\n- Monorepo\n")
    reply = rule_based_reply(doc, None)
    assert "superseded" not in reply["prunedMemory"] and "Use the app server clock" in reply["prunedMemory"]
    assert reply["pruneReasons"] == [{"line": "- [superseded 2026-12-01] Use the DB clock for lease expiry",
                                      "reason": 'superseded on 2026-12-01 by "Use the app server clock for '
                                                'lease expiry"'}]
    alone = rule_based_reply(doc.replace("- Use the app server clock for lease expiry\n", ""), None)
    assert alone["pruneReasons"] == [{"line": "- [superseded 2026-12-01] Use the DB clock for lease expiry",
                                      "reason": "superseded on 2026-12-01"}]
    assert all("DB clock" not in i["content"] for i in reply["insights"])
