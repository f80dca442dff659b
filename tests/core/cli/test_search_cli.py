"""``memdesk search``, ``history list|show|restore`` and ``reindex``: output, JSON, exit codes, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.storage import saving

MEMORY = ".fusion/memory.md"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def use_backend(root: Path, backend: str, config: dict | None = None) -> None:
    cfg = root / ".fusion" / "config.json"
    doc = json.loads(cfg.read_text())
    doc["settings"].update({"memoryBackend": backend, "memoryBackendConfig": config or {}})
    cfg.write_text(json.dumps(doc))


@pytest.fixture(autouse=True)
def derived_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from core.search import derived

    monkeypatch.setenv(derived.CACHE_DIR_ENV, str(tmp_path / "cache"))
    yield
    derived.close_all()


def test_the_file_backend_searches_with_the_derived_index_and_says_so(capsys, sample_project: Path):
    code, out, err = run(capsys, "search", "claim", "--project", str(sample_project))
    assert code == 0 and out.splitlines()[0].startswith(".fusion/")
    assert err.count("\n") == 1 and "memdesk's own index" in err  # a hybrid request ran as keyword
    doc = json.loads(run(capsys, "search", "claim", "--json", "-p", str(sample_project))[1])
    assert (doc["backend"], doc["mode"], doc["ran"]) == ("file", "hybrid", "keyword") and doc["results"]
    code, out, err = run(capsys, "search", "claim", "--mode", "keyword", "-p", str(sample_project))
    assert code == 0 and err == 'memdesk: keyword search by memdesk\'s own index (the "file" backend cannot search)\n'
    assert not (sample_project / ".fusion" / "memdesk" / "search.db").exists()


@pytest.mark.parametrize("backend", ["sqlite", "hybrid"])
def test_search_prints_file_line_section_score(capsys, sample_project: Path, backend: str):
    use_backend(sample_project, backend)
    code, out, _err = run(capsys, "search", "PgBouncer LISTEN", "--mode", "keyword", "--limit", "2",
                          "-p", str(sample_project))
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(".fusion/memory-insights.md:27  [Pitfalls]  1.000  - «PgBouncer»")
    code, out, _err = run(capsys, "search", "PgBouncer", "--json", "-p", str(sample_project))
    doc = json.loads(out)
    assert code == 0 and doc["backend"] == backend and doc["results"][0]["line"] > 0
    assert {"file", "line", "section", "score", "scores", "snippet"} <= set(doc["results"][0])
    code, out, _ = run(capsys, "search", "qwxyzzy", "--mode", "keyword", "-p", str(sample_project))
    assert code == 0 and out == "No results.\n"


def test_search_keyword_only_note(capsys, sample_project: Path):
    use_backend(sample_project, "sqlite")
    code, _out, err = run(capsys, "search", "claim", "--mode", "semantic", "-p", str(sample_project))
    assert code == 0 and "keyword" in err


def test_search_bad_input(capsys, sample_project: Path):
    assert run(capsys, "search", "  ", "-p", str(sample_project))[0] == 2
    code, _out, err = run(capsys, "search", "x", "--mode", "fuzzy", "-p", str(sample_project))
    assert code == 2 and err.count("\n") == 1
    assert run(capsys, "search", "x", "--limit", "-3", "-p", str(sample_project))[0] == 2
    assert run(capsys, "search", "x", "-p", str(sample_project / "missing"))[0] == 2


def test_history_list_show_restore(capsys, project: Path):
    saving.replace_text(project, MEMORY, "- first\n")
    saving.replace_text(project, MEMORY, "- second\n", source="editor")
    code, out, _ = run(capsys, "history", "list", "-p", str(project))
    assert code == 0 and "before save" in out and MEMORY in out  # the label of source "editor"
    vid = json.loads(run(capsys, "history", "list", "--json", "-p", str(project))[1])[0]["id"]
    code, out, _ = run(capsys, "history", "show", str(vid), "-p", str(project))
    assert code == 0 and out == "- first\n"
    code, out, _ = run(capsys, "history", "show", str(vid), "--diff", "-p", str(project))
    assert "-- first" in out and "+- second" in out
    assert run(capsys, "history", "show", str(vid), "--path", "other.md", "-p", str(project))[0] == 2
    code, out, _ = run(capsys, "history", "restore", str(vid), "-p", str(project))
    assert code == 0 and "Restored" in out
    assert (project / MEMORY).read_text() == "- first\n"
    restored = json.loads(run(capsys, "history", "list", "--json", "-p", str(project))[1])
    assert restored[0]["source"] == "restore"
    code, _out, err = run(capsys, "history", "restore", "999", "-p", str(project))
    assert code == 2 and err.count("\n") == 1 and "no version 999" in err
    assert run(capsys, "history", "-p", str(project))[0] == 2
    assert run(capsys, "history", "list", "--path", "nothing.md", "-p", str(project))[1].startswith("No versions")


def test_history_restore_refused_by_readonly(capsys, sample_project: Path):
    saving.replace_text(sample_project, MEMORY, "- changed\n")
    use_backend(sample_project, "readonly")
    vid = json.loads(run(capsys, "history", "list", "--json", "-p", str(sample_project))[1])[0]["id"]
    code, _out, err = run(capsys, "history", "restore", str(vid), "-p", str(sample_project))
    assert code == 2 and "READ_ONLY" in err
    assert (sample_project / MEMORY).read_text() == "- changed\n"


def test_reindex(capsys, sample_project: Path):
    code, out, _ = run(capsys, "reindex", "-p", str(sample_project))
    assert code == 0 and "Rebuilt the index of 2 file(s)" in out  # the derived index of the file backend
    use_backend(sample_project, "hybrid")
    code, out, _ = run(capsys, "reindex", "--verify", "-p", str(sample_project))
    assert code == 0 and "Rebuilt the index of 2 file(s)" in out and "Verified:" in out
    doc = json.loads(run(capsys, "reindex", "--verify", "--json", "-p", str(sample_project))[1])
    assert doc["ok"] is True and doc["entries"] > 40
