"""The one block scanner: headings, sections, fenced and indented code, HTML blocks and comments.

It reads the block structure of a markdown text the way CommonMark (0.31) does, line by line and
without the inline pass, so the outline, the load budget, search chunking, migrate and prune
validation all agree with each other and with a CommonMark renderer on where a heading is:

* ATX headings (``#`` to ``######`` then a space, a tab or the end of the line; up to three spaces of
  indent; closing ``#``s dropped) and setext headings (a paragraph underlined with ``=`` or ``-``);
* fenced code (backticks or tildes, closed by the same character at least as long, or by the end of
  its container), indented code, and the seven kinds of HTML block (``<!-- ... -->`` comments among
  them): nothing inside them is a heading;
* block quotes and list items as containers, with lazy continuation lines; tabs count to the next
  multiple of four columns.

A *section* is a top-level heading (not inside a quote or a list item) and runs to the line before the
next top-level heading of the same or a higher level. Line numbers are 0-based; ranges are half-open
``[start, end)`` (markdown-it's ``map``). Link reference definitions are read as paragraph text (so a
lone ``[a]: /u`` underlined with ``===`` counts as a heading here and not in CommonMark).

markdown-it-py is the oracle in the tests (``tests/core/documents/test_blocks.py``); it is not used here because
its block pass alone takes about 30 times as long on a 1 MiB memory (measured: 247 ms against 8 ms).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["Block", "Heading", "Scan", "headings", "scan", "sections"]


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading: 0-based ``line`` (for a setext heading, its first text line), ``level`` 1-6, ``title``.

    ``end`` is the line after its section (sections of top-level headings only; else ``stop``),
    ``stop`` the line after the heading itself (after the underline of a setext heading), ``depth``
    how many containers (quotes, list items) hold it, ``setext`` whether it is underlined.
    """

    line: int
    level: int
    title: str
    end: int
    stop: int
    depth: int = 0
    setext: bool = False


@dataclass(frozen=True, slots=True)
class Block:
    """An opaque block: ``kind`` is ``fence``, ``code`` (indented) or ``html``; lines ``[start, end)``.

    ``comment`` is True for an HTML block that is a comment (``<!--``).
    """

    kind: str
    start: int
    end: int
    depth: int = 0
    comment: bool = False


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` found: every heading and every opaque block, in order, and the line count."""

    headings: tuple[Heading, ...]
    blocks: tuple[Block, ...]
    lines: int
    _opaque: frozenset[int] = field(default=frozenset(), repr=False)

    def top(self, max_level: int = 6) -> list[Heading]:
        """The top-level headings (the sections) up to ``max_level``."""
        return [h for h in self.headings if h.depth == 0 and h.level <= max_level]

    def opaque(self, line: int) -> bool:
        """Whether ``line`` lies inside a fence, indented code or an HTML block (comments included)."""
        return line in self._opaque

    def comment_lines(self) -> set[int]:
        """The lines inside HTML comment blocks."""
        return {n for b in self.blocks if b.comment for n in range(b.start, b.end)}


_ATX = re.compile(r"(#{1,6})(?:[ \t]+(.*?))??(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"(`{3,}|~{3,})(.*)$")
_SETEXT = re.compile(r"(=+|-+)[ \t]*$")
_HR = re.compile(r"(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_BULLET = re.compile(r"([-+*])(?=[ \t]|$)")
_ORDERED = re.compile(r"([0-9]{1,9})([.)])(?=[ \t]|$)")
_PREFIX_CHARS = frozenset(" \t>-+*0123456789.)")
#: First characters that may start something other than paragraph text ("" for the end of the line).
_SPECIAL = frozenset(" \t>-+*_=#`~<0123456789") | {""}

_BLOCK_TAGS = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|div|"
    "dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h1|h2|h3|h4|h5|h6|head|header|hr|html|iframe|"
    "legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|summary|table|"
    "tbody|td|tfoot|th|thead|title|tr|track|ul")
