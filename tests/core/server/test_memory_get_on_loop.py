"""Issue 23, GET /api/memory p95 ≤ 5 ms: an unchanged file-backed memory is answered on the event loop (one read of
its bytes and a compare, the body kept for them), with no thread-pool hop; a changed one still goes through the pool
(where the change is noticed and the new body made). Every read stays on record and every scope is enforced."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from core.server import noticing, service
from core.server.memo import FactsMemo, TextFacts
from core.storage import readlog
from core.storage.fileio import content_hash
from core.storage.history import versions as history
from core.storage.history import worker

MEMORY = ".fusion/memory.md"


def _spy(monkeypatch) -> list[tuple[str, str]]:
    """Which service step ran in which thread, in order."""
    calls: list[tuple[str, str]] = []
    for name in ("read_unchanged", "finish_read", "read_file"):
        real = getattr(service, name)

        def wrapped(*args, _real=real, _name=name, **kw):
            calls.append((_name, threading.current_thread().name))
            return _real(*args, **kw)

        monkeypatch.setattr(service, name, wrapped)
    return calls


def test_an_unchanged_memory_is_answered_on_the_loop_and_a_changed_one_in_the_pool(serve, tokens, real_project,
                                                                                    monkeypatch):
    calls = _spy(monkeypatch)
    srv = serve(real_project)
    loop_thread = srv.thread.name
    c = srv.client(tokens.create("reader", scope="read"), {"User-Agent": "agent/1"})
    disk = real_project / MEMORY
    text = disk.read_text(encoding="utf-8")

    first = c.get("/api/memory")
    assert first.status_code == 200 and first.json() == {"content": text, "path": MEMORY, "hash": content_hash(text)}
    # First serve in this process: its bytes read on the loop, then read and worked out (hash, body) in the pool.
    assert [n for n, _ in calls] == ["read_unchanged", "read_file", "finish_read"]
    assert calls[0][1] == loop_thread and calls[1][1] != loop_thread

    calls.clear()
    again = [c.get("/api/memory") for _ in range(3)]
    assert all(r.status_code == 200 and r.content == first.content for r in again)
    assert calls == [("read_unchanged", loop_thread)] * 3  # no hop: nothing ran in the pool

    # Another writer appends: the next read sees it at once, still on the loop (only the tail is worked out).
    calls.clear()
    with disk.open("a", encoding="utf-8") as fh:
        fh.write("\n- written by another process")
    changed = c.get("/api/memory")
    now = disk.read_text(encoding="utf-8")
    assert changed.json()["content"] == now and changed.json()["hash"] == content_hash(now)
    assert calls == [("read_unchanged", loop_thread)]
    assert c.get("/api/memory").content == changed.content and len(calls) == 2 and "finish_read" not in dict(calls)
    # The outside append is noticed: history keeps it as another program's append.
    noticing.flush()
    worker.settled()
    assert any("written by another process" in e.text and e.author == "program"
               for e in history.list_events(real_project, MEMORY))

    # A rewrite (not an append) is worked out in the pool: a whole MiB is hashed there, not on the loop.
    calls.clear()
    disk.write_text("# Rewritten\n", encoding="utf-8")
    assert c.get("/api/memory").json()["content"] == "# Rewritten\n"
    assert [n for n, _ in calls] == ["read_unchanged", "read_file", "finish_read"] and calls[1][1] != loop_thread
    disk.write_text(now, encoding="utf-8")
    assert c.get("/api/memory").content == changed.content

    # Every read is on record, the loop's too, with the hash of the text it served.
    rows = [e for e in readlog.query(root=real_project) if e.via == "http"]
    assert len(rows) == 8
    assert [e.hash for e in rows] == ([content_hash(now), content_hash("# Rewritten\n")] + [content_hash(now)] * 2
                                      + [content_hash(text)] * 4)
    assert {(e.token, e.client, e.path, e.start_line) for e in rows} == {("reader", "agent/1", MEMORY, 1)}
    assert rows[0].end_line == rows[0].total_lines == now.count("\n") + 1 and rows[0].size == len(now.encode())


def test_scopes_hold_on_the_loop(serve, tokens, real_project):
    srv = serve(real_project)
    ok = srv.client(tokens.create("reader", scope="read"))
    assert ok.get("/api/memory").status_code == 200 and ok.get("/api/memory").status_code == 200  # warm: loop path
    narrow = srv.client(tokens.create("narrow", scope="read", paths=[".fusion/memory/MEMORY.md"]))
    r = narrow.get("/api/memory")
    assert r.status_code == 403 and r.json()["code"] == "SCOPE" and "content" not in r.json()
    other = srv.client(tokens.create("other-project", projects=["elsewhere"]))
    assert other.get("/api/memory").status_code == 403
    assert srv.client("not-a-token").get("/api/memory").status_code == 401


def test_an_emptied_or_missing_memory_on_the_loop(serve, tokens, real_project):
    srv = serve(real_project)
    c = srv.client(tokens.create("reader", scope="read"))
    disk = real_project / MEMORY
    c.get("/api/memory")
    disk.write_text("", encoding="utf-8")
    assert c.get("/api/memory").json() == {"content": "", "path": MEMORY, "hash": content_hash("")}
    assert c.get("/api/memory").json()["content"] == ""
    disk.unlink()
    assert c.get("/api/memory").json()["content"] == ""
    disk.write_text("back\n", encoding="utf-8")
    assert json.loads(c.get("/api/memory").content)["content"] == "back\n"


def test_same_bytes_answers_only_for_the_very_bytes(tmp_path: Path):
    memo = FactsMemo()
    assert memo.same_bytes("k", b"abc") is None  # nothing remembered
    facts = memo.facts("k", "abc")
    equal = b"".join([b"ab", b"c"])  # equal, another object
    assert memo.same_bytes("k", equal) is facts and facts.data is equal  # adopted: next time by identity
    assert memo.same_bytes("k", b"abcd") is None and memo.facts("k", "abc") is facts  # grown: not answered, nothing changed
    assert memo.same_bytes("k", b"xbc") is None
    assert isinstance(facts, TextFacts) and facts.hash == content_hash("abc")


def test_grown_literals_stay_exact_whether_or_not_a_body_joined_them():
    """After an append the literal is kept as views (the old literal's and the tail's) and joined into the
    response body; chained appends with and without a body between must still give the exact literal."""
    import hashlib

    text = 'first "line" é\n'
    facts = TextFacts.of(text)
    for i, tail in enumerate(['second \\ line\n', 'third\t"x"\n', '', 'fourth ✓\n', 'fifth\n']):
        if not tail:
            continue
        text += tail
        grown = facts.grown(text)
        assert grown is not None and len(grown.json_parts()) >= 2  # not joined yet
        if i % 2:  # a body joins the parts and the facts adopt a view into it
            parts = grown.json_parts()
            body = b"".join((b'{"content":', *parts, b"}"))
            grown.adopt_json(memoryview(body)[11:11 + sum(len(p) for p in parts)])
        literal = b"".join(grown.json_parts())  # not .json: that would join them, and the chain is what is tested
        assert literal == json.dumps(text, ensure_ascii=False).encode("utf-8") and json.loads(literal) == text
        assert grown.hash == hashlib.sha256(text.encode()).hexdigest() and grown.size == len(text.encode())
        facts = grown
    assert bytes(facts.json) == json.dumps(text, ensure_ascii=False).encode("utf-8")


def test_grow_bytes_answers_only_an_append_and_hands_over_the_facts_before():
    memo = FactsMemo()
    seen: list[tuple[TextFacts, TextFacts]] = []

    def changed(before: TextFacts, after: TextFacts) -> None:
        seen.append((before, after))

    assert memo.grow_bytes("k", b"abc\n", changed) is None and seen == []  # nothing remembered yet
    first = memo.facts("k", "abc\n")
    assert memo.grow_bytes("k", b"abc\n", changed) is None  # the same bytes: not a growth
    assert memo.grow_bytes("k", b"xbc\nmore\n", changed) is None and seen == []  # a rewrite: left to the pool
    assert memo.grow_bytes("k", b"abc\n\xff", changed) is None and seen == []  # a tail not UTF-8: left to the pool
    grown = memo.grow_bytes("k", b"abc\nmore\n", changed)
    assert grown is not None and seen == [(first, grown)] and grown.hash == content_hash("abc\nmore\n")
    assert grown.lines == 3 and grown.text == "abc\nmore\n"
    assert memo.same_bytes("k", b"abc\nmore\n") is grown  # remembered: the next identical read reuses it


def test_a_grown_literal_is_sent_in_its_pieces_and_they_stay_few(serve, tokens, real_project):
    """After each of 40 outside appends the read is answered from the literal's pieces (the old literal and the
    tails, sent without being joined), byte for byte what the disk holds; the pieces are joined now and then, so
    a memory appended to all day is not sent in thousands of pieces."""
    from core.server.memo import MAX_PARTS

    srv = serve(real_project)
    c = srv.client(tokens.create("reader", scope="read"))
    disk = real_project / MEMORY
    c.get("/api/memory").raise_for_status()
    key = (str(real_project.resolve()), MEMORY)
    most = 0
    for i in range(40):
        with disk.open("a", encoding="utf-8") as fh:
            fh.write(f"\n- outside append {i}: “quoted” \"x\" \\ é")
        r = c.get("/api/memory")
        now = disk.read_text(encoding="utf-8")
        assert r.status_code == 200 and r.json() == {"content": now, "path": MEMORY, "hash": content_hash(now)}
        assert int(r.headers["content-length"]) == len(r.content)
        facts = service._facts_memo._facts(key)
        assert facts is not None and facts.data == disk.read_bytes()
        most = max(most, len(facts.json_parts()))
    assert 2 <= most <= MAX_PARTS
