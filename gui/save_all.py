"""File ▸ Save all (Ctrl+Alt+S; ⌘⌥S on macOS): save every open document with unsaved edits.

Each document is saved the way Ctrl+S saves it (through the session, with the hash its edits are
based on, so a change on disk the operator has not seen is never overwritten). The documents are
saved one after the other; the first one that cannot be saved (a conflict, a read-only file, a
failed write) stops the run and stays shown with the editor's reason, so the operator sees why and
the rest keep their edits. When every save succeeded the document that was shown is shown again.

The saving itself is :func:`gui.editor.save_all.save_all` (the quit dialog's Save All runs it too);
this module adds the action's shortcut and the one-line report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gui.editor.memory_editor import MemoryEditor

#: Save all: Ctrl+Alt+S (Qt shows it as ⌘⌥S on macOS, the Mac idiom); Ctrl+Shift+S stays free for Save As.
SAVE_ALL_KEYS = ("Ctrl+Alt+S",)


@dataclass
class SaveAllResult:
    """What :func:`save_all` did: the documents saved, and the one it stopped at (if any)."""

    saved: list[str] = field(default_factory=list)
    failed: str | None = None
    remaining: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every unsaved document was saved."""
        return self.failed is None

    def message(self) -> str:
        """One line for the status bar."""
        if self.failed is not None:
            left = len(self.remaining)
            return (f"Saved {len(self.saved)} document(s); {self.failed} was not saved (see the banner) — "
                    f"{left} document(s) still have unsaved edits")
        if not self.saved:
            return "No unsaved documents"
        names = ", ".join(p.rsplit("/", 1)[-1] for p in self.saved[:3])
        more = f" and {len(self.saved) - 3} more" if len(self.saved) > 3 else ""
        return f"Saved {len(self.saved)} document(s): {names}{more}"


def save_all(editor: MemoryEditor) -> SaveAllResult:
    """Save every document with unsaved edits; stop at (and show) the first that cannot be saved.

    The saving is :func:`gui.editor.save_all.save_all`'s, the one loop the quit dialog uses too; this
    says what it did for the status bar.
    """
    from gui.editor.save_all import save_all as save_each

    before = editor.unsaved_documents()
    ok = save_each(editor)
    remaining = editor.unsaved_documents()
    return SaveAllResult([p for p in before if p not in remaining], None if ok else editor.current_path, remaining)
