"""One common-start/common-end scan (core.documents.runs) for history's deltas, the firewall's look at what a
save adds and the budget's appended-entry warning: it answers what a character-by-character walk answers, on
text and on bytes, from any offsets and under any limit, across its block sizes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.documents.runs import SMALL, common_prefix, common_suffix


def _walk_prefix(a, b, a0, b0, limit):
    n = 0
    while a0 + n < len(a) and b0 + n < len(b) and (limit is None or n < limit) and a[a0 + n] == b[b0 + n]:
        n += 1
    return n


def _walk_suffix(a, b, limit):
    n = 0
    while n < min(len(a), len(b), limit) and a[len(a) - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    return n


_sizes = st.sampled_from([0, 1, SMALL - 1, SMALL, SMALL + 1, 4 * SMALL + 3, 70_000])


@st.composite
def _pair(draw):
    shared = "é\n-x" * draw(_sizes)
    a = draw(st.text("ab\né", max_size=5)) + shared + draw(st.text("ab\n", max_size=5))
    b = draw(st.text("ab\né", max_size=5)) + shared + draw(st.text("ab\n", max_size=5))
    return a, b


@given(_pair(), st.integers(0, 6), st.integers(0, 6), st.none() | st.integers(0, 80_000), st.booleans())
@settings(max_examples=300, deadline=None)
def test_the_scans_answer_what_a_walk_answers(pair, a0, b0, limit, as_bytes):
    a, b = pair
    if as_bytes:
        a, b = a.encode(), b.encode()
    a0, b0 = min(a0, len(a)), min(b0, len(b))
    assert common_prefix(a, b, a0, b0, limit) == _walk_prefix(a, b, a0, b0, limit)
    assert common_prefix(a, b) == _walk_prefix(a, b, 0, 0, None)
    cap = len(a) if limit is None else limit
    assert common_suffix(a, b, cap) == _walk_suffix(a, b, cap)


def test_a_difference_at_every_place_of_a_long_run_is_found():
    base = ("0123456789abcdef" * 300).encode()
    for at in range(0, len(base), 97):
        other = base[:at] + b"!" + base[at + 1:]
        assert common_prefix(base, other) == at
        assert common_suffix(base, other, len(base)) == len(base) - at - 1
        assert common_prefix(base.decode(), other.decode()) == at
