"""The write pipeline (issue 19): what → where → lock → read → screen → write → record → report, on real files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.errors import MemoryBackendError
from core.project import Project
from core.storage import pipeline
from core.storage.history import versions as history
from core.storage.pipeline import PASS_ALL, Flag, ScreenVerdict, Writer, WriteRefused, WriteRequest

MEM = ".fusion/memory.md"


def seed(root: Path, text: str = "# Project Memory\n\nfirst\n") -> Project:
    (root / ".fusion").mkdir(exist_ok=True)
    (root / MEM).write_text(text, encoding="utf-8")
    return Project(root)


class Recorder:
    """A screen that records what it saw and answers with a fixed verdict."""

    def __init__(self, verdict: ScreenVerdict) -> None:
        self.verdict = verdict
        self.seen: list[WriteRequest] = []

    def __call__(self, request: WriteRequest) -> ScreenVerdict:
        self.seen.append(request)
        return self.verdict


FLAG = Flag("aws-access-key", "secret", 1, (4, 24), "an AWS access key")


def test_the_default_screen_passes_everything(project: Path):
    p = seed(project)
    p.screen = PASS_ALL  # the default is the memory firewall (core.firewall); PASS_ALL is the pass-through
    assert PASS_ALL(WriteRequest(MEM, "append", "x", Writer("cli"), "append", None)).action == "write"
    result = p.write(MEM, "# Project Memory\n\nsecond\n")
    assert result.status == "written" and result.changed and result.flags == ()
    outcome = p.append("third")
    assert outcome.status == "written" and outcome.to_json()["flags"] == []


def test_the_screen_sees_the_document_as_read_under_the_lock_and_who_writes(project: Path):
    p = seed(project)
    screen = Recorder(ScreenVerdict("write"))
    p.screen = screen
    (project / MEM).write_text("# Project Memory\n\nchanged by an agent\n", encoding="utf-8")
    p.append("an entry", source="http-append", author="ci-bot")
    p.write(MEM, "# Project Memory\n\nnew\n", source="cli-write")
    append_req, replace_req = screen.seen
    assert append_req == WriteRequest(MEM, "append", "an entry", Writer("token", "ci-bot"), "http-append",
                                      "# Project Memory\n\nchanged by an agent\n")
    assert replace_req.op == "replace" and replace_req.text == "# Project Memory\n\nnew\n"
    assert replace_req.writer == Writer("cli") and replace_req.current.endswith("an entry")


def test_a_held_append_writes_nothing_and_says_held_with_the_inbox_id(project: Path):
    p = seed(project)
    before = (project / MEM).read_bytes()
    p.screen = Recorder(ScreenVerdict("hold", (FLAG,), inbox_id="ib-1", reason="a secret"))
    outcome = p.append("key AKIAIOSFODNN7EXAMPLE", source="mcp-append")
    assert outcome.status == "held" and outcome.inbox_id == "ib-1"
    assert outcome.to_json()["inboxId"] == "ib-1"
    assert outcome.to_json()["flags"] == [{"rule": "aws-access-key", "kind": "secret", "line": 1, "span": [4, 24],
                                           "message": "an AWS access key"}]
    assert (project / MEM).read_bytes() == before
    assert history.list_events(project) == []


def test_a_held_save_writes_nothing_and_keeps_no_version(project: Path):
    p = seed(project)
    before = (project / MEM).read_bytes()
    p.screen = Recorder(ScreenVerdict("hold", (FLAG,), inbox_id="ib-2"))
    result = p.write(MEM, "# Project Memory\n\nAKIAIOSFODNN7EXAMPLE\n", source="http-write")
    assert (result.status, result.changed, result.inbox_id) == ("held", False, "ib-2")
    assert (project / MEM).read_bytes() == before
    assert history.list_versions(project, MEM) == []


def test_a_refused_write_raises_one_line_naming_the_file_and_changes_no_byte(project: Path):
    p = seed(project)
    before = (project / MEM).read_bytes()
    p.screen = Recorder(ScreenVerdict("refuse", (FLAG,), reason="it holds an AWS access key"))
    for write in (lambda: p.append("AKIAIOSFODNN7EXAMPLE", source="mcp-append"),
                  lambda: p.write(MEM, "AKIAIOSFODNN7EXAMPLE\n", source="http-write")):
        with pytest.raises(WriteRefused) as info:
            write()
        assert info.value.status == "refused" and info.value.flags == (FLAG,)
        assert MEM in str(info.value) and "AWS access key" in str(info.value) and "\n" not in str(info.value)
        assert info.value.code == "INVALID_CONFIG"  # a 400 over HTTP, a tool error over MCP
    assert (project / MEM).read_bytes() == before


def test_a_skip_verdict_is_a_duplicate_and_writes_nothing(project: Path):
    p = seed(project)
    before = (project / MEM).read_bytes()
    p.screen = Recorder(ScreenVerdict("skip", reason="near the entry on line 3"))
    assert p.append("first, again").status == "skipped_duplicate"
    assert (project / MEM).read_bytes() == before


def test_warn_flags_are_reported_and_the_write_happens(project: Path):
    p = seed(project)
    p.screen = Recorder(ScreenVerdict("write", (FLAG,)))
    outcome = p.append("an entry", source="cli-append")
    assert outcome.status == "written" and outcome.flags[0]["rule"] == "aws-access-key"
    assert (project / MEM).read_text(encoding="utf-8").endswith("an entry")
    result = p.write(MEM, "# Project Memory\n\nnew\n")
    assert result.status == "written" and result.flags[0]["kind"] == "secret"


def test_a_screen_that_fails_refuses_agents_and_lets_the_operator_write(project: Path):
    p = seed(project)

    def broken(request: WriteRequest) -> ScreenVerdict:
        raise RuntimeError("rule table damaged")

    p.screen = broken
    before = (project / MEM).read_bytes()
    with pytest.raises(WriteRefused, match="rule table damaged"):
        p.append("from an agent", source="mcp-append")
    assert (project / MEM).read_bytes() == before
    result = p.write(MEM, "# Project Memory\n\nthe operator's\n", source="editor")
    assert result.changed and any("rule table damaged" in w for w in result.warnings)


def test_restore_goes_through_the_screen(project: Path):
    p = seed(project)
    p.write(MEM, "# Project Memory\n\nsecond\n")
    version = history.list_versions(project, MEM)[0]
    screen = Recorder(ScreenVerdict("write"))
    p.screen = screen
    p.restore(version.id, writer=Writer("operator", "me"))
    assert [(r.source, r.op, r.writer.kind) for r in screen.seen] == [("restore", "replace", "operator")]
    assert (project / MEM).read_text(encoding="utf-8") == "# Project Memory\n\nfirst\n"


@pytest.mark.parametrize("rel", [".env", "src/evil.py", ".fusion/config.json", ".fusion/memdesk/history.db",
                                 "../outside.md", ".fusion/memory/MEMORY.md"])
def test_stage_what_refuses_anything_but_a_memory_document(project: Path, rel: str):
    p = seed(project)
    with pytest.raises(WriteRefused, match="not a memory document"):
        pipeline.replace(p, rel, "pwned\n", writer=Writer("program", "notification"), source="mirror-import")
    with pytest.raises(WriteRefused, match="not a memory document"):
        pipeline.append(p, rel, "pwned", lambda cur: "pwned\n", writer=Writer("program"), source="mirror-import")
    assert not (project / ".env").exists() and not (project / "src").exists()
    assert not (project.parent / "outside.md").exists()


def test_stage_what_admits_state_files_only_to_memdesk_itself(project: Path):
    p = seed(project)
    with pytest.raises(WriteRefused):
        pipeline.check_what(p, ".fusion/config.json")
    pipeline.check_what(p, ".fusion/config.json", state=True)


def test_stage_where_refuses_a_link_out_of_the_project(project: Path, tmp_path: Path):
    p = seed(project)
    outside = tmp_path / "elsewhere.md"
    outside.write_text("theirs\n", encoding="utf-8")
    os.unlink(project / MEM)
    os.symlink(outside, project / MEM)
    with pytest.raises(MemoryBackendError) as info:
        p.write(MEM, "mine\n")
    assert info.value.code == "INVALID_CONFIG"
    with pytest.raises(MemoryBackendError):
        p.append("mine")
    assert outside.read_text(encoding="utf-8") == "theirs\n"


def test_writers_inferred_from_the_source():
    assert pipeline.writer_for("http-append", "tok") == Writer("token", "tok")
    assert pipeline.writer_for("mcp-write", None).kind == "mcp"
    assert pipeline.writer_for("cli-write", None).kind == "cli"
    assert pipeline.writer_for("rotate", None).kind == "memdesk"
    assert pipeline.writer_for("editor", None).kind == "operator"
    with pytest.raises(ValueError):
        Writer("robot")  # type: ignore[arg-type]


_OPENED: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    if _OPENED is not None and event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        _OPENED.append(os.fsdecode(args[0]))


def test_a_save_opens_the_document_once_and_its_lock_once(real_project: Path):
    """One file layer (issue 19, item 4): the save reads the document once, under one lock (CPython's audit
    events count every open)."""
    global _OPENED
    import sys

    sys.addaudithook(_audit)
    p = Project(real_project)
    text = (real_project / MEM).read_text(encoding="utf-8")
    p.write(MEM, text + "\n- first save\n")  # history, locks folder and connections exist from here on
    _OPENED = []
    try:
        p.write(MEM, text + "\n- second save\n")
        opened = list(_OPENED)
    finally:
        _OPENED = None
    target = str(real_project / MEM)
    assert opened.count(target) == 1, opened
    locks = [o for o in opened if o.endswith(".lock")]
    assert len(locks) == 1, locks
    assert (real_project / MEM).read_text(encoding="utf-8").endswith("- second save\n")
