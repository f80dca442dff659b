"""A text joined by an append is known to extend its prefix without comparing them; any other is compared
(core/documents/grown.py, issue 19 item 7)."""

from __future__ import annotations

import pytest

from core.documents import grown
from core.firewall.entry_index import EntryIndex
from core.firewall.rules import Deadline
from core.firewall.similarity import scan_similar

BASE = "# Memory\n\n" + "".join(f"- entry {i}: the build runs ruff before mypy on the 世界 branch\n" for i in range(50))


@pytest.fixture(autouse=True)
def _clean() -> None:
    grown.forget()


def test_a_joined_text_extends_its_prefix_and_the_record_is_used_once() -> None:
    prefix = BASE * 2
    text = grown.joined(prefix, "\n- the new entry\n")
    assert text == prefix + "\n- the new entry\n"
    assert grown._last and grown._last[0][1] is text
    assert grown.extends(text, prefix)
    assert not grown._last  # answered once, then the texts are no longer held
    assert grown.extends(text, prefix)  # compared now: the same answer


def test_texts_that_were_not_joined_are_compared() -> None:
    prefix = BASE
    text = grown.joined(prefix, "- more\n")
    other = "x" + BASE[1:]  # same length, another text
    assert not grown.extends(text, other)
    assert not grown.extends(prefix, text)  # shorter
    assert not grown.extends(prefix, prefix)  # the same text adds nothing
    assert grown.extends(BASE + "tail", "".join(BASE))  # not joined here: compared, and true
    assert not grown.extends(BASE + "tail", BASE[:-1] + "?")


def test_a_new_join_drops_the_one_before() -> None:
    first = grown.joined(BASE, "- a\n")
    second = grown.joined(first, "- b\n")
    assert len(grown._last) == 1 and grown._last[0] == (first, second)
    assert grown.joined(second, "") == second and not grown._last  # nothing added: nothing remembered


def test_the_entry_index_extended_through_a_join_finds_what_a_fresh_index_finds() -> None:
    index = EntryIndex.build(BASE)
    added = "\n- the deploy job needs the staging token rotated every Monday morning before nine\n"
    grown_text = grown.joined(BASE, added)
    assert index.updated(grown_text) is index and index.text is grown_text
    fresh = EntryIndex.build(grown_text)
    assert [e.entry for e in index.entries] == [e.entry for e in fresh.entries]
    assert index.postings == fresh.postings
    probe = "the deploy job needs the staging token rotated every Monday morning before nine!"
    found = scan_similar(probe, index, Deadline(5.0))
    assert found and found == scan_similar(probe, fresh, Deadline(5.0))
