"""The preview as an operator sees it: agent-written lists, hostile memory, links, long files, scroll sync."""

from __future__ import annotations

import struct
import time
import zlib
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QSize, Qt, QUrl
from PySide6.QtGui import QImage, QTextCursor, QTextDocument

from gui.editor.markdown_render import lists_after_paragraphs, render_markdown
from gui.editor.preview import SafeDocument
from gui.editor.sections import find_headings, section_index

MEMORY = ".fusion/memory.md"
REAL = Path(__file__).resolve().parents[2] / "data" / "fusion-real" / ".fusion" / "memory.md"


@pytest.fixture
def open_editor(open_editor):
    """The shared fixture, at the preview tests' 1200x800 unless a size is given."""
    return lambda root, size=(1200, 800): open_editor(root, size)


def _memory(project: Path, text: str) -> Path:
    (project / ".fusion").mkdir(exist_ok=True)
    (project / MEMORY).write_text(text, encoding="utf-8")
    return project


def _blocks(doc: QTextDocument) -> list:
    out, block = [], doc.begin()
    while block.isValid():
        out.append(block)
        block = block.next()
    return out


def _png(path: Path) -> Path:
    """A real 3x2 red PNG on disk (something a preview could load if it loaded files)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 3, 2, 8, 2, 0, 0, 0))
    raw += chunk(b"IDAT", zlib.compress((b"\x00" + b"\xff\x00\x00" * 3) * 2)) + chunk(b"IEND", b"")
    path.write_bytes(raw)
    return path


# -- lists as agents write them ------------------------------------------------------------------
def test_lists_after_a_paragraph_line_render_as_lists_in_the_real_memory(qtbot, open_editor, real_project) -> None:
    text = REAL.read_text(encoding="utf-8")
    assert lists_after_paragraphs(text) >= 74  # the issue counted 74 such lists in this file
    editor = open_editor(real_project)
    line = text.split("\n").index("When optimizing dashboard performance for large task sets:")
    editor.go_to_line(line)
    editor.preview.render_now()
    blocks = {b.text(): b for b in _blocks(editor.preview.document)}
    assert "When optimizing dashboard performance for large task sets:" in blocks  # its own paragraph
    item = next(b for t, b in blocks.items() if t.startswith("Viewport gating pattern"))
    assert item.textList() is not None  # a list item, not "- **Viewport…" run into the paragraph
    assert "- **Viewport" not in editor.preview.browser.toPlainText()


def test_commonmark_list_rules() -> None:
    html = render_markdown("Steps:\n1. one\n2. two\n\nText\n3) not a list start\n\nA\n- - -\n\n```\nPara\n- code\n```\n")
    assert "<p>Steps:</p>\n<ol>\n<li>one</li>" in html
    assert "<p>Text\n3) not a list start</p>" in html  # only an item numbered 1 interrupts a paragraph
    assert "<pre><code>Para\n- code\n</code></pre>" in html  # code fences are left alone
    assert render_markdown("#root {\n").startswith("<p>#root {")  # no space after #: not a heading


# -- hostile memory ------------------------------------------------------------------------------
def test_raw_html_is_escaped_and_nothing_is_loaded(qtbot, open_editor, project: Path, tmp_path: Path) -> None:
    secret = _png(tmp_path / "secret.png")
    hostile = (f'# Notes\n\n<img src="file://{secret}"> and <img src="/dev/zero">\n\n'
               f"![zero](file:///dev/zero) ![pic]({secret.as_uri()})\n\n"
               '<script>alert(1)</script> <iframe src="https://example.com"></iframe>\n\n'
               '<link rel="stylesheet" href="file:///etc/passwd">\n')
    editor = open_editor(_memory(project, hostile))
    editor.preview.render_now()
    shown = editor.preview.browser.toPlainText()
    assert f'<img src="file://{secret}">' in shown and "<script>alert(1)</script>" in shown  # as text
    assert "[image: zero]" in shown and "[image: pic]" in shown
    for block in _blocks(editor.preview.document):
        it = block.begin()
        while not it.atEnd():
            assert not it.fragment().charFormat().isImageFormat()
            it += 1
    assert editor.preview.document.blocked == set()  # not even asked for


def test_the_document_refuses_every_resource(qapp, tmp_path: Path) -> None:
    secret = _png(tmp_path / "secret.png")
    doc = SafeDocument()
    doc.setHtml(f'<p>x <img src="{secret.as_uri()}"> <img src="file:///dev/zero"></p>')
    doc.setTextWidth(400)
    doc.size()  # lays the document out, which asks for the images
    assert QImage(str(secret)).size() == QSize(3, 2)  # the file is a real, loadable image
    for url in (secret.as_uri(), "file:///dev/zero"):
        image = doc.resource(QTextDocument.ResourceType.ImageResource.value, QUrl(url))
        assert isinstance(image, QImage) and image.size() == QSize(1, 1) and image.pixel(0, 0) == 0  # blank
        assert url in doc.blocked


def test_nested_tables_do_not_freeze_the_window(qtbot, open_editor, project: Path) -> None:
    tables = "<table><tr><td>" * 24 + "deep" + "</td></tr></table>" * 24
    assert 700 <= len(tables) <= 900
    editor = open_editor(_memory(project, f"# Hostile\n\n{tables}\n"))
    ticks = []
    editor.startTimer(5)
    editor.timerEvent = lambda _event: ticks.append(1)  # the GUI thread keeps running its timers
    qtbot.waitUntil(lambda: "deep" in editor.preview.browser.toPlainText(), timeout=10_000)
    assert "<table><tr><td><table>" in editor.preview.browser.toPlainText()  # shown as the text it is
    assert editor.preview.document.rootFrame().childFrames() == []  # no table was built
    assert ticks


def test_a_render_over_its_budget_shows_the_text_as_it_is(qtbot, open_editor, project: Path, monkeypatch) -> None:
    import gui.editor.preview as preview_mod

    real = preview_mod.render_markdown
    slow = {"on": True}

    def stalls(text: str) -> str:
        while slow["on"]:  # a pathological render: runs until released
            time.sleep(0.01)
        return real(text)

    monkeypatch.setattr(preview_mod, "render_markdown", stalls)
    editor = open_editor(_memory(project, "# Title\n\n- **bold** entry\n"))
    editor.preview._budget.setInterval(300)
    qtbot.waitUntil(lambda: "stopped rendering" in editor.preview.note.text(), timeout=10_000)
    assert editor.preview.browser.toPlainText() == "# Title\n\n- **bold** entry\n"
    slow["on"] = False
    monkeypatch.setattr(preview_mod, "render_markdown", real)
    editor.text_edit.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(editor.text_edit, "more")
    qtbot.waitUntil(lambda: editor.preview.browser.toPlainText() == "Title\nbold entry more", timeout=10_000)
    assert not editor.preview.note.isVisible()


# -- links ---------------------------------------------------------------------------------------
def _click_text(qtbot, pane, words: str) -> None:
    found = pane.document.find(words)
    assert not found.isNull(), words
    cursor = QTextCursor(pane.document)
    cursor.setPosition(found.selectionStart() + 1)
    point = pane.browser.cursorRect(cursor).center() + QPoint(2, 0)
    qtbot.mouseClick(pane.browser.viewport(), Qt.MouseButton.LeftButton, pos=point)


def test_only_http_links_open_and_only_when_clicked(qtbot, open_editor, project: Path) -> None:
    text = ("# Links\n\n[the docs](https://example.com/docs) and [run me](javascript:alert(1)) and "
            "[secrets](file:///etc/passwd) and <http://example.org/plain>\n")
    editor = open_editor(_memory(project, text))
    opened: list[str] = []
    editor.preview.open_url = lambda url: opened.append(url.toString())
    editor.preview.render_now()
    assert opened == []  # nothing opens by itself
    _click_text(qtbot, editor.preview, "the docs")
    assert opened == ["https://example.com/docs"]
    _click_text(qtbot, editor.preview, "run me")
    _click_text(qtbot, editor.preview, "secrets")
    assert opened == ["https://example.com/docs"]
    assert "javascript" not in editor.preview.browser.toHtml()
    refused: list[str] = []
    editor.preview.linkRefused.connect(refused.append)
    editor.preview.browser.anchorClicked.emit(QUrl("file:///etc/passwd"))  # a link that got through anyway
    assert refused == ["file:///etc/passwd"] and len(opened) == 1


# -- long files and following the editor ---------------------------------------------------------
def _one_mib(project: Path) -> str:
    base = REAL.read_text(encoding="utf-8").split("\n", 1)[1]
    parts, i = ["# Project Memory\n"], 0
    while sum(map(len, parts)) < 1_000_000:
        parts.append(base.replace("## ", f"## R{i} ").replace("FN-", f"FN{i}-"))  # different text each time
        i += 1
    text = "".join(parts)
    _memory(project, text)
    return text


def test_a_one_mib_file_previews_the_section_around_the_cursor(qtbot, open_editor, project: Path) -> None:
    text = _one_mib(project)
    editor = open_editor(project)
    assert editor.text_edit.textCursor().blockNumber() == 0  # it loads in chunks; the cursor stays at the top
    qtbot.waitUntil(lambda: not editor.buffer.loading, timeout=10_000)
    editor.preview.render_now()
    note = editor.preview.note.text()
    assert "# Project Memory" in note and "lines 1–2 " not in note
    assert len(editor.preview.browser.toPlainText()) > 4000  # not two lines
    lines = text.split("\n")
    target = len(lines) // 2
    editor.go_to_line(target)
    headings = find_headings(lines, max_level=2)
    section = headings[section_index(headings, target)]
    qtbot.waitUntil(lambda: not editor.preview.busy() and section.label in editor.preview.note.text(),
                    timeout=10_000)
    assert section.title.replace("`", "") in editor.preview.browser.toPlainText()  # rendered: no backticks
    assert f"of {len(lines):,}" in editor.preview.note.text()


def test_preview_follows_the_editor(qtbot, open_editor, sample_project: Path) -> None:
    editor = open_editor(sample_project, size=(1000, 500))
    editor.preview.render_now()
    headings = find_headings(editor.text())
    bar = editor.preview.browser.verticalScrollBar()
    assert bar.value() == 0
    for heading in (headings[3], headings[-1], headings[1]):
        editor.go_to_line(heading.line)
        editor.text_edit.verticalScrollBar().setValue(heading.line)  # the heading at the top of the text
        top = editor.text_edit.first_visible_line()
        expected = headings[section_index(headings, top)].title
        qtbot.waitUntil(lambda e=expected: editor.preview.top_heading() == e, timeout=5000)
    assert bar.value() > 0


HOSTILE = {
    "1000 nested quotes": ">" * 1000 + " deep\n",
    "200 nested lists": "".join("  " * i + "- level\n" for i in range(200)),
    "12,000 brackets": "[" * 12000 + "x" + "](" * 100,
    "12,000 emphasis runs": "*a" * 12000,
    "3,000 nested emphasis": "*" * 3000 + "x" + "*" * 3000,
    "3,000 half links": "[a](http://x " * 3000,
    "a 3,000-row table": "|a|b|\n|-|-|\n" + "|x|y|\n" * 3000,
    "5,000 comment openers": "<!--" * 5000,
    "24 nested raw tables": "<table><tr><td>" * 24 + "x" + "</td></tr></table>" * 24,
    "6,000 image openers": "![" * 6000,
    "12,000 backslashes": "\\" * 12000,
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_memory_renders_to_bounded_html(name: str) -> None:
    import re

    from gui.editor.markdown_render import MAX_ELEMENTS
    from gui.editor.preview_window import preview_window

    source = preview_window(HOSTILE[name], 0).source
    html = render_markdown(source)  # no RecursionError, no quadratic blow-up
    assert len(re.findall(r"<[a-z]", html)) <= MAX_ELEMENTS + 10
    assert "<table" not in html or name == "a 3,000-row table"
    assert not re.search(r"<(?:img|script|iframe|link)\b", html)
    doc = SafeDocument()
    doc.setHtml(html)
    doc.setTextWidth(600)
    assert doc.size().height() > 0 and doc.blocked == set()
