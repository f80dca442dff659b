"""The offline consolidation: deterministic dreams and compaction with no model, each fate explained.

Compaction keeps every heading and comment (so every section) and removes only:

* exact duplicates (same text once bullet marks, emphasis, case and spacing are folded): merged into
  the first copy;
* near duplicates (at least :data:`NEAR` of their words shared, every distinctive fact and every
  longer word, up to its stem, also in the copy kept): merged into that copy;
* superseded entries: ones marked so in the text (the memory firewall's ``[superseded DATE]``,
  ``<!-- superseded``, or struck through ``~~…~~``), each "superseded by" the kept entry most like it
  when there is one, and an older ``subject: value`` entry under the same heading as a newer one with the same subject;
* transient session notes ("for this session", "waiting on review", …) that hold no distinctive fact.

Dreams read one daily note: an entry seen again (already in DREAMS.md, or in an earlier note of the
run) is *recurring* and promoted to MEMORY.md (unless it is there already); every other entry is
carried forward into the day's dream, task ids, paths, decisions and all, except transient notes
without a distinctive fact. The texts are Fusion's reply format (``## DREAMS`` / ``## LONG_TERM_UPDATES``
sections, or the compacted markdown), so staging is the same for every provider.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from core.consolidation.entries import Entry, normalize, scan, tokens
from core.consolidation.facts import fact_set
from core.consolidation.model import LedgerEntry
from core.firewall.supersede import superseded_on

__all__ = ["NEAR", "CompactResult", "DreamResult", "compact", "dream"]

#: Share of words two entries must have in common (Jaccard) to be near duplicates.
NEAR = 0.7
_MIN_WORDS = 5
#: Share of words a kept entry must share with a marked superseded one to be named as what superseded it.
SUCCESSOR = 0.3
#: A word in more entries than this is too common to find near duplicates by.
_COMMON = 64
_TRANSIENT_RE = re.compile(
    r"(?i)(\btodo for this session\b|\bfor this session\b|\bin this session\b|\bcurrently mid-way\b"
    r"|\bmid-way through\b|\bwaiting (?:on|for) review\b|\bre-?ran and it passed\b|\bprobably nothing\b"
    r"|\bnothing merged yet\b|\bnot finished\b|\bon my run\b|^\W*wip\b)")
_SUPERSEDED_RE = re.compile(r"<!--\s*superseded|^\W*~~.+~~\W*$", re.IGNORECASE | re.DOTALL)
_SUBJECT_RE = re.compile(r"^(?:[-*+]\s+)?(?:\*\*([^*\n]{3,60})\*\*\s*:?|([A-Za-z`][^:\n]{2,60}?):)\s+\S")


@dataclass(frozen=True)
class CompactResult:
    """The compacted text and the fate of every entry it removed (lines 1-based in old and new)."""

    text: str
    ledger: tuple[LedgerEntry, ...]


_TRANSIENT_WORDS = ("session", "mid-way", "waiting", "ran and", "probably nothing", "nothing merged",
                    "not finished", "on my run", "wip")


def _transient(entry: Entry, known: set[str] | None = None, facts: Callable[[Entry], set[str]] | None = None) -> bool:
    low = entry.text.casefold()
    if not any(word in low for word in _TRANSIENT_WORDS):  # the regex costs 60 µs an entry; this, 1
        return False
    if not _TRANSIENT_RE.search(entry.text):
        return False
    return not (known if known is not None else facts(entry) if facts is not None else fact_set(entry.text))


def _label(entry: Entry) -> bool:
    """A short lead-in line ("Key patterns:") rather than a fact of its own."""
    return entry.end - entry.start == 1 and (len(entry.text.split()) < 4 or entry.text.rstrip("*_ ").endswith(":"))


def _subject(entry: Entry, scope: str) -> str | None:
    if entry.kind != "bullet" or entry.end - entry.start > 2:
        return None
    m = _SUBJECT_RE.match(entry.text)
    if not m:
        return None
    subject = normalize(m.group(1) or m.group(2) or "")
    return f"{scope}\x00{subject}" if len(subject.split()) >= 2 or "`" in (m.group(2) or "") else None


def _without(lines: list[str], removed: set[int]) -> tuple[str, dict[int, int]]:
    """``lines`` without ``removed``, blank runs a removal left behind collapsed; old → new line index."""
    kept: list[str] = []
    where: dict[int, int] = {}
    for idx, line in enumerate(lines):
        if idx in removed:
            continue
        if not line.strip() and idx - 1 in removed and (not kept or not kept[-1].strip()):
            continue
        where[idx] = len(kept)
        kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept) + "\n", where


def compact(text: str, path: str) -> CompactResult:
    """Compact ``text`` (the document at ``path``) by the rules above."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    entries = scan(text)
    fates: dict[int, tuple[str, int | None, str]] = {}  # entry start -> (fate, target entry start, reason)
    first_copy: dict[str, Entry] = {}
    subjects: dict[str, Entry] = {}
    by_word: dict[str, list[int]] = defaultdict(list)
    kept: list[tuple[Entry, frozenset[str]]] = []
    facts_of: dict[int, set[str]] = {}  # entry start -> its facts, worked out only when a rule needs them

    def facts(entry: Entry) -> set[str]:
        if entry.start not in facts_of:
            facts_of[entry.start] = fact_set(entry.text)
        return facts_of[entry.start]

    scope = ""
    marked: list[Entry] = []
    for entry in entries:
        if entry.structural:
            if entry.kind == "heading":
                scope = f"{entry.start}"
            continue
        on = superseded_on(entry.text.split("\n", 1)[-1] if entry.kind == "dated" else entry.text)  # past <!-- date -->
        if on or _SUPERSEDED_RE.search(entry.text):
            fates[entry.start] = ("superseded", None, f"marked [superseded {on}]" if on
                                  else "marked superseded in the text")
            marked.append(entry)
            continue
        if _transient(entry, None, facts):
            fates[entry.start] = ("dropped", None, "transient session note with no id, path or number")
            continue
        norm = normalize(entry.text)
        if _label(entry):
            continue  # "**Key patterns:**" heads a list; the same label under two headings is no duplicate
        if norm in first_copy:
            fates[entry.start] = ("merged", first_copy[norm].start, "exact duplicate")
            continue
        words = tokens(entry.text)
        twin = _near_twin(entry, words, facts, kept, by_word) if len(words) >= _MIN_WORDS else None
        if twin is not None:
            fates[entry.start] = ("merged", twin.start, "near duplicate")
            continue
        first_copy[norm] = entry
        subject = _subject(entry, scope)
        if subject is not None:
            older = subjects.get(subject)
            if older is not None and older.start not in fates:
                fates[older.start] = ("superseded", entry.start, "same subject, newer value")
            subjects[subject] = entry
        for word in words:
            by_word[word].append(len(kept))
        kept.append((entry, words))
    for entry in marked:  # name the kept entry that replaced a marked one, when one is like it
        successor = _successor(entry, kept)
        if successor is not None:
            fates[entry.start] = ("superseded", successor.start, fates[entry.start][2])
    removed = {i for e in entries if e.start in fates for i in range(e.start, e.end)}
    new_text, where = _without(lines, removed)
    ledger = []
    for entry in entries:
        if entry.start not in fates:
            continue
        fate, target, reason = fates[entry.start]
        new_line = where.get(target) if target is not None else None
        ledger.append(LedgerEntry(path, entry.line, entry.text, fate, path if new_line is not None else None,  # type: ignore[arg-type]
                                  new_line + 1 if new_line is not None else None, reason))
    return CompactResult(new_text if removed else text, tuple(ledger))


