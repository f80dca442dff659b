"""Documents, their history and their search chunks in PostgreSQL: the SQL of one read or one write.

Every function takes an open connection inside the caller's transaction. A write locks its document
first (a transaction-scoped advisory lock on project key + path, which also covers a document that does
not exist yet) and re-reads it, so writers on any number of hosts are serialized per document and an
append always extends the latest text. The previous content goes to ``memdesk_history`` before it is
replaced; the chunk rows are brought in step in the same transaction; and a ``NOTIFY`` announces the new
hash to every listener when (and only if) the transaction commits.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, fields, replace
from datetime import datetime

import psycopg

from core.backends.pg.schema import TSV
from core.errors import MemoryBackendError
from core.search.chunking import Entry, chunk_markdown
from core.storage.fileio import content_hash
from core.storage.history.versions import RetentionPolicy, Version

CHANNEL = "memdesk_changes"


def check_document_path(relpath: str, backend_id: str = "postgres") -> str:
    """A document key: a relative POSIX path under ``.fusion/`` with no ``..`` (``INVALID_CONFIG`` otherwise)."""
    ok = (isinstance(relpath, str) and relpath.startswith(".fusion/") and len(relpath) <= 512 and "\\" not in relpath
          and "\x00" not in relpath and all(part not in ("", ".", "..") for part in relpath.split("/")))
    if not ok:
        raise MemoryBackendError(f"{relpath!r} is not a memory document path (a path under .fusion/, no '..')",
                                 "INVALID_CONFIG", backend_id)
    return relpath


@dataclass(frozen=True)
class DocRow:
    """A stored document: its text, content hash and revision counter."""

    content: str
    hash: str
    revision: int


#: How long a writer waits for another host's write of the same document before giving up.
LOCK_TIMEOUT = "30s"


def lock(conn: psycopg.Connection, key: str, path: str) -> None:
    """Serialize writers of one document until the transaction ends (works before the row exists).

    A writer that never finishes (a hung host) makes the others fail after :data:`LOCK_TIMEOUT`
    (SQLSTATE 55P03) instead of waiting forever; the timeout is set for this transaction only.
    """
    conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s)) "
                 "FROM (SELECT set_config('lock_timeout', %s, true)) AS t", (key, path, LOCK_TIMEOUT))


_FETCH = ("SELECT CASE WHEN hash = %s THEN NULL ELSE content END, hash, revision FROM memdesk_documents "
          "WHERE project_key = %s AND path = %s")


def fetch(conn: psycopg.Connection, key: str, path: str, cache: ChunkCache | None = None) -> DocRow | None:
    """The document, or ``None`` when it was never written.

    With ``cache``, a text this process already holds (same hash) is not sent again: an append to a
    100 KB memory then reads only its hash and revision.
    """
    known = cache.text(key, path) if cache is not None else None
    row = conn.execute(_FETCH, (known[0] if known else None, key, path)).fetchone()
    if not row:
        return None
    content = row[0]
    if content is None:  # the column is NOT NULL: only the CASE gives NULL, for the cached hash
        assert known is not None
        content = known[1]
    elif cache is not None:
        cache.put(key, path, row[1], content, None)
    return DocRow(content, row[1], int(row[2]))


def fetch_hash(conn: psycopg.Connection, key: str, path: str) -> str | None:
    """The document's content hash only (cheap: no content is sent)."""
    row = conn.execute("SELECT hash FROM memdesk_documents WHERE project_key = %s AND path = %s",
                       (key, path)).fetchone()
    return row[0] if row else None


def list_documents(conn: psycopg.Connection, key: str) -> list[tuple[str, int, datetime, str | None]]:
    """``(path, size, updated_at, updated_by)`` of every document of the project, by path."""
    return [(r[0], int(r[1]), r[2], r[3]) for r in conn.execute(
        "SELECT path, size, updated_at, updated_by FROM memdesk_documents WHERE project_key = %s ORDER BY path",
        (key,))]


def version_content(conn: psycopg.Connection, key: str, path: str, digest: str) -> str | None:
    """The text with ``digest`` that this document holds or once held (``None`` when it never did)."""
    row = conn.execute(
        "SELECT content FROM memdesk_documents WHERE project_key = %s AND path = %s AND hash = %s "
        "UNION ALL SELECT content FROM memdesk_history WHERE project_key = %s AND path = %s AND hash = %s LIMIT 1",
        (key, path, digest, key, path, digest)).fetchone()
    return row[0] if row else None


