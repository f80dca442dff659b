"""Chunking memory into entries: bullets with sub-bullets, dated blocks, paragraphs, sections, lines."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.search.chunking import chunk_markdown
from core.search.corpus import searched_files
from tests.conftest import REAL_MEMORY, SAMPLE

DOC = """# Project Memory

<!-- This file stores durable project learnings. -->

## Architecture

<!-- Key architectural patterns -->

- **Layout**: five packages
  - `core` — the model
  - `worker` — the runner

  continued after a blank line
- Second bullet
lazy continuation line
1. Numbered item

A paragraph
over two lines.

### A sub-heading

```
## not a heading
- not an item
```

## Pitfalls

- Clock skew

<!-- 2026-10-14 -->
Reaper interval lowered.

- a bullet inside the dated block

<!-- 2026-10-29 -->
Second dated entry
"""


def test_entries_sections_and_lines():
    entries = chunk_markdown(DOC, ".fusion/memory.md")
    summary = [(e.line, e.end_line, e.section, e.text.splitlines()[0], e.date) for e in entries]
    assert summary == [
        (9, 13, "Architecture", "- **Layout**: five packages", None),
        (14, 15, "Architecture", "- Second bullet", None),
        (16, 16, "Architecture", "1. Numbered item", None),
        (18, 19, "Architecture", "A paragraph", None),
        (21, 21, "Architecture", "### A sub-heading", None),
        (23, 26, "Architecture", "```", None),
        (30, 30, "Pitfalls", "- Clock skew", None),
        (33, 35, "Pitfalls", "Reaper interval lowered.", "2026-10-14"),
        (38, 38, "Pitfalls", "Second dated entry", "2026-10-29"),
    ]
    assert "continued after a blank line" in entries[0].text
    assert "- a bullet inside the dated block" in entries[7].text
    assert all(e.file == ".fusion/memory.md" for e in entries)


def test_scaffold_only_has_no_entries():
    from core.project_memory import default_memory_scaffold

    assert chunk_markdown(default_memory_scaffold(), "m") == []
    assert chunk_markdown("", "m") == []


def test_real_memory_every_entry_starts_on_its_line():
    text = REAL_MEMORY.read_text(encoding="utf-8")
    lines = text.splitlines()
    entries = chunk_markdown(text, ".fusion/memory.md")
    assert len(entries) > 500
    for e in entries:
        assert lines[e.line - 1] == e.text.splitlines()[0]
        assert e.section is not None


def test_crlf_line_numbers():
    entries = chunk_markdown("## A\r\n\r\n- one\r\n- two\r\n", "m")
    assert [(e.line, e.text) for e in entries] == [(3, "- one"), (4, "- two")]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["## Sec", "- item", "  - sub", "", "text", "<!-- 2026-01-01 -->", "```",
                                 "<!-- c -->", "### h", "1. n"]), max_size=30))
def test_every_entry_line_range_is_inside_the_file(lines):
    text = "\n".join(lines)
    n = len(text.splitlines())
    for e in chunk_markdown(text, "m"):
        assert 1 <= e.line <= e.end_line <= n
        assert e.text.strip()


def test_searched_files_are_the_layouts_documents(project, layered_project):
    fusion = project / ".fusion"
    fusion.mkdir()
    assert searched_files(project) == [".fusion/memory.md"]  # listed before it exists (seed layout)
    (fusion / "memory-archive.md").write_text("x")
    (fusion / "memory-insights.md").write_text("x")
    assert searched_files(project) == [".fusion/memory.md", ".fusion/memory-insights.md", ".fusion/memory-archive.md"]
    (fusion / "memory.md").write_text("x")
    (fusion / "memory").mkdir()  # now layered: the seed insights file is not Fusion's any more
    for name in ("MEMORY.md", "2026-11-02.md", "2026-11-03.md", "DREAMS.md", "notes.md", "2026-1-2.md"):
        (fusion / "memory" / name).write_text("x")
    (fusion / "agent-memory" / "agent-7").mkdir(parents=True)
    (fusion / "agent-memory" / "agent-7" / "2026-11-01.md").write_text("x")
    assert searched_files(project) == [
        ".fusion/memory/MEMORY.md", ".fusion/memory/2026-11-03.md", ".fusion/memory/2026-11-02.md",
        ".fusion/memory/DREAMS.md", ".fusion/agent-memory/agent-7/2026-11-01.md",
        ".fusion/memory-archive.md", ".fusion/memory.md",
    ]
    docs = searched_files(layered_project)
    assert ".fusion/memory/MEMORY.md" in docs and any(p.startswith(".fusion/agent-memory/") for p in docs)


def test_sample_project_files_exist():
    assert (SAMPLE / ".fusion" / "memory.md").is_file()
