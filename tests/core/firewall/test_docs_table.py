"""docs/firewall.md's rules table names every rule, and each rule's example hit and near miss behave as documented."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.firewall import injection, secrets, similarity
from core.firewall.engine import Engine

DOCS = Path(__file__).resolve().parents[3] / "docs" / "firewall.md"
RULES = [*secrets.RULES, *injection.RULES]


def test_the_docs_table_lists_every_rule():
    text = DOCS.read_text(encoding="utf-8")
    for rule in (*RULES, *similarity.RULES):
        assert f"| `{rule.name}` | {rule.kind} |" in text, rule.name


@pytest.mark.parametrize("rule", [r for r in RULES if "character" not in r.hit], ids=lambda r: r.name)
def test_each_documented_hit_is_flagged_and_near_miss_is_not(rule):
    def decoded(text: str) -> str:
        return text.encode("ascii", "backslashreplace").decode("unicode_escape") if "\\u" in text else text

    hit = Engine().scan(decoded(rule.hit)).findings
    assert hit and all(f.kind == rule.kind for f in hit), rule.hit
    assert Engine().scan(decoded(rule.near_miss)).findings == (), rule.near_miss
