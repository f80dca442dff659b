"""The editor underlines the firewall's findings and offers quick actions: redact, merge, supersede, ignore once."""

from __future__ import annotations

from PySide6.QtGui import QTextCharFormat

from gui.editor.firewall_marks import FirewallMarks
from gui.editor.text_edit import MemoryTextEdit

TEXT = ("# Project Memory\n\n## Context\n\n- Use the DB clock for lease expiry\n- Deploy key AKIAIOSFODNN7EXAMPLE\n"
        "- use the DB clock for lease expiry.\n- Use the app server clock for lease expiry\n")


def _marks(qtbot) -> tuple[MemoryTextEdit, FirewallMarks]:
    edit = MemoryTextEdit()
    qtbot.addWidget(edit)
    edit.setPlainText(TEXT)
    marks = FirewallMarks(edit)
    with qtbot.waitSignal(marks.marksChanged, timeout=10_000):
        marks.refresh()
    return edit, marks


def test_findings_are_underlined_in_the_open_document(qtbot):
    edit, marks = _marks(qtbot)
    kinds = [m.finding.kind for m in marks.marks]
    assert kinds == ["secret", "near-duplicate", "contradiction"]
    underlined = {s.cursor.selectedText(): s.format.underlineStyle() for s in edit.extraSelections()}
    assert underlined["AKIAIOSFODNN7EXAMPLE"] == QTextCharFormat.UnderlineStyle.WaveUnderline
    assert "- use the DB clock for lease expiry." in underlined


def test_redact_merge_supersede_and_ignore_once_edit_the_buffer(qtbot):
    edit, marks = _marks(qtbot)
    secret_at = TEXT.index("AKIA") + 3
    (redact, ignore) = marks.actions_at(secret_at)
    assert redact.text() == "Redact (secret.aws-key)" and ignore.text().startswith("Ignore once")
    redact.trigger()
    assert "Deploy key [REDACTED:secret.aws-key]\n" in edit.toPlainText()
    edit.document().undo()
    assert edit.toPlainText() == TEXT  # an ordinary, undoable edit

    with qtbot.waitSignal(marks.marksChanged, timeout=10_000):
        marks.refresh()
    dup_at = TEXT.index("- use the DB clock")
    merge = next(a for a in marks.actions_at(dup_at) if a.text().startswith("Merge"))
    assert merge.text() == "Merge into the entry at line 5 (remove this one)"
    merge.trigger()
    assert edit.toPlainText() == TEXT.replace("- use the DB clock for lease expiry.\n", "")

    with qtbot.waitSignal(marks.marksChanged, timeout=10_000):
        marks.refresh()
    clash_at = edit.toPlainText().index("app server")
    supersede = next(a for a in marks.actions_at(clash_at) if a.text().startswith("Supersede"))
    supersede.trigger()
    assert "- [superseded 20" in edit.toPlainText() and "] Use the DB clock for lease expiry\n" in edit.toPlainText()

    with qtbot.waitSignal(marks.marksChanged, timeout=10_000):
        marks.refresh()
    before = len(marks.marks)
    next(a for a in marks.actions_at(edit.toPlainText().index("AKIA")) if a.text().startswith("Ignore")).trigger()
    assert len(marks.marks) == before - 1 and "AKIAIOSFODNN7EXAMPLE" not in {
        s.cursor.selectedText() for s in edit.extraSelections()}
    with qtbot.waitSignal(marks.marksChanged, timeout=10_000):
        marks.refresh()
    assert all(m.finding.kind != "secret" for m in marks.marks)  # ignored while the document is open


def test_a_long_document_underlines_what_is_in_view_and_follows_the_scroll(qtbot):
    from pathlib import Path

    real = Path(__file__).resolve().parents[2] / "data" / "fusion-real" / ".fusion" / "memory.md"
    text = real.read_text(encoding="utf-8") * 3 + "\n- Deploy key AKIAIOSFODNN7EXAMPLE\n"
    edit = MemoryTextEdit()
    qtbot.addWidget(edit)
    edit.resize(700, 500)
    edit.show()
    edit.setPlainText(text)
    marks = FirewallMarks(edit)
    with qtbot.waitSignal(marks.marksChanged, timeout=30_000):
        marks.refresh()
    assert any(m.finding.kind == "secret" for m in marks.marks) and len(marks.marks) > 500
    shown = {s.cursor.selectedText() for s in edit.extraSelections()}
    assert "AKIAIOSFODNN7EXAMPLE" not in shown and len(edit.extraSelections()) < len(marks.marks) // 2
    edit.verticalScrollBar().setValue(edit.verticalScrollBar().maximum())  # the operator scrolls to the end
    qtbot.waitUntil(lambda: "AKIAIOSFODNN7EXAMPLE" in {s.cursor.selectedText() for s in edit.extraSelections()})
    underlined = {s.cursor.selectedText(): s.format.underlineStyle() for s in edit.extraSelections()}
    assert underlined["AKIAIOSFODNN7EXAMPLE"] == QTextCharFormat.UnderlineStyle.WaveUnderline
    first = min(s.cursor.selectionStart() for s in edit.extraSelections())
    assert first > len(text) // 2  # the marks at the top are no longer underlined


def test_thousands_of_findings_underline_those_in_view_and_follow_the_scroll(qtbot):
    """A 1 MiB memory can hold thousands of findings: only those around the view are underlined (underlining
    all of them held the GUI thread), and scrolling to the end underlines the ones there."""
    from gui.editor import firewall_marks

    lines = [f"- Deploy key {i:04d} AKIAIOSFODNN7EXAMPL{chr(65 + i % 26)}" for i in range(1500)]
    edit = MemoryTextEdit()
    qtbot.addWidget(edit)
    edit.resize(600, 300)
    edit.show()
    edit.setPlainText("# Memory\n\n" + "\n".join(lines) + "\n")
    marks = FirewallMarks(edit)
    with qtbot.waitSignal(marks.marksChanged, timeout=20_000):
        marks.refresh()
    assert len(marks.marks) > firewall_marks.PAINT_ALL_UP_TO
    painted = [s.cursor.block().blockNumber() for s in edit.extraSelections()]
    assert 0 < len(painted) < len(marks.marks)
    assert min(painted) == 2 and edit.firstVisibleBlock().blockNumber() == 0  # the first finding, in view
    assert max(painted) < 1000
    edit.verticalScrollBar().setValue(edit.verticalScrollBar().maximum())
    qtbot.waitUntil(lambda: max(s.cursor.block().blockNumber() for s in edit.extraSelections()) > 1400)
    shown = {s.cursor.block().blockNumber() for s in edit.extraSelections()}
    assert {edit.firstVisibleBlock().blockNumber(), 1501} <= shown and 2 not in shown  # the view's, not the top's
