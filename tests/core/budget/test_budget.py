"""The load budget on the real agent-written memory: each shipped consumer's cut, computed here a second
way (each consumer's own algorithm, written out plainly) and compared line for line."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.budget import (
    all_consumers,
    budget_for,
    document_budget,
    get_consumer,
    headings,
    line_count,
    sections_past_cut,
    tightest,
)
from core.budget.rules import LoadRule

MEM = ".fusion/memory.md"


@pytest.fixture
def real(real_project: Path) -> str:
    text = (real_project / MEM).read_text(encoding="utf-8")
    assert text.count("\n") == 1293 and text == text.lstrip()  # the fixture as described
    return text


def _first_unloaded_line(text: str, loaded: str) -> tuple[int, bool]:
    """The first line not wholly in ``loaded`` (a prefix of ``text``), and whether it is partly loaded."""
    assert text.startswith(loaded) and len(loaded) < len(text)
    done = loaded.count("\n")
    if loaded == "" or loaded.endswith("\n"):
        return done + 1, False
    if text[len(loaded)] == "\n":  # the last loaded line is whole; its newline is simply not sent
        return done + 2, False
    return done + 1, True


def test_fusion_reads_400_lines_at_a_time(real: str) -> None:
    lines = real.split("\n")  # Fusion's getMemoryFile: content.split("\n"), slice(0, 400)
    first_read = "\n".join(lines[:400])
    assert budget_for(real, MEM, get_consumer("fusion")).cut is None  # the seed file: read whole
    b = budget_for(real, ".fusion/memory/MEMORY.md", get_consumer("fusion"))  # memory_get serves layered files
    assert b.cut is not None and b.cut.kind == "window"
    assert b.cut.first_line == 401 == first_read.count("\n") + 2
    assert real.split("\n")[b.cut.first_line - 1] == lines[400]
    assert "4 reads for 1,293 lines" in b.cut_text()


def test_claude_code_cut_follows_its_200_line_and_25000_character_gates(real: str) -> None:
    trimmed = real.strip()  # truncateEntrypointContent: trim, split("\n"), slice(0, 200), then the size gate
    kept = "\n".join(trimmed.split("\n")[:200])
    js_length = len(kept.encode("utf-16-le")) // 2
    assert js_length > 25_000  # on this file the size gate binds, not the line gate
    cut_at = kept.rfind("\n", 0, 25_001)
    loaded = kept[:cut_at]
    expected, partial = _first_unloaded_line(real, loaded)
    b = budget_for(real, MEM, get_consumer("claude-code"))
    assert b.cut is not None and (b.cut.first_line, b.cut.partial) == (expected, partial) == (167, False)
    assert b.cut.binding == "utf16"
    assert real[:b.cut.offset] == loaded


def test_codex_cuts_at_32_kib(real: str) -> None:
    loaded = real.encode("utf-8")[:32 * 1024].decode("utf-8", "ignore")
    expected, partial = _first_unloaded_line(real, loaded)
    b = budget_for(real, MEM, get_consumer("codex"))
    assert b.cut is not None and (b.cut.first_line, b.cut.partial) == (expected, partial)
    assert b.cut.binding == "bytes" and len(real[:b.cut.offset].encode("utf-8")) <= 32 * 1024
    assert not b.matched and "own memory file" in b.notes[-1]  # memory.md is not an AGENTS.md


def test_windsurf_cuts_at_12000_characters(real: str) -> None:
    expected, partial = _first_unloaded_line(real, real[:12_000])
    b = budget_for(real, MEM, get_consumer("windsurf"))
    assert b.cut is not None and (b.cut.first_line, b.cut.partial, b.cut.offset) == (expected, partial, 12_000)


def test_gemini_cli_reads_2000_lines_at_a_time(real: str) -> None:
    assert budget_for(real, MEM, get_consumer("gemini-cli")).cut is None  # 1,293 lines fit in one read
    doubled = real + real
    b = budget_for(doubled, MEM, get_consumer("gemini-cli"))
    assert b.cut is not None and b.cut.first_line == 2001 and b.cut.kind == "window"
    assert budget_for(doubled, "GEMINI.md", get_consumer("gemini-cli")).cut is None  # context files: whole


def test_tightest_cut_is_the_earliest(real: str) -> None:
    budgets = document_budget(real, ".fusion/memory/MEMORY.md",
                              ["fusion", "claude-code", "codex", "windsurf", "gemini-cli"])
    assert tightest(budgets).consumer_id == "windsurf"
    assert tightest([budgets[0], budgets[4]]).consumer_id == "fusion"  # a read window before no cut at all


def _numbered(n: int) -> str:
    return "# Memory index\n" + "".join(f"- [note {i}](note-{i}.md) — hook\n" for i in range(2, n + 1))


@pytest.mark.parametrize(("lines", "cut"), [(199, None), (200, None), (201, 201)])
def test_claude_code_around_200_lines(lines: int, cut: int | None) -> None:
    text = _numbered(lines)
    assert line_count(text) == lines
    b = budget_for(text, ".fusion/memory/MEMORY.md", get_consumer("claude-code"))
    assert b.matched
    assert (b.cut.first_line if b.cut else None) == cut
    assert b.measures[0].used == lines and b.measures[0].limit == 200


def test_claude_code_trims_leading_blank_lines_before_counting() -> None:
    text = "\n\n\n" + _numbered(201)
    b = budget_for(text, "MEMORY.md", get_consumer("claude-code"))
    assert b.cut is not None and b.cut.first_line == 204  # 3 blank lines, then its 201st line


def test_a_section_past_the_cut_is_named_wholly_or_partly() -> None:
    body = "".join(f"- line {i}\n" for i in range(3, 199))
    text = "# Memory\n## Early\n" + body + "## Straddles\n- a\n- b\n- c\n## Late\n- d\n"
    assert line_count(text) == 204
    b = budget_for(text, "MEMORY.md", get_consumer("claude-code"))
    assert b.cut.first_line == 201
    assert [(s.title, s.line, s.wholly) for s in b.sections] == [
        ("Memory", 1, False), ("Straddles", 199, False), ("Late", 203, True)]
    assert sections_past_cut(text, 201) == [("Memory", 1, False), ("Straddles", 199, False), ("Late", 203, True)]


def test_headings_in_fenced_code_are_not_sections() -> None:
    text = "## Real\n```bash\n# not a heading\n```\n~~~\n## also not\n~~~\n### Sub ##\n## Next\n"
    assert [(h.title, h.line, h.end_line) for h in headings(text)] == [
        ("Real", 1, 8), ("Sub", 8, 8), ("Next", 9, 9)]


def test_codex_memory_summary_keeps_head_and_tail() -> None:
    text = "".join(f"summary line {i:04d} with some words\n" for i in range(400))  # ASCII, 34 bytes a line
    b = budget_for(text, "memories/memory_summary.md", get_consumer("codex"))
    body = text.strip()
    head, tail = body[:5_000], body[-5_000:]  # 2,500 tokens × 4 bytes, half from each end
    assert b.cut is not None and b.cut.kind == "middle"
    assert b.cut.first_line == head.count("\n") + 1 and b.cut.partial
    assert b.cut.resume_line == text.index(tail) // 34 + 2  # the first whole line of the kept tail
    assert b.measures[0].estimated and "bytes / 4" in " ".join(b.notes)


def test_user_defined_consumer_from_the_user_config(user_config_dir: Path, real: str) -> None:
    user_config_dir.mkdir(parents=True)
    (user_config_dir / "config.json").write_text(
        '{"consumers": {"team-bot": {"name": "Team bot", "lines": 50, "what": "first 50 lines"},'
        ' "windsurf": {"chars": 6000, "appliesTo": [".windsurfrules"]}}}', encoding="utf-8")
    table = all_consumers()
    assert table["team-bot"].name == "Team bot" and not table["team-bot"].builtin
    assert budget_for(real, MEM, table["team-bot"]).cut.first_line == 51
    assert budget_for(real, MEM, table["windsurf"]).cut.offset == 6000  # a user rule replaces a shipped one


def test_a_broken_user_rule_leaves_the_shipped_consumers(user_config_dir: Path) -> None:
    from core.errors import SettingsError
    from core.settings.user_config import load_user_config

    user_config_dir.mkdir(parents=True)
    (user_config_dir / "config.json").write_text('{"consumers": {"bot": {"what": "no limit"}}}', encoding="utf-8")
    with pytest.raises(SettingsError, match="needs a limit"):
        load_user_config()
    assert set(all_consumers()) == {"fusion", "claude-code", "codex", "gemini-cli", "windsurf"}


def test_user_consumers_survive_a_provider_change(user_config_dir: Path) -> None:
    from core.settings.user_config import load_user_config, set_provider

    user_config_dir.mkdir(parents=True)
    (user_config_dir / "config.json").write_text('{"consumers": {"bot": {"lines": 10}}}', encoding="utf-8")
    set_provider("local", {"kind": "command", "command": ["cat"]})
    assert load_user_config().consumers["bot"].lines == 10


def test_tokens_are_estimated_when_tiktoken_cannot_load_offline(tmp_path: Path, monkeypatch) -> None:
    from core.budget.tokens import token_counter

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # empty: no BPE file, and no download
    counter = token_counter("o200k_base")
    assert counter.estimated and "not available offline" in counter.note
    assert counter.count("abcdefgh") == 2 and counter.count("é") == 1
    rule = LoadRule(what="t", tokens=10, tokenizer="o200k_base")
    b = budget_for("x" * 100, "a.md", _single(rule))
    assert b.cut.offset == 40 and b.measures[0].estimated and "offline" in b.notes[0]


def test_rules_refuse_what_cannot_be_measured() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="exactly one size limit"):
        LoadRule(what="x", lines=3, load="head_tail")
    with pytest.raises(ValidationError, match="without '..'"):
        LoadRule(what="x", applies_to=("../outside.md",))
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        LoadRule(what="x", lines=0)


def _single(rule: LoadRule):
    from core.budget.rules import Consumer

    return Consumer(id="one", name="One", rules=(rule,))
