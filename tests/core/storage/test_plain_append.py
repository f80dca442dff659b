"""Appends at O(entry) (issue 19, items 4 and 7): one resolve, one lock, one read, and no duplicate ever missed.

The real agent memory is repeated to 1 MB with dated entries; the text ``core.storage.plain_append`` keeps
between appends must never hide what another program did to the file meanwhile.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.entries import append_memory_entry
from core.storage import fileio, plain_append

REAL = Path(__file__).resolve().parents[2] / "data" / "fusion-real" / ".fusion" / "memory.md"
REL = ".fusion/memory.md"


def dated_memory(size: int = 1_000_000) -> tuple[str, list[str]]:
    """The real memory, then dated entries made of its own lines up to ``size`` bytes; and the entries' texts."""
    real = REAL.read_text(encoding="utf-8")
    lines = [ln for ln in real.splitlines() if len(ln) > 60]
    parts, entries, total, i = [real], [], len(real.encode()), 0
    while True:
        body = f"entry {i}: {lines[i % len(lines)]} / {lines[(i * 7) % len(lines)]}"
        chunk = f"\n\n<!-- 2026-{1 + i // 28 % 12:02d}-{1 + i % 28:02d} -->\n{body}"
        if total + len(chunk.encode()) > size:
            break
        parts.append(chunk)
        entries.append(body)
        total += len(chunk.encode())
        i += 1
    return "".join(parts), entries


@pytest.fixture
def big(tmp_path: Path) -> tuple[Path, list[str]]:
    root = tmp_path / "big"
    (root / ".fusion").mkdir(parents=True)
    text, entries = dated_memory()
    (root / REL).write_text(text, encoding="utf-8")
    plain_append.forget()
    # A first append: from here on the process keeps the document's text.
    assert append_memory_entry(root, "a first entry, so the text is kept 8812", max_lines=0).status == "written"
    return root, entries


def disk(root: Path) -> bytes:
    return (root / REL).read_bytes()


def later() -> None:
    """Let the file system's clock tick, as it does between a person's or an agent's writes."""
    time.sleep(0.02)