def record_history(conn: psycopg.Connection, key: str, path: str, content: str, source: str,
                   author: str | None, policy: RetentionPolicy | None = None, *,
                   created_at: datetime | None = None) -> bool:
    """Keep ``content`` as a version of the document (a content already kept is re-dated), then prune.

    ``created_at`` keeps the date of a version copied from elsewhere (a move); it never re-dates one, and
    the result says whether it was new.
    """
    if created_at is not None:
        cur = conn.execute(
            "INSERT INTO memdesk_history (project_key, path, hash, size, source, author, content, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (project_key, path, hash) DO NOTHING",
            (key, path, content_hash(content), len(content.encode("utf-8")), source, author, content, created_at))
        return bool(cur.rowcount)
    conn.execute(
        "INSERT INTO memdesk_history (project_key, path, hash, size, source, author, content) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (project_key, path, hash) DO UPDATE "
        "SET created_at = now(), source = EXCLUDED.source, author = EXCLUDED.author",
        (key, path, content_hash(content), len(content.encode("utf-8")), source, author, content))
    if policy is not None and policy.days > 0:
        conn.execute(
            "DELETE FROM memdesk_history WHERE project_key = %s AND path = %s "
            "AND created_at < now() - make_interval(days => %s) AND id NOT IN ("
            " SELECT id FROM memdesk_history WHERE project_key = %s AND path = %s"
            " ORDER BY created_at DESC, id DESC LIMIT %s)",
            (key, path, policy.days, key, path, max(1, policy.min_versions)))
    return True


_VERSION_FIELDS = {f.name for f in fields(Version)}


def _version(r: tuple) -> Version:
    """A ``history.Version`` from ``(id, path, hash, size, created_at, source, author)`` (author kept when the
    local history's rows carry one too)."""
    extra = {"author": r[6]} if "author" in _VERSION_FIELDS else {}
    return Version(int(r[0]), r[1], r[2], int(r[3]), r[4].isoformat(timespec="seconds"), r[5], **extra)


def list_versions(conn: psycopg.Connection, key: str, path: str | None, limit: int | None) -> list[Version]:
    """Stored versions, newest first (of one document when ``path`` is given)."""
    sql = "SELECT id, path, hash, size, created_at, source, author FROM memdesk_history WHERE project_key = %s"
    args: list[object] = [key]
    if path is not None:
        sql += " AND path = %s"
        args.append(path)
    sql += " ORDER BY created_at DESC, id DESC"
    if limit is not None:
        sql += " LIMIT %s"
        args.append(limit)
    return [_version(r) for r in conn.execute(sql, args)]


def get_version(conn: psycopg.Connection, key: str, version_id: int) -> tuple[Version, str] | None:
    """One version and its content, or ``None``."""
    r = conn.execute("SELECT id, path, hash, size, created_at, source, author, content FROM memdesk_history "
                     "WHERE project_key = %s AND id = %s", (key, version_id)).fetchone()
    return None if r is None else (_version(r), r[7])


class ChunkCache:
    """The latest text this process stored or read per document, with the chunks of what it stored, so an
    append chunks only once and a text is sent again only when another writer changed it (the
    :data:`KEEP` documents used last)."""

    KEEP = 32

    def __init__(self) -> None:
        self._by_doc: dict[tuple[str, str], tuple[str, str, list[Entry] | None]] = {}
        self._lock = threading.Lock()

    def text(self, key: str, path: str) -> tuple[str, str] | None:
        """``(hash, text)`` of the document as this process last stored it."""
        hit = self._by_doc.get((key, path))
        return (hit[0], hit[1]) if hit is not None else None

    def get(self, key: str, path: str, text: str, digest: str) -> list[Entry]:
        hit = self._by_doc.get((key, path))
        if hit is not None and hit[0] == digest and hit[2] is not None:
            return hit[2]
        return chunk_markdown(text, path)

    def put(self, key: str, path: str, digest: str, text: str, entries: list[Entry] | None) -> None:
        """Keep ``text`` (and its chunks, when known) as the document's latest."""
        with self._lock:
            self._by_doc.pop((key, path), None)
            self._by_doc[(key, path)] = (digest, text, entries)
            while len(self._by_doc) > self.KEEP:
                self._by_doc.pop(next(iter(self._by_doc)))


_MARKER = re.compile(r"^<!--\s*\d{4}-\d{2}-\d{2}\s*-->\s*$")
_PLACEHOLDER = "\x00section\x00"


def chunk_appended(old_text: str, old: list[Entry], new_text: str, path: str) -> list[Entry]:
    """The chunks of ``new_text`` (``old_text`` plus appended text), re-reading only the tail.

    The chunker carries no state across a dated-entry marker except the section, so the text from the
    last dated entry's marker on is chunked alone, under a placeholder heading standing for that
    section; the entries before the marker are the old ones. Gives exactly ``chunk_markdown(new_text)``
    (a test compares them); anything unusual falls back to that.
    """
    if not new_text.startswith(old_text):
        return chunk_markdown(new_text, path)
    last = next((e for e in reversed(old) if e.date is not None), None)
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in new_text.split("\n")]  # the chunker's lines
    if last is None or last.line < 2 or last.line > len(lines):
        return chunk_markdown(new_text, path)
    idx = last.line - 2  # 0-based index of the line above the entry; blank lines may sit before the marker
    while idx >= 0 and not lines[idx].strip():
        idx -= 1
    if idx < 0 or not _MARKER.match(lines[idx].strip()):
        return chunk_markdown(new_text, path)
    tail = chunk_markdown(f"## {_PLACEHOLDER}\n" + "\n".join(lines[idx:]), path)
    shift = idx - 1  # tail line 2 is lines[idx], which is line idx + 1
    kept = [e for e in old if e.line < idx + 1]
    return kept + [replace(e, line=e.line + shift, end_line=e.end_line + shift,
                           section=last.section if e.section == _PLACEHOLDER else e.section) for e in tail]