_MARK_WORDS = frozenset({"superseded"})


def _successor(entry: Entry, kept: list[tuple[Entry, frozenset[str]]]) -> Entry | None:
    """The kept entry sharing the most words (at least :data:`SUCCESSOR`) with the marked ``entry``: a later
    one before an earlier one on a tie, since a newer entry is what supersedes."""
    words = {w for w in tokens(entry.text) if w not in _MARK_WORDS and not w[:1].isdigit()}
    best, best_score = None, SUCCESSOR
    for other, other_words in kept:
        union = len(words | other_words)
        score = len(words & other_words) / union if union else 0.0
        if score > best_score or (score == best_score and best is not None and other.start > entry.start):
            best, best_score = other, score
    return best


def _missing_words(words: frozenset[str], kept: frozenset[str]) -> set[str]:
    """Words of four letters or more with no word of the same stem (first four letters) in ``kept``: what
    merging would lose ("same diagnostics" and "same wiring" share most words, yet say different things)."""
    stems = {w[:4] for w in kept}
    return {w for w in words - kept if len(w) >= 4 and w[:4] not in stems}


def _near_twin(entry: Entry, words: frozenset[str], facts: Callable[[Entry], set[str]],
               kept: list[tuple[Entry, frozenset[str]]], by_word: dict[str, list[int]]) -> Entry | None:
    """An earlier kept entry sharing :data:`NEAR` of the words, every fact and every longer word.

    Candidates are the entries holding one of the entry's four rarest words: a near duplicate shares at
    least 70 % of its words, so it shares one of those (unless every word is common, when none is sought).
    """
    rare = sorted((len(found), word) for word in words if (found := by_word.get(word)) and len(found) <= _COMMON)[:4]
    hits: dict[int, int] = defaultdict(int)
    for _n, word in rare:
        for k in by_word[word]:
            hits[k] += 1
    # A near duplicate shares 70 % of the words, so most of the rarest ones too (two, when there are two).
    need = min(2, len(rare))
    size = len(words)
    for k in sorted(k for k, n in hits.items() if n >= need):
        other, other_words = kept[k]
        if min(size, len(other_words)) < NEAR * max(size, len(other_words)):
            continue  # the sizes alone rule it out
        union = len(words | other_words)
        if union and len(words & other_words) / union >= NEAR and not _missing_words(words, other_words) \
                and facts(entry) <= facts(other):
            return other
    return None


