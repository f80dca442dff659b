"""The firewall's shortcuts never change what it finds: each is checked against the long way round.

* the near-duplicate lookup without an index (:class:`~core.firewall.similarity.TextLookup`) skips
  entries with too many distinct words to reach a threshold, reading only their first words, and looks
  ASCII words up in the text's lowered UTF-8 bytes instead of ``str.lower()`` of it;
* a secret or injection rule is compiled and run only on text holding its required strings
  (:mod:`core.firewall.prefilter`): every labelled example, every fixture line and strings generated from
  each pattern that RE2 matches pass the prefilter, and the rules flag the labelled sets alike without it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.firewall_sets import read_labelled
from core.firewall import injection, prefilter, prefilter_build, secrets, similarity
from core.firewall.injection import fold, scan_injection
from core.firewall.prefilter import LazyRule
from core.firewall.prefilter_build import derive, rule_patterns
from core.firewall.rules import Deadline, compile_linear
from core.firewall.secrets import scan_secrets
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


# -- the rules' required strings (core.firewall.prefilter) ------------------------------------------------


def test_the_data_file_holds_every_rules_strings_as_derived_now():
    """Regenerate with ``python -m core.firewall.prefilter_build`` after changing a rule."""
    assert prefilter.needles() == {k: v for k, v in prefilter.needles.__wrapped__().items()}
    stored = {(r["pattern"], r["ignoreCase"]): r for r in prefilter_build.build()["rules"]}  # type: ignore[index]
    import json
    on_disk = {(r["pattern"], r["ignoreCase"]): r for r in json.loads(prefilter.DATA_FILE.read_text())["rules"]}
    assert on_disk == stored
    assert len(stored) == len(rule_patterns())
    assert sum(1 for r in stored.values() if r["needles"]) >= len(stored) - 2  # nearly every rule has strings


def _samples() -> list[str]:
    texts = [text for name in ("secrets.txt", "injection.txt", "near_duplicates.txt")
             for _label, text in read_labelled(name)]
    texts += REAL.splitlines()
    return texts + [t.lower() for t in texts] + [fold(t) for t in texts] + [t.upper() for t in texts[:200]]


@pytest.mark.parametrize(("pattern", "ignore_case"), rule_patterns())
def test_a_rule_that_matches_a_sample_always_passes_its_prefilter(pattern, ignore_case):
    regex, lazy = compile_linear(pattern, ignore_case=ignore_case), LazyRule(pattern, ignore_case=ignore_case)
    matched = 0
    for text in _samples():
        if regex.search(text):
            matched += 1
            assert lazy.possible(text), (pattern, text)
    if lazy.needles:
        assert not lazy.possible("plain words about the build, nothing else 123") or matched >= 0


@pytest.mark.parametrize(("pattern", "ignore_case"), rule_patterns())
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_strings_made_from_each_pattern_pass_its_prefilter(pattern, ignore_case, data):
    import re

    try:
        strategy = st.from_regex(re.compile(pattern, re.IGNORECASE if ignore_case else 0))
    except Exception:
        pytest.skip("Python cannot generate from this pattern")
    text = data.draw(strategy)
    if compile_linear(pattern, ignore_case=ignore_case).search(text):
        assert LazyRule(pattern, ignore_case=ignore_case).possible(text)


def test_re2_folds_no_other_character_onto_an_ascii_letter():
    """The prefilter lower-cases a case-insensitive rule's text with str.lower; that finds what RE2 would
    unless RE2 folds a character onto an ASCII letter that str.lower does not (only U+017F, guarded)."""
    everything = "".join(chr(c) for c in range(0x10FFFF) if not 0xD800 <= c < 0xE000)
    folded = {m.group(0) for m in compile_linear("[a-z]", ignore_case=True).finditer(everything)}
    odd = {c for c in folded if not ("a" <= c.lower() <= "z" and len(c.lower()) == 1)}
    assert odd <= set(prefilter.FOLDS_TO_ASCII), odd
    assert LazyRule(secrets._SAID).possible("the db pa\u017f\u017fword is hunter22")
    assert compile_linear(secrets._SAID).search("the db pa\u017f\u017fword is hunter22")


def test_derive_reads_the_constructs_it_meets():
    assert derive("abc") == (False, [["abc"]])
    assert derive("(?i)AbC") == (True, [["abc"]])
    assert derive("ABC(?i:def)") == (True, [["abc"], ["def"]])  # a folded part: every string looked for lower-cased
    assert derive("x(?:ab|cd)+y?") == (False, [["ab", "cd"], ["x"]])
    assert derive("a.b.c.d.e") == (False, [["a"], ["b"], ["c"]])
    assert derive("a*b?[cd]") is None
    assert derive("[[:alpha:]]x") is None and derive("\\pLx") is None  # RE2 syntax Python misreads: none
    assert derive("(?mi)abc") is None


def _without_prefilter(monkeypatch):
    monkeypatch.setattr(prefilter.LazyRule, "possible", lambda self, text, lowered=None: True)


@pytest.mark.parametrize("name", ["secrets.txt", "injection.txt"])
def test_every_labelled_example_is_flagged_alike_with_and_without_the_prefilter(name, monkeypatch):
    texts = [text for _label, text in read_labelled(name)]
    texts.append("\n".join(texts))  # one text of many lines: the whole-text first pass
    scans = (scan_secrets, scan_injection)
    with_ = [[(f.rule, f.line, f.span) for scan in scans for f in scan(t, Deadline(30))] for t in texts]
    _without_prefilter(monkeypatch)
    without = [[(f.rule, f.line, f.span) for scan in scans for f in scan(t, Deadline(30))] for t in texts]
    assert with_ == without
    assert sum(map(len, with_)) >= len(texts) // 2


def test_an_everyday_entry_compiles_few_rules_and_loads_no_re2():
    import subprocess
    import sys

    code = ("import sys; from core.firewall.secrets import scan_secrets, _compiled; from core.firewall.injection "
            "import scan_injection; from core.firewall.rules import Deadline\n"
            "t = 'Use the DB clock for lease expiry; the scheduler retries three times, then it gives up'\n"
            "assert not scan_secrets(t, Deadline()) and not scan_injection(t, Deadline())\n"
            "print('re2' in sys.modules, sum(r._regex is not None for _n, _w, r in _compiled()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[3]).stdout.split()
    assert out == ["False", "0"], out
    assert injection._may_hold_run("x" * 96) and not injection._may_hold_run("word " * 100)


# -- the lines a save adds, found by walking both texts (core.firewall.align) -------------------------------

def _edited(rng, lines: list[str], edits: int) -> list[str]:
    new = list(lines)
    for _ in range(edits):
        op, i = rng.randrange(6), rng.randrange(len(new) + 1)
        if op == 0:
            new.insert(i, f"- new {rng.random()} AKIAIOSFODNN7EXAMPLE")
        elif op == 1 and new:
            del new[min(i, len(new) - 1)]
        elif op == 2 and new:
            new[min(i, len(new) - 1)] += rng.choice(["x", "", " AKIA", "\n"])
        elif op == 3:
            new.insert(i, rng.choice(lines) if lines else "")  # an existing line, copied or moved
        elif op == 4:
            new.insert(i, "")
        else:
            new.append(f"- added at the end {rng.random()}")
    return new


@pytest.mark.parametrize("seed", range(6))
def test_the_walk_finds_the_lines_the_set_split_finds(seed, monkeypatch):
    import random

    import core.firewall.engine as engine

    rng = random.Random(seed)
    base = REAL.split("\n") * 3
    aligned = 0
    for _ in range(120):
        lines = base[:rng.randrange(1, len(base))]
        current = "\n".join(lines) + rng.choice(["", "\n", "\n\n"])
        new = "\n".join(_edited(rng, lines, rng.randrange(0, 9))) + rng.choice(["", "\n", "\n\n"])
        with monkeypatch.context() as m:
            m.setattr(engine, "_small_change", lambda a, b: None)
            walked = engine._aligned_change(new, current)
            m.setattr(engine, "_aligned_change", lambda a, b: None)
            full = engine.added_lines(new, current)
        if walked is not None:
            aligned += 1
            assert (walked.text, walked.lines, walked.gone) == (full.text, full.lines, full.gone)
        fast = engine.added_lines(new, current)
        assert (fast.text, fast.lines, fast.gone) == (full.text, full.lines, full.gone)
    assert aligned > 80


def test_an_operators_save_of_a_mebibyte_is_walked_not_split():
    import random

    import core.firewall.engine as engine
    from core.firewall.align import changed_regions

    lines = (REAL * 12).split("\n")
    rng = random.Random(5)
    new_lines = list(lines)
    new_lines[rng.randrange(len(lines))] = "- edited: use the DB clock for lease expiry"
    current, new = "\n".join(lines), "\n".join(new_lines) + "\n- a new entry at the end"
    assert engine._small_change(new, current) is None  # two places: the in-place diff does not apply
    regions = changed_regions(new, current)
    assert regions is not None and len(regions) == 2
    excerpt = engine.added_lines(new, current)
    assert excerpt.text.split("\n") == ["- edited: use the DB clock for lease expiry", "", "- a new entry at the end"]
