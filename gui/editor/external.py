"""How the editor takes changes made on disk by others, and the three ways out of a conflict.

* nothing unsaved: reload silently, keeping cursor and scroll (appended text is just added);
* unsaved edits and the disk only gained text at the end (agents append dated entries): add that
  text at the end of the editor, keep the operator's edits, and say so;
* anything else: the conflict view. "Keep mine" makes the disk version the base (the next save
  overwrites it knowingly; core keeps it in history), "Take disk's" loads it as one undo step,
  "Merge by hand" puts a three-way merge in the editor, overlapping changes marked for the
  operator to resolve (a save is refused while markers remain), also one undo step.

Events caused by our own saves change nothing: the disk then equals the base.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer

from core.documents.textmerge import classify_change, describe_append, merge3, to_editor_text

if TYPE_CHECKING:
    from gui.editor.memory_editor import MemoryEditor

CHANGED_HEADLINE = ("{name} changed on disk while you had unsaved edits, and not only by appending. "
                    "Nothing has been written. Choose how to go on:")
DROPPED_HEADLINE = ("Not saved: your text no longer holds {count} line(s) that changed on disk while you "
                    "edited ({first}). Nothing has been written. Choose how to go on:")
SAVE_CONFLICT_HEADLINE = ("Not saved: {name} changed on disk since it was loaded. Nothing has been "
                          "written. Choose how to go on:")


def _name(editor: MemoryEditor) -> str:
    """The shown document's file name, for messages."""
    return editor.session.current_path.rsplit("/", 1)[-1]


def _first_words(appended: str, limit: int = 80) -> str:
    """``: “first line of what was appended…”`` so a notice says what arrived."""
    line = next((ln.strip() for ln in appended.splitlines() if ln.strip() and not ln.lstrip().startswith("<!--")), "")
    if not line:
        return ""
    return f": “{line[:limit]}{'…' if len(line) > limit else ''}”"


