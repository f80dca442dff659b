"""Hostile input on the project model (design §2a, §3a, §6): paths, links, special files, appends, migration.

Each test is one attack, parametrised where the attack has variants. What is asserted is what a user
or an agent would see: the bytes on disk inside and outside the project, the exit code and the one
line on stderr, the document list. Nothing may hang, crash, read unbounded, or write outside the root.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

import markdown
import pytest

from core.documents.layout import AGENT_DIR, Layout, sanitize_agent_id
from core.errors import MemoryBackendError
from core.project import MemoryDisabledError, Project
from core.storage import fileio

REPO = Path(__file__).resolve().parents[3]
DAY = date(2026, 9, 1)
DAILY = ".fusion/memory/2026-09-01.md"
LONG = ".fusion/memory/MEMORY.md"
LEGACY = ".fusion/memory.md"


# -- helpers ----------------------------------------------------------------------------------------
def tree(root: Path) -> dict[str, str]:
    """Every entry under ``root`` without following links or opening anything but regular files."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            rel = os.path.relpath(p, root)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = "link:" + os.readlink(p)
            elif stat.S_ISREG(st.st_mode):
                out[rel] = hashlib.sha256(Path(p).read_bytes()).hexdigest() + f":{st.st_nlink}"
            else:
                out[rel] = f"mode:{stat.S_IFMT(st.st_mode)}"
    return out


def one_line(message: str) -> None:
    """A clear error is one line of readable length, never a traceback."""
    assert "\n" not in message.strip() and "Traceback" not in message, message
    assert 0 < len(message.strip()) <= 400, f"{len(message)} characters: {message[:200]}..."


def refused(fn: Callable[[], object], *codes: str) -> MemoryBackendError:
    """Run ``fn`` expecting a :class:`MemoryBackendError` with one of ``codes`` and a one-line message."""
    with pytest.raises(MemoryBackendError) as exc:
        fn()
    assert not codes or exc.value.code in codes, (exc.value.code, exc.value.message)
    one_line(exc.value.message)
    return exc.value