_ATTR = r"""(?:\s+[A-Za-z_:][A-Za-z0-9_.:-]*(?:\s*=\s*(?:[^"'=<>`\x00-\x20]+|'[^']*'|"[^"]*"))?)"""
# (start, end, can interrupt a paragraph); end None: the block ends before a blank line.
_HTML: tuple[tuple[re.Pattern[str], re.Pattern[str] | None, bool], ...] = (
    (re.compile(r"<(?:script|pre|style|textarea)(?=\s|>|$)", re.I),
     re.compile(r"</(?:script|pre|style|textarea)>", re.I), True),
    (re.compile(r"<!--"), re.compile(r"-->"), True),
    (re.compile(r"<\?"), re.compile(r"\?>"), True),
    (re.compile(r"<![A-Za-z]"), re.compile(r">"), True),
    (re.compile(r"<!\[CDATA\["), re.compile(r"\]\]>"), True),
    (re.compile(rf"</?(?:{_BLOCK_TAGS})(?=[ \t]|/?>|$)", re.I), None, True),
    (re.compile(rf"(?:<[A-Za-z][A-Za-z0-9-]*{_ATTR}*\s*/?>|</[A-Za-z][A-Za-z0-9-]*\s*>)[ \t]*$"), None, False),
)


def _expand(line: str) -> str:
    """The line with the tabs of its leading run of spaces, tabs and container markers expanded."""
    if "\t" not in line:
        return line
    out: list[str] = []
    col = 0
    for i, ch in enumerate(line):
        if ch == "\t":
            pad = 4 - col % 4
            out.append(" " * pad)
            col += pad
        elif ch in _PREFIX_CHARS:
            out.append(ch)
            col += 1
        else:
            return "".join(out) + line[i:]
    return "".join(out)


def _indent(s: str, pos: int) -> int:
    """Columns of spaces at ``pos`` (tabs are already expanded there)."""
    end, size = pos, len(s)
    while end < size and s[end] == " ":
        end += 1
    return end - pos


def _html_start(rest: str) -> int:
    """The kind (0-6) of HTML block ``rest`` opens (indent already removed), or -1."""
    if not rest.startswith("<"):
        return -1
    for kind, (start, _end, _interrupts) in enumerate(_HTML):
        if start.match(rest):
            return kind
    return -1


class _Item:
    __slots__ = ("indent", "blank_start", "start")

    def __init__(self, indent: int, blank_start: bool, start: int) -> None:
        self.indent = indent
        self.blank_start = blank_start
        self.start = start


_QUOTE = None  # a block quote on the container stack


