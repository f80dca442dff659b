"""The editor's firewall scan, done again after each pause in typing without redoing what did not change.

:func:`core.firewall.scan.scan_marks` over a 1 MiB memory costs about half a second of CPU (measured
on the bench's 1 MiB memory: secrets 105 ms, injection 160 ms, indexing the entries 110 ms, matching
them 70 ms). The editor ran it on a worker thread after every pause, and that worker held the GIL the GUI
thread needs for each keystroke's Python slots, and filled the GUI thread's garbage collections with its
young objects (tens of thousands of entries, token sets and findings). :class:`IncrementalScanner`
gives the same marks, in the same order, as :func:`~core.firewall.scan.scan_marks` (the tests compare
them after random edits), doing again only what an edit touched:

- secrets and injection phrases are rules of one line, so their findings are kept per paragraph (text
  between blank lines) and only paragraphs not seen before are scanned, as one text per run of them;
  the HTML-comment rule, the one that spans lines, runs over the whole text (a ``find`` loop);
- near-duplicates and contradictions compare each entry with the entries before it, so the entries
  before the first one that changed keep their results and the index is unwound to there
  (:meth:`~core.firewall.similarity.EntryIndex` drops its last entries) and grown again from it; the
  tokens of an entry are computed once per distinct entry text.

Typing at the end of a 1 MiB memory redoes one paragraph and one entry; in the middle, the entries after
the cursor are matched again (not tokenised again).
"""

from __future__ import annotations

from collections import OrderedDict

from core.firewall.injection import scan_comments, scan_injection
from core.firewall.rules import DEFAULT_DEADLINE_S, Deadline, Finding, capped
from core.firewall.scan import Mark
from core.firewall.secrets import scan_secrets
from core.firewall.similarity import Entry, EntryIndex, match_entry, split_entries, tokens

#: Paragraphs and entry texts remembered (the bench's 1 MiB memory has ~2,500 paragraphs, ~6,600 entries).
KEEP = 20_000

Found = tuple[str, str, Entry] | None


class _Lru(OrderedDict):
    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def put(self, key: object, value: object) -> None:
        self[key] = value
        if len(self) > self.size:
            self.popitem(last=False)


class IncrementalScanner:
    """Scans one document's successive texts; one scan at a time (the editor runs it on one worker)."""

    def __init__(self) -> None:
        # paragraph text -> (secret findings, injection findings), lines and spans relative to the paragraph
        self._paragraphs: _Lru = _Lru(KEEP)
        self._tokens: _Lru = _Lru(KEEP)  # entry text -> its tokens
        self._entries: list[Entry] = []
        self._found: list[Found] = []
        self._index = EntryIndex()
        #: What the last scan did again (tests, the bench): paragraphs scanned, entries matched.
        self.rescanned_paragraphs = 0
        self.rematched_entries = 0

    def scan(self, text: str, *, deadline_s: float = 10 * DEFAULT_DEADLINE_S) -> list[Mark]:
        """Every finding of every rule in ``text``, as :func:`~core.firewall.scan.scan_marks` gives them."""
        text = capped(text)
        deadline = Deadline(deadline_s)
        try:
            secrets, injection = self._line_rules(text, deadline)
            injection += scan_comments(text, deadline)
            marks = [Mark(f) for f in secrets + injection]
            similar = self._similar(text, deadline)
            for entry, found in zip(self._entries, similar, strict=True):
                if found is not None:
                    kind, message, other = found
                    marks.append(Mark(Finding(kind, kind, entry.line, (entry.start, entry.end), message), other))  # type: ignore[arg-type]
        except BaseException:
            self.reset()  # a scan cut short (deadline) leaves the index half grown: start afresh next time
            raise
        return sorted(marks, key=lambda m: (m.finding.span[0], m.finding.rule))

    def reset(self) -> None:
        """Forget the last text (the next scan indexes every entry again; paragraph results are kept)."""
        self._entries, self._found, self._index = [], [], EntryIndex()

    # -- secrets and injection: per paragraph -------------------------------------------------------
    def _line_rules(self, text: str, deadline: Deadline) -> tuple[list[Finding], list[Finding]]:
        pieces: list[tuple[str, int, int]] = []  # (paragraph, offset, first line)
        offset, line = 0, 1
        for piece in text.split("\n\n"):
            pieces.append((piece, offset, line))
            offset += len(piece) + 2
            line += piece.count("\n") + 2
        missing = [i for i, (piece, _o, _l) in enumerate(pieces) if piece not in self._paragraphs]
        self.rescanned_paragraphs = len(missing)
        run: list[int] = []
        for i in missing:  # consecutive unseen paragraphs are scanned as one text (a first scan: one run)
            if run and i != run[-1] + 1:
                self._scan_run(pieces, run, deadline)
                run = []
            run.append(i)
        if run:
            self._scan_run(pieces, run, deadline)
        secrets: list[Finding] = []
        injection: list[Finding] = []
        for piece, offset, line in pieces:
            found = self._paragraphs.get(piece)
            if found is None:  # pushed out of the cache by this very scan (a text of > KEEP paragraphs)
                found = _relative(piece, deadline)
            for out, findings in zip((secrets, injection), found, strict=True):
                out.extend(_moved(f, line - 1, offset) for f in findings)
        return secrets, injection

    def _scan_run(self, pieces: list[tuple[str, int, int]], run: list[int], deadline: Deadline) -> None:
        first, last = pieces[run[0]], pieces[run[-1]]
        start, end = first[1], last[1] + len(last[0])
        chunk = pieces[run[0]][0] if len(run) == 1 else "\n\n".join(pieces[i][0] for i in run)
        assert len(chunk) == end - start
        per: dict[int, tuple[list[Finding], list[Finding]]] = {i: ([], []) for i in run}
        starts = [pieces[i][1] - start for i in run]
        for slot, findings in enumerate((scan_secrets(chunk, deadline), scan_injection(chunk, deadline, comments=False))):
            k = 0
            for f in findings:  # in line order: walk the paragraphs along
                while k + 1 < len(starts) and f.span[0] >= starts[k + 1]:
                    k += 1
                i = run[k]
                per[i][slot].append(_moved(f, -(pieces[i][2] - first[2]), -starts[k]))
        for i in run:
            self._paragraphs.put(pieces[i][0], per[i])

    # -- near-duplicates and contradictions: from the first changed entry on ------------------------
    def _similar(self, text: str, deadline: Deadline) -> list[Found]:
        entries = list(split_entries(text))
        old = self._entries
        same = 0
        limit = min(len(old), len(entries))
        while same < limit and old[same] == entries[same]:
            same += 1
        index = self._index
        for _ in range(len(old) - same):  # unwind the index to the entries that did not change
            index._drop_last()  # noqa: SLF001 - the index's own undo of add()
        found = self._found[:same]
        for entry in entries[same:]:
            seq = self._tokens.get(entry.text)
            if seq is None:
                seq = tokens(entry.text)
                self._tokens.put(entry.text, seq)
            found.append(match_entry(entry.text, index, deadline, seq=seq))
            index.add(entry, seq)
        self.rematched_entries = len(entries) - same
        self._entries, self._found = entries, found
        return found


def _relative(piece: str, deadline: Deadline) -> tuple[list[Finding], list[Finding]]:
    return scan_secrets(piece, deadline), scan_injection(piece, deadline, comments=False)


def _moved(finding: Finding, lines: int, chars: int) -> Finding:
    if not lines and not chars:
        return finding
    start, end = finding.span
    return Finding(finding.rule, finding.kind, finding.line + lines, (start + chars, end + chars), finding.message)
