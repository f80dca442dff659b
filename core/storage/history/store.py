"""Content-addressed objects of the history: each stored content once, as a snapshot or a delta.

An object is keyed by the SHA-256 of its content (the version's ``hash``). A new content is stored
as a delta against the newest version of the same file when that is small, as git packs objects;
otherwise, and whenever the chain of deltas behind it would grow too long or too heavy, as a
zlib-compressed snapshot. Reading an object rebuilds it from its snapshot and checks the SHA-256
of the result, so a restore is byte-exact or refused. The newest contents are kept in memory (a
few MiB), so the next save's delta needs no rebuild.
"""

from __future__ import annotations

import sqlite3
import sys
import threading
import zlib
from collections import OrderedDict
from typing import Any

from core.logs import get_logger

log = get_logger(__name__)

#: Longest chain of deltas behind a snapshot: bounds a restore to one decompression and this many copies.
MAX_DEPTH = 100
#: Largest content an object may rebuild to: the largest document memdesk reads (core.storage.fileio.MAX_READ_SIZE).
#: Objects are untrusted (a copied or planted history.db): a zlib bomb stops here, never balloons.
MAX_OBJECT = 16 * 1_048_576
SNAPSHOT_LEVEL = 1  # zlib level of snapshots: level 6 saves ~15 % for 3-4x the time on 1 MiB
_CACHE_BYTES = 8 * 1_048_576


class CorruptObject(ValueError):
    """A stored object that cannot be rebuilt to the content its hash names."""


#: Up to this size a hash in a process that has not loaded ``hashlib`` uses CPython's own SHA-256 (under a
#: millisecond): loading OpenSSL's hashes costs a one-shot ``memdesk append`` more than hashing a daily note.
_BUILTIN_HASH_MAX = 256 * 1024


def _builtin_sha256() -> Any:
    """CPython's built-in SHA-256 constructor (no OpenSSL), or ``None`` where this build has none."""
    for name in ("_sha2", "_sha256"):  # 3.12+ and 3.11 names of the same module
        try:
            return __import__(name).sha256
        except (ImportError, AttributeError):
            continue
    return None


def sha256_hex(data: bytes) -> str:
    """The content hash history uses (the SHA-256 hex digest of the UTF-8 bytes)."""
    if "hashlib" not in sys.modules and len(data) <= _BUILTIN_HASH_MAX:
        builtin = _builtin_sha256()
        if builtin is not None:  # the same digest, without loading OpenSSL (see _BUILTIN_HASH_MAX)
            return str(builtin(data).hexdigest())
    import hashlib  # here: an append's event needs no hash, and loading OpenSSL is not free

    return hashlib.sha256(data).hexdigest()


class _Recent:
    """The last contents stored or read, by hash (they are the bases of the next deltas)."""

    def __init__(self) -> None:
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, digest: str) -> bytes | None:
        with self._lock:
            data = self._items.get(digest)
            if data is not None:
                self._items.move_to_end(digest)
            return data

    def forget(self, digest: str) -> None:
        with self._lock:
            data = self._items.pop(digest, None)
            if data is not None:
                self._size -= len(data)

    def put(self, digest: str, data: bytes) -> None:
        with self._lock:
            if digest in self._items:
                self._items.move_to_end(digest)
                return
            self._items[digest] = data
            self._size += len(data)
            while self._size > _CACHE_BYTES and len(self._items) > 1:
                _d, old = self._items.popitem(last=False)
                self._size -= len(old)


recent = _Recent()


