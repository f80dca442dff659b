"""Split a memory file into searchable entries, each with its section heading and 1-based line range.

An entry is a top-level list item with its sub-items and continuation lines, a dated appended block
(``<!-- YYYY-MM-DD -->`` and the text after it, seed 002), a paragraph, or a sub-heading line
(``###`` and deeper). ``#``/``##`` headings are not entries: a ``## `` heading names the section of
the entries below it. HTML comments (the scaffold's hints) are skipped; fenced code stays inside the
entry it belongs to and its lines are never read as headings or list items.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from core.documents import blocks

_DATE_MARKER = re.compile(r"^<!--\s*(\d{4}-\d{2}-\d{2})\s*-->\s*$")
_LIST_ITEM = re.compile(r"^(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
_ITEM_START = frozenset("-*+0123456789")


@dataclass(frozen=True)
class Entry:
    """One searchable unit of a memory file."""

    file: str
    line: int
    end_line: int
    section: str | None
    text: str
    date: str | None = None
    #: Digest of the text (identifies the entry across edits that only move it; keys its vector).
    hash: str = ""


def entry_hash(text: str) -> str:
    """Return the digest used to match an entry's text (and its vector) across re-indexing."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


_blake2b = hashlib.blake2b  # entry_hash inlined in _Builder.end (keep the two the same)
_new = object.__new__


class _Builder:
    """Accumulates the lines of the entry being read."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.entries: list[Entry] = []
        self.lines: list[str] = []
        self.start = 0
        self.kind = ""  # "item" | "para" | "dated"
        self.date: str | None = None
        self.section: str | None = None

    def begin(self, kind: str, lineno: int, date: str | None = None) -> None:
        if self.kind:
            self.end()
        self.kind, self.start, self.date, self.lines = kind, lineno, date, []

    def add(self, line: str) -> None:
        self.lines.append(line)

    def end(self) -> None:
        if not self.kind:  # a blank line or heading between entries: nothing open
            return
        lines = self.lines
        while lines and not lines[-1].strip():
            lines.pop()
        if lines:
            lead = 0
            while not lines[lead].strip():
                lead += 1
            body = lines[lead:] if lead else lines
            text = "\n".join(body).strip("\n")
            start = self.start + lead
            # Made without the frozen dataclass's __init__ (one object.__setattr__ a field): a rebuild
            # of 100,000 entries spent a tenth of its time there.
            entry = _new(Entry)
            entry.__dict__.update(file=self.file, line=start, end_line=start + len(body) - 1, section=self.section,
                                  text=text, date=self.date,
                                  hash=_blake2b(text.encode("utf-8"), digest_size=16).hexdigest())
            self.entries.append(entry)
        self.kind, self.lines, self.date = "", [], None


def chunk_markdown(text: str, file: str) -> list[Entry]:
    """Return the entries of ``text`` (the content of ``file``, a project-relative path) in order.

    Headings, fenced code and HTML comments are :mod:`core.documents.blocks`' (CommonMark's), so a ``## `` line
    inside a comment or a fence names no section, and ``##\tTitle`` or a setext heading does.
    """
    b = _Builder(file)
    lines = text.split("\n")
    if lines and not lines[-1]:
        lines.pop()  # a final newline starts no line
    if "\r" in text:
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    found = blocks.scan(text)
    heads = {h.line: h for h in found.headings if h.depth == 0}
    opaque = {blk.start: blk for blk in found.blocks if blk.kind == "fence" or blk.comment}
    total = len(lines)
    idx = 0
    while idx < total:
        line = lines[idx]
        lineno = idx + 1
        blk = opaque.get(idx)
        if blk is not None:
            stop = min(blk.end, total)
            if blk.kind == "fence":  # code stays inside the entry it belongs to
                if not b.kind:
                    b.begin("para", lineno)
                for i in range(idx, stop):
                    b.add(lines[i])
                idx = stop
                continue
            marker = _DATE_MARKER.match(line.strip()) if stop == idx + 1 else None
            if marker:
                b.begin("dated", lineno + 1, marker.group(1))
            elif b.kind == "dated":  # a comment inside a dated entry is part of its text
                for i in range(idx, stop):
                    b.add(lines[i])
            elif b.kind == "para":
                b.end()
            idx = stop
            continue
        heading = heads.get(idx)
        if heading is not None:
            b.end()
            if heading.level == 2:
                b.section = heading.title or None
            elif heading.level >= 3:
                b.begin("para", lineno)
                for i in range(idx, min(heading.stop, total)):
                    b.add(lines[i])
                b.end()
            idx = max(heading.stop, idx + 1)
            continue
        idx += 1
        if b.kind == "dated":
            b.add(line)
            continue
        if not line.strip():
            if b.kind == "item" and _next_is_indented(lines, idx):
                b.add(line)
            else:
                b.end()
            continue
        if line[:1] in _ITEM_START and _LIST_ITEM.match(line):
            b.begin("item", lineno)
            b.add(line)
            continue
        if not b.kind:
            b.begin("para", lineno)
        b.add(line)
    b.end()
    return b.entries


def _next_is_indented(lines: list[str], start: int) -> bool:
    """Whether the first non-blank line from ``start`` on continues a list item (is indented)."""
    for i in range(start, len(lines)):
        if lines[i].strip():
            return lines[i][:1] in (" ", "\t")
    return False
