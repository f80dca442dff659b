"""Moving a legacy ``.fusion/memory.md`` into the layered ``MEMORY.md`` (design §2a).

Fusion ignores ``.fusion/memory.md`` once ``.fusion/memory/`` exists, so what agents wrote there is
no longer read. The migration puts each of its sections' lines under the matching section of
``MEMORY.md`` (``## Architecture`` goes under ``## Decisions``; a section MEMORY.md lacks is added
at its end; what comes before the first section goes under ``## Context``), skipping what MEMORY.md
already has (a line, or a code block or comment as a whole) and the scaffolds' own comments. Headings
count only outside code fences and comments, so a ``## `` line inside a code block stays in it. It is
previewed as a diff first; applying it replaces MEMORY.md (the old one kept in history), keeps the
legacy file's text in history, and then removes the legacy file. Both steps can be undone from history.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.documents import blocks
from core.documents.layout import LONG_TERM_SCAFFOLD, SEED_MEMORY, SEED_SCAFFOLD
from core.errors import MemoryBackendError
from core.project.model import Changes, Project
from core.storage import fileio, pipeline
from core.storage.history import versions as history

#: Seed sections and the layered section they move under.
SECTION_MAP = {"Architecture": "Decisions"}
#: Where the lines before the legacy file's first section go.
HEAD_SECTION = "Context"
_FENCE = re.compile(r"(`{3,}|~{3,})")
#: The scaffolds' own comments (seed and layered), which carry nothing worth moving.
_SCAFFOLD_COMMENTS = {ln for ln in (SEED_SCAFFOLD + LONG_TERM_SCAFFOLD).splitlines() if ln.startswith("<!--")}


@dataclass(frozen=True)
class MigrationPlan:
    """The migration's result before it is written."""

    target: str
    legacy_text: str
    target_before: str
    target_after: str
    moved: int
    diff: str
    #: Legacy lines the result does not hold (always empty unless the merge is wrong; apply refuses then).
    missing: tuple[str, ...] = ()


Unit = list[str]


def _units(lines: list[str], *, close: bool = False) -> list[tuple[str | None, Unit]]:
    """Split markdown into units moved or skipped whole: ``(title, heading lines)`` for a real ``## ``
    heading, ``(None, lines)`` for a fenced code block, an HTML comment, or one other line.

    What is a heading, a fence or a comment is :mod:`core.documents.blocks`' (CommonMark): a ``## `` line inside a
    fence or a comment is content, not a heading. An unclosed fence or comment runs to the end, as a
    renderer reads it; ``close`` closes it, so that once moved it does not swallow what follows.
    """
    found = blocks.scan("\n".join(lines))
    heads = {h.line: h for h in found.headings if h.depth == 0 and h.level == 2}
    opaque = {b.start: b for b in found.blocks if b.kind == "fence" or b.comment}
    out: list[tuple[str | None, Unit]] = []
    i, total = 0, len(lines)
    while i < total:
        blk = opaque.get(i)
        if blk is not None and blk.end > i + 1:
            unit = lines[i:blk.end]
            if close and blk.end >= found.lines and not _closed(unit, blk.kind):
                unit = [*unit, _closer(unit[0], blk.kind)]
            out.append((None, unit))
            i = blk.end
            continue
        head = heads.get(i)
        if head is not None:
            out.append((head.title, lines[i:head.stop]))
            i = head.stop
            continue
        if blk is not None and close and not _closed([lines[i]], blk.kind):
            out.append((None, [lines[i], _closer(lines[i], blk.kind)]))
        else:
            out.append((None, [lines[i]]))
        i += 1
    return out


def _closed(unit: Unit, kind: str) -> bool:
    """Whether a fence or comment unit ends with its closing line (else it ran to the end of the text)."""
    if kind != "fence":
        start = unit[0].find("<!--")
        return "-->" in unit[0][start + 4:] if len(unit) == 1 else "-->" in unit[-1]
    if len(unit) < 2:
        return False
    mark = _FENCE.search(unit[0])
    last = unit[-1].strip()
    return mark is not None and last.startswith(mark.group(1)) and set(last) == {mark.group(1)[0]}


def _closer(first: str, kind: str) -> str:
    """The line that closes a fence or a comment opened by ``first``."""
    mark = _FENCE.search(first) if kind == "fence" else None
    return mark.group(1) if mark else ("```" if kind == "fence" else "-->")


def _lines(text: str) -> list[str]:
    """The lines of the legacy text, without line-end characters (CRLF files included)."""
    return [ln.rstrip("\r") for ln in text.split("\n")]


def _sections(text: str) -> tuple[list[Unit], list[tuple[str, list[Unit]]]]:
    """The units before the first real ``## `` heading, and ``(title, units)`` per section."""
    head: list[Unit] = []
    sections: list[tuple[str, list[Unit]]] = []
    for title, unit in _units(_lines(text), close=True):
        if title is not None:
            sections.append((title, []))
        elif sections:
            sections[-1][1].append(unit)
        else:
            head.append(unit)
    return head, sections


def _blank(unit: Unit) -> bool:
    return len(unit) == 1 and not unit[0].strip()


def _trim(units: list[Unit]) -> list[Unit]:
    while units and _blank(units[0]):
        units = units[1:]
    while units and _blank(units[-1]):
        units = units[:-1]
    return units