def bounded(fn: Callable[[], object], fifos: tuple[Path, ...] = (), seconds: float = 15.0) -> object:
    """Run ``fn`` in a thread; fail (and unblock it by opening each FIFO's other end) if it does not return."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the test thread
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        for fifo in fifos:  # release a reader blocked in open() or a writer blocked on a full pipe
            for flags in (os.O_WRONLY | os.O_NONBLOCK, os.O_RDONLY | os.O_NONBLOCK):
                try:
                    os.close(os.open(fifo, flags))
                except OSError:
                    pass
        worker.join(5)
        pytest.fail(f"the operation did not return within {seconds:.0f} s (it blocked)")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box.get("value")


def cli(root: Path, *args: str | bytes, stdin: bytes = b"", timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    """Run ``memdesk`` on ``root`` in a child process (arguments may be raw bytes, as a shell passes them)."""
    argv = [os.fsencode(a) if isinstance(a, str) else a for a in args]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([os.fsencode(sys.executable), b"-m", b"core.cli", *argv, b"--project", os.fsencode(root)],
                          input=stdin, capture_output=True, env=env, timeout=timeout)


def cli_refused(result: subprocess.CompletedProcess[bytes], code: int | tuple[int, ...] = 2) -> str:
    """The command failed with ``code`` (or one of them) and one clear line on stderr; return that line."""
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode in (code if isinstance(code, tuple) else (code,)), (result.returncode, err)
    one_line(err)
    return err


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the project, with a file an attacker would like to read or change."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "victim.md").write_text("# victim\n\nprivate text\n")
    return folder


def seed(root: Path, text: str = "# Project Memory\n\n## Architecture\n\n- one\n") -> Path:
    (root / ".fusion").mkdir(parents=True, exist_ok=True)
    (root / LEGACY).write_text(text)
    return root / LEGACY


# -- Layout.normalize / Project.resolve_path ---------------------------------------------------------
REFUSED_PATHS = [
    "/etc/passwd", "/", "//etc/passwd", "C:MEMORY.md", "c:\\x", "..", "../MEMORY.md", "memory/../MEMORY.md",
    ".fusion/memory/../memory/MEMORY.md", "MEMORY.md/..", "agent-memory/../MEMORY.md",
    "agent-memory/../../../etc/passwd", ".fusion/agent-memory/reviewer/../executor-7/MEMORY.md",
    "MEMORY.md\x00", "\x00", "memory\\MEMORY.md", "..\\..\\x", "%2e%2e/MEMORY.md", "memory%2FMEMORY.md",
    "memory\uff0fMEMORY.md", "\uff0e\uff0e/MEMORY.md", "\uff12\uff10\uff12\uff16-08-20.md",
    "\u0662\u0660\u0662\u0666-\u0660\u0668-\u0662\u0660.md", "MEMORY.md.", "MEMORY.MD", "\u202eMEMORY.md",
    "MEMORY\u200b.md", "agent-memory/./MEMORY.md", "agent-memory//MEMORY.md", "agent-memory/a b/MEMORY.md",
    "agent-memory/\u0133/MEMORY.md", "~/MEMORY.md", ".fusion/memdesk/history.db", ".fusion/config.json",
    "memory/memory-audit-state.json", ".fusion/memory-insights.md", ".", "memory/", "agent-memory/reviewer/",
    "", "   ", "\ud800/MEMORY.md", "agent-memory/\udcff/MEMORY.md", "x" * 5000, "memory/" + "a" * 300 + ".md", f"agent-memory/{'a' * 300}/MEMORY.md",
]


@pytest.mark.parametrize("user_path", REFUSED_PATHS, ids=lambda p: repr(p)[:40])
def test_normalize_refuses_hostile_paths_with_one_line(layered_project, user_path):
    before = tree(layered_project)
    refused(lambda: Layout(layered_project).normalize(user_path), "NOT_FOUND", "INVALID_CONFIG")
    refused(lambda: Project(layered_project).resolve_path(user_path), "NOT_FOUND", "INVALID_CONFIG")
    assert tree(layered_project) == before


@pytest.mark.parametrize("user_path, expected", [
    ("MEMORY.md", LONG), ("memory/MEMORY.md", LONG), (".fusion/memory/MEMORY.md", LONG), ("./MEMORY.md", LONG),
    ("MEMORY.md/", LONG), ("memory//MEMORY.md", LONG), (" MEMORY.md\n", LONG),
    ("2026-08-20.md", ".fusion/memory/2026-08-20.md"), ("agent-memory/reviewer/MEMORY.md",
                                                        ".fusion/agent-memory/reviewer/MEMORY.md"),
    ("agent-memory/.hidden/DREAMS.md", ".fusion/agent-memory/.hidden/DREAMS.md"),
    ("agent-memory/.../MEMORY.md", ".fusion/agent-memory/.../MEMORY.md"),
])
def test_lenient_paths_still_name_a_document_inside_the_project(layered_project, user_path, expected):
    rel = Layout(layered_project).normalize(user_path)
    assert rel == expected
    assert ".." not in rel.split("/") and fileio.resolve_in_root(layered_project, rel).is_relative_to(
        layered_project.resolve())


@pytest.mark.parametrize("user_path", ["/etc/passwd", "../../etc/passwd", "x" * 5000, "memory\uff0fMEMORY.md",
                                       b"MEMORY\xff.md"], ids=["absolute", "dotdot", "long", "fullwidth", "bytes"])
def test_cli_file_option_refuses_with_exit_2_and_one_line(layered_project, user_path):
    before = tree(layered_project)
    cli_refused(cli(layered_project, "show", "--file", user_path))
    cli_refused(cli(layered_project, "append", "--file", user_path, "an entry"))
    assert tree(layered_project) == before


# -- agent ids ---------------------------------------------------------------------------------------
AGENT_IDS = {"../../x": "..-..-x", "/etc": "-etc", "a/b": "a-b", "..": "agent", ".": "agent", "": "agent",
             "\x00": "-", "a\udcff": "a-", "\u65e5\u672c": "-", "a b\tc": "a-b-c", "-": "-"}


@pytest.mark.parametrize("agent", list(AGENT_IDS), ids=repr)
def test_hostile_agent_ids_land_in_their_sanitized_folder(layered_project, outside, agent):
    before_out = tree(outside.parent)
    outcome = Project(layered_project).append(f"entry of {agent!r}", agent=agent, today=DAY)
    assert sanitize_agent_id(agent) == AGENT_IDS[agent]
    assert outcome.path == f"{AGENT_DIR}/{AGENT_IDS[agent]}/2026-09-01.md"
    assert (layered_project / outcome.path).read_text().endswith(f"\nentry of {agent!r}\n")
    after_out = {k: v for k, v in tree(outside.parent).items() if not k.startswith("layered")}
    assert after_out == {k: v for k, v in before_out.items() if not k.startswith("layered")}


def test_an_agent_id_too_long_for_a_folder_name_is_refused_with_one_line(layered_project):
    before = tree(layered_project)
    refused(lambda: Project(layered_project).append("entry", agent="a" * 300, today=DAY), "INVALID_CONFIG")
    cli_refused(cli(layered_project, "append", "--agent", "a" * 300, "entry"))
    assert tree(layered_project) == before


# -- the document list -------------------------------------------------------------------------------
WEIRD_DAILY_NAMES = ["2026-08-20.md\n", "2026-08-20.md ", " 2026-08-20.md", "\uff12\uff10\uff12\uff16-08-21.md",
                     "\u0662\u0660\u0662\u0666-\u0660\u0668-\u0662\u0661.md", "2026-08-20.MD", ".2026-08-20.md",
                     "2026-08-20.md.swp", "2026-08-20.md~"]


@pytest.mark.parametrize("name", WEIRD_DAILY_NAMES, ids=repr)
def test_listed_documents_are_real_daily_names_that_normalize_to_themselves(layered_project, name):
    (layered_project / ".fusion/memory" / name).write_text("# not a daily note\n")
    project = Project(layered_project)
    paths = [d.path for d in project.documents()]
    assert name not in {p.rsplit("/", 1)[-1] for p in paths}
    for p in paths:
        assert project.resolve_path(p) == p  # what the picker lists opens that same file


def test_odd_agent_folders_are_not_listed_and_hidden_ones_round_trip(layered_project):
    agents = layered_project / AGENT_DIR
    for name in ["bad name", "bad\nname", os.fsdecode(b"\xff\xfe"), ".hidden", "a" * 200]:
        (agents / name).mkdir()
        (agents / name / "MEMORY.md").write_text("# Project Memory\n")
    project = Project(layered_project)
    listed = {d.agent for d in project.documents() if d.agent}
    assert listed == {"executor-7", "reviewer", ".hidden"}
    for d in project.documents():
        assert project.resolve_path(d.path) == d.path


def test_ten_thousand_daily_notes_list_in_order_with_a_constant_number_of_realpath_calls(layered_project,
                                                                                          monkeypatch):
    folder = layered_project / ".fusion/memory"
    first = date(1990, 1, 1)
    names = [f"{(first + timedelta(days=i)).isoformat()}.md" for i in range(10_000)]
    for name in names:
        (folder / name).write_text(f"# Daily Memory {name[:-3]}\n")
    calls = {"n": 0}
    real = os.path.realpath

    def counting(path, *args, **kwargs):
        calls["n"] += 1
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os.path, "realpath", counting)
    docs = Project(layered_project).documents()
    monkeypatch.undo()
    daily = [d.path.rsplit("/", 1)[-1] for d in docs if d.layer == "daily" and d.agent is None]
    assert daily[:3] == ["2026-08-20.md", "2026-08-19.md", "2026-08-18.md"]
    assert daily[3:] == sorted(names, reverse=True)
    assert calls["n"] < 50, f"{calls['n']} realpath calls: the listing must not resolve every file"
    result = cli(layered_project, "files", "--json")
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)) == len(docs)


# -- symlinks out of the root -------------------------------------------------------------------------
def link_out(root: Path, outside: Path, kind: str) -> tuple[str, ...]:
    """Move one folder of the project out of it and leave a link; return documents now behind the link."""
    what = {"fusion": ".fusion", "memory": ".fusion/memory", "agent": ".fusion/agent-memory/reviewer",
            "agents": ".fusion/agent-memory"}[kind]
    shutil.move(str(root / what), str(outside / "moved"))
    (root / what).symlink_to(outside / "moved", target_is_directory=True)
    return {"fusion": (LONG, ".fusion/agent-memory/reviewer/MEMORY.md", DAILY), "memory": (LONG, DAILY),
            "agent": (".fusion/agent-memory/reviewer/MEMORY.md",),
            "agents": (".fusion/agent-memory/reviewer/MEMORY.md",)}[kind]


@pytest.mark.parametrize("kind", ["fusion", "memory", "agent", "agents"])
def test_a_folder_linked_out_of_the_root_is_not_listed(layered_project, outside, kind):
    link_out(layered_project, outside, kind)
    root_real = str(layered_project.resolve())
    for d in Project(layered_project).documents():
        assert os.path.realpath(layered_project / d.path).startswith(root_real + os.sep), d.path


@pytest.mark.parametrize("kind", ["fusion", "memory", "agent", "agents"])
def test_a_folder_linked_out_of_the_root_refuses_reads_and_writes_and_creates_nothing(layered_project, outside,
                                                                                       kind):
    behind = link_out(layered_project, outside, kind)
    before_out, before_in = tree(outside), tree(layered_project)
    project = Project(layered_project)
    assert project.layout.kind == "layered"  # Fusion follows the link; memdesk must not fall back to seed files
    for rel in behind:
        refused(lambda rel=rel: project.read(rel), "INVALID_CONFIG", "READ_FAILED")
        refused(lambda rel=rel: project.write(rel, "# replaced\n"), "INVALID_CONFIG", "WRITE_FAILED")
        refused(lambda rel=rel: project.append("an entry", path=rel), "INVALID_CONFIG", "WRITE_FAILED")
        assert project.writable(rel) is not None
    if kind in {"fusion", "memory"}:
        refused(lambda: project.append("an entry", today=DAY), "INVALID_CONFIG", "WRITE_FAILED")
        refused(lambda: project.append("an entry", layer="long-term"), "INVALID_CONFIG", "WRITE_FAILED")
        cli_refused(cli(layered_project, "append", "an entry"))
        cli_refused(cli(layered_project, "show"))
    assert tree(outside) == before_out
    assert tree(layered_project) == before_in  # no seed-layout file, no lock, no history created


def test_a_linked_out_memdesk_folder_receives_no_lock_and_no_history(layered_project, outside):
    (outside / "state").mkdir()
    (layered_project / ".fusion/memdesk").symlink_to(outside / "state", target_is_directory=True)
    before = tree(layered_project)
    project = Project(layered_project)
    refused(lambda: project.append("an entry", today=DAY), "INVALID_CONFIG")
    refused(lambda: project.write(None, "# Project Memory\n\nreplaced\n"), "INVALID_CONFIG")
    assert list((outside / "state").iterdir()) == []
    assert tree(layered_project) == before


@pytest.mark.parametrize("obstacle", ["memdesk-file", "locks-file", "lock-folder", "agent-file", "agents-file"])
def test_a_file_where_a_folder_belongs_is_refused_with_one_line(layered_project, obstacle):
    fusion = layered_project / ".fusion"
    if obstacle == "memdesk-file":
        (fusion / "memdesk").write_text("in the way\n")
    elif obstacle == "locks-file":
        (fusion / "memdesk").mkdir()
        (fusion / "memdesk/locks").write_text("in the way\n")
    elif obstacle == "lock-folder":
        lock = fileio.lock_path_for(layered_project.resolve(), DAILY)
        lock.mkdir(parents=True)
    else:
        folder = fusion / ("agent-memory/reviewer" if obstacle == "agent-file" else "agent-memory")
        shutil.rmtree(folder)
        folder.write_text("in the way\n")
    before = tree(layered_project)
    project = Project(layered_project)
    if obstacle.startswith("agent"):
        refused(lambda: project.append("an entry", agent="reviewer", today=DAY), "WRITE_FAILED", "READ_FAILED")
        cli_refused(cli(layered_project, "append", "--agent", "reviewer", "an entry"), (1, 2))
    else:
        refused(lambda: project.append("an entry", today=DAY), "WRITE_FAILED", "INVALID_CONFIG")
        cli_refused(cli(layered_project, "append", "--file", "2026-09-01.md", "an entry"), (1, 2))
    assert tree(layered_project) == before


def test_a_memory_path_that_is_a_file_keeps_the_seed_layout_and_stays_untouched(project):
    (project / ".fusion").mkdir()
    (project / ".fusion/memory").write_text("not a folder\n")
    p = Project(project)
    assert p.layout.kind == "seed" and p.documents() == []
    p.append("an entry")
    assert (project / ".fusion/memory").read_text() == "not a folder\n"
    assert (project / LEGACY).read_text().endswith("\nan entry")


# -- special files -------------------------------------------------------------------------------------
def make_special(root: Path, rel: str, kind: str) -> tuple[Path, ...]:
    path = root / rel
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
        return (path,)
    if kind == "folder":
        path.mkdir()
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "sparse":  # 64 MiB of nothing: reading it whole would be unbounded
        with open(path, "wb") as fh:
            fh.truncate(64 * 1024 * 1024)
    elif kind == "loop":
        path.symlink_to(path.name)
    elif kind == "link-to-fifo":
        os.mkfifo(root / ".fusion" / "pipe")
        path.symlink_to(Path("..") / "pipe")
        return (root / ".fusion" / "pipe",)
    return ()


SPECIAL = ["fifo", "folder", "dev-zero", "sparse", "loop", "link-to-fifo"]


@pytest.mark.parametrize("kind", SPECIAL)
@pytest.mark.parametrize("rel", [".fusion/memory/2026-08-19.md", LONG])
def test_a_special_document_is_refused_without_hanging(layered_project, kind, rel):
    fifos = make_special(layered_project, rel, kind)
    before = tree(layered_project)
    project = bounded(lambda: Project(layered_project), fifos)
    assert isinstance(project, Project)
    refused(lambda: bounded(lambda: project.read(rel), fifos), "READ_FAILED", "INVALID_CONFIG")
    refused(lambda: bounded(lambda: project.append("an entry", path=rel), fifos),
            "READ_FAILED", "WRITE_FAILED", "INVALID_CONFIG")
    refused(lambda: bounded(lambda: project.write(rel, "# replaced\n"), fifos),
            "READ_FAILED", "WRITE_FAILED", "INVALID_CONFIG")
    listed = {d.path for d in bounded(project.documents, fifos)}  # type: ignore[union-attr]
    assert (rel in listed) == (kind == "sparse")  # only a regular file is listed (and then refused on open)
    after = tree(layered_project)
    assert {k: v for k, v in after.items() if not k.startswith(".fusion/memdesk")} == \
        {k: v for k, v in before.items() if not k.startswith(".fusion/memdesk")}


def test_show_on_a_fifo_answers_with_one_line(layered_project):
    make_special(layered_project, ".fusion/memory/2026-08-19.md", "fifo")
    cli_refused(cli(layered_project, "show", "--file", "2026-08-19.md", timeout=30), 1)


# -- hard links ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", ["daily", "long-term", "seed"])
def test_an_append_to_a_document_hard_linked_outside_is_refused(layered_project, project, outside, target):
    victim = outside / "victim.md"
    root = project if target == "seed" else layered_project
    rel = {"daily": ".fusion/memory/2026-08-20.md", "long-term": LONG, "seed": LEGACY}[target]
    if target == "seed":
        (project / ".fusion").mkdir()
    (root / rel).unlink(missing_ok=True)
    os.link(victim, root / rel)
    before = victim.read_bytes()
    kwargs = {"path": rel} if target != "seed" else {}
    refused(lambda: Project(root).append("planted entry", **kwargs), "WRITE_FAILED")
    assert victim.read_bytes() == before
    result = cli(root, "append", *(["--file", rel] if target != "seed" else []), "planted entry")
    cli_refused(result, 2)  # bad state of the file, like a link out (tests/core/server/test_refused_targets.py)
    assert victim.read_bytes() == before


def test_rotation_into_a_hard_linked_archive_leaves_the_outside_file_alone(project, outside):
    text = "# Project Memory\n\n## Architecture\n" + "".join(
        f"\n\n<!-- 2026-01-{1 + i % 28:02d} -->\nentry {i}" for i in range(60))
    seed(project, text)
    victim = outside / "victim.md"
    before = victim.read_bytes()
    os.link(victim, project / ".fusion/memory-archive.md")
    outcome = Project(project).append("new entry", max_lines=50)
    assert outcome.status == "written" and outcome.archived_entries == 0
    assert any("archive" in w for w in outcome.warnings)
    assert victim.read_bytes() == before
    after = (project / LEGACY).read_text()
    assert after.startswith(text) and after.endswith("\nnew entry") and after.count("new entry") == 1


@pytest.mark.parametrize("kind", ["link-out", "folder", "non-utf8", "full", "fifo"])
def test_an_append_whose_rotation_fails_reports_written_with_a_warning(project, outside, kind):
    text = "# Project Memory\n\n## Architecture\n" + "".join(
        f"\n\n<!-- 2026-01-{1 + i % 28:02d} -->\nentry {i}" for i in range(60))
    seed(project, text)
    archive = project / ".fusion/memory-archive.md"
    fifos: tuple[Path, ...] = ()
    if kind == "link-out":
        archive.symlink_to(outside / "victim.md")
    elif kind == "folder":
        archive.mkdir()
    elif kind == "non-utf8":
        archive.write_bytes(b"\xff\xfe")
    elif kind == "full":
        archive.write_text("x" * (fileio.MAX_FILE_SIZE - 10))
    else:
        os.mkfifo(archive)
        fifos = (archive,)
    before_out = tree(outside)
    outcome = bounded(lambda: Project(project).append("new entry", max_lines=50), fifos)
    assert outcome.status == "written" and outcome.warnings  # type: ignore[union-attr]
    one_line(outcome.warnings[0])  # type: ignore[union-attr]
    assert (project / LEGACY).read_text().count("\nnew entry") == 1
    assert tree(outside) == before_out


# -- append text -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["bad \udcff\udcfe bytes", "\ud800", "a\x00b", "\x00"], ids=repr)
def test_an_entry_that_cannot_be_utf8_text_is_refused_before_any_io(layered_project, text):
    before = tree(layered_project)
    refused(lambda: Project(layered_project).append(text, today=DAY), "INVALID_CONFIG")
    assert tree(layered_project) == before


def test_a_non_utf8_argument_becomes_one_line_with_exit_2(layered_project):
    before = tree(layered_project)
    cli_refused(cli(layered_project, "append", b"bad \xff\xfe bytes"))
    assert tree(layered_project) == before


def test_a_replacement_that_cannot_be_utf8_is_refused(layered_project):
    before = tree(layered_project)
    refused(lambda: Project(layered_project).write(None, "# Project Memory\n\nbad \udcff\n"), "INVALID_CONFIG")
    assert tree(layered_project) == before


@pytest.mark.parametrize("size", [fileio.MAX_FILE_SIZE + 1, 3 * fileio.MAX_FILE_SIZE])
def test_a_huge_entry_is_refused_and_changes_no_byte(layered_project, size):
    before = tree(layered_project)
    err = refused(lambda: Project(layered_project).append("y" * size, layer="long-term"), "QUOTA_EXCEEDED")
    assert "1,048,576" in err.message
    result = cli(layered_project, "append", "--layer", "long-term", stdin=b"z" * size)
    cli_refused(result)
    assert tree(layered_project) == before


@pytest.mark.parametrize("user_path", ["memory-insights.md", ".fusion/memory-archive.md", LEGACY])
def test_entries_go_only_to_memory_documents(layered_project, user_path):
    (layered_project / LEGACY).write_text("## Context\n\n- legacy\n")
    before = tree(layered_project)
    refused(lambda: Project(layered_project).append("## Architecture\n- forged", path=user_path), "INVALID_CONFIG")
    cli_refused(cli(layered_project, "append", "--file", user_path, "forged"))
    assert tree(layered_project) == before


def test_a_layered_project_never_gets_a_new_legacy_file(layered_project):
    before = tree(layered_project)
    project = Project(layered_project)
    refused(lambda: project.write(LEGACY, "# Project Memory\n"), "INVALID_CONFIG")
    refused(lambda: project.create_document(LEGACY), "INVALID_CONFIG")
    cli_refused(cli(layered_project, "write", "--file", LEGACY, stdin=b"# created\n"))
    assert tree(layered_project) == before
    (layered_project / LEGACY).write_text("## Context\n\n- old\n")  # an existing one may still be edited
    assert project.write(LEGACY, "## Context\n\n- old, edited\n").changed


APPENDER = """
import sys
from datetime import date
from core.project import Project
root, worker, count, same = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "same"
project = Project(root)
for k in range(count):
    project.append("the same entry" if same else f"entry {worker}-{k}", today=date(2026, 9, 1))
