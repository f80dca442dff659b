"""Appended entries (seed 002): their format, the tool's messages, and rotation of old ones to the archive.

:meth:`core.project.Project.append` is the one code path that appends (this module sits below it;
``core.entries.append_memory_entry`` is the seed-named wrapper above it). In the seed layout, once the
working memory runs 10 % over its line budget, the oldest dated entries move to ``.fusion/memory-archive.md``
until it is 10 % under, so the whole-file rewrite that rotation costs happens once per many appends, not on
every one.
Nothing is deleted: the archive is written first, so a crash can duplicate an entry but never lose one.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from core.documents.layout import ARCHIVE
from core.frozen import Record
from core.storage import docio, fileio

if TYPE_CHECKING:
    from typing import Protocol

    from core.storage.pipeline import Project as PipelineProject

    class Rotated(PipelineProject, Protocol):
        """What rotation asks of a project (:class:`core.project.model.Project`, whose appends call it)."""

        def read(self, path: str | None = None) -> str: ...

        def write(self, path: str | None, content: str, *, expected_hash: str | None = None,
                  source: str = "write") -> object: ...

    class Appended(Protocol):
        """What an append reports: :class:`core.entries.AppendResult` (the seed's wrapper, above this module)
        or the project model's :class:`~core.project.model.AppendOutcome`."""

        @property
        def status(self) -> str: ...

        @property
        def file_path(self) -> Path | None: ...

AppendStatus = Literal["written", "held", "skipped_empty", "skipped_duplicate"]
MEMORY_ARCHIVE_PATH = ARCHIVE
DEFAULT_MAX_LINES = 2000
#: Rotation starts this far over the budget and stops this far under it (amortises the rewrite).
ROTATION_SLACK = 0.10
ARCHIVE_HEADER = "# Memory Archive\n\n<!-- Dated entries moved out of .fusion/memory.md by memdesk; nothing here is deleted. -->\n"

_MARKER = re.compile(r"\n\n<!-- (\d{4}-\d{2}-\d{2}) -->\n")


def format_entry(content: str, today: date | None = None) -> str:
    """Return the appended-entry text: ``\\n\\n<!-- YYYY-MM-DD -->\\n<trimmed content>``."""
    day = (today or datetime.now(UTC).date()).isoformat()
    return f"\n\n<!-- {day} -->\n{content.strip()}"


def tool_message_for(status: str, file_path: Path | str | None, scope: str = "project") -> str:
    """The ``memory_write`` tool's user-facing string for an append status (seed 002 §3)."""
    if status == "written":
        return f"Memory written to {scope} scope ({file_path})"
    if status == "skipped_empty":
        return "Error: VALIDATION_ERROR — memory_write content cannot be empty"
    if status == "skipped_duplicate":
        return f"Memory entry already present (no-op) — {file_path}"
    return f"Memory write returned unknown status: {status}"


def tool_message(result: Appended, scope: str = "project") -> str:
    """Map an :class:`~core.entries.AppendResult` to the ``memory_write`` tool's user-facing string (seed 002 §3)."""
    return tool_message_for(result.status, result.file_path, scope)


def split_dated_entries(text: str) -> tuple[str, list[tuple[str, str]]]:
    """Split memory into the undated head and its dated entries ``(date, block)`` in file order.

    Each block starts with its ``\\n\\n<!-- date -->\\n`` marker and runs to the next marker or the end.
    """
    matches = list(_MARKER.finditer(text))
    if not matches:
        return text, []
    head = text[: matches[0].start()]
    entries = []
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        entries.append((m.group(1), text[m.start():end]))
    return head, entries


def _line_count(text: str) -> int:
    return text.count("\n") + 1


def plan_rotation(text: str, max_lines: int) -> tuple[str, str, int] | None:
    """Which entries to move once ``text`` is over budget: ``(kept, archived, count)`` or ``None``.

    Nothing moves until the text is :data:`ROTATION_SLACK` over ``max_lines`` and the dated entries
    (but the newest) hold at least that share of lines; then the oldest go until the text is that much
    under (the newest entry always stays). So a rewrite moves a batch, never one entry per append.
    """
    lines = _line_count(text)
    if lines <= max_lines * (1 + ROTATION_SLACK):
        return None
    head, entries = split_dated_entries(text)
    if not entries:
        return None
    movable = sum(block.count("\n") for _date, block in entries[:-1])
    if movable < max_lines * ROTATION_SLACK:
        # Too little to move to be worth a rewrite (the undated part alone is over budget, say):
        # moving one entry per append would rewrite the whole file every time.
        return None
    target = int(max_lines * (1 - ROTATION_SLACK))
    order = sorted(range(len(entries)), key=lambda i: (entries[i][0], i))
    moved: set[int] = set()
    for i in order:
        if lines <= target or len(moved) == len(entries) - 1:
            break
        moved.add(i)
        lines -= entries[i][1].count("\n")
    if not moved:
        return None
    archived = "".join(entries[i][1] for i in sorted(moved))
    kept = head + "".join(block for i, (_d, block) in enumerate(entries) if i not in moved)
    return kept, archived, len(moved)


class _Tally(Record):
    """What rotation needs to know of a document, kept between appends so a quiet one costs O(entry).

    ``chars`` and ``tail`` identify the text it was counted on (its length and last characters); the
    counts are lines (as :func:`_line_count`), the lines of the dated entries but the newest
    (``movable``), where the newest entry's marker starts (``last``, -1 with none) and how many
    entries are dated.
    """

    __slots__ = _fields = ("chars", "tail", "lines", "movable", "last", "dated")  # a Record: no dataclass to build
    chars: int
    tail: str
    lines: int
    movable: int
    last: int
    dated: int

    def __init__(self, chars: int, tail: str, lines: int, movable: int, last: int, dated: int) -> None:
        self._set(chars=chars, tail=tail, lines=lines, movable=movable, last=last, dated=dated)


_TAIL = 32  # longer than a marker, so one cut at the old end is found again
_tallies: dict[tuple[str, str], _Tally] = {}


def _tally_of(text: str) -> _Tally:
    """Count ``text`` whole (in memory: no read)."""
    markers = list(_MARKER.finditer(text))
    last = markers[-1].start() if markers else -1
    movable = text.count("\n", markers[0].start(), last) if markers else 0
    return _Tally(len(text), text[-_TAIL:], text.count("\n") + 1, movable, last, len(markers))


def _tally_after(old: _Tally | None, text: str) -> _Tally:
    """The tally of ``text``, from ``old`` when ``text`` is ``old``'s text with more appended (O(addition))."""
    if old is None or len(text) < old.chars or text[max(0, old.chars - _TAIL):old.chars] != old.tail:
        return _tally_of(text)
    start = max(0, old.chars - _TAIL)
    lines, movable, last, dated = old.lines + text.count("\n", old.chars), old.movable, old.last, old.dated
    for m in _MARKER.finditer(text, start):
        if m.end() <= old.chars:
            continue  # counted already
        if last >= 0:
            movable += text.count("\n", last, m.start())
        last, dated = m.start(), dated + 1
    return _Tally(len(text), text[-_TAIL:], lines, movable, last, dated)


def _may_move(t: _Tally, budget: int) -> bool:
    """Whether :func:`plan_rotation` could move anything in the text ``t`` counts (its early exits)."""
    return t.lines > budget * (1 + ROTATION_SLACK) and t.dated > 0 and t.movable >= budget * ROTATION_SLACK


def _remember(key: tuple[str, str], tally: _Tally) -> None:
    _tallies.pop(key, None)
    if len(_tallies) >= 64:
        _tallies.pop(next(iter(_tallies)))
    _tallies[key] = tally


def rotate_if_needed(project: Rotated, relpath: str, max_lines: int | None = None, *,
                     seen: str | None = None) -> int:
    """Move old dated entries of ``relpath`` to the archive when it is over budget; return how many moved.

    ``seen`` is the text as the caller last wrote it. With it, whether anything could move is worked
    out from a tally kept since the last append (its counts plus what was added), so an append that
    moves nothing neither reads the file nor scans it: O(entry), however big the file (issue 19).
    A wrong tally (the file changed behind it) can only cost a plan that moves nothing, or put a
    rotation off to the next append; the plan itself always reads the file under its lock.

    The archive is appended first, then the document is replaced with a hash guard, so an append
    that lands meanwhile makes the replacement fail (``CONFLICT``) instead of being lost.
    """
    budget = DEFAULT_MAX_LINES if max_lines is None else max_lines
    if budget is None or budget <= 0:
        return 0
    key = (str(project.root), relpath)
    if seen is not None:
        tally = _tally_after(_tallies.get(key), seen)
        _remember(key, tally)
        if not _may_move(tally, budget):
            return 0  # nothing would move: no read, no plan
    with docio.document_lock(project.root, relpath, project.backend.id):
        text = project.read(relpath)
        plan = plan_rotation(text, budget)
        if plan is None:
            _remember(key, _tally_of(text))
            return 0
        kept, archived, count = plan
        archive = project.layout.archive_path
        # Archive first: a crash between the two writes duplicates an entry, never loses one.
        from core.storage import pipeline

        pipeline.append(project, archive, archived, lambda current: (ARCHIVE_HEADER if not current else "") + archived,
                        writer=pipeline.MEMDESK, source="rotate")
        project.write(relpath, kept, expected_hash=fileio.content_hash(text), source="rotate")
        _remember(key, _tally_of(kept))
    return count