class _Scanner:
    """The state of one scan (containers, the open leaf block) and what it found."""

    def __init__(self) -> None:
        self.stack: list[_Item | None] = []
        self.leaf = ""  # "" | "para" | "fence" | "html" | "code"
        self.leaf_start = 0
        self.leaf_depth = 0
        self.fence = ""
        self.fence_indent = 0
        self.html_end: re.Pattern[str] | None = None
        self.html_comment = False
        self.para: list[str] = []
        self.code_last = 0
        self.found: list[tuple[int, int, str, int, int]] = []  # line, level, title, depth, stop
        self.blocks: list[Block] = []

    # -- leaves ------------------------------------------------------------------------------------
    def close_leaf(self, line: int) -> None:
        leaf = self.leaf
        if leaf == "fence":
            self.blocks.append(Block("fence", self.leaf_start, line, self.leaf_depth))
        elif leaf == "html":
            self.blocks.append(Block("html", self.leaf_start, line, self.leaf_depth, self.html_comment))
        elif leaf == "code":
            self.blocks.append(Block("code", self.leaf_start, self.code_last + 1, self.leaf_depth))
        self.leaf = ""
        self.para = []

    def open_leaf(self, kind: str, line: int) -> None:
        self.leaf, self.leaf_start, self.leaf_depth = kind, line, len(self.stack)

    # -- containers --------------------------------------------------------------------------------
    def match_containers(self, n: int, s: str, blank: bool) -> tuple[int, int]:
        """How many open containers ``s`` continues, and the position after their markers."""
        pos = 0
        for k, item in enumerate(self.stack):
            if item is _QUOTE:
                ind = _indent(s, pos)
                if ind <= 3 and s.startswith(">", pos + ind):
                    pos += ind + 1
                    if s.startswith(" ", pos):
                        pos += 1
                    continue
                return k, pos
            if blank:
                if item.blank_start and n == item.start + 1:
                    return k, pos  # an item may begin with one blank line, not two
                continue
            if _indent(s, pos) >= item.indent:
                pos += item.indent
                continue
            return k, pos
        return len(self.stack), pos

    def starts_block(self, s: str, pos: int, in_list: bool) -> bool:
        """Whether the text at ``pos`` would start a block that interrupts a paragraph."""
        ind = _indent(s, pos)
        if ind >= 4:
            return False
        rest = s[pos + ind:]
        if not rest:
            return True
        ch = rest[0]
        if ch == ">":
            return True
        if ch == "#":
            return _ATX.match(rest) is not None
        if ch in "`~":
            f = _FENCE.match(rest)
            return f is not None and not (ch == "`" and "`" in f.group(2))
        if ch == "<":
            kind = _html_start(rest)
            return kind >= 0 and _HTML[kind][2]
        if ch in "*-_" and _HR.match(rest):
            return True
        bullet = _BULLET.match(rest) if ch in "-+*" else None
        if bullet is not None:
            return in_list or bool(rest[1:].strip())
        ordered = _ORDERED.match(rest) if ch.isdigit() else None
        if ordered is not None:
            return in_list or (ordered.group(1) == "1" and bool(rest[ordered.end():].strip()))
        return False

    def line(self, n: int, raw: str) -> None:
        s = _expand(raw) if "\t" in raw else raw
        blank = not s.strip()
        # Fast paths for the lines memory is mostly made of, when only paragraphs and top-level list
        # items are open: a blank line, a plain text line, a top-level "- text" item.
        leaf = self.leaf
        if leaf == "" or leaf == "para":
            stack = self.stack
            simple = not stack or (len(stack) == 1 and stack[0] is not _QUOTE and stack[0].indent == 2)
            if simple:
                if blank:
                    if not stack or not (stack[0].blank_start and n == stack[0].start + 1):  # type: ignore[union-attr]
                        self.leaf = ""
                        self.para = []
                        return
                elif not stack and s[0] not in _SPECIAL:
                    if leaf == "para":
                        self.para.append(s)
                    else:
                        self.leaf, self.leaf_start, self.leaf_depth, self.para = "para", n, 0, [s]
                    return
                elif s[0] == "-" and s[1:2] == " " and s[2:3] not in _SPECIAL:
                    self.leaf, self.leaf_start, self.leaf_depth, self.para = "para", n, 1, [s[2:]]
                    self.stack = [_Item(2, False, n)]
                    return
        matched, pos = self.match_containers(n, s, blank)
        stack = self.stack
        if matched < len(stack):
            # Outside a container a list marker always ends the paragraph (an empty item, any number).
            lazy = self.leaf == "para" and not blank and not self.starts_block(s, pos, True)
            if lazy:
                self.para.append(s[pos:])
                return
            self.close_leaf(n)
            del stack[matched:]
        leaf = self.leaf
        if leaf == "fence":
            ind = _indent(s, pos)
            rest = s[pos + ind:]
            if ind <= 3 and rest.startswith(self.fence[0]):
                run = len(rest) - len(rest.lstrip(self.fence[0]))
                if run >= len(self.fence) and not rest[run:].strip():
                    self.close_leaf(n + 1)
            return
        if leaf == "html":
            if self.html_end is None:
                if blank:
                    self.close_leaf(n)
            elif self.html_end.search(s, pos):
                self.close_leaf(n + 1)
            return
        # New containers, then the leaf.
        while True:
            ind = _indent(s, pos)
            if ind >= 4:
                break
            p = pos + ind
            if s.startswith(">", p):
                self.close_leaf(n)
                stack.append(_QUOTE)
                pos = p + 1
                if s.startswith(" ", pos):
                    pos += 1
                continue
            ch = s[p:p + 1]
            marker = None
            if ch in ("-", "+", "*"):
                if _HR.match(s, p):
                    break
                marker = _BULLET.match(s, p)
            elif ch.isdigit():
                marker = _ORDERED.match(s, p)
            if marker is None:
                break
            after = marker.end()
            empty = not s[after:].strip()
            if self.leaf == "para" and (empty or (ch.isdigit() and marker.group(1) != "1")):
                break  # cannot interrupt a paragraph
            spaces = _indent(s, after)
            if empty:
                width = after - pos + 1
            elif spaces > 4:
                width = after - pos + 1
            else:
                width = after - pos + spaces
            self.close_leaf(n)
            stack.append(_Item(width, empty, n))
            pos = min(pos + width, len(s))
            if empty:
                break
        self.leaf_line(n, s, pos, blank)

    def leaf_line(self, n: int, s: str, pos: int, blank: bool) -> None:
        if blank or not s[pos:].strip():
            if self.leaf == "para":
                self.close_leaf(n)
            return
        ind = _indent(s, pos)
        if ind >= 4:
            if self.leaf == "para":
                self.para.append(s[pos:])
            elif self.leaf == "code":
                self.code_last = n
            else:
                self.close_leaf(n)
                self.open_leaf("code", n)
                self.code_last = n
            return
        if self.leaf == "code":
            self.close_leaf(n)
        rest = s[pos + ind:]
        ch = rest[0]
        if ch == "#":
            m = _ATX.match(rest)
            if m is not None:
                self.close_leaf(n)
                title = (m.group(2) or "").strip()
                self.found.append((n, len(m.group(1)), title, len(self.stack), n + 1))
                return
        elif ch in "`~":
            f = _FENCE.match(rest)
            if f is not None and not (ch == "`" and "`" in f.group(2)):
                self.close_leaf(n)
                self.open_leaf("fence", n)
                self.fence = f.group(1)
                return
        elif ch == "<":
            kind = _html_start(rest)
            if kind >= 0 and (_HTML[kind][2] or self.leaf != "para"):
                self.close_leaf(n)
                self.open_leaf("html", n)
                end = _HTML[kind][1]
                self.html_end, self.html_comment = end, kind == 1
                if end is not None and end.search(rest):
                    self.close_leaf(n + 1)
                return
        if self.leaf == "para" and ch in "=-" and _SETEXT.match(rest):
            title = " ".join(part.strip() for part in self.para).strip()
            self.found.append((self.leaf_start, 1 if ch == "=" else 2, title, len(self.stack), n + 1))
            self.leaf = ""
            self.para = []
            return
        if ch in "*-_" and _HR.match(rest):
            self.close_leaf(n)
            return
        if self.leaf == "para":
            self.para.append(rest)
            return
        self.open_leaf("para", n)
        self.para = [rest]


