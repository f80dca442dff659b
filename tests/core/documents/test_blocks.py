"""The one block scanner (core.documents.blocks) against CommonMark, and the five readers that use it.

The oracle is markdown-it-py's CommonMark block pass (its token stream: ``heading_open``, ``fence``,
``code_block``, ``html_block`` with their line ``map``). Every case is also written out by hand, so a
change in either shows up. Then the outline, the load budget, search chunking, migrate and prune
validation are checked on the edge cases issue 19 found them disagreeing on.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from core.documents import blocks

FIXTURES = Path(__file__).resolve().parents[2] / "data"
REAL = FIXTURES / "fusion-real" / ".fusion" / "memory.md"

_md = MarkdownIt("commonmark")
_md.core.ruler.disable(["inline"])  # the block structure only, as the scanner reads it


def oracle(text: str) -> tuple[list[tuple[int, int, str, bool]], list[tuple[str, int, int]]]:
    """CommonMark's headings ``(line, level, title, top-level)`` and opaque blocks ``(kind, start, end)``."""
    tokens = _md.parse(text)
    heads, found = [], []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            assert tok.map is not None
            heads.append((tok.map[0], int(tok.tag[1]), " ".join(tokens[i + 1].content.split()), tok.level == 0))
        elif tok.type in ("fence", "code_block", "html_block"):
            assert tok.map is not None
            kind = {"fence": "fence", "code_block": "code", "html_block": "html"}[tok.type]
            found.append((kind, tok.map[0], tok.map[1]))
    return heads, sorted(found, key=lambda b: b[1])


def mine(text: str) -> tuple[list[tuple[int, int, str, bool]], list[tuple[str, int, int]]]:
    found = blocks.scan(text)
    return ([(h.line, h.level, " ".join(h.title.split()), h.depth == 0) for h in found.headings],
            [(b.kind, b.start, b.end) for b in found.blocks])


