"""The supersede marker in the preview: shown as written, not a link (docs/firewall.md)."""

from __future__ import annotations

from core.firewall.similarity import split_entries
from core.firewall.supersede import mark, marker
from gui.editor.markdown_render import render_markdown

DOC = "# Project Memory\n\n## Context\n\n- Use the DB clock for lease expiry\n- Use the app server clock\n"


def test_the_preview_shows_the_marker_as_written():
    html = render_markdown(mark(DOC, next(iter(split_entries(DOC)))))
    assert f"<li>{marker()} Use the DB clock for lease expiry</li>" in html
    assert "<a" not in html  # an undefined [label] is not a link
