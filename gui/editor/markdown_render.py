"""Memory markdown to safe HTML for the preview (python-markdown; no Qt, runs on a worker thread).

What the agents write is rendered the way their own tools (CommonMark, GitHub) show it, and
nothing in it can reach the disk, the network or the desktop's URL handlers:

* **Lists after a paragraph line.** CommonMark lets a list item interrupt a paragraph; python-markdown
  needs a blank line first, so 74 lists in a real agent memory rendered as run-on text. One small
  preprocessing step (:class:`_ListAfterParagraph`) inserts that blank line, after fenced code has
  been set aside, and only where CommonMark would start a list: a bullet, or an ordered item
  numbered 1, indented at most three spaces, with text after the marker.
* **Two-space nested bullets** (as agents indent them) are widened to the four spaces python-markdown
  wants.
* **Headings** need a space after the ``#`` (``pymdownx.saneheaders``), so ``#root {`` stays text.
* **Raw HTML is escaped**: python-markdown's raw-HTML block preprocessor and inline pattern are
  removed, so ``<img>``, ``<table>`` or ``<script>`` show as the text they are. A whole-line
  ``<!-- comment -->`` is shown dimmed, a ``<!-- YYYY-MM-DD -->`` entry marker as a date line.
* **Links and images are sanitized** (:class:`_Sanitizer`): only ``http``/``https`` links and
  in-page ``#`` anchors keep their target, images become their alt text, attributes are limited to
  a short list and nesting is flattened past :data:`MAX_DEPTH` levels (deep nesting is what makes
  Qt's text layout slow).
* **Bounded work**: a paragraph with hundreds of ``[`` (python-markdown's link search is quadratic
  in them) has them escaped (:class:`_Defuse`).
* **Conflict markers** (``<<<<<<<``, ``=======``, ``>>>>>>>``) left by a hand merge are shown as
  marked lines rather than read as a heading underline or a quote.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as etree
from typing import Any

from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor

MAX_DEPTH = 16
MAX_INLINE_DEPTH = 48
MAX_ELEMENTS = 3000  # a 12 KiB window of the real memory makes 200-450
MAX_BRACKETS = 200  # python-markdown's link search is quadratic in the "[" of one paragraph
CONFLICT_MARKER = re.compile(r"^(<{7}|={7}|>{7})(?:[ \t].*)?$")

_DATED = re.compile(r"^[ \t]*<!-- (\d{4}-\d{2}-\d{2}) -->[ \t]*$")
_COMMENT_OPEN = re.compile(r"^[ \t]*<!--")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_INTERRUPTS = re.compile(r"^ {0,3}(?:[-*+]|1[.)])[ \t]+\S")  # CommonMark: may interrupt a paragraph
_THEMATIC = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_NOT_PARAGRAPH = re.compile(r"^(?: {0,3}(?:#|>|\||```|~~~)| {4}|\t|\x02)")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_NESTED_ITEM = re.compile(r"^( +)(?=(?:[-*+]|\d+[.)]) )")

_ALLOWED_TAGS = frozenset({
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "a", "em", "strong", "code", "pre",
    "blockquote", "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "div", "span", "sup",
    "sub", "dl", "dt", "dd", "del", "b", "i",
})
_ALLOWED_ATTRS = {"a": {"href", "title", "id"}, "ol": {"start"}, "li": {"id"}, "sup": {"id"},
                  "div": {"class"}, "th": {"align"}, "td": {"align"}, "code": {"class"}}
_CONTAINERS = frozenset({"ul", "ol", "li", "blockquote", "div", "table", "thead", "tbody", "tr",
                         "dl", "dd"})
_SAFE_SCHEMES = ("http://", "https://")
_ALIGN = re.compile(r"text-align:\s*(left|right|center)")


def _escape(text: str) -> str:
    return html.escape(text, quote=True)


class _MarkedLines(Preprocessor):
    """Dated entry markers, whole-line comments and conflict markers become stashed, escaped HTML."""

    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        i = 0
        while i < len(lines):
            line = lines[i]
            html_block: str | None = None
            dated = _DATED.match(line) if "<!--" in line else None
            if dated is not None:
                html_block = f'<p class="entry-date">{dated.group(1)}</p>'
            elif CONFLICT_MARKER.match(line):
                html_block = f'<p class="conflict-marker">{_escape(line)}</p>'
            elif _COMMENT_OPEN.match(line):
                end = next((j for j in range(i, min(i + 200, len(lines))) if "-->" in lines[j]), None)
                if end is not None and lines[end].rstrip().endswith("-->"):
                    body = "\n".join(lines[i:end + 1]).strip()[4:-3].strip()
                    html_block = f'<p class="comment">{_escape(body)}</p>'.replace("\n", "<br />")
                    i = end
            if html_block is None:
                out.append(line)
            else:
                out.extend(("", self.md.htmlStash.store(html_block), ""))
            i += 1
        return out


class _ListAfterParagraph(Preprocessor):
    """Insert the blank line python-markdown needs before a list that interrupts a paragraph."""

    def __init__(self, md: Markdown) -> None:
        super().__init__(md)
        self.inserted = 0  # counted for tests and the figures in the report

    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        block: str | None = None  # the current run of non-blank lines: "para", "list" or "other"
        for line in lines:
            if not line.strip():
                block = None
            elif _HEADING.match(line):
                block = None  # a heading is a block of its own line: the next line starts afresh
            elif block is None:
                block = "list" if _LIST_ITEM.match(line) else "other" if _NOT_PARAGRAPH.match(line) else "para"
            elif block == "para" and _INTERRUPTS.match(line) and not _THEMATIC.match(line):
                out.append("")
                self.inserted += 1
                block = "list"
            out.append(line)
        return out


class _Defuse(Preprocessor):
    """Escape the ``[`` of a paragraph holding more than :data:`MAX_BRACKETS` of them.

    python-markdown looks for the end of a link from every ``[``, so a pasted run of 12,000 of them
    takes 18 s to render. No real paragraph has hundreds; escaped, they render as the text they are.
    """

    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        start = 0
        for end in [*(i for i, line in enumerate(lines) if not line.strip()), len(lines)]:
            block = lines[start:end]
            if sum(line.count("[") for line in block) > MAX_BRACKETS:
                block = [line.replace("\\[", "[").replace("[", "\\[") for line in block]
            out.extend(block)
            if end < len(lines):
                out.append(lines[end])
            start = end + 1
        return out


class _NestedIndent(Preprocessor):
    """Agents indent nested bullets by two spaces (as GitHub reads them); python-markdown wants four."""

    def run(self, lines: list[str]) -> list[str]:
        if not any(len(m.group(1)) % 4 for line in lines if (m := _NESTED_ITEM.match(line))):
            return lines
        return [_NESTED_ITEM.sub(lambda m: m.group(1) * 2, line) for line in lines]


class _Sanitizer(Treeprocessor):
    """Keep only safe tags, attributes and link targets; turn images into text; bound the nesting.

    Iterative, so memory nested a thousand levels deep (``*`` runs, ``>`` quotes) cannot exhaust
    the stack: past :data:`MAX_DEPTH` block levels containers become plain paragraphs, and past
    :data:`MAX_INLINE_DEPTH` levels of any kind the rest is kept as its text only. Past
    :data:`MAX_ELEMENTS` elements (12,000 ``*a`` make as many ``<em>``, and Qt takes most of a second
    to build them on the GUI thread) the rest is kept as text too.
    """

    def run(self, root: etree.Element) -> None:
        stack: list[tuple[etree.Element, int, int]] = [(root, 0, 0)]
        seen = 0
        while stack:
            parent, blocks, levels = stack.pop()
            if len(parent) and (levels >= MAX_INLINE_DEPTH or seen >= MAX_ELEMENTS):
                _flatten(parent)
                continue
            if seen + len(parent) > MAX_ELEMENTS:
                _truncate(parent, MAX_ELEMENTS - seen)
            seen += len(parent)
            for child in list(parent):
                if not isinstance(child.tag, str):  # a comment or processing instruction
                    parent.remove(child)
                    continue
                if child.tag == "img":
                    alt, tail = child.get("alt") or "image", child.tail
                    child.clear()  # drops src and the rest: nothing is ever loaded
                    child.tag, child.text, child.tail = "span", f"[image: {alt}]", tail
                elif child.tag not in _ALLOWED_TAGS:
                    child.tag = "span"
                self._clean_attributes(child)
                if blocks >= MAX_DEPTH and child.tag in _CONTAINERS:
                    child.tag = "span" if child.tag != "li" else "p"
                stack.append((child, blocks + (child.tag in _CONTAINERS), levels + 1))

    @staticmethod
    def _clean_attributes(el: etree.Element) -> None:
        keep = _ALLOWED_ATTRS.get(el.tag, set())
        style = el.get("style", "")
        for name in list(el.attrib):
            if name not in keep:
                del el.attrib[name]
        if el.tag in ("th", "td") and (align := _ALIGN.search(style)):
            el.set("align", align.group(1))
        href = el.get("href")
        if href is not None and not (href.startswith("#") or href.lower().startswith(_SAFE_SCHEMES)):
            del el.attrib["href"]
        if el.tag == "a" and "href" not in el.attrib:
            el.tag = "span"


def _truncate(el: etree.Element, keep: int) -> None:
    """Keep ``el``'s first ``keep`` children; the rest become text after them."""
    rest = list(el)[keep:]
    holder = etree.Element("span")
    holder.extend(rest)
    _flatten(holder)
    for child in rest:
        el.remove(child)
    if keep > 0:
        last = el[keep - 1]
        last.tail = (last.tail or "") + (holder.text or "")
    else:
        el.text = (el.text or "") + (holder.text or "")


def _flatten(el: etree.Element) -> None:
    """Replace ``el``'s children by their text (iteratively: the subtree may be very deep)."""
    parts: list[str] = [el.text or ""]
    stack = list(reversed(list(el)))
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            parts.append(node)
            continue
        parts.append(node.text or "")
        if node.tail:
            stack.append(node.tail)
        stack.extend(reversed(list(node)))
    for child in list(el):
        el.remove(child)
    el.text = "".join(parts)


class MemoryMarkdown(Extension):
    """The preview's rules on top of python-markdown (see the module docstring)."""

    def extendMarkdown(self, md: Markdown) -> None:
        """Register the preprocessors and the sanitizer; remove raw HTML handling."""
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        md.preprocessors.register(_MarkedLines(md), "memdesk_marked_lines", 22)
        md.preprocessors.register(_ListAfterParagraph(md), "memdesk_list_after_paragraph", 21)
        md.preprocessors.register(_NestedIndent(md), "memdesk_nested_indent", 20)
        md.preprocessors.register(_Defuse(md), "memdesk_defuse", 19)
        md.treeprocessors.register(_Sanitizer(md), "memdesk_sanitize", 1)


EXTENSIONS: tuple[Any, ...] = ("fenced_code", "tables", "footnotes", "def_list", "sane_lists",
                               "pymdownx.saneheaders")


def make_markdown() -> Markdown:
    """A python-markdown converter with memdesk's preview rules (one per thread: it is stateful)."""
    return Markdown(extensions=[*EXTENSIONS, MemoryMarkdown()], output_format="html")


def render_markdown(text: str) -> str:
    """Render memory markdown to sanitized HTML."""
    return make_markdown().convert(text)


def lists_after_paragraphs(text: str) -> int:
    """How many lists in ``text`` follow a paragraph line without a blank line (CommonMark starts them)."""
    md = make_markdown()
    step = md.preprocessors["memdesk_list_after_paragraph"]
    md.convert(text)
    return step.inserted  # type: ignore[attr-defined]
