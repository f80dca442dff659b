"""GET /api/memory answered from bytes (``service.read_unchanged``: the bytes last served compared, an append's tail
decoded alone) against the bytes on disk: every answer, after every kind of outside change, is the one a fresh read
of the file gives (content, hash, size, lines, or the same refusal), and what was served stays in history."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from core.server import noticing
from core.storage import readlog
from core.storage.history import worker

MEMORY = ".fusion/memory.md"


def _fresh(disk: Path) -> tuple[int, dict]:
    """What a read of the file as it is now must answer: 200 and its text, or a refusal."""
    try:
        data = disk.read_bytes()
    except FileNotFoundError:
        data = b""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return 0, {}
    return 200, {"content": text, "path": MEMORY, "hash": hashlib.sha256(data).hexdigest()}


def _check(c, disk: Path, step: str) -> None:
    status, want = _fresh(disk)
    r = c.get("/api/memory")
    if status == 200:
        assert r.status_code == 200, (step, r.text[:300])
        assert r.json() == want, step
        f = c.get("/api/memory/file", params={"path": MEMORY})
        if not disk.exists():  # the memory is "" when missing; the named document is not found
            assert f.status_code == 404 and f.json()["code"] == "NOT_FOUND", step
            return
        assert f.status_code == 200, (step, f.text[:300])
        data = want["content"].encode("utf-8")
        got = f.json()
        assert (got["content"], got["hash"], got["size"], got["totalLines"]) == (
            want["content"], want["hash"], len(data), want["content"].count("\n") + 1), step
    else:
        assert r.status_code >= 400, (step, r.status_code, r.text[:200])
        assert "content" not in r.json(), step


def _append(disk: Path, data: bytes) -> None:
    with disk.open("ab") as fh:
        fh.write(data)


def test_every_outside_change_is_answered_as_a_fresh_read_would(serve, tokens, real_project, tmp_path):
    srv = serve(real_project)
    c = srv.client(tokens.create("reader", scope="read"), {"User-Agent": "agent/1"})
    disk = real_project / MEMORY
    outside = tmp_path / "outside.md"
    steps: list[tuple[str, object]] = [
        ("first", None),
        ("again", None),
        ("plain append", lambda: _append(disk, b"\n- plain\n")),
        ("half of é", lambda: _append(disk, b"caf\xc3")),
        ("rest of é", lambda: _append(disk, b"\xa9 ok\n")),
        ("emoji 1/3", lambda: _append(disk, "🦊".encode()[:1])),
        ("emoji 2/3", lambda: _append(disk, "🦊".encode()[1:3])),
        ("emoji 3/3", lambda: _append(disk, "🦊".encode()[3:] + b"\n")),
        ("tail starts mid-character", lambda: _append(disk, b"\xa9abc\n")),
        ("cut back", lambda: os.truncate(disk, disk.stat().st_size - 5)),
        ("not UTF-8 tail", lambda: _append(disk, b"\xff\xfe\n")),
        ("cut back again", lambda: os.truncate(disk, disk.stat().st_size - 3)),
        ("same size other bytes", lambda: disk.write_bytes(disk.read_bytes()[:-2] + b"Z\n")),
        ("shorter then longer, other prefix",
         lambda: disk.write_bytes(b"X" + disk.read_bytes()[1:] + b"- longer\n")),
        ("CRLF append", lambda: _append(disk, b"- windows\r\n- line\r\n")),
        ("BOM rewrite", lambda: disk.write_bytes(b"\xef\xbb\xbf" + disk.read_bytes())),
        ("after BOM append", lambda: _append(disk, b"- after bom\n")),
        ("lone CR", lambda: _append(disk, b"\r")),
        ("emptied", lambda: disk.write_bytes(b"")),
        ("grown from empty", lambda: _append(disk, b"# Again\n")),
        ("deleted", lambda: disk.unlink()),
        ("recreated longer", lambda: disk.write_bytes(b"# Again\n- and more\n")),
        ("control and quotes", lambda: _append(disk, b'"q" \\ \x01\x1f \t</script>\xe2\x80\xa8\n')),
    ]
    for step, change in steps:
        if change is not None:
            change()
        _check(c, disk, step)

    # A symbolic link to a file outside the project, between two reads: refused, whatever it holds.
    before = disk.read_bytes()
    outside.write_bytes(before + b"- from outside the project\n")
    disk.unlink()
    disk.symlink_to(outside)
    for _ in range(2):
        r = c.get("/api/memory")
        assert r.status_code >= 400 and "from outside" not in r.text and "content" not in r.json()
    outside.write_bytes(before)  # exactly the bytes last served: still refused
    r = c.get("/api/memory")
    assert r.status_code >= 400 and "content" not in r.json()
    disk.unlink()
    disk.write_bytes(before + b"- back\n")
    _check(c, disk, "back from the link")

    # Every read served is still to be had: the document now, or history (another program's changes noticed).
    noticing.flush()
    worker.settled()
    from core.project.model import open_project

    project = open_project(real_project)
    rows = [e for e in readlog.query(root=real_project) if e.via == "http" and e.path == MEMORY]
    assert rows
    lost = [e for e in rows if e.size and readlog.version_read(project, e) is None]
    assert not lost, [(e.hash[:8], e.size) for e in lost]


def test_one_run_of_appends_stays_one_whichever_read_sees_each(serve, tokens, real_project):
    """Another program appends the same line twice; the first append is seen by GET /api/memory (from bytes), the
    second by a read of the named document (from text). Both reads belong to one run of appends: it is recorded
    once, whole, with both lines (split in two, the second line looked like the first, memdesk's own, and was
    dropped from history)."""
    from core.storage.history import versions as history

    srv = serve(real_project)
    c = srv.client(tokens.create("reader", scope="read"))
    disk = real_project / MEMORY
    assert c.get("/api/memory").status_code == 200 and c.get("/api/memory").status_code == 200
    line = b"- lease renewed by the watchdog\n"
    _append(disk, line)
    assert c.get("/api/memory").json()["content"].endswith(line.decode())
    _append(disk, line)
    assert c.get("/api/memory/file", params={"path": MEMORY}).json()["content"].endswith(line.decode() * 2)
    _append(disk, line)
    assert c.get("/api/memory").json()["content"].endswith(line.decode() * 3)
    noticing.flush()
    worker.settled()
    kept = "".join(e.text for e in history.list_events(real_project, MEMORY) if e.author == "program")
    assert kept.count(line.decode()) == 3, kept


def test_reads_from_bytes_and_text_racing_appends_and_the_noticer(serve, tokens, real_project, monkeypatch):
    """Hammered: one program appends while clients read the memory from bytes (GET /api/memory) and from text (the
    named document) and the noticer joins the facts' texts on its thread every few milliseconds. Every answer is a
    text the file held (its hash its own), and history keeps every appended line exactly once: two reads that saw
    the same append at once notice it once (FactsMemo._change), and a read in the pool that ends after a newer read
    on the loop is not taken for a rewrite back to its older text (FactsMemo.ticket); both recorded lines twice or
    not at all, before as well as after 43bc3e5."""
    import threading
    import time

    monkeypatch.setattr(noticing, "APPEND_LINGER_S", 0.005)
    from core.storage.history import versions as history

    srv = serve(real_project)
    token = tokens.create("reader", scope="read")
    disk = real_project / MEMORY
    start = disk.read_text(encoding="utf-8")
    assert srv.client(token).get("/api/memory").status_code == 200
    stop = threading.Event()
    answers: list[dict] = []
    errors: list[str] = []

    def reader(path: str | None) -> None:
        c = srv.client(token)
        while not stop.is_set():
            r = c.get("/api/memory/file", params={"path": path}) if path else c.get("/api/memory")
            if r.status_code != 200:
                errors.append(r.text[:200])
                continue
            answers.append(r.json())

    threads = [threading.Thread(target=reader, args=(p,)) for p in (None, None, MEMORY)]
    for t in threads:
        t.start()
    lines = [f"- note {i} ✓ ünïcode\n".encode() for i in range(300)]
    try:
        for line in lines:
            _append(disk, line)
            time.sleep(0.002)  # the readers read between appends, and the noticer's thread joins between reads
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    final = disk.read_text(encoding="utf-8")
    assert final == start + b"".join(lines).decode()
    assert not errors and len(answers) > 30
    for a in answers:
        assert final.startswith(a["content"]) and a["hash"] == hashlib.sha256(a["content"].encode()).hexdigest()
    c = srv.client(token)
    assert c.get("/api/memory").json()["content"] == final
    noticing.flush()
    worker.settled()
    kept = "".join(e.text for e in reversed(history.list_events(real_project, MEMORY)) if e.author == "program")
    counted = {line: kept.count(line.decode()) for line in lines}
    assert all(n == 1 for n in counted.values()), [(k, n) for k, n in counted.items() if n != 1][:3]


def test_a_literal_adopted_by_another_thread_while_an_append_is_worked_out(monkeypatch):
    """The facts of a memory are shared: a read in the thread pool may join their literal into a body and adopt it
    (``adopt_json``) while the event loop grows them by an append's tail. Grown across that moment, the literal must
    still be the old one and the tail's, not the old pieces' head followed by the whole old literal again."""
    from core.server.memo import TextFacts

    text = 'first "line" é\n'
    facts = TextFacts.of(text).grown_bytes((text + "second\n").encode())
    assert facts is not None and len(facts.json_parts()) == 2  # in pieces, as a served append leaves them
    real = TextFacts.json_parts
    raced: list[TextFacts] = []

    def with_another_thread_adopting(self):
        got = real(self)
        if self is facts and not raced:  # the pool's read of the same facts adopts their joined literal now
            raced.append(self)
            self.adopt_json(memoryview(b"".join(got)))
        return got

    monkeypatch.setattr(TextFacts, "json_parts", with_another_thread_adopting)
    whole = text + "second\nthird ✓\n"
    grown = facts.grown_bytes(whole.encode())
    assert raced and grown is not None
    monkeypatch.undo()
    assert bytes(grown.json) == json.dumps(whole, ensure_ascii=False).encode("utf-8")


def test_a_read_that_ends_after_a_newer_one_is_served_as_read_and_not_noticed():
    """A read in the pool takes its ticket and reads; meanwhile the loop reads the file grown further and remembers
    it; then the pool's read ends. Its text is older, not a rewrite back: it is answered as read, nothing is noticed
    and the newer facts stay remembered. A later read of a shorter text (a real truncation) is a change."""
    from core.server.memo import FactsMemo

    memo = FactsMemo()
    seen: list[object] = []
    memo.facts("k", "a\n", seen.append)
    assert seen == [None]  # a first serve
    older, newer = memo.ticket(), memo.ticket()
    grown = memo.grow_bytes("k", b"a\nb\nc\n", lambda before, after: seen.append(after.text), newer)
    late = memo.facts("k", "a\nb\n", seen.append, older)
    assert late.hash == hashlib.sha256(b"a\nb\n").hexdigest() and late.text == "a\nb\n"
    assert seen == [None, "a\nb\nc\n"] and memo.same_bytes("k", b"a\nb\nc\n") is grown
    cut = memo.facts("k", "a\nb\n", seen.append)  # read now: the file was cut back
    assert seen[-1] == "a\nb\nc\n" and memo.same_bytes("k", b"a\nb\n") is cut


def test_the_same_line_appended_again_and_again_is_kept_each_time_whichever_reader_sees_it(serve, tokens,
                                                                                          real_project):
    """Another program appends one same line six times; after each, a different reader sees it: MCP memory_get over
    a real streamable-HTTP session, GET /api/memory (from bytes), the named document (from text). One run of
    appends: history keeps the line six times, never fewer (a run split in two took a repeated line for memdesk's
    own), never more (a change noticed by two readers)."""
    from core.storage.history import versions as history
    from tests.core.server.test_server_mcp import run_http

    srv = serve(real_project)
    token = tokens.create("agent-a")
    c = srv.client(token)
    disk = real_project / MEMORY
    line = "- the build cache must be cleared before a release\n"
    assert c.get("/api/memory").status_code == 200

    async def body(s):
        for i in range(6):
            _append(disk, line.encode())
            which = i % 3
            if which == 0:
                got = await s.call_tool("memory_get", {"lineCount": 400})
                assert not got.is_error and got.structured_content["totalLines"] == disk.read_text().count("\n") + 1
            elif which == 1:
                assert c.get("/api/memory").json()["content"].endswith(line * (i + 1))
            else:
                assert c.get("/api/memory/file", params={"path": MEMORY}).json()["content"].endswith(line * (i + 1))

    run_http(srv.url, token, body)
    noticing.flush()
    worker.settled()
    kept = "".join(e.text for e in history.list_events(real_project, MEMORY) if e.author == "program")
    assert kept.count(line) == 6, kept