"""


def append_from_processes(root: Path, count: int, same: bool) -> list[int]:
    """Eight processes append ``count`` entries each to today's daily note; return their exit codes."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [subprocess.Popen([sys.executable, "-c", APPENDER, str(root), str(i), str(count),
                               "same" if same else "distinct"], env=env, stderr=subprocess.PIPE)
             for i in range(8)]
    codes = []
    for proc in procs:
        _out, err = proc.communicate(timeout=180)
        assert b"Traceback" not in err, err.decode()
        codes.append(proc.returncode)
    return codes


def test_eight_processes_append_to_a_new_daily_note_exactly_once_under_one_scaffold(layered_project):
    assert append_from_processes(layered_project, 25, same=False) == [0] * 8
    text = (layered_project / DAILY).read_text()
    assert text.startswith("# Daily Memory 2026-09-01\n\n<!-- Append running observations")
    assert text.count("# Daily Memory") == 1
    for i in range(8):
        for k in range(25):
            assert text.count(f"\nentry {i}-{k}\n") == 1
    assert len(text.splitlines()) == 3 + 200 * 2


def test_eight_processes_appending_the_same_entry_write_it_once(layered_project):
    assert append_from_processes(layered_project, 3, same=True) == [0] * 8
    assert (layered_project / DAILY).read_text().count("the same entry") == 1