def _head_units(head: list[Unit]) -> list[Unit]:
    """The legacy head without its ``# `` title (the first non-blank line, when it is one)."""
    units = _trim(head)
    if units and len(units[0]) == 1 and units[0][0].startswith("# "):
        units = units[1:]
    return units


def merge_legacy(target: str, legacy: str) -> tuple[str, int]:
    """Return ``target`` with the legacy file's section lines added under matching sections, and the count.

    Lines before the legacy file's first section go under ``## Context``. A unit (a line, a whole
    code block or comment) the target already holds is skipped; only the scaffolds' comments are dropped.
    """
    legacy_head, legacy_sections = _sections(legacy)
    # The target's lines keep their bytes (a CRLF file keeps its "\r"); only new lines are added.
    out: list[str] = target.rstrip("\n").split("\n") if target.strip() else []
    present = {ln.strip() for ln in out if ln.strip()}
    flat_target = "\n".join(ln.rstrip() for ln in out)

    def is_new(unit: Unit) -> bool:
        if _blank(unit):
            return True
        if len(unit) == 1:
            return unit[0].strip() not in present and unit[0].strip() not in _SCAFFOLD_COMMENTS
        return "\n".join(ln.rstrip() for ln in unit) not in flat_target

    additions: dict[str, list[Unit]] = {}
    order: list[str] = []
    for title, units in [(HEAD_SECTION, _head_units(legacy_head)), *legacy_sections]:
        kept = _trim([u for u in _trim(units) if is_new(u)])
        if not kept:
            continue
        dest = SECTION_MAP.get(title, title)
        if dest not in additions:
            additions[dest] = []
            order.append(dest)
        elif additions[dest]:
            kept = [[""], *kept]
        additions[dest].extend(kept)
    moved = sum(1 for units in additions.values() for u in units for ln in u if ln.strip())
    if not moved:
        return target, 0
    # Real headings of the target (not ones inside its code blocks), with their line numbers.
    existing: list[tuple[int, str, int]] = []  # line, title, lines the heading takes
    line_no = 0
    for heading, unit in _units(out):
        if heading is not None:
            existing.append((line_no, heading, len(unit)))
        line_no += len(unit)
    # Insert from the bottom so earlier indexes stay valid.
    for idx, (at, title, size) in reversed(list(enumerate(existing))):
        if title not in additions:
            continue
        end = existing[idx + 1][0] if idx + 1 < len(existing) else len(out)
        while end > at + size and not out[end - 1].strip():
            end -= 1
        out[end:end] = ["", *(ln for u in additions.pop(title) for ln in u)]
    for title in order:
        if title in additions:
            out += ["", f"## {title}", "", *(ln for u in additions.pop(title) for ln in u)]
    return "\n".join(out) + "\n", moved


def missing_lines(legacy: str, after: str) -> tuple[str, ...]:
    """Legacy content lines (not headings, blanks or scaffold comments) that ``after`` does not hold."""
    held = {ln.strip() for ln in after.splitlines()}
    head, sections = _sections(legacy)
    units = _head_units(head) + [u for _title, us in sections for u in us]
    return tuple(ln for u in units for ln in u
                 if ln.strip() and ln.strip() not in held and ln.strip() not in _SCAFFOLD_COMMENTS)


def plan_migration(project: Project) -> MigrationPlan | None:
    """The migration of this project's legacy file, or ``None`` when there is nothing to migrate."""
    if not project.layout.layered:
        return None
    legacy = project.backend.read_document(SEED_MEMORY)
    if legacy is None:
        return None
    target = project.memory_path
    before = project.backend.read_document(target)
    base = before if before is not None else (project.layout.scaffold_for(target) or "")
    after, moved = merge_legacy(base, legacy)
    diff = history.unified_diff(before or "", after, target, "MEMORY.md now", "after migration")
    return MigrationPlan(target, legacy, before or "", after, moved, diff, missing_lines(legacy, after))


def apply_migration(project: Project, plan: MigrationPlan) -> Changes:
    """Write the planned MEMORY.md (old one kept in history), keep the legacy text in history, remove it.

    Refused with ``CONFLICT`` when either file changed since the plan was made.
    """
    project.backend.require_writable()
    if plan.missing:
        raise MemoryBackendError(
            f"the migration would not keep {len(plan.missing)} line(s) of {SEED_MEMORY} (first: "
            f"{plan.missing[0][:80]!r}); nothing was changed. Move them by hand", "INVALID_CONFIG",
            project.backend.id)
    legacy_now = project.backend.read_document(SEED_MEMORY)
    if legacy_now != plan.legacy_text:
        raise MemoryBackendError(f"{SEED_MEMORY} changed since the migration was planned; run it again",
                                 "CONFLICT", project.backend.id)
    result = project.write(plan.target, plan.target_after, expected_hash=fileio.content_hash(plan.target_before),
                           source="migrate")
    # The legacy file's removal goes through the pipeline too: what, where, lock, read (still the planned
    # text, else nothing is removed), screen, record (its text kept in history, "before migrate"), remove.
    who = project.default_author  # the app's or the CLI's user
    pipeline.remove(project, SEED_MEMORY, plan.legacy_text, writer=pipeline.writer_for("migrate", who),
                    source="before migrate", author=who)
    return result.changes | Changes(documents=frozenset({SEED_MEMORY}), history=True)