@pytest.mark.parametrize("which", ["first", "middle", "last"])
def test_a_duplicate_of_any_entry_of_a_1mb_memory_is_skipped(big, which: str):  # max_lines=0: no rotation
    root, entries = big
    text = {"first": entries[0], "middle": entries[len(entries) // 2], "last": entries[-1]}[which]
    before = disk(root)
    assert len(before) > 990_000
    result = append_memory_entry(root, f"  {text}\n", max_lines=0)
    assert result.status == "skipped_duplicate"
    assert disk(root) == before
    # And what this process just appended, too.
    assert append_memory_entry(root, "a first entry, so the text is kept 8812", max_lines=0).status == \
        "skipped_duplicate"
    assert disk(root) == before


def test_an_agents_append_meanwhile_is_seen(big):
    root, _ = big
    later()
    line = "agent line appended with >> by another program 5521"
    subprocess.run(["sh", "-c", f"printf '\\n%s\\n' '{line}' >> {REL}"], cwd=root, check=True)
    before = disk(root)
    assert append_memory_entry(root, line, max_lines=0).status == "skipped_duplicate"
    assert disk(root) == before
    # The next append goes after the agent's line, which stays whole.
    assert append_memory_entry(root, "after the agent 5522", max_lines=0).status == "written"
    assert disk(root).startswith(before) and disk(root).endswith(b"\nafter the agent 5522")


def test_an_edit_in_place_of_the_same_size_is_seen(big):
    root, entries = big
    later()
    middle = entries[len(entries) // 2]
    new = ("X" * len(middle.encode()))
    code = ("import sys; p = sys.argv[1]; old, new = sys.argv[2].encode(), sys.argv[3].encode(); "
            "f = open(p, 'r+b'); data = f.read(); i = data.index(old); f.seek(i); f.write(new); f.close()")
    size = (root / REL).stat().st_size
    subprocess.run([sys.executable, "-c", code, str(root / REL), middle, new], check=True)
    assert (root / REL).stat().st_size == size  # same size, same inode: only the times tell
    before = disk(root)
    assert append_memory_entry(root, new, max_lines=0).status == "skipped_duplicate"
    assert disk(root) == before
    # The text edited away is no longer there: appending it writes it.
    assert append_memory_entry(root, middle, max_lines=0).status == "written"
    assert disk(root).endswith(middle.encode())


def test_an_editors_save_over_the_file_is_seen(big):
    root, entries = big
    later()
    replaced = "# Memory\n\nrewritten by an editor 7731\n"
    tmp = root / ".fusion" / "memory.md.tmp"
    tmp.write_text(replaced, encoding="utf-8")
    os.replace(tmp, root / REL)  # a new inode, as editors save
    assert append_memory_entry(root, "rewritten by an editor 7731", max_lines=0).status == "skipped_duplicate"
    assert append_memory_entry(root, entries[-1], max_lines=0).status == "written"
    assert disk(root).startswith(replaced.encode()) and disk(root).endswith(entries[-1].encode())


def test_the_firewall_screens_against_what_is_on_disk(big, tmp_path, monkeypatch):
    # An entry close to one another program appended is flagged against it, so the screen saw the new bytes.
    monkeypatch.setenv("MEMDESK_CONFIG_DIR", str(tmp_path / "config"))
    root, _ = big
    later()
    agent = "Retry the webhook delivery three times with exponential backoff before giving up on task 9911"
    subprocess.run(["sh", "-c", f"printf '\\n\\n%s' '{agent}' >> {REL}"], cwd=root, check=True)
    from core.project import open_project

    outcome = open_project(root).append(agent.replace("three", "3"), max_lines=0, force=True)
    assert any(f["kind"] in ("near-duplicate", "contradiction") and agent in f["message"] for f in outcome.flags), \
        outcome


def _count_io(monkeypatch, target: Path) -> tuple[list[Path], list[str], list[int]]:
    """From now on, count the resolves of ``target``, the file locks taken (by path) and the reads of ``target``."""
    resolved: list[Path] = []
    real_resolve = Path.resolve

    def counting_resolve(self, *a, **k):
        out = real_resolve(self, *a, **k)
        if out == target:
            resolved.append(out)
        return out

    from core.storage import safepath

    real_resolved = safepath._resolved  # the confinement resolves on strings (os.path.realpath), not Path.resolve

    def counting_resolved(path: str) -> str:
        out = real_resolved(path)
        if out == str(target):
            resolved.append(Path(out))
        return out

    locks: list[str] = []
    real_lock = fileio.file_lock

    def counting_lock(root_, rel, *a, **k):
        locks.append(rel)
        return real_lock(root_, rel, *a, **k)

    reads: list[int] = []
    real_read = fileio.read_bytes

    def counting_read(path, *a, **k):
        if os.path.realpath(path) == str(target):
            reads.append(1)
        return real_read(path, *a, **k)

    monkeypatch.setattr(Path, "resolve", counting_resolve)
    monkeypatch.setattr(safepath, "_resolved", counting_resolved)
    monkeypatch.setattr(fileio, "file_lock", counting_lock)
    monkeypatch.setattr(fileio, "read_bytes", counting_read)
    return resolved, locks, reads


def test_an_append_resolves_locks_and_reads_the_document_once(big, monkeypatch):
    root, _ = big
    target = (root / REL).resolve()
    resolved, locks, reads = _count_io(monkeypatch, target)
    before = disk(root)
    assert append_memory_entry(root, "counted entry 3141", max_lines=0).status == "written"
    assert len(resolved) == 1
    assert locks == [REL]
    assert reads == []  # the text kept since the last append: unchanged on disk, so not read again
    assert disk(root).startswith(before)
    assert disk(root)[len(before):].endswith(b"\ncounted entry 3141")


def test_a_save_resolves_locks_and_reads_the_document_once(big, monkeypatch):
    from core.project import open_project

    root, _ = big
    project = open_project(root)
    target = (root / REL).resolve()
    text = disk(root).decode("utf-8")
    resolved, locks, reads = _count_io(monkeypatch, target)
    project.write(REL, text + "\nsaved by the operator 2718\n", source="editor")
    assert (len(resolved), locks, len(reads)) == (1, [REL], 1)
    assert disk(root).endswith(b"\nsaved by the operator 2718\n")


def _seen_after(monkeypatch) -> list[str]:
    """The ``after`` text each append hands to the load-budget check (what rotation sees too)."""
    from core.project import model

    seen: list[str] = []
    real = model.Project._warnings

    def spying(self, rel, before, after):
        seen.append(after)
        return real(self, rel, before, after)

    monkeypatch.setattr(model.Project, "_warnings", spying)
    return seen


def test_an_append_copies_the_mib_once(big, monkeypatch):
    # The document with the entry is the text plain_append keeps for the next append: the same object goes
    # on to rotation and the budget check, not a second 1 MB join of before + added (~1 ms per append).
    root, _ = big
    seen = _seen_after(monkeypatch)
    assert append_memory_entry(root, "copied once 2718", max_lines=0).status == "written"
    kept = plain_append._known[str((root / REL).resolve())].text
    assert len(seen) == 1 and seen[0] is kept
    assert seen[0].encode("utf-8") == disk(root)


def test_an_append_without_the_kept_text_joins_it(big, monkeypatch):
    # No text kept (or not this append's): the document is joined as before, and is still what is on disk.
    root, _ = big
    seen = _seen_after(monkeypatch)
    monkeypatch.setattr(plain_append, "_remember", lambda *a, **k: None)
    plain_append.forget()
    assert append_memory_entry(root, "joined again 1618", max_lines=0).status == "written"
    assert len(seen) == 1 and seen[0].encode("utf-8") == disk(root)


def test_kept_text_is_given_only_for_this_appends_document(big):
    root, _ = big
    target = (root / REL).resolve()
    kept = plain_append._known[str(target)].text
    added = kept[-20:]
    assert plain_append.kept_text(target, added, len(kept)) is kept
    assert plain_append.kept_text(target, added, len(kept) + 1) is None  # another length: not this append's
    assert plain_append.kept_text(target, "not the end", len(kept)) is None
    assert plain_append.kept_text(root / "other.md", added, len(kept)) is None