@pytest.mark.parametrize("layout", ["seed", "layered"])
def test_duplicates_and_formats_follow_each_layout(project, layered_project, layout):
    root = layered_project if layout == "layered" else project
    if layout == "seed":
        seed(project)
    p = Project(root)
    first = p.append("  use the retry wrapper  ", today=DAY)
    again = p.append("use the retry wrapper", today=DAY)
    inner = p.append("retry wrapper", today=DAY)  # seed 002: a substring of what is there is a duplicate
    assert (first.status, again.status, inner.status) == ("written", "skipped_duplicate", "skipped_duplicate")
    text = (root / first.path).read_text()
    expected = "\nuse the retry wrapper\n" if layout == "layered" else "\n\n<!-- 2026-09-01 -->\nuse the retry wrapper"
    assert text.endswith(expected) and text.count("use the retry wrapper") == 1
    assert again.message.startswith("Memory entry already present (no-op)")


def test_memory_switched_off_refuses_agent_appends_and_touches_nothing(layered_project):
    config = layered_project / ".fusion/config.json"
    data = json.loads(config.read_text())
    data.setdefault("settings", data)["memoryEnabled"] = False
    config.write_text(json.dumps(data))
    before = tree(layered_project)
    with pytest.raises(MemoryDisabledError):
        Project(layered_project).append("an entry", today=DAY)
    cli_refused(cli(layered_project, "append", "an entry"), 1)
    assert tree(layered_project) == before
    assert Project(layered_project).append("forced", force=True, today=DAY).status == "written"


