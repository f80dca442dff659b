"""GET answers after every kind of change on disk: content, hash, size and totalLines always those of the bytes
on disk now (the facts memo grows by the tail only when the text only grew)."""

from __future__ import annotations

import hashlib
import os
import random
import threading
from pathlib import Path

MEMORY = ".fusion/memory.md"
OTHER = ".fusion/memory-archive.md"


def _check(c, root: Path, rel: str, route: str = "file") -> None:  # noqa: ANN001
    data = (root / rel).read_bytes()
    text = data.decode("utf-8")
    if route == "file":
        r = c.get("/api/memory/file", params={"path": rel})
    else:
        r = c.get("/api/memory")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["content"] == text
    assert body["hash"] == hashlib.sha256(data).hexdigest()
    if route == "file":
        assert body["size"] == len(data)
        assert body["totalLines"] == text.count("\n") + 1


PIECES = ["a", "é", "😀", "\r\n", "\n", "\x00", "\x1f", '"', "\\", "\u2028", "</script>", "\t", "\ud7ff", "\U0010ffff"]


def test_reads_after_random_edits_always_match_the_bytes_on_disk(serve, token, project: Path, tmp_path: Path):
    other = tmp_path / "other"
    other.mkdir()
    for root in (project, other):
        (root / ".fusion").mkdir(parents=True)
        (root / MEMORY).write_text("# Project Memory\n", encoding="utf-8", newline="")
        (root / OTHER).write_text("# Notes\n", encoding="utf-8", newline="")
    srv = serve(project, other)
    c = srv.client(token)
    rng = random.Random(4711)
    for step in range(400):
        root = rng.choice((project, other))
        rel = rng.choice((MEMORY, OTHER))
        p = root / rel
        text = p.read_bytes().decode("utf-8")
        what = rng.randrange(6)
        add = "".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 6)))
        if what == 0:  # grow
            new = text + add
        elif what == 1 and text:  # same length, one character changed
            i = rng.randrange(len(text))
            new = text[:i] + ("b" if text[i] != "b" else "c") + text[i + 1:]
        elif what == 2:  # shrink then grow again to a different text
            new = text[: max(0, len(text) - 3)] + add
        elif what == 3:  # replaced by a different file that starts with the old text
            new = text + add
            tmp = p.with_name(p.name + ".new")
            tmp.write_bytes(new.encode("utf-8"))
            os.replace(tmp, p)
            new = None
        elif what == 4:  # shrink
            new = text[: len(text) // 2]
        else:
            new = text
        if new is not None:
            p.write_bytes(new.encode("utf-8"))
        name = "project" if root is project else "other"
        cp = srv.client(token, headers={}) if step % 50 == 0 else c
        for route in ("file", "memory") if rel == MEMORY else ("file",):
            data = p.read_bytes()
            if route == "file":
                r = cp.get("/api/memory/file", params={"path": rel, "project": name})
            else:
                r = cp.get("/api/memory", params={"project": name})
            assert r.status_code == 200, r.text
            body = r.json()
            assert body["content"] == data.decode("utf-8"), (step, what)
            assert body["hash"] == hashlib.sha256(data).hexdigest(), (step, what)
            if route == "file":
                assert body["size"] == len(data) and body["totalLines"] == data.decode().count("\n") + 1


def test_concurrent_reads_while_the_file_grows_and_shrinks(serve, token, project: Path):
    (project / ".fusion").mkdir()
    p = project / MEMORY
    p.write_text("# Project Memory\n", encoding="utf-8")
    srv = serve(project)
    stop = threading.Event()
    errors: list[str] = []
    seen: set[str] = set()
    texts = ["# Project Memory\n" + "é😀\r\n" * i for i in range(30)]
    for t in texts:
        seen.add(hashlib.sha256(t.encode()).hexdigest())

    def reader() -> None:
        c = srv.client(token)
        while not stop.is_set():
            body = c.get("/api/memory/file", params={"path": MEMORY}).json()
            data = body["content"].encode("utf-8")
            if (body["hash"] != hashlib.sha256(data).hexdigest() or body["size"] != len(data)
                    or body["totalLines"] != body["content"].count("\n") + 1 or body["hash"] not in seen):
                errors.append(repr(body)[:300])

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    rng = random.Random(5)
    try:
        for _ in range(300):
            t = rng.choice(texts)
            tmp = p.with_name("m.new")
            tmp.write_bytes(t.encode("utf-8"))
            os.replace(tmp, p)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert errors == []
    _check(srv.client(token), project, MEMORY)
