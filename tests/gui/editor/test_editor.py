"""The memory editor driven as an operator would: type, save, undo, find, read-only banners, failures."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QTextCursor

from core.storage.fileio import MAX_FILE_SIZE
from gui.editor.memory_editor import MEMORY_OFF, MemoryEditor

MEMORY = ".fusion/memory.md"


def type_text(qtbot, widget, text: str) -> None:
    """Type ASCII text key by key (QTest has no key for a bare newline: press Return)."""
    for i, line in enumerate(text.split("\n")):
        if i:
            qtbot.keyClick(widget, Qt.Key.Key_Return)
        if line:
            qtbot.keyClicks(widget, line)


def _type_at_end(qtbot, editor: MemoryEditor, text: str) -> None:
    editor.text_edit.moveCursor(editor.text_edit.textCursor().MoveOperation.End)
    type_text(qtbot, editor.text_edit, text)


def test_typing_marks_dirty_and_ctrl_s_saves(qtbot, open_editor, sample_project: Path) -> None:
    editor = open_editor(sample_project)
    assert not editor.dirty
    with qtbot.waitSignal(editor.dirtyChanged):
        _type_at_end(qtbot, editor, "\n- typed by the operator")
    assert editor.dirty
    with qtbot.waitSignal(editor.saved):
        assert editor.save()
    assert not editor.dirty
    assert (sample_project / MEMORY).read_text(encoding="utf-8").endswith("\n- typed by the operator")


def test_save_without_edit_changes_no_byte(open_editor, real_project: Path) -> None:
    path = real_project / MEMORY
    before = path.read_bytes()
    mtime = path.stat().st_mtime_ns
    editor = open_editor(real_project)
    assert editor.text().encode("utf-8") == before
    assert editor.save()
    assert path.read_bytes() == before
    assert path.stat().st_mtime_ns == mtime


def test_edit_then_undo_back_is_clean_and_saves_same_bytes(qtbot, open_editor, real_project: Path) -> None:
    before = (real_project / MEMORY).read_bytes()
    editor = open_editor(real_project)
    qtbot.keyClicks(editor.text_edit, "xyz")
    assert editor.dirty
    for _ in range(3):
        editor.text_edit.undo()
    assert not editor.dirty
    editor.text_edit.redo()
    assert editor.dirty
    editor.text_edit.undo()
    assert not editor.dirty
    assert editor.save()
    assert (real_project / MEMORY).read_bytes() == before


def test_crlf_and_no_break_spaces_survive_an_edit(qtbot, open_editor, project: Path) -> None:
    (project / ".fusion").mkdir()
    original = "# Memory\r\n\r\n- keep\u00a0this no-break space\r\n"
    (project / MEMORY).write_bytes(original.encode("utf-8"))
    editor = open_editor(project)
    _type_at_end(qtbot, editor, "- new")
    assert editor.save()
    assert (project / MEMORY).read_bytes() == (original + "- new").encode("utf-8")


def test_memory_disabled_is_read_only_with_banner(qtbot, open_editor, sample_project: Path) -> None:
    config = sample_project / ".fusion/config.json"
    doc = json.loads(config.read_text(encoding="utf-8"))
    doc["settings"]["memoryEnabled"] = False
    config.write_text(json.dumps(doc), encoding="utf-8")
    editor = open_editor(sample_project)
    assert editor.text_edit.isReadOnly()
    assert editor.read_only_banner.text() == MEMORY_OFF
    before = editor.text()
    qtbot.keyClicks(editor.text_edit, "nope")
    assert editor.text() == before and not editor.dirty
    assert not editor.save()
    assert "Not saved" in editor.notice.text()


def test_switching_memory_on_in_settings_makes_it_editable(open_editor, sample_project: Path) -> None:
    editor = open_editor(sample_project)
    editor.session.update_settings({"memoryEnabled": False})
    assert editor.text_edit.isReadOnly()
    editor.session.update_settings({"memoryEnabled": True})
    assert not editor.text_edit.isReadOnly()
    assert editor.read_only_banner.text() == ""


def test_readonly_backend_names_the_backend(open_editor, real_project: Path) -> None:
    (real_project / ".fusion/config.json").write_text(json.dumps({"memoryBackend": "readonly"}), encoding="utf-8")
    editor = open_editor(real_project)
    assert editor.text_edit.isReadOnly()
    banner = editor.read_only_banner.text()
    assert '"Read-Only" backend (readonly)' in banner and "cannot write" in banner
    assert editor.text() == (real_project / MEMORY).read_text(encoding="utf-8")


def test_non_utf8_file_opens_read_only_and_is_never_rewritten(open_editor, project: Path) -> None:
    (project / ".fusion").mkdir()
    data = b"# Memory\n\n- caf\xe9 in latin-1\n"
    (project / MEMORY).write_bytes(data)
    editor = open_editor(project)
    assert editor.text_edit.isReadOnly()
    assert "not valid UTF-8" in editor.read_only_banner.text()
    assert editor.read_only_banner.level() == "error"
    assert not editor.save()
    assert (project / MEMORY).read_bytes() == data


def test_paste_over_one_mib_is_refused_and_kept(qtbot, open_editor, sample_project: Path) -> None:
    editor = open_editor(sample_project)
    before = (sample_project / MEMORY).read_bytes()
    QGuiApplication.clipboard().setText("x" * (MAX_FILE_SIZE + 10))
    editor.text_edit.moveCursor(editor.text_edit.textCursor().MoveOperation.End)
    editor.text_edit.paste()
    qtbot.waitUntil(lambda: editor.size_label.is_over())
    assert editor.size_label.property("over") is True
    assert not editor.save()
    assert "QUOTA_EXCEEDED" in editor.notice.text() and "Not saved" in editor.notice.text()
    assert editor.dirty
    assert len(editor.text()) > MAX_FILE_SIZE
    assert (sample_project / MEMORY).read_bytes() == before


def test_size_label_counts_bytes(qtbot, open_editor, sample_project: Path) -> None:
    editor = open_editor(sample_project)
    size = (sample_project / MEMORY).stat().st_size
    assert editor.size_label.size == size
    assert editor.size_label.text().endswith("KiB of 1 MiB")
    editor.text_edit.insertPlainText("é")  # what an input method commits
    qtbot.waitUntil(lambda: editor.size_label.size == size + 2)


def test_save_conflict_opens_conflict_view_and_writes_nothing(qtbot, open_editor, sample_project: Path) -> None:
    editor = open_editor(sample_project)  # no watcher here: the save itself must notice
    _type_at_end(qtbot, editor, "\n- mine")
    theirs = (sample_project / MEMORY).read_text(encoding="utf-8").replace("Project Memory", "Their Memory")
    (sample_project / MEMORY).write_text(theirs, encoding="utf-8")
    assert not editor.save()
    assert editor.pages.currentWidget() is editor.conflict_view
    assert "Not saved" in editor.conflict_view.headline.text()
    assert editor.conflict_view.disk_text() == theirs
    assert editor.conflict_view.mine_text().endswith("\n- mine")
    assert editor.dirty
    assert (sample_project / MEMORY).read_text(encoding="utf-8") == theirs


def test_find_bar_counts_and_steps(qtbot, open_editor, sample_project: Path) -> None:
    editor = open_editor(sample_project)
    text = editor.text()
    total = text.lower().count("lease")
    assert total > 2
    editor.show_find()
    assert editor.find_bar.isVisible()
    qtbot.keyClicks(editor.find_bar.field, "lease")
    assert editor.find_bar.count_label.text() == f"1 of {total}"
    qtbot.keyClick(editor.find_bar.field, Qt.Key.Key_Return)
    assert editor.find_bar.count_label.text() == f"2 of {total}"
    assert editor.text_edit.textCursor().selectedText().lower() == "lease"
    qtbot.keyClick(editor.find_bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClick(editor.find_bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert editor.find_bar.count_label.text() == f"{total} of {total}"
    editor.find_bar.field.setText("no such words anywhere")
    assert editor.find_bar.count_label.text() == "No matches"
    qtbot.keyClick(editor.find_bar.field, Qt.Key.Key_Escape)
    assert not editor.find_bar.isVisible()


def test_preview_has_at_most_one_render_in_flight(qtbot, open_editor, sample_project: Path, monkeypatch) -> None:
    import gui.editor.preview as preview_mod

    state = {"running": 0, "max": 0, "calls": 0}
    lock = threading.Lock()
    real_render = preview_mod.render_markdown

    def slow_render(text: str) -> str:
        with lock:
            state["running"] += 1
            state["calls"] += 1
            state["max"] = max(state["max"], state["running"])
        time.sleep(0.4)  # slower than the debounce, so edits arrive while it runs
        with lock:
            state["running"] -= 1
        return real_render(text)

    monkeypatch.setattr(preview_mod, "render_markdown", slow_render)
    editor = open_editor(sample_project)
    for word in ("alpha", "beta", "gamma", "delta"):
        _type_at_end(qtbot, editor, f" {word}")
        qtbot.wait(300)  # a pause in typing: the debounce fires, possibly while a render runs
    qtbot.waitUntil(lambda: "delta" in editor.preview.browser.toPlainText(), timeout=10000)
    qtbot.waitUntil(lambda: not editor.preview.busy(), timeout=10000)
    assert state["max"] == 1
    assert 2 <= state["calls"] <= 5  # debounced and coalesced, yet the last text was rendered


def test_preview_shows_dated_entries_and_nested_bullets(open_editor, project: Path) -> None:
    (project / ".fusion").mkdir()
    (project / MEMORY).write_text("# M\n\n- top\n  - nested\n\n<!-- 2026-03-04 -->\nentry text\n", encoding="utf-8")
    editor = open_editor(project)
    editor.preview.render_now()
    html = editor.preview.browser.toHtml()
    assert "2026-03-04" in editor.preview.browser.toPlainText()
    assert html.count("<ul") == 2


def test_long_file_previews_the_part_around_the_cursor(open_editor, real_project: Path) -> None:
    editor = open_editor(real_project)
    editor.preview.render_now()
    assert editor.preview.note.isVisible()
    assert "around the cursor" in editor.preview.note.text()


def test_highlighter_formats_markers(open_editor, project: Path) -> None:
    (project / ".fusion").mkdir()
    (project / MEMORY).write_text("## Heading\n\n- item with `code`\n<!-- 2026-01-02 -->\n<!-- a\nb -->\n", encoding="utf-8")
    editor = open_editor(project)
    doc = editor.text_edit.document()

    def formats(line: int) -> list:
        return list(doc.findBlockByNumber(line).layout().formats())

    assert formats(0)[0].format.fontWeight() > 400  # heading bold
    code = [f for f in formats(2) if f.format.fontFixedPitch()]
    assert code and code[0].length == len("`code`")
    assert formats(3)[0].length == len("<!-- 2026-01-02 -->")
    assert formats(5)[0].format.fontItalic()  # second line of a comment


def test_long_file_lines_get_colours_when_scrolled_into_view(qtbot, open_editor, project: Path) -> None:
    (project / ".fusion").mkdir()
    body = "".join(f"## Section {i}\n\n- item `{i}`\n<!-- open\nstill comment -->\n" for i in range(3000))
    (project / MEMORY).write_text(body, encoding="utf-8")
    editor = open_editor(project)
    doc = editor.text_edit.document()
    last = doc.findBlockByNumber(doc.blockCount() - 3)  # "still comment -->" near the end
    assert not list(last.layout().formats())  # not formatted while out of view
    editor.text_edit.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.waitUntil(lambda: bool(list(last.layout().formats())))
    assert last.layout().formats()[0].format.fontItalic()  # the comment state carried over 15,000 lines
    heading = doc.findBlockByNumber(doc.blockCount() - 6)
    assert heading.text() == "## Section 2999" and heading.layout().formats()[0].format.fontWeight() > 400


def test_unreadable_settings_are_reported(open_editor, sample_project: Path) -> None:
    (sample_project / ".fusion/config.json").write_text("{not json", encoding="utf-8")
    editor = open_editor(sample_project)
    assert "config.json is not valid JSON" in editor.notice.text()
    assert not editor.text_edit.isReadOnly()


def test_preview_window_stays_small() -> None:
    from gui.editor.preview_window import WINDOW_CHARS, preview_window

    sections = "".join(f"## S{i}\n" + "- entry text\n" * 40 for i in range(300))
    window = preview_window(sections, cursor_line=6000)
    assert window.note and "around the cursor" in window.note
    assert "## S146" in window.source and len(window.source) <= WINDOW_CHARS
    assert sections.split("\n")[window.first_line] == window.source.split("\n")[0]
    blob = preview_window("x" * 1_000_000, cursor_line=0)
    assert len(blob.source) <= 2 * WINDOW_CHARS and blob.note and blob.note.startswith("Long line")
    small = preview_window("# small\n", cursor_line=0)
    assert small.source == "# small\n" and small.note is None