# -- migrate -------------------------------------------------------------------------------------------------
def headings(text: str) -> list[str]:
    """The real ``## `` headings of markdown, as a renderer sees them (not inside fences or comments)."""
    html = markdown.markdown(text, extensions=["fenced_code"])
    return re.findall(r"<h2>(.*?)</h2>", html)


MIGRATE_CASES = {
    "fence": "# Project Memory\n\n## Architecture\n\n- real entry\n\n```md\n## Conventions\n- inside fence\n```\n",
    "tilde": "## Context\n\n~~~\n## Pitfalls\n~~~\n- after the tilde fence\n",
    "comment": "## Context\n\n<!--\n## Pitfalls\n-->\n- after the comment\n",
    "fence-line-present": "## Pitfalls\n\n```\nnew code\n```\n",
    "unclosed": "## Context\n\n```\n## Pitfalls\n- in an unclosed fence\n",
}


@pytest.mark.parametrize("case", list(MIGRATE_CASES))
def test_migration_keeps_headings_inside_code_and_comments_where_they_were(layered_project, case):
    from core.project.migrate import apply_migration, plan_migration

    long_term = layered_project / LONG
    long_term.write_text(long_term.read_text() + "\n```\nexisting code\n```\n")
    (layered_project / LEGACY).write_text(MIGRATE_CASES[case])
    project = Project(layered_project)
    before = headings(long_term.read_text())
    plan = plan_migration(project)
    assert plan is not None and not plan.missing
    assert headings(plan.target_after) == before  # no section appears, none is swallowed by a fence
    apply_migration(project, plan)
    after = long_term.read_text()
    for line in MIGRATE_CASES[case].splitlines():
        if line.strip() and not line.startswith(("# ", "## Architecture", "## Context")) or "```" in line:
            assert line in after.splitlines(), line