def load(conn: sqlite3.Connection, digest: str) -> bytes:
    """Rebuild the content of object ``digest``; :class:`CorruptObject` when it does not check out."""
    cached = recent.get(digest)
    if cached is not None:
        return cached
    chain: list[tuple[str, bytes]] = []
    seen: set[str] = set()
    current: str | None = digest
    data: bytes | None = None
    while current is not None:
        if current in seen or len(chain) > MAX_DEPTH + 1:
            raise CorruptObject(f"object {digest[:12]} has a looping or overlong chain")
        seen.add(current)
        hit = recent.get(current) if current != digest else None
        if hit is not None:
            data = hit
            break
        row = conn.execute("SELECT base, data FROM objects WHERE hash = ?", (current,)).fetchone()
        if row is None:
            raise CorruptObject(f"object {current[:12]} is missing")
        chain.append((current, bytes(row[1])))
        current = row[0]
    from core.storage.history.delta import DeltaError, apply_delta  # here: an append's event needs no delta

    try:
        if data is None:
            snap_hash, snap = chain.pop()
            data = inflate(snap, MAX_OBJECT, f"object {snap_hash[:12]}")
        for _h, delta in reversed(chain):
            data = apply_delta(data, delta, max_size=MAX_OBJECT)
    except (zlib.error, DeltaError) as exc:
        raise CorruptObject(f"object {digest[:12]} cannot be rebuilt: {exc}") from exc
    if sha256_hex(data) != digest:
        raise CorruptObject(f"object {digest[:12]} does not match its hash")
    recent.put(digest, data)
    return data


def inflate(blob: bytes, cap: int, what: str) -> bytes:
    """``zlib.decompress(blob)``, refusing (``zlib.error``) more than ``cap`` bytes out: a bomb never balloons."""
    inflater = zlib.decompressobj()
    out = inflater.decompress(blob, cap + 1)
    if len(out) > cap or inflater.unconsumed_tail:
        raise zlib.error(f"{what} decompresses to more than {cap:,} bytes (the largest document memdesk keeps)")
    if not inflater.eof:
        raise zlib.error(f"{what} is cut short")
    return out


