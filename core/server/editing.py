"""The text changes behind ``memory_edit`` and ``memory_remove_entry``: pure functions, no I/O.

Each returns the document's whole new text, or raises a :class:`~core.server.refusals.Refusal` that
says why nothing can change (the span is missing or ambiguous, the section is not there, ...). The
caller writes the result through :meth:`core.project.Project.write` under the agent's
``expectedHash``, so the write pipeline (lock, screen, history) sees every such change.
"""

from __future__ import annotations

import re

from core.budget.sections import headings
from core.server.refusals import Refusal

__all__ = ["remove_entry", "replace_section", "replace_span"]

_DATE_MARKER = re.compile(r"<!--\s*\d{4}-\d{2}-\d{2}\s*-->\s*$")


def replace_span(text: str, old: str, new: str) -> str:
    """``text`` with the one occurrence of ``old`` replaced by ``new``."""
    if not old:
        raise Refusal("INVALID_ARGUMENT", "oldText is empty; give the exact text to replace",
                      next="memory_edit with oldText copied from memory_get")
    first = text.find(old)
    if first < 0:
        raise Refusal("SPAN_NOT_FOUND", "oldText does not occur in the document (it must match exactly, "
                      "spaces and line breaks included); nothing was written")
    if text.find(old, first + 1) >= 0:
        raise Refusal("SPAN_AMBIGUOUS", f"oldText occurs {text.count(old)} times in the document; nothing was "
                      "written")
    return text[:first] + new + text[first + len(old):]


def _norm_heading(value: str) -> str:
    return " ".join(value.lstrip("#").split()).casefold()


def replace_section(text: str, section: str, body: str) -> str:
    """``text`` with the body of the section headed ``section`` (``## Pitfalls`` or ``Pitfalls``) replaced.

    The body runs from the line after the heading to the section's end (sub-sections included); the
    heading itself stays. The new body keeps a blank line after the heading and before the next one.
    """
    wanted = _norm_heading(section)
    level = len(section) - len(section.lstrip("#")) if section.lstrip().startswith("#") else None
    found = [h for h in headings(text) if _norm_heading(h.title) == wanted and (level is None or h.level == level)]
    if not found:
        raise Refusal("SECTION_NOT_FOUND", f"no heading {section.strip()!r} in the document; nothing was written")
    if len(found) > 1:
        where = ", ".join(str(h.line) for h in found)
        raise Refusal("SPAN_AMBIGUOUS", f"{len(found)} headings are {section.strip()!r} (lines {where}); nothing "
                      "was written", next="memory_edit with oldText covering the section you mean")
    head = found[0]
    lines = text.split("\n")
    before = lines[:head.line]  # up to and including the heading
    after = lines[head.end_line:]
    # A section that runs to the end of a file ending in a newline keeps that newline.
    ends_file = head.end_line >= len(lines) or (head.end_line == len(lines) - 1 and lines[-1] == "")
    middle = body.strip("\n")
    block = ["", middle] if middle else []
    if ends_file:
        return "\n".join(before + block) + "\n"
    return "\n".join(before + block + [""] + after)


def _paragraph(lines: list[str], index: int) -> tuple[int, int]:
    """The first and last line index of the paragraph (run of non-blank lines) holding line ``index``."""
    start = end = index
    while start > 0 and lines[start - 1].strip():
        start -= 1
    while end + 1 < len(lines) and lines[end + 1].strip():
        end += 1
    return start, end


def _entry_bounds(lines: list[str], index: int) -> tuple[int, int]:
    """The lines of the entry holding line ``index``: its paragraph, a list item alone when the line is one
    of several bullets, and the seed layout's ``<!-- YYYY-MM-DD -->`` marker before it."""
    if lines[index].lstrip().startswith(("- ", "* ", "+ ")):
        start = end = index
        while end + 1 < len(lines) and lines[end + 1].startswith(("  ", "\t")) and lines[end + 1].strip():
            end += 1  # the item's continuation lines
        return start, end
    start, end = _paragraph(lines, index)
    if _DATE_MARKER.match(lines[start].strip()) and start == index and end > start:
        return start, end
    if start > 0 and _DATE_MARKER.match(lines[start - 1].strip()):
        start -= 1
    return start, end


def remove_entry(text: str, *, entry: str | None = None, line: int | None = None) -> tuple[str, str]:
    """``text`` without the entry holding ``entry`` (exact text, once) or line ``line`` (1-based); also the
    removed text. Headings are never removed as entries."""
    if (entry is None) == (line is None):
        raise Refusal("INVALID_ARGUMENT", "give exactly one of text and line; nothing was written",
                      next="memory_remove_entry with text or line")
    lines = text.split("\n")
    if entry is not None:
        needle = entry.strip()
        if not needle:
            raise Refusal("INVALID_ARGUMENT", "text is empty; nothing was written",
                          next="memory_remove_entry with the entry's exact text")
        first = text.find(needle)
        if first < 0:
            raise Refusal("ENTRY_NOT_FOUND", "no entry holds that text (it must match exactly); nothing was written")
        if text.find(needle, first + 1) >= 0:
            raise Refusal("ENTRY_AMBIGUOUS", f"the text occurs {text.count(needle)} times; nothing was written")
        index = text.count("\n", 0, first)
        last = text.count("\n", 0, first + len(needle))
    else:
        assert line is not None
        if not 1 <= line <= len(lines):
            raise Refusal("ENTRY_NOT_FOUND", f"line {line} is past the document's {len(lines)} lines; nothing was "
                          "written")
        index = last = line - 1
        if not lines[index].strip():
            raise Refusal("ENTRY_NOT_FOUND", f"line {line} is blank; nothing was written")
    if lines[index].lstrip().startswith("#"):
        raise Refusal("ENTRY_NOT_FOUND", f"line {index + 1} is a heading, not an entry (edit sections with "
                      "memory_edit); nothing was written", next="memory_edit with section")
    start, end = _entry_bounds(lines, index)
    end = max(end, last)
    removed = "\n".join(lines[start:end + 1])
    # Drop the blank line before the entry (or, at the top, the one after) so no gap is left behind.
    if start > 0 and not lines[start - 1].strip():
        start -= 1
    elif end + 1 < len(lines) and not lines[end + 1].strip() and end + 1 < len(lines) - 1:
        end += 1
    return "\n".join(lines[:start] + lines[end + 1:]), removed