@pytest.mark.parametrize("legacy", ["just some text\nand more\n", "<!-- keep: the staging box is shared -->\n",
                                    "# Project Memory\n\nbefore any section\n\n## Context\n\n- in context\n"],
                         ids=["no-sections", "only-comment", "head-and-section"])
def test_migration_moves_text_outside_sections_instead_of_dropping_it(layered_project, legacy):
    from core.project.migrate import apply_migration, plan_migration
    from core.storage.history import versions as history

    (layered_project / LEGACY).write_text(legacy)
    project = Project(layered_project)
    plan = plan_migration(project)
    assert plan is not None and plan.moved > 0
    apply_migration(project, plan)
    after = (layered_project / LONG).read_text()
    for line in legacy.splitlines():
        if line.strip() and not line.startswith(("# ", "## ")):
            assert line in after.splitlines(), line
    assert not (layered_project / LEGACY).exists()
    assert history.list_versions(layered_project, LEGACY)  # the legacy text stays in history


def test_migration_drops_only_the_scaffold_comments(layered_project):
    from core.documents.layout import SEED_SCAFFOLD
    from core.project.migrate import plan_migration

    (layered_project / LEGACY).write_text(SEED_SCAFFOLD + "\n- a real entry\n")
    plan = plan_migration(Project(layered_project))
    assert plan is not None and plan.moved == 1 and "Key architectural patterns" not in plan.target_after


