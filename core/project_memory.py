"""The project memory file: its path, scaffold, bootstrap and the agents' prompt instructions."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core import fileio
from core.settings import ProjectSettings, coerce_settings

log = logging.getLogger(__name__)

MEMORY_FILE_PATH = ".fusion/memory.md"

_SCAFFOLD_LINES = (
    "# Project Memory",
    "<!-- This file stores durable project learnings. Agents consult and update it during triage and execution. -->",
    "## Architecture",
    "<!-- Key architectural patterns, module boundaries, and design decisions -->",
    "## Conventions",
    "<!-- Project-specific coding standards, naming patterns, file organization -->",
    "## Pitfalls",
    "<!-- Known issues, common mistakes, and things to avoid -->",
    "## Context",
    "<!-- Important background information, dependency constraints, deployment notes -->",
)


def memory_file_path(root: str | os.PathLike[str]) -> Path:
    """Return the absolute path of ``.fusion/memory.md`` under the project root."""
    return Path(root) / MEMORY_FILE_PATH


def default_memory_scaffold() -> str:
    """Return Fusion's scaffold for a new memory file (byte-compatible)."""
    return "\n\n".join(_SCAFFOLD_LINES) + "\n"


def ensure_memory_file(root: str | os.PathLike[str]) -> bool:
    """Create ``.fusion/memory.md`` with the scaffold when missing; never overwrite. True if created."""
    path = memory_file_path(root)
    if path.exists():
        return False
    with fileio.file_lock(Path(root), MEMORY_FILE_PATH):
        if path.exists():
            return False
        fileio.atomic_write_bytes(path, default_memory_scaffold().encode("utf-8"))
    return True


def read_project_memory(root: str | os.PathLike[str]) -> str:
    """Return the memory file's content, ``""`` when it does not exist."""
    return fileio.read_in_root(root, MEMORY_FILE_PATH) or ""


@dataclass(frozen=True)
class MemoryInstructionContext:
    """What prompt instructions need to know about the configured backend."""

    backend_type: str
    backend_name: str
    readable: bool
    writable: bool
    instruction_path_hint: str | None


def resolve_memory_instruction_context(
    settings: ProjectSettings | Mapping[str, Any] | None = None,
) -> MemoryInstructionContext:
    """Resolve the instruction context from settings: disabled, file, readonly or another backend."""
    s = coerce_settings(settings)
    if not s.memory_enabled:
        return MemoryInstructionContext("disabled", "Disabled", False, False, None)
    backend = s.memory_backend
    if backend == "file":
        return MemoryInstructionContext("file", "File (.fusion/memory.md)", True, True, MEMORY_FILE_PATH)
    if backend == "readonly":
        return MemoryInstructionContext("readonly", "Read-Only", True, False, None)
    return MemoryInstructionContext(backend, backend, True, True, None)


_TRIAGE_READONLY = """
## Project Memory

This project has a memory system that stores durable project learnings.

**Before writing the specification:**
1. Consult the project memory for relevant context
2. Incorporate any useful learnings into your specification
"""

_TRIAGE_FILE = """
## Project Memory

This project keeps durable learnings in `.fusion/memory.md` (at the project root, not in your worktree).

**Before writing the specification:**
1. Read `.fusion/memory.md` for relevant context: architecture, conventions, pitfalls
2. Incorporate relevant learnings into your specification — reference actual patterns, constraints, and conventions documented there

If the memory is irrelevant to this task, skip it.
"""

_TRIAGE_GENERIC = """
## Project Memory

This project has a memory system that stores durable project learnings.

**Before writing the specification:**
1. Consult the project memory for task-relevant context
2. Incorporate useful learnings into your specification

**If the memory contains useful context for this task, reference it in the specification.**
"""

_EXEC_READONLY = """
## Project Memory

This project has a memory system that stores durable project learnings.

**At the start of execution:**
1. Consult the project memory for relevant context
2. Apply any useful learnings to your implementation
"""

_WHAT_TO_WRITE = """   - New architectural patterns or module boundaries discovered
   - Conventions or standards that should be followed
   - Pitfalls or anti-patterns to avoid in future work
   - Important constraints or context that affects implementation decisions
"""

_EXEC_FILE = f"""
## Project Memory

This project keeps durable learnings in `.fusion/memory.md` (at the project root, not in your worktree).

**At the start of execution:**
1. Read `.fusion/memory.md` for task-relevant context
2. Apply relevant learnings to your implementation — follow documented patterns and avoid known pitfalls

**At the end of execution (before calling `task_done()`):**
1. Review what you learned during this task that would genuinely benefit future runs
2. **If nothing durable was learned, skip the memory update entirely**
3. Otherwise update `.fusion/memory.md` under the relevant section heading with insights such as:
{_WHAT_TO_WRITE}4. Consolidate when possible: refine an existing entry instead of adding a duplicate.

**Format for additions:** Add bullet points under the relevant section heading:
- Use `- ` prefix for list items
- Keep entries concise and actionable
- Example: `- The API layer uses Zod schemas for all request validation`
"""

_EXEC_GENERIC = f"""
## Project Memory

This project has a memory system that stores durable project learnings accumulated from past task runs.

**At the start of execution:**
1. Consult the project memory for task-relevant context
2. Apply useful learnings to your implementation

**At the end of execution (before calling `task_done()`):**
1. Review what you learned during this task that would genuinely benefit future runs
2. **If nothing durable was learned, skip the memory update entirely**
3. Otherwise record durable insights through the project memory, such as:
{_WHAT_TO_WRITE}4. Consolidate when possible: refine an existing memory entry instead of adding duplicates.
"""


def _pick(ctx: MemoryInstructionContext, readonly: str, file: str, generic: str) -> str:
    if not ctx.readable:
        return ""
    if not ctx.writable:
        return readonly
    return file if ctx.instruction_path_hint else generic


def build_triage_memory_instructions(
    root: str | os.PathLike[str], settings: ProjectSettings | Mapping[str, Any] | None = None
) -> str:
    """Return the ``## Project Memory`` section for the triage prompt (``""`` when memory is off)."""
    del root  # instructions always name the project-root path, never a worktree
    return _pick(resolve_memory_instruction_context(settings), _TRIAGE_READONLY, _TRIAGE_FILE, _TRIAGE_GENERIC)


def build_execution_memory_instructions(
    root: str | os.PathLike[str], settings: ProjectSettings | Mapping[str, Any] | None = None
) -> str:
    """Return the ``## Project Memory`` section for the executor prompt (``""`` when memory is off)."""
    del root
    return _pick(resolve_memory_instruction_context(settings), _EXEC_READONLY, _EXEC_FILE, _EXEC_GENERIC)