def _sections(found: list[tuple[int, int, str, int, int]], total: int) -> tuple[Heading, ...]:
    out: list[Heading] = []
    tops = [(i, f) for i, f in enumerate(found) if f[3] == 0]
    ends: dict[int, int] = {}
    open_: list[tuple[int, int]] = []  # (level, index) of sections still open
    for i, (line, level, _t, _d, _s) in tops:
        while open_ and open_[-1][0] >= level:
            ends[open_.pop()[1]] = line
        open_.append((level, i))
    for _level, i in open_:
        ends[i] = total
    for i, (line, level, title, depth, stop) in enumerate(found):
        out.append(Heading(line, level, title, ends.get(i, stop), stop, depth, stop > line + 1))
    return tuple(out)


@lru_cache(maxsize=8)
def scan(text: str) -> Scan:
    """Scan ``text`` (kept for the last few texts: the outline, the budget and the search share one scan)."""
    lines = text.split("\n")
    if len(lines) > 1 and not lines[-1].strip():
        lines.pop()  # a final newline ends the last line; blanks after it start nothing
    if "\r" in text:
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    sc = _Scanner()
    step = sc.line
    for n, raw in enumerate(lines):
        step(n, raw)
    total = len(lines)
    sc.close_leaf(total)
    blocks = tuple(sorted(sc.blocks, key=lambda b: b.start))
    opaque = frozenset(n for b in blocks for n in range(b.start, b.end))
    return Scan(_sections(sc.found, total), blocks, total, opaque)


def headings(text: str, max_level: int = 6) -> list[Heading]:
    """The top-level headings (sections) of ``text`` up to ``max_level``."""
    return scan(text).top(max_level)


def sections(text: str, level: int = 2) -> list[tuple[str, int, int]]:
    """``(title, start, end)`` of each top-level section of exactly ``level``, lines ``[start, end)``."""
    return [(h.title, h.line, h.end) for h in scan(text).headings if h.depth == 0 and h.level == level]