def test_a_legacy_file_too_big_to_fit_changes_nothing(layered_project):
    from core.project.migrate import apply_migration, plan_migration

    (layered_project / LEGACY).write_text("## Context\n\n" + "".join(f"- entry {i} {'x' * 60}\n" for i in range(20_000)))
    before = tree(layered_project)
    project = Project(layered_project)
    refused(lambda: apply_migration(project, plan_migration(project)), "QUOTA_EXCEEDED")
    assert {k: v for k, v in tree(layered_project).items() if not k.startswith(".fusion/memdesk")} == \
        {k: v for k, v in before.items() if not k.startswith(".fusion/memdesk")}


@pytest.mark.parametrize("kind", ["non-utf8", "link-out", "fifo"])
def test_a_hostile_legacy_file_is_refused_by_migrate_with_one_line(layered_project, outside, kind):
    legacy = layered_project / LEGACY
    if kind == "non-utf8":
        legacy.write_bytes(b"## Context\n\n- caf\xe9\n")
    elif kind == "link-out":
        (outside / "secret.md").write_text("## Context\n\n- SECRET FROM OUTSIDE\n")
        legacy.symlink_to(outside / "secret.md")
    else:
        os.mkfifo(legacy)
    before = tree(layered_project)
    result = cli(layered_project, "migrate", "--apply", timeout=30)
    assert b"SECRET" not in result.stdout + result.stderr
    cli_refused(result, (1, 2))
    assert tree(layered_project) == before


def test_migration_into_a_missing_memory_starts_from_the_scaffold(layered_project):
    from core.documents.layout import LONG_TERM_SCAFFOLD
    from core.project.migrate import apply_migration, plan_migration

    (layered_project / LONG).unlink()
    (layered_project / LEGACY).write_text("## Context\n\n- from the legacy file\n")
    project = Project(layered_project)
    apply_migration(project, plan_migration(project))
    assert (layered_project / LONG).read_text() == LONG_TERM_SCAFFOLD + "\n- from the legacy file\n"


