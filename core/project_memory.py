"""The project memory file: its path, scaffold, bootstrap and the agents' prompt instructions."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.documents.layout import SEED_SCAFFOLD, Layout
from core.settings.model import ProjectSettings, coerce_settings
from core.storage import fileio

log = logging.getLogger(__name__)

MEMORY_FILE_PATH = ".fusion/memory.md"

#: Backends whose canonical content is the layout's long-term file (agents are told its path).
FILE_LIKE_BACKENDS = frozenset({"file", "hybrid", "qmd"})
#: Backends that keep memory themselves but mirror it to the file by default (``mirror`` setting).
MIRRORED_BACKENDS = frozenset({"sqlite", "postgres"})
READONLY_BACKEND = "readonly"


def memory_file_path(root: str | os.PathLike[str]) -> Path:
    """Return the absolute path of the layout's long-term memory file under the project root."""
    return Path(root) / Layout(root).memory_path


def default_memory_scaffold() -> str:
    """Return Fusion's scaffold for a new seed-layout memory file (byte-compatible)."""
    return SEED_SCAFFOLD


def ensure_memory_file(root: str | os.PathLike[str]) -> bool:
    """Create the layout's long-term file with its exact scaffold when missing; never overwrite.

    Seed layout: ``.fusion/memory.md``; layered: ``.fusion/memory/MEMORY.md``. True if created.
    """
    from core.project.model import open_project  # late: the project model sits above this module
    from core.storage import pipeline

    layout = Layout(root)
    rel = layout.memory_path
    if fileio.resolve_in_root(root, rel).exists():
        return False
    scaffold = layout.scaffold_for(rel) or SEED_SCAFFOLD
    # Through the pipeline (what, where, lock, read, screen, O_APPEND), as memdesk's own write.
    done = pipeline.append(open_project(root), rel, scaffold, lambda current: None if current else scaffold,
                           writer=pipeline.MEMDESK, source="create")
    return bool(done.added)


def read_project_memory(root: str | os.PathLike[str]) -> str:
    """Return the long-term memory through the project's backend, ``""`` when it does not exist."""
    from core.project.model import open_project  # late: the project model sits above this module

    return open_project(root).read()


@dataclass(frozen=True)
class MemoryInstructionContext:
    """What prompt instructions need to know about the configured backend."""

    backend_type: str
    backend_name: str
    readable: bool
    writable: bool
    instruction_path_hint: str | None


def _known_backend(backend_id: str) -> bool:
    if backend_id in FILE_LIKE_BACKENDS | MIRRORED_BACKENDS | {READONLY_BACKEND}:
        return True
    try:
        from core.backends.registry import default_registry

        return default_registry().has(backend_id)
    except Exception:
        return False


def resolve_memory_instruction_context(
    settings: ProjectSettings | Mapping[str, Any] | None = None,
    root: str | os.PathLike[str] | None = None,
) -> MemoryInstructionContext:
    """Resolve the instruction context as the backend really resolves (Fusion's behaviour).

    Disabled → no instructions; ``readonly`` → consult only; an unknown or misspelt id falls back to
    the file backend and so gets the file instructions; ``hybrid``, ``qmd`` and a mirrored ``sqlite``
    or ``postgres`` keep the file canonical for readers and get them too. In a layered project the
    path is ``.fusion/memory/MEMORY.md``; a layered project with no backend key uses ``qmd``.
    """
    s = coerce_settings(settings)
    if not s.memory_enabled:
        return MemoryInstructionContext("disabled", "Disabled", False, False, None)
    layout = Layout(root) if root is not None else None
    path = layout.memory_path if layout is not None else MEMORY_FILE_PATH
    backend = s.memory_backend
    if "memory_backend" not in s.model_fields_set and layout is not None and layout.layered:
        backend = "qmd"
    if backend == READONLY_BACKEND:
        return MemoryInstructionContext("readonly", "Read-Only", True, False, None)
    if backend in MIRRORED_BACKENDS:
        mirrored = s.memory_backend_config.get("mirror", True) is not False
        return MemoryInstructionContext(backend, backend, True, True, path if mirrored else None)
    if backend in FILE_LIKE_BACKENDS or not _known_backend(backend):
        return MemoryInstructionContext("file", f"File ({path})", True, True, path)
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

This project keeps durable learnings in `{path}` (at the project root, not in your worktree).

**Before writing the specification:**
1. Read `{path}` for relevant context: architecture, conventions, pitfalls
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

_WHAT_NOT_TO_WRITE = """**Do not record:** task-specific progress or temporary state, secrets or credentials, details that are
obvious from the code, or speculation you did not verify.
**If an entry is no longer accurate, correct it or delete it** instead of adding a contradicting one.
"""

_EXEC_FILE = f"""
## Project Memory

This project keeps durable learnings in `{{path}}` (at the project root, not in your worktree).

**At the start of execution:**
1. Read `{{path}}` for task-relevant context
2. Apply relevant learnings to your implementation — follow documented patterns and avoid known pitfalls

**At the end of execution (before calling `task_done()`):**
1. Review what you learned during this task that would genuinely benefit future runs
2. **If nothing durable was learned, skip the memory update entirely**
3. Otherwise update `{{path}}` under the relevant section heading with insights such as:
{_WHAT_TO_WRITE}4. Consolidate when possible: refine an existing entry instead of adding a duplicate.

{_WHAT_NOT_TO_WRITE}
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

{_WHAT_NOT_TO_WRITE}"""


def _pick(ctx: MemoryInstructionContext, readonly: str, file: str, generic: str) -> str:
    if not ctx.readable:
        return ""
    if not ctx.writable:
        return readonly
    return file.replace("{path}", ctx.instruction_path_hint) if ctx.instruction_path_hint else generic


def build_triage_memory_instructions(
    root: str | os.PathLike[str], settings: ProjectSettings | Mapping[str, Any] | None = None
) -> str:
    """Return the ``## Project Memory`` section for the triage prompt (``""`` when memory is off)."""
    # Instructions always name the project-root path, never a worktree.
    return _pick(resolve_memory_instruction_context(settings, root), _TRIAGE_READONLY, _TRIAGE_FILE,
                 _TRIAGE_GENERIC)


def build_execution_memory_instructions(
    root: str | os.PathLike[str], settings: ProjectSettings | Mapping[str, Any] | None = None
) -> str:
    """Return the ``## Project Memory`` section for the executor prompt (``""`` when memory is off)."""
    return _pick(resolve_memory_instruction_context(settings, root), _EXEC_READONLY, _EXEC_FILE, _EXEC_GENERIC)
