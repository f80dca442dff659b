"""An agent's three memory files, made together as Fusion makes them (design §2a).

When Fusion first writes to an agent's memory it makes the agent's whole folder: ``MEMORY.md``,
``DREAMS.md`` and today's daily note, each with its scaffold when missing, then appends (Runfusion/Fusion
``packages/engine/src/agent-tools.ts`` ``syncAgentMemoryFile``, called by ``fn_memory_append`` with
``scope: "agent"``, at 51870ed2; ``packages/core/src/memory-dreams.ts`` ``ensureAgentMemoryFiles`` at
f4de01a1). memdesk does the same after an agent's append made a new file: the siblings still missing are
created with their exact scaffolds through the write pipeline, as memdesk's own writes (never over a file
that exists). Read from Fusion, never copied.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

from core.documents.layout import DREAMS_NAME
from core.errors import MemoryBackendError
from core.project.results import Changes

if TYPE_CHECKING:
    from typing import Protocol

    from core.documents.layout import Layout

    class Project(Protocol):
        """What making the folder asks of the project (:class:`core.project.model.Project`, whose writes call this)."""

        @property
        def layout(self) -> Layout: ...

        def exists(self, path: str | None = None) -> bool: ...

        def create_document(self, path: str | None = None) -> Changes: ...


def complete_agent_folder(project: Project, agent: str, written: str, today: date | None) -> tuple[Changes, list[str]]:
    """Create the agent's missing ``MEMORY.md``, ``DREAMS.md`` and today's note beside ``written`` (a file the
    append just made); what changed, and a warning for each sibling that could not be made."""
    long_term = project.layout.long_term_path(agent)
    siblings = (long_term, f"{long_term.rsplit('/', 1)[0]}/{DREAMS_NAME}", project.layout.daily_path(today, agent))
    changes = Changes()
    warnings: list[str] = []
    for rel in siblings:
        if rel == written or project.exists(rel):
            continue
        try:
            changes = changes | project.create_document(rel)
        except MemoryBackendError as exc:  # the entry is written; say which sibling waits, and why
            warnings.append(f"the entry was written, but the agent's {rel} was not created: {exc}")
    return changes, warnings
