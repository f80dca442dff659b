"""Project.write reads the document once as bytes and encodes the new text once: what it keeps and refuses."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from core.errors import MemoryBackendError
from core.project import Project
from core.storage import fileio
from core.storage.history import versions as history

MEM = ".fusion/memory.md"


def one_mib(rng: random.Random) -> str:
    """About a MiB of memory with non-ASCII text (so its str is not one byte a character)."""
    words = ["lease", "clock", "naïve", "über", "—", "→", "retry", "日本", "cache", "🙂"]
    lines = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(14_000)]
    return "# Project Memory\n\n" + "\n".join(f"- {line}" for line in lines) + "\n"


def test_saves_keep_every_previous_version_byte_exact(project: Path):
    rng = random.Random(5)
    (project / ".fusion").mkdir()
    project_ = Project(project)
    texts = [one_mib(rng)]
    project_.write(MEM, texts[0], source="editor")
    for i in range(6):  # a different edit each time, as an operator's
        lines = texts[-1].splitlines(keepends=True)
        lines[rng.randrange(2, len(lines))] = f"- edited {i}: naïve → {rng.random()}\n"
        texts.append("".join(lines))
        result = project_.write(MEM, texts[-1], source="editor")
        assert result.changed and result.changes.history and result.size == len(texts[-1].encode())
        assert result.hash == fileio.content_hash(texts[-1])
    assert (project / MEM).read_bytes() == texts[-1].encode()
    kept = [history.get_version(project, v.id) for v in history.list_versions(project, MEM)]
    assert [found[1] for found in kept if found] == texts[-2::-1]  # newest first, each byte-exact


def test_a_save_that_changes_nothing_writes_nothing_and_still_knows_its_hash(project: Path):
    (project / ".fusion").mkdir()
    (project / MEM).write_text("# Project Memory\n\nsame\n", encoding="utf-8")
    result = Project(project).write(MEM, "# Project Memory\n\nsame\n")
    assert not result.changed and result.hash == fileio.content_hash("# Project Memory\n\nsame\n")
    assert history.list_versions(project, MEM) == []


def test_a_stale_base_is_a_conflict_even_when_the_text_is_the_same(project: Path):
    (project / ".fusion").mkdir()
    (project / MEM).write_text("now\n", encoding="utf-8")
    with pytest.raises(MemoryBackendError) as info:
        Project(project).write(MEM, "now\n", expected_hash=fileio.content_hash("then\n"))
    assert info.value.code == "CONFLICT"
    assert (project / MEM).read_text(encoding="utf-8") == "now\n"


def test_a_document_that_is_not_utf8_is_never_rewritten(project: Path):
    (project / ".fusion").mkdir()
    (project / MEM).write_bytes(b"# Memory\n\xff\xfe latin-1 bytes\n")
    with pytest.raises(MemoryBackendError) as info:
        Project(project).write(MEM, "# Memory\n\nnew\n")
    assert info.value.code == "READ_FAILED" and "not valid UTF-8" in info.value.message
    assert (project / MEM).read_bytes() == b"# Memory\n\xff\xfe latin-1 bytes\n"
    assert history.list_versions(project, MEM) == []


def test_new_text_that_is_not_utf8_is_refused_before_any_io(project: Path):
    with pytest.raises(MemoryBackendError) as info:
        Project(project).write(MEM, "bad \udcff surrogate")
    assert info.value.code == "INVALID_CONFIG"
    assert not (project / ".fusion").exists()