def store(conn: sqlite3.Connection, data: bytes, digest: str, base: str | None) -> None:
    """Store ``data`` (whose hash is ``digest``) unless stored already; as a delta against ``base`` when worth it."""
    if conn.execute("SELECT 1 FROM objects WHERE hash = ?", (digest,)).fetchone():
        recent.put(digest, data)
        return
    row = conn.execute("SELECT depth, chain FROM objects WHERE hash = ?", (base,)).fetchone() if base else None
    if row is not None and row[0] < MAX_DEPTH:
        try:
            base_data = load(conn, base)  # type: ignore[arg-type]
        except CorruptObject:
            base_data = None
        if base_data is not None:
            from core.storage.history.delta import make_delta

            delta, literal = make_delta(base_data, data)
            # A delta that carries much of the text, or a chain heavier than half a snapshot, is not worth it.
            if literal * 2 < len(data) and row[1] + len(delta) < max(4096, len(data) // 8):
                conn.execute("INSERT INTO objects(hash, size, base, depth, chain, data) VALUES (?,?,?,?,?,?)",
                             (digest, len(data), base, row[0] + 1, row[1] + len(delta), delta))
                recent.put(digest, data)
                return
    conn.execute("INSERT INTO objects(hash, size, base, depth, chain, data) VALUES (?,?,NULL,0,0,?)",
                 (digest, len(data), zlib.compress(data, SNAPSHOT_LEVEL)))
    recent.put(digest, data)


def collect(conn: sqlite3.Connection) -> int:
    """Delete objects no version uses; a used object whose base goes becomes a snapshot first. Return how many."""
    used = {r[0] for r in conn.execute("SELECT DISTINCT hash FROM versions")}
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'seen'").fetchone():
        used |= {r[0] for r in conn.execute("SELECT DISTINCT hash FROM seen")}  # core.storage.noticed: last written texts
    rows = conn.execute("SELECT hash, base FROM objects").fetchall()
    dead = {h for h, _b in rows if h not in used}
    if not dead:
        return 0
    for digest, base in rows:
        if digest in used and base in dead:
            try:
                data = load(conn, digest)  # rebuilt before anything is deleted
            except CorruptObject as exc:  # a damaged chain: keep what it stands on, delete nothing of it
                log.warning("history: %s; its base is kept", exc)
                dead.discard(base)
                continue
            conn.execute("UPDATE objects SET base=NULL, depth=0, chain=0, data=? WHERE hash=?",
                         (zlib.compress(data, SNAPSHOT_LEVEL), digest))
    _renumber_depths(conn)
    conn.executemany("DELETE FROM objects WHERE hash = ?", [(h,) for h in dead])
    return len(dead)


SEEN_TABLE = "CREATE TABLE IF NOT EXISTS seen (path TEXT PRIMARY KEY, hash TEXT NOT NULL)"


def record_seen(conn: sqlite3.Connection, relpath: str, data: bytes, digest: str) -> None:
    """Keep ``data`` as the text memdesk last wrote to ``relpath`` (:mod:`core.storage.noticed`), in the caller's transaction.

    Stored as a delta on the previous seen text (else on the newest version): a few bytes an append. The
    previous one stays while the new one is a delta on it (a chain, cut by :func:`store` into a new snapshot
    when it grows long) and goes, with what only it used, once nothing does (:func:`drop_unused`).
    """
    conn.execute(SEEN_TABLE)
    row = conn.execute("SELECT hash FROM seen WHERE path = ?", (relpath,)).fetchone()
    if row is not None and row[0] == digest:
        return
    base = row[0] if row is not None else None
    if base is None:
        newest = conn.execute("SELECT hash FROM versions WHERE path = ? ORDER BY created_at DESC, id DESC "
                              "LIMIT 1", (relpath,)).fetchone()
        base = newest[0] if newest else None
    store(conn, data, digest, base)
    conn.execute("INSERT INTO seen(path, hash) VALUES (?, ?) ON CONFLICT(path) DO UPDATE SET hash = "
                 "excluded.hash", (relpath, digest))
    if row is not None:
        drop_unused(conn, row[0])


def drop_unused(conn: sqlite3.Connection, digest: str | None) -> int:
    """Delete object ``digest``, then its base, and so on, while nothing uses them: no version, no seen text
    (:mod:`core.storage.noticed`) and no other object as its base. Returns how many went.

    What a superseded seen text leaves: while the newer one is a delta on it, it stays (nothing goes);
    once the newer one is a snapshot, the old chain goes down to what a version still keeps."""
    dropped, visited = 0, set()
    seen_table = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'seen'").fetchone()
    while digest is not None and digest not in visited and dropped <= MAX_DEPTH + 1:
        visited.add(digest)
        if conn.execute("SELECT 1 FROM objects WHERE base = ? LIMIT 1", (digest,)).fetchone() or \
                conn.execute("SELECT 1 FROM versions WHERE hash = ? LIMIT 1", (digest,)).fetchone() or \
                (seen_table and conn.execute("SELECT 1 FROM seen WHERE hash = ? LIMIT 1", (digest,)).fetchone()):
            break
        row = conn.execute("SELECT base FROM objects WHERE hash = ?", (digest,)).fetchone()
        if row is None:
            break
        conn.execute("DELETE FROM objects WHERE hash = ?", (digest,))
        recent.forget(digest)
        dropped += 1
        digest = row[0]
    return dropped


def _renumber_depths(conn: sqlite3.Connection) -> None:
    """Recompute depth/chain after snapshots were made (the objects above them got shorter chains)."""
    rows = {h: (b, d) for h, b, d in conn.execute("SELECT hash, base, length(data) FROM objects")}
    memo: dict[str, tuple[int, int]] = {}

    def depth(start: str) -> tuple[int, int]:
        stack, h = [], start
        seen: set[str] = set()
        while h not in memo:
            base, size = rows[h]
            if base is None or base not in rows or h in seen:  # a loop (planted or damaged) ends here
                memo[h] = (0, 0) if h not in seen else (MAX_DEPTH, 0)
                break
            seen.add(h)
            stack.append((h, size))
            h = base
        d, c = memo[h]
        for item, size in reversed(stack):
            d, c = d + 1, c + size
            memo[item] = (d, c)
        return memo[start]

    updates = [(*depth(h), h) for h in rows]
    conn.executemany("UPDATE objects SET depth=?, chain=? WHERE hash=?", updates)