class ExternalChanges(QObject):
    """The editor's policy for disk changes; holds the disk version while a conflict is open."""

    def __init__(self, editor: MemoryEditor) -> None:
        super().__init__(editor)
        self._editor = editor
        self._disk: tuple[str, str] | None = None
        self._read_failed = False  # the last change could not be read (a writer mid-way, say)
        self._merge_base: str | None = None  # "Merge by hand" merges from here (a dropped change shown again)
        #: A change arrived while a save ran on the worker: looked at once the save is done.
        self.deferred = False
        self._deferred_loud = False  # one of the changes looked at later would have said so (not quiet)
        editor.session.worker.busyChanged.connect(self._worker_busy)

    def _worker_busy(self, busy: bool, _what: str) -> None:
        """The worker is done (a read, a restore, a switch): look at a change that arrived meanwhile."""
        if not busy and self.deferred and not self._editor.session.worker.busy:
            QTimer.singleShot(0, self.catch_up)

    def catch_up(self) -> None:
        """Look at the changes that arrived while the worker was busy (once; quietly unless one was not)."""
        if self.deferred and not self._editor.session.worker.busy:
            loud, self.deferred, self._deferred_loud = self._deferred_loud, False, False
            self.on_disk_changed(quiet=not loud)

    @property
    def merged_with_markers(self) -> bool:
        """A hand merge left conflict markers in the shown document (saves are refused while any remain)."""
        return self._editor.buffer.slot.merged_with_markers

    @merged_with_markers.setter
    def merged_with_markers(self, value: bool) -> None:
        self._editor.buffer.slot.merged_with_markers = value

    @property
    def in_conflict(self) -> bool:
        """Whether the conflict view waits for a choice."""
        return self._disk is not None

    def on_disk_changed(self, *, quiet: bool = False) -> None:
        """Compare the disk with the base and reload, merge the appended text, or open a conflict.

        ``quiet``: a document without edits catches up without a notice (it is just being shown again).
        """
        ed = self._editor
        if ed.buffer.loading:
            return  # the editor checks again once the document is full
        if ed.session.worker.busy:  # a save or read is under way: look once it is done (_worker_busy)
            self.deferred = True
            self._deferred_loud = self._deferred_loud or not quiet
            return
        disk, digest = ed.session.read_memory()
        error = ed.session.adapter.last_read_error
        if error is not None:
            if ed.buffer.dirty or self.in_conflict:
                self._read_failed = True
                ed.notice.show_message(f"{_name(ed)} changed on disk and cannot be read: {error.message} "
                                       "Your edits are kept in the editor.", "error")
                ed.noticed.emit(f"{_name(ed)} changed on disk and cannot be read: {error.message}", "error")
            else:
                ed.load()
            return
        if self._read_failed:
            self._read_failed = False
            ed.notice.clear()
        if disk != ed.buffer.base_text and self._disk is None:
            ed.session.notice_external(ed.buffer.base_text, disk)  # kept in history: a program's change
        if ed.read_only_reason is not None and not ed.buffer.dirty:
            if disk != ed.buffer.base_text:
                ed.load()
            return
        if self._disk is not None:
            self._disk = (disk, digest)
            ed.conflict_view.set_disk(to_editor_text(disk))
            return
        kind = classify_change(ed.buffer.base_text, disk)
        if kind == "same":
            return
        if kind == "appended":
            was_dirty = ed.buffer.dirty
            suffix = ed.buffer.append_from_disk(disk, digest)
            if was_dirty or not quiet:
                ed.notify(describe_append(suffix) + _first_words(suffix) if was_dirty
                          else f"Reloaded {_name(ed)} (changed on disk)" + _first_words(suffix))
        elif not ed.buffer.dirty:
            ed.buffer.load(disk, digest)
            if not quiet:
                ed.notify(f"Reloaded {_name(ed)} (changed on disk)")
        else:
            self._open(disk, digest, CHANGED_HEADLINE)

    def conflict_on_save(self) -> None:
        """A save was refused with ``CONFLICT``: show what is on disk now."""
        disk, digest = self._editor.session.read_memory()
        self._open(disk, digest, SAVE_CONFLICT_HEADLINE)

    def dropped_on_save(self, dropped: list[str]) -> None:
        """A save would drop lines the editor took from disk: show the conflict again, merging from before them."""
        buffer = self._editor.buffer
        disk, digest = self._editor.session.read_memory()
        self._merge_base = buffer.slot.seen_disk[0][0] if buffer.slot.seen_disk else None
        first = dropped[0][:60] + ("…" if len(dropped[0]) > 60 else "")
        self._open(disk, digest, DROPPED_HEADLINE.replace("{count}", str(len(dropped))).replace("{first}", f"“{first}”"))

    def _open(self, disk: str, digest: str, headline: str) -> None:
        self._disk = (disk, digest)
        self._editor.show_conflict(headline.format(name=_name(self._editor)), self._editor.buffer.text(),
                                   to_editor_text(disk))
        self._editor.notify(f"{_name(self._editor)} changed on disk while you had unsaved edits — choose how to "
                            "go on", "warning")

    def close_conflict(self) -> tuple[str, str] | None:
        """Leave the conflict view; return the disk version it held."""
        disk, self._disk = self._disk, None
        if disk is None:
            self._merge_base = None
        self._editor.hide_conflict()
        return disk

    def keep_mine(self) -> None:
        """Keep the editor's text; the disk version becomes the base, so the next save replaces it."""
        held = self.close_conflict()
        if held is None:
            return
        buffer = self._editor.buffer
        self._merge_base = None
        buffer.slot.seen_disk.clear()  # the operator chose their text over what the disk changed
        buffer.set_base(*held)
        buffer.document.setModified(True)
        self._editor.notice.show_message(
            "Kept your version. Saving will replace the version on disk (it stays in History).", "info")
        self._editor.statusMessage.emit("Kept your version")

    def take_disk(self) -> None:
        """Load the disk version (one undo step: Ctrl+Z brings the operator's text back)."""
        held = self.close_conflict()
        if held is None:
            return
        buffer = self._editor.buffer
        self._merge_base = None
        buffer.slot.seen_disk.append((buffer.base_text, held[0]))
        buffer.replace_undoable(to_editor_text(held[0]))
        buffer.set_base(*held)
        buffer.document.setModified(False)
        self.merged_with_markers = False
        self._editor.notice.show_message(
            "Loaded the version on disk. Your edits are one Ctrl+Z away.", "info")
        self._editor.statusMessage.emit("Took the disk version")

    def merge_by_hand(self) -> None:
        """Put a three-way merge of base, mine and disk in the editor (one undo step)."""
        held = self.close_conflict()
        if held is None:
            return
        buffer = self._editor.buffer
        base = buffer.base_text if self._merge_base is None else self._merge_base
        self._merge_base = None
        buffer.slot.seen_disk.append((base, held[0]))
        result = merge3(to_editor_text(base), buffer.text(), to_editor_text(held[0]))
        buffer.replace_undoable(result.text)
        buffer.set_base(*held)
        buffer.document.setModified(True)
        self.merged_with_markers = result.conflicts > 0
        if result.conflicts:
            message = (f"Merged: {result.conflicts} part(s) changed on both sides are marked "
                       "<<<<<<< mine / ======= / >>>>>>> disk. Keep what you want, delete the marker "
                       "lines, then save. Ctrl+Z undoes the merge.")
        else:
            message = "Merged your edits with the version on disk (no overlapping changes). Review, then save."
        self._editor.notice.show_message(message, "warning" if result.conflicts else "info")
        self._editor.notify("Merged your edits with the disk version"
                            + (f" ({result.conflicts} conflict block(s) marked)" if result.conflicts else ""),
                            "warning" if result.conflicts else "info")