# (markdown, expected top-level headings as (0-based line, level, title)); the oracle must agree.
CASES: dict[str, tuple[str, list[tuple[int, int, str]]]] = {
    "plain": ("# A\n## B\n", [(0, 1, "A"), (1, 2, "B")]),
    "in an HTML comment": ("<!--\n## A\n-->\n## B\n", [(3, 2, "B")]),
    "in a one-line comment's neighbour": ("<!-- note -->\n## B\n", [(1, 2, "B")]),
    "inside ``` fence": ("```\n## A\n```\n## B\n", [(3, 2, "B")]),
    "inside ~~~ fence": ("~~~\n## A\n~~~\n## B\n", [(3, 2, "B")]),
    "longer fence not closed by a shorter one": ("````\n```\n## A\n````\n## B\n", [(4, 2, "B")]),
    "unclosed fence runs to the end": ("```\n## A\n## B\n", []),
    "tab after the hashes": ("##\tConventions\n", [(0, 2, "Conventions")]),
    "setext level 1": ("Title\n=====\n", [(0, 1, "Title")]),
    "setext level 2 over two lines": ("Foo\nbar\n---\n", [(0, 2, "Foo bar")]),
    "three spaces of indent": ("   ## A\n", [(0, 2, "A")]),
    "four spaces is code": ("    ## A\n", []),
    "a tab is code": ("\t## A\n", []),
    "closing hashes dropped": ("## A ##\n", [(0, 2, "A")]),
    "hash without a space": ("#5 bolt\n#hashtag\n", []),
    "seven hashes": ("####### A\n", []),
    "only hashes": ("### ###\n", [(0, 3, "")]),
    "a list item then a rule": ("- a\n---\n", []),
    "heading inside a list item is not a section": ("- a\n  ## B\n", []),
    "heading inside a quote is not a section": ("> ## A\n", []),
    "HTML block swallows until a blank line": ("<div>\n## A\n</div>\n\n## B\n", [(4, 2, "B")]),
    "an inline tag cannot interrupt a paragraph": ("para\n<span>\n## A\n", [(2, 2, "A")]),
    "script block to its end tag": ("<script>\n## A\n\n</script>\n## B", [(4, 2, "B")]),
    "lazy paragraph under a quote": ("> foo\nbar\n===\n", []),
    "indented line continues a paragraph": ("foo\n    ## bar\n", []),
    "CRLF": ("## A\r\n## B\r\n", [(0, 2, "A"), (1, 2, "B")]),
    "fence in a list item": ("- ```\n  ## A\n  ```\n## B\n", [(3, 2, "B")]),
    "inline comment start is not a block": ("text <!--\n## A\n-->\n", [(1, 2, "A")]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_headings_follow_commonmark(name):
    text, expected = CASES[name]
    assert [(h.line, h.level, h.title) for h in blocks.headings(text)] == expected
    assert mine(text) == oracle(text)


def test_sections_run_to_the_next_heading_of_the_same_level():
    text = "# T\n\n## A\n\n### a1\n\n## B\n<!--\n## not\n-->\n- x\n"
    found = blocks.scan(text)
    assert [(h.title, h.line, h.end) for h in found.top()] == [
        ("T", 0, 11), ("A", 2, 6), ("a1", 4, 6), ("B", 6, 11)]
    assert blocks.sections(text) == [("A", 2, 6), ("B", 6, 11)]
    assert [(b.kind, b.start, b.end, b.comment) for b in found.blocks] == [("html", 7, 10, True)]
    assert found.opaque(8) and not found.opaque(10)


def test_real_memory_and_random_mixtures_agree_with_commonmark():
    real = REAL.read_text(encoding="utf-8")
    assert mine(real) == oracle(real)
    assert len(blocks.headings(real, 2)) == 44 + 1  # 44 "## " sections under the "# " title (fixtures README)
    fragments = ["# A", "## B", "### C ###", "##\tT", "#5 x", "text", "", "", "---", "===", "***", "- item",
                 "  - sub", "1. one", "2. two", "> quote", ">", "```", "~~~", "````", "    code", "\tcode", "<!--",
                 "-->", "<!-- c -->", "<div>", "</div>", "<span>", "   ## D", "  ```", "- ## E", "> ## F", "-",
                 "  text", "* * *", "1) x", "<script>", "</script>", "``` js", "  ## G", "Foo", "<?x", "?>",
                 "-\tfoo", ">\t# h", "10. ten", "1.", "<![CDATA[", "]]>", "a <!--", "--> b", "  ==="]
    rng = random.Random(19)
    for _ in range(3000):
        text = "\n".join(rng.choice(fragments) for _ in range(rng.randint(1, 12))) + rng.choice(["", "\n"])
        assert mine(text) == oracle(text), text


# -- the five readers agree -------------------------------------------------------------------------------
EDGE = ("# Project Memory\n\n<!--\n## Hidden\n-->\n\n##\tArchitecture\n\n- one\n\n```\n## Fenced\n```\n\n"
        "Conventions\n-----------\n\n- two\n\n## Pitfalls ##\n\n- three\n")


def test_outline_budget_and_search_see_the_same_sections():
    from core.budget.sections import headings as budget_headings
    from core.search.chunking import chunk_markdown
    from gui.editor.sections import find_headings

    want = ["Architecture", "Conventions", "Pitfalls"]
    assert [h.title for h in find_headings(EDGE) if h.level == 2] == want  # the outline
    assert [h.title for h in budget_headings(EDGE) if h.level == 2] == want
    entries = chunk_markdown(EDGE, ".fusion/memory.md")
    assert [(e.section, e.text) for e in entries] == [
        ("Architecture", "- one"), ("Architecture", "```\n## Fenced\n```"), ("Conventions", "- two"),
        ("Pitfalls", "- three")]
    # Lines are the editor's: the outline's 0-based line and the budget's 1-based line name the same row.
    assert [h.line + 1 for h in find_headings(EDGE)] == [h.line for h in budget_headings(EDGE)]


def test_prune_validation_reads_tab_and_setext_headings_and_skips_comments():
    from core.insights import validate_prune_candidate
    from core.insights.prune import memory_headings

    assert memory_headings(EDGE) == ("Architecture", "Conventions", "Pitfalls")
    assert validate_prune_candidate("##\tConventions\n- a\n\n## Pitfalls\n- b\n").valid
    hidden = "<!--\n## Architecture\n## Conventions\n-->\n## Pitfalls\n- b\n"
    assert not validate_prune_candidate(hidden).valid


def test_migrate_keeps_a_heading_inside_a_comment_as_content():
    from core.project.migrate import merge_legacy

    target = "# Memory\n\n## Decisions\n\n## Context\n"
    legacy = "## Architecture\n\n- kept\n\n<!--\n## Pitfalls\n-->\n\n##\tConventions\n\n- conv\n"
    after, moved = merge_legacy(target, legacy)
    assert moved == 5
    assert [h.title for h in blocks.headings(after, 2) if h.level == 2] == ["Decisions", "Context", "Conventions"]
    assert "<!--\n## Pitfalls\n-->" in after and "- kept" in after and "- conv" in after