# -- dreams ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DreamResult:
    """Fusion's dream reply (``## DREAMS`` / ``## LONG_TERM_UPDATES``) and each daily entry's fate.

    Ledger targets are positions inside the two sections (``target_line`` 1-based within the section
    text; ``target_path`` ``"DREAMS"`` or ``"LONG_TERM_UPDATES"``); the run maps them to the documents.
    """

    dreams: str
    updates: str
    ledger: tuple[LedgerEntry, ...]

    @property
    def reply(self) -> str:
        """The reply text a model would give."""
        return f"## DREAMS\n\n{self.dreams}\n\n## LONG_TERM_UPDATES\n\n{self.updates}\n"


def _demote(line: str) -> str:
    m = re.match(r"^(#{1,3})(\s)", line)
    return "####" + line[len(m.group(1)):] if m else line


def dream(daily: str, path: str, long_term: str, previous_dreams: str, earlier_notes: tuple[str, ...] = ()
          ) -> DreamResult:
    """Dream over one daily note (``path``) given the long-term memory and the dreams so far."""
    lines = daily.split("\n")
    body = [e for e in scan(daily) if not (e.structural and (e.start == 0 or e.kind == "comment"))]
    seen_dreams = {normalize(e.text) for e in scan(previous_dreams) if not e.structural}
    for note in earlier_notes:
        seen_dreams |= {normalize(e.text) for e in scan(note) if not e.structural}
    in_memory = {normalize(e.text): e for e in scan(long_term) if not e.structural}
    carried: list[str] = []
    recurring: list[str] = []
    updates: list[str] = []
    fates: list[tuple[Entry, str, str, int, str]] = []  # entry, fate, section, line in section, reason
    last_end = {"DREAMS": -1, "UPDATES": -1}

    def gap(section: str, out: list[str], entry: Entry) -> None:
        if out and last_end[section] != entry.start:
            out.append("")  # keep the note's own blank lines, no more
        last_end[section] = entry.end

    for entry in body:
        norm = normalize(entry.text)
        if entry.kind == "heading":
            gap("DREAMS", carried, entry)
            carried.append(_demote(entry.text))
            continue
        if norm in in_memory:
            fates.append((entry, "kept", "MEMORY", in_memory[norm].line, "already in long-term memory"))
            continue
        if norm in seen_dreams and not _label(entry):
            gap("UPDATES", updates, entry)
            fates.append((entry, "promoted", "LONG_TERM_UPDATES", len(updates) + 1, "recurring: seen on an earlier day"))
            updates.extend(lines[entry.start:entry.end])
            recurring.append(entry.text.split("\n", 1)[0])
            continue
        if _transient(entry):
            fates.append((entry, "dropped", "", 0, "transient session note with no id, path or number"))
            continue
        gap("DREAMS", carried, entry)
        fates.append((entry, "merged", "DREAMS", len(carried) + 1, "carried forward into the dream"))
        carried.extend(lines[entry.start:entry.end])
    head: list[str] = []
    if recurring:
        head = ["Recurring (promoted to long-term memory):", *[f"- {_one_line(t)}" for t in recurring], ""]
    dreams_lines = head + carried
    shift = len(head)
    ledger = []
    for entry, fate, section, line, reason in fates:
        target_line = line + shift if section == "DREAMS" else line if section else None
        ledger.append(LedgerEntry(path, entry.line, entry.text, fate, section or None, target_line, reason))  # type: ignore[arg-type]
    return DreamResult("\n".join(dreams_lines).strip("\n"), "\n".join(updates).strip("\n"), tuple(ledger))


def _one_line(text: str) -> str:
    flat = " ".join(re.sub(r"^[-*+]\s+", "", text).split())
    return flat if len(flat) <= 160 else flat[:157] + "…"