@pytest.mark.parametrize("changed", [LONG, LEGACY])
def test_a_change_between_plan_and_apply_is_a_conflict_and_changes_nothing(layered_project, changed):
    from core.project.migrate import apply_migration, plan_migration

    (layered_project / LEGACY).write_text("## Context\n\n- legacy entry\n")
    project = Project(layered_project)
    plan = plan_migration(project)
    with open(layered_project / changed, "a") as fh:
        fh.write("\n- an agent wrote this meanwhile\n")
    before = tree(layered_project)
    refused(lambda: apply_migration(project, plan), "CONFLICT")
    assert {k: v for k, v in tree(layered_project).items() if not k.startswith(".fusion/memdesk")} == \
        {k: v for k, v in before.items() if not k.startswith(".fusion/memdesk")}


# -- Project.write -------------------------------------------------------------------------------------------
def test_stale_expected_hashes_are_conflicts_and_change_nothing(layered_project):
    project = Project(layered_project)
    current = project.read()
    stale = fileio.content_hash(current)
    (layered_project / LONG).write_text(current + "\n- an agent's append\n")
    before = (layered_project / LONG).read_bytes()
    for expected in [stale, "0" * 64, "not-a-hash", fileio.content_hash("")]:
        refused(lambda expected=expected: project.write(None, current + "mine\n", expected_hash=expected),
                "CONFLICT")
    assert (layered_project / LONG).read_bytes() == before
    # A document created by someone else after the caller saw it missing.
    missing_hash = fileio.content_hash("")
    (layered_project / ".fusion/memory/2026-09-02.md").write_text("# theirs\n")
    refused(lambda: project.write("2026-09-02.md", "# mine\n", expected_hash=missing_hash), "CONFLICT")
    assert (layered_project / ".fusion/memory/2026-09-02.md").read_text() == "# theirs\n"


def test_racing_writers_with_the_same_expected_hash_land_exactly_one(layered_project):
    project = Project(layered_project)
    base = project.read()
    expected = fileio.content_hash(base)
    results: list[str] = []

    def write(i: int) -> None:
        try:
            Project(layered_project).write(None, base + f"\n- writer {i}\n", expected_hash=expected)
            results.append("ok")
        except MemoryBackendError as exc:
            results.append(exc.code)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(results) == ["CONFLICT"] * 7 + ["ok"]
    assert (layered_project / LONG).read_text().count("- writer ") == 1


@pytest.mark.parametrize("layout, other", [("layered", ".fusion/memory-insights.md"),
                                           ("layered", ".fusion/memory-audit.md"),
                                           ("seed", ".fusion/memory/MEMORY.md"), ("seed", "2026-09-01.md"),
                                           ("seed", "agent-memory/reviewer/MEMORY.md")])
def test_a_document_of_the_other_layout_is_refused(project, layered_project, layout, other):
    root = layered_project if layout == "layered" else project
    if layout == "seed":
        seed(project)
    before = tree(root)
    refused(lambda: Project(root).write(other, "# other layout\n"), "NOT_FOUND")
    assert tree(root) == before


def test_readonly_refuses_every_write_path_even_one_that_changes_nothing(layered_project):
    from core.project.migrate import apply_migration, plan_migration
    from core.storage.history import versions as history

    project = Project(layered_project)
    project.write(None, project.read() + "\n- a version for history\n")
    version = history.list_versions(layered_project, LONG)[0].id
    (layered_project / LEGACY).write_text("## Context\n\n- legacy\n")
    config = layered_project / ".fusion/config.json"
    data = json.loads(config.read_text())
    data.setdefault("settings", data)["memoryBackend"] = "readonly"
    config.write_text(json.dumps(data))
    before = tree(layered_project)
    ro = Project(layered_project)
    current = ro.read()
    attempts: list[Callable[[], object]] = [
        lambda: ro.write(None, current), lambda: ro.write(None, current + "x\n"),
        lambda: ro.write_insights("# Memory Insights\n"), lambda: ro.append("entry", today=DAY),
        lambda: ro.append(current.splitlines()[0]), lambda: ro.create_document("DREAMS.md"),
        lambda: ro.create_document("2026-09-03.md"), lambda: ro.restore(version),
        lambda: apply_migration(ro, plan_migration(ro)),
    ]
    for attempt in attempts:
        refused(attempt, "READ_ONLY")
    assert ro.writable() is not None
    for args in (["write"], ["append", "entry"], ["migrate", "--apply"]):
        cli_refused(cli(layered_project, *args, stdin=current.encode()))
    assert tree(layered_project) == before