_INSERT = f"""INSERT INTO memdesk_chunks (project_key, path, line, end_line, section, body, hash, tsv)
SELECT %s, %s, line, end_line, section, body, hash, {TSV}
FROM unnest(%s::int[], %s::int[], %s::text[], %s::text[], %s::text[]) AS v(line, end_line, section, body, hash)"""
_MOVE = """UPDATE memdesk_chunks c SET line = v.new_line, end_line = v.new_end
FROM unnest(%s::int[], %s::int[], %s::int[]) AS v(old_line, new_line, new_end)
WHERE c.project_key = %s AND c.path = %s AND c.line = v.old_line"""


def sync_chunks(conn: psycopg.Connection, key: str, path: str, old: list[Entry], new: list[Entry]) -> None:
    """Bring the chunk rows from ``old`` to ``new``: gone entries deleted, new ones inserted (and indexed),
    unchanged ones that only moved get their new line numbers in place (no re-indexing).

    The entries ``new`` starts with that are ``old``'s own (the same objects, as :func:`chunk_appended`
    keeps them) pair with each other whatever follows, so only the rest is compared.
    """
    same = 0
    for was, now in zip(old, new, strict=False):
        if was is not now:
            break
        same += 1
    old, new = old[same:], new[same:]
    pending: dict[tuple[str | None, str], list[Entry]] = {}
    for e in old:
        pending.setdefault((e.section, e.hash), []).append(e)
    for bucket in pending.values():
        bucket.reverse()  # pop() takes them in document order
    moved: list[tuple[int, int, int]] = []
    added: list[Entry] = []
    for e in new:
        found = pending.get((e.section, e.hash))
        if not found:
            added.append(e)
            continue
        was = found.pop()
        if (was.line, was.end_line) != (e.line, e.end_line):
            moved.append((was.line, e.line, e.end_line))
    gone = [e.line for bucket in pending.values() for e in bucket]
    if gone:
        conn.execute("DELETE FROM memdesk_chunks WHERE project_key = %s AND path = %s AND line = ANY(%s)",
                     (key, path, gone))
    if moved:
        conn.execute(_MOVE, ([m[0] for m in moved], [m[1] for m in moved], [m[2] for m in moved], key, path))
    if added:
        conn.execute(_INSERT, (key, path, [e.line for e in added], [e.end_line for e in added],
                               [e.section for e in added], [e.text for e in added], [e.hash for e in added]))


def store(conn: psycopg.Connection, key: str, path: str, content: str, previous: DocRow | None, *,
          source: str, author: str | None, origin: str, chunks: ChunkCache) -> str:
    """Write ``content`` as the document's text (after :func:`lock`), index it and notify; return its hash."""
    digest = content_hash(content)
    size = len(content.encode("utf-8"))
    if previous is None:
        conn.execute("INSERT INTO memdesk_documents (project_key, path, content, hash, size, updated_by, source) "
                     "VALUES (%s, %s, %s, %s, %s, %s, %s)", (key, path, content, digest, size, author, source))
        old: list[Entry] = []
    elif content.startswith(previous.content) and previous.content:
        # An append sends only the new text; the row is locked, so the stored text is previous.content.
        conn.execute("UPDATE memdesk_documents SET content = content || %s, hash = %s, size = %s, "
                     "revision = revision + 1, updated_at = now(), updated_by = %s, source = %s "
                     "WHERE project_key = %s AND path = %s",
                     (content[len(previous.content):], digest, size, author, source, key, path))
        old = chunks.get(key, path, previous.content, previous.hash)
    else:
        conn.execute("UPDATE memdesk_documents SET content = %s, hash = %s, size = %s, revision = revision + 1, "
                     "updated_at = now(), updated_by = %s, source = %s WHERE project_key = %s AND path = %s",
                     (content, digest, size, author, source, key, path))
        old = chunks.get(key, path, previous.content, previous.hash)
    new = chunk_appended(previous.content, old, content, path) if previous is not None else chunk_markdown(content, path)
    sync_chunks(conn, key, path, old, new)
    chunks.put(key, path, digest, content, new)
    notify(conn, key, path, digest, origin)
    return digest


def delete(conn: psycopg.Connection, key: str, path: str, *, origin: str) -> bool:
    """Remove a document and its chunks (its history stays); True when it existed."""
    cur = conn.execute("DELETE FROM memdesk_documents WHERE project_key = %s AND path = %s", (key, path))
    if cur.rowcount:
        notify(conn, key, path, None, origin)
    return bool(cur.rowcount)


def notify(conn: psycopg.Connection, key: str, path: str, digest: str | None, origin: str) -> None:
    """Queue the change notification; PostgreSQL delivers it when the transaction commits."""
    payload = json.dumps({"projectKey": key, "path": path, "hash": digest, "origin": origin}, separators=(",", ":"))
    conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))
