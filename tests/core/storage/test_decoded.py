"""A large file's text is kept with its bytes (core.storage.decoded): the same bytes are not decoded again, an append
decodes only its tail, and the answer is always exactly what the file holds now. Real files on disk; the
second writer is a real process appending with ``>>``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core.errors import MemoryBackendError
from core.storage import fileio
from core.storage.decoded import DecodedCache

FIXTURE = Path(__file__).resolve().parents[3] / "resources" / "sample" / ".fusion" / "memory.md"


def _big(tmp_path: Path) -> Path:
    text = FIXTURE.read_text(encoding="utf-8") + "- naïve café — “quoted” 日本語 🙂\n"
    path = tmp_path / "memory.md"
    path.write_bytes((text * (200_000 // len(text.encode()) + 1)).encode())
    return path


def test_unchanged_bytes_give_back_the_same_text_and_an_append_only_decodes_its_tail(tmp_path):
    path = _big(tmp_path)
    first = fileio.read_text(path)
    assert first == path.read_bytes().decode("utf-8")
    assert fileio.read_text(path) is first  # the same bytes: not decoded again
    subprocess.run(["sh", "-c", 'printf "%s" "$1" >> "$2"', "sh", "\n- ümlaut tail 🙂 by an agent\n", str(path)],
                   check=True, timeout=60)
    grown = fileio.read_text(path)
    assert grown == path.read_bytes().decode("utf-8") and grown.startswith(first) and grown is not first
    path.write_bytes(path.read_bytes().replace(b"caf\xc3\xa9", b"CAF\xc3\x89"))  # same size, other bytes
    rewritten = fileio.read_text(path)
    assert rewritten == path.read_bytes().decode("utf-8") and "CAFÉ" in rewritten and "café" not in rewritten


def test_a_tail_that_is_not_utf8_is_refused_naming_the_files_offset(tmp_path):
    path = _big(tmp_path)
    fileio.read_text(path)
    size = path.stat().st_size
    with path.open("ab") as fh:
        fh.write(b"\n- bad \xff byte\n")
    with pytest.raises(MemoryBackendError) as err:
        fileio.read_text(path)
    assert err.value.code == "READ_FAILED" and f"invalid byte 0xff at byte offset {size + 7}" in err.value.message


def test_only_large_files_are_kept_and_the_bound_holds():
    calls: list[int] = []

    def decode(b: bytes) -> str:
        calls.append(len(b))
        return b.decode("utf-8")

    cache = DecodedCache(min_bytes=10, max_bytes=25)
    assert cache.text("small", b"tiny", decode) == "tiny"
    assert cache.text("small", b"tiny", decode) == "tiny" and calls == [4, 4]  # below min_bytes: never kept
    cache.text("a", b"a" * 12, decode)
    cache.text("b", b"b" * 12, decode)
    cache.text("c", b"c" * 12, decode)  # 36 bytes > 25: the oldest ("a") goes
    calls.clear()
    cache.text("c", b"c" * 12, decode)
    cache.text("b", b"b" * 12, decode)
    assert calls == []
    cache.text("a", b"a" * 12, decode)
    assert calls == [12]
    cache.text("c", b"c" * 12 + b"dd", decode)
    assert calls == [12, 2]  # grown: only the tail decoded
