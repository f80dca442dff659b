"""Save All and Discard All over every document the editor holds with unsaved edits.

Each unsaved document is shown in turn and saved through the editor's own :meth:`save`, so every
guard of a single save holds (the base hash, conflict markers, a change on disk not yet shown, a
change seen on disk that the text would drop). The first document that cannot be saved stays
shown, with its reason, and Save All answers False: the caller (quit, close, open another
project, switch backend) then goes no further, so nothing is dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gui.editor.memory_editor import MemoryEditor


def save_all(editor: MemoryEditor) -> bool:
    """Save every unsaved document; False (the failing one shown) as soon as one is not saved."""
    start = editor.current_path
    for path in editor.unsaved_documents():
        if path != editor.current_path:
            editor.switch_document(path)
            if editor.current_path != path:  # a conflict open on the shown one keeps it shown
                return False
        if editor.external.in_conflict or not editor.dirty:
            if editor.external.in_conflict:
                return False
            continue  # shown again, it caught up with the disk and has nothing left to save
        if not editor.save():
            return False
    if editor.current_path != start and editor.buffer.has(start):
        editor.switch_document(start)
    return True


def discard_all(editor: MemoryEditor) -> None:
    """Drop every unsaved edit: the documents not shown are closed, the shown one is read again."""
    dropped = [p for p in editor.buffer.dirty_paths() if p != editor.current_path]
    editor.buffer.forget_others(include_dirty=True)
    for path in dropped:
        editor.documentDirtyChanged.emit(path, False)
    editor.load()
