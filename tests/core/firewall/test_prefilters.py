"""The firewall's shortcuts never change what it finds: each is checked against the long way round.

* the near-duplicate lookup without an index (:class:`~core.firewall.similarity.TextLookup`) skips
  entries with too many distinct words to reach a threshold, reading only their first words, and looks
  ASCII words up in the text's lowered UTF-8 bytes instead of ``str.lower()`` of it;
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.firewall import similarity
from core.firewall.rules import Deadline
from core.firewall.similarity import (
    TextLookup,
    _more_distinct_tokens,
    jaccard,
    most_words,
    split_entries,
    tokens,
)

FIXTURES = Path(__file__).resolve().parents[2] / "data"
REAL = (FIXTURES / "fusion-real" / ".fusion" / "memory.md").read_text(encoding="utf-8")

_WORDS = ["use", "the", "DB", "clock", "for", "lease", "expiry", "Scheduler", "retries", "café", "Straße", "naïve",
          "not", "never", "app", "server", "`make test`", "K\u212aelvin", "\u0130stanbul", "- ", "**bold**", "->",
          "象", "tests", "timeout", "3", "30", "plugin", "cache", "avoid", "\u00a0", "\t"]


def _long_way(text: str, probe: str, threshold: float = similarity.NEAR_DUPLICATE_THRESHOLD):
    """What the lookup answered before its shortcuts: every candidate tokenised, the text lowered as str."""
    lookup = TextLookup(text)
    lookup._plain = False  # never the bytes
    original = similarity._more_distinct_tokens
    similarity._more_distinct_tokens = lambda _text, _limit: False  # type: ignore[assignment]
    try:
        return lookup.match(probe, Deadline(30), threshold=threshold)
    finally:
        similarity._more_distinct_tokens = original


def _key(found):
    return None if found is None else (found[0], found[1], found[2].line, found[2].text)


@given(st.lists(st.sampled_from(_WORDS), max_size=60), st.integers(0, 40), st.text(" \t\n-*", max_size=4))
@settings(max_examples=400, deadline=None)
def test_the_prefix_count_of_distinct_words_is_the_whole_entrys(words, limit, lead):
    text = lead + " ".join(words)
    assert _more_distinct_tokens(text, limit) == (len(set(tokens(text))) > limit)


def test_the_prefix_count_holds_at_the_word_cap():
    many = " ".join(f"w{i}" for i in range(similarity.MAX_ENTRY_TOKENS + 50))
    assert _more_distinct_tokens(many, similarity.MAX_ENTRY_TOKENS - 1)
    assert not _more_distinct_tokens(many, similarity.MAX_ENTRY_TOKENS)
    repeated = " ".join(["same"] * 5000) + " other words after the cap"
    assert not _more_distinct_tokens(repeated, 1)


@given(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=30), st.lists(st.sampled_from(_WORDS), max_size=60),
       st.sampled_from([0.9, 0.5, 0.3, 0.05]))
@settings(max_examples=500, deadline=None)
def test_an_entry_with_more_words_than_most_words_never_reaches_a_threshold(probe, entry, threshold):
    bag, other = frozenset(tokens(" ".join(probe))), frozenset(tokens(" ".join(entry)))
    if bag and len(other) > most_words(len(bag), threshold):
        assert jaccard(bag, other) < min(threshold, similarity.SAME_SUBJECT_THRESHOLD)


def test_most_words_is_tight():
    for n in range(1, 60):
        for threshold in (0.9, 0.5, 0.3):
            most = most_words(n, threshold)  # an entry of ``most`` words holding all n can still reach it
            assert n / most >= min(threshold, similarity.SAME_SUBJECT_THRESHOLD) > n / (most + 1)


_paragraph = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=90).map(" ".join)


@given(st.lists(_paragraph, min_size=1, max_size=25), st.lists(st.sampled_from(_WORDS), min_size=4, max_size=14),
       st.sampled_from([0.9, 0.5, 0.3]), st.booleans())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_lookup_finds_what_the_long_way_finds(paragraphs, probe_words, threshold, bullets):
    sep = "\n- " if bullets else "\n\n"
    text = sep.join(paragraphs) + "\n"
    probe = " ".join(probe_words)
    found = TextLookup(text).match(probe, Deadline(30), threshold=threshold)
    assert _key(found) == _key(_long_way(text, probe, threshold))


@pytest.mark.parametrize("extra", ["", "\n\nThe caf\u00e9 — a note with non-ASCII text, \u8c61 and \u00df.\n",
                                   "\n\nKelvin sign \u212a here.\n", "\n\n\u0130stanbul office.\n"])
def test_on_real_memory_every_entry_and_its_variants_are_answered_alike(extra):
    slow = "\u0130" in extra  # lower() changes the length: both ways index the text for each probe
    text = (REAL if slow else REAL * 3) + extra
    probes = [e.text for e in split_entries(REAL)][::9 if slow else 3]
    probes += [p.lower().rstrip(".") + "." for p in probes[::2]] + [p.replace(" ", " not ", 1) for p in probes[::2]]
    text += "\n\n" + " ".join(probes[:40]) + "\n"  # one long paragraph of many entries' words
    assert len(probes) > 10
    fast = TextLookup(text)
    for probe in probes:
        assert _key(fast.match(probe, Deadline(30))) == _key(_long_way(text, probe)), probe
