"""Moving a legacy ``.fusion/memory.md`` into the layered ``MEMORY.md`` (design §2a).

Fusion ignores ``.fusion/memory.md`` once ``.fusion/memory/`` exists, so what agents wrote there is
no longer read. The migration puts each of its sections' lines under the matching section of
``MEMORY.md`` (``## Architecture`` goes under ``## Decisions``; a section MEMORY.md lacks is added
at its end), skipping lines MEMORY.md already has, and the seed scaffold's comments. It is
previewed as a diff first; applying it replaces MEMORY.md (the old one kept in history), keeps the
legacy file's text in history, and then removes the legacy file. Both steps can be undone from history.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core import fileio, history
from core.errors import MemoryBackendError
from core.layout import SEED_MEMORY
from core.project import Changes, Project

#: Seed sections and the layered section they move under.
SECTION_MAP = {"Architecture": "Decisions"}
_HEADING = re.compile(r"^## (.+?)\s*$")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")


@dataclass(frozen=True)
class MigrationPlan:
    """The migration's result before it is written."""

    target: str
    legacy_text: str
    target_before: str
    target_after: str
    moved: int
    diff: str


def _sections(text: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """Split into the lines before the first ``## `` heading and ``(title, body lines)`` per section."""
    head: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    in_fence = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(line)
        if m:
            sections.append((m.group(1), []))
        elif sections:
            sections[-1][1].append(line)
        else:
            head.append(line)
    return head, sections


def _meaningful(lines: list[str]) -> list[str]:
    body = [ln for ln in lines if not _COMMENT.match(ln)]
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    return body


def merge_legacy(target: str, legacy: str) -> tuple[str, int]:
    """Return ``target`` with the legacy file's section lines added under matching sections, and the count."""
    _legacy_head, legacy_sections = _sections(legacy)
    present = {ln.strip() for ln in target.splitlines() if ln.strip()}
    additions: dict[str, list[str]] = {}
    order: list[str] = []
    for title, body in legacy_sections:
        lines = [ln for ln in _meaningful(body) if not ln.strip() or ln.strip() not in present]
        lines = _meaningful(lines)
        if not lines:
            continue
        dest = SECTION_MAP.get(title, title)
        if dest not in additions:
            additions[dest] = []
            order.append(dest)
        additions[dest].extend(lines)
    moved = sum(1 for lines in additions.values() for ln in lines if ln.strip())
    if not moved:
        return target, 0
    out: list[str] = target.rstrip("\n").split("\n")
    existing = [(i, m.group(1)) for i, ln in enumerate(out) if (m := _HEADING.match(ln))]
    # Insert from the bottom so earlier indexes stay valid.
    for idx, (line_no, title) in reversed(list(enumerate(existing))):
        if title not in additions:
            continue
        end = existing[idx + 1][0] if idx + 1 < len(existing) else len(out)
        while end > line_no + 1 and not out[end - 1].strip():
            end -= 1
        out[end:end] = ["", *additions.pop(title)]
    for title in order:
        if title in additions:
            out += ["", f"## {title}", "", *additions.pop(title)]
    return "\n".join(out) + "\n", moved


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
    return MigrationPlan(target, legacy, before or "", after, moved, diff)


def apply_migration(project: Project, plan: MigrationPlan) -> Changes:
    """Write the planned MEMORY.md (old one kept in history), keep the legacy text in history, remove it.

    Refused with ``CONFLICT`` when either file changed since the plan was made.
    """
    project.backend.require_writable()
    legacy_now = project.backend.read_document(SEED_MEMORY)
    if legacy_now != plan.legacy_text:
        raise MemoryBackendError(f"{SEED_MEMORY} changed since the migration was planned; run it again",
                                 "CONFLICT", project.backend.id)
    result = project.write(plan.target, plan.target_after, expected_hash=fileio.content_hash(plan.target_before),
                           source="migrate")
    history.record_version(project.root, SEED_MEMORY, plan.legacy_text, "before migrate")
    path = fileio.resolve_in_root(project.root, SEED_MEMORY)
    with fileio.file_lock(project.root, SEED_MEMORY):
        if fileio.read_text(path) == plan.legacy_text:
            path.unlink()
    return result.changes | Changes(documents=frozenset({SEED_MEMORY}), history=True)
