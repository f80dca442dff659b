"""One rule for the mirrored files of database backends (``sqlite``, ``postgres``): exactly once.

Agents append to a mirror with ``>>`` and take no lock; memdesk writes it under its own lock. The
ledger notes, per mirror file, how many of its bytes the database has taken in: the file's identity
(device, inode), that length, the SHA-256 of those bytes and the hash of the database's text they
spell (``Note``). Every look at the file then splits it by offset, never by guessing from content:

* the first ``size`` bytes, unchanged (same inode, same hash): already in the database;
* the bytes after them: what agents appended since: taken into the database once, at the end of its
  text, and the note moves past them;
* no usable note (the first look, an editor's save that replaced the file, an edit inside it): the
  backend's own whole-text decision (a merge, or an import of the edit), after which the file is
  rewritten from the database.

memdesk's own writes keep the count exact whatever agents do meanwhile:

* an append goes to the file first with ``O_APPEND``; the offset it landed at (``lseek`` after the
  write) says which bytes an agent appended between memdesk's read and its write; those are taken in
  before memdesk's entry, in the file's order, so the database and the file hold the same text;
* a replacement (a save, another host's change) is renamed over the file; bytes an agent appended to
  the old file up to the rename are read back from the old file, still open, and appended after it.

Crash safety: the note of a write is put down as *pending* before the database commits and made final
after, so a crash in between is resolved on the next look by the database's hash (committed or not).
A file write memdesk made before dying is taken in as an agent's text would be: once.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from core.errors import MemoryBackendError, PathOutsideRootError
from core.storage import fileio, statefiles
from core.storage.safepath import O_CLOEXEC, O_NOCTTY, O_NONBLOCK

log = logging.getLogger(__name__)

STATE_DIR = f"{fileio.MEMDESK_DIR}/mirror"


def _write(fd: int, data: memoryview) -> int:
    # A seam for the crash tests: a process that dies here leaves part of an append in the mirror.
    return os.write(fd, data)


@dataclass(frozen=True)
class Note:
    """The database holds the first ``size`` bytes of the file ``(dev, ino)`` (SHA-256 ``sha``), which spell
    the database text whose content hash is ``db``."""

    dev: int
    ino: int
    size: int
    sha: str
    db: str

    def line(self) -> str:
        return f"{self.dev} {self.ino} {self.size} {self.sha} {self.db}"

    @classmethod
    def parse(cls, line: str) -> Note | None:
        parts = line.split()
        if len(parts) != 5 or not all(p.isdigit() for p in parts[:3]):
            return None
        if not all(len(p) == 64 and all(c in "0123456789abcdef" for c in p) for p in parts[3:]):
            return None
        return cls(int(parts[0]), int(parts[1]), int(parts[2]), parts[3], parts[4])


@dataclass
class Look:
    """The mirror file as read under memdesk's lock: its bytes and identity, and the open descriptor;
    ``plain``: a regular file of its own (no link to it, not one), which memdesk may append to."""

    fd: int | None
    dev: int = 0
    ino: int = 0
    data: bytes | None = None
    plain: bool = False
    error: MemoryBackendError | None = None  # why the file could not be looked at (a link out, a FIFO...)


_HEAD = 160  # the fixed width of an appending entry's note header
_NOTE_WIDTH = 256  # the fixed width of a note (five fields: at most 3 x 20 digits, 2 x 64 hex digits, 4 spaces)


class Moved(Exception):
    """The mirror file changed under memdesk other than by appends (replaced, cut): it is left alone, and
    its text is looked at whole next time."""


@dataclass(frozen=True)
class Step:
    """What a look found: ``base`` is the database's text with the agents' additions taken in; ``in_step``
    says the file's first ``upto`` bytes spell ``base`` (so memdesk may append to it); ``imported`` is the
    text taken in (``""``: none); ``changed`` whether ``base`` differs from the database's text."""

    base: str
    in_step: bool
    upto: int
    imported: str
    changed: bool


def _complete(data: bytes) -> int:
    """The length of the longest prefix of ``data`` that ends on a whole UTF-8 character."""
    end = len(data)
    for back in range(1, min(4, end) + 1):
        b = data[end - back]
        if b < 0x80:
            return end if back == 1 else end - back + 1
        if b >= 0xC0:  # a lead byte: is its character whole?
            need = 2 if b < 0xE0 else 3 if b < 0xF0 else 4
            return end if back >= need else end - back
    return end


class Ledger:
    """The note of one mirror file (under ``.fusion/memdesk/mirror/<key>/``) and the writes that keep it.

    The notes are memdesk's state files (:data:`core.storage.statefiles.REGISTRY`: ``mirror-ledger`` and
    ``mirror-entry``, keyed ``<key>/<path with / as __>``), written through its door for notes: confined to
    the project, a link out refused, under the document's lock the caller holds, no history (a note is
    redone on every append; a lost one costs a whole-text look, never text)."""

    def __init__(self, root: Path, relpath: str, key: str, backend_id: str) -> None:
        self.root = root
        self.relpath = relpath
        self.backend_id = backend_id
        self.note_key = f"{key}/{relpath.replace('/', '__')}"
        self.state = f"{STATE_DIR}/{self.note_key}.ledger"

    # -- the note ----------------------------------------------------------------------------------
    def check(self) -> None:
        """Refuse (one line naming the note) a write whose notes could not be kept: a link out, a FIFO, a
        hard-linked note. Called before a write changes anything."""
        for name in ("mirror-ledger", "mirror-entry"):
            statefiles.check_note(name, self.root, key=self.note_key)

    def _read(self, name: str) -> bytes | None:
        try:
            return statefiles.read_note(name, self.root, key=self.note_key)
        except MemoryBackendError as exc:
            log.warning("mirror ledger of %s not used: %s", self.relpath, exc)
            return None

    def load(self, db_hash: str) -> Note | None:
        """The note (untrusted: anything malformed is no note); a pending one is resolved by ``db_hash``."""
        data = self._read("mirror-ledger")
        if data is None:
            return None
        lines = data.decode("ascii", "replace").splitlines()
        done = Note.parse(lines[0]) if lines else None
        pending = Note.parse(lines[1]) if len(lines) > 1 else None
        if pending is not None and (pending.db == db_hash or done is None or done.db != db_hash):
            return pending  # the write it noted committed (or the database moved on since: it did)
        return done

    def save(self, note: Note | None, pending: Note | None = None) -> None:
        """Put the note down (with ``pending``: the write about to commit). Best effort: a lost note costs a
        whole-text look, never text."""
        body = "" if note is None else note.line()
        if pending is not None:
            body += "\n" + pending.line()
        try:
            if pending is None and note is not None:
                # One line of one width: written over the last note in place and fdatasynced (one data block,
                # atomic against a crash of the process; a replace costs the file's and the folder's fsyncs and
                # a rename). A note of another size (older, or with a pending line) is replaced instead.
                data = (body.ljust(_NOTE_WIDTH - 1) + "\n").encode("ascii")
                if statefiles.overwrite_note("mirror-ledger", self.root, data, key=self.note_key,
                                             max_size=len(data), sync=True):
                    data = b""
            else:
                data = (body + "\n").encode("ascii")
            if data:
                statefiles.put_note("mirror-ledger", self.root, data, key=self.note_key)
        except (OSError, MemoryBackendError) as exc:
            log.warning("cannot note the mirror state of %s: %s", self.relpath, exc)
        if pending is None:
            self.end_append()  # the file is in step: an entry noted before (finished or dropped) is settled

    def forget(self) -> None:
        """Drop the note (the file is no longer in step with anything known)."""
        with suppress(OSError, MemoryBackendError):
            statefiles.remove_note("mirror-ledger", self.root, key=self.note_key)

    def begin_append(self, upto: int, entry: str, db_after: str) -> None:
        """Note memdesk's entry before its transaction commits (the database's hash will then be ``db_after``)
        and before it is appended to the file at or after byte ``upto`` (see :meth:`step`). Refused (the
        transaction then rolls back) when the note cannot be kept."""
        head = f"{upto} {db_after} {upto}".ljust(_HEAD - 1) + "\n"
        statefiles.put_note("mirror-entry", self.root, head.encode() + entry.encode(), key=self.note_key)

    def _appending_at(self, upto: int, start: int, db_after: str) -> None:
        """Put the offset the entry is about to be written at into its note (in place: microseconds)."""
        head = f"{upto} {db_after} {start}".ljust(_HEAD - 1) + "\n"
        with suppress(OSError, MemoryBackendError):
            statefiles.overwrite_note("mirror-entry", self.root, head.encode(), key=self.note_key)

    def end_append(self) -> None:
        """The entry is in the database: its note goes."""
        with suppress(OSError, MemoryBackendError):
            statefiles.remove_note("mirror-entry", self.root, key=self.note_key)

    def _pending_append(self) -> tuple[int, str, int, bytes] | None:
        data = self._read("mirror-entry")
        if data is None or b"\n" not in data:
            return None
        head, _, entry = data.partition(b"\n")
        parts = head.decode("ascii", "replace").split()
        if len(parts) != 3 or not parts[0].isdigit() or not parts[2].isdigit():
            return None
        return int(parts[0]), parts[1], int(parts[2]), entry

    # -- looking -----------------------------------------------------------------------------------
    def path(self) -> Path:
        try:
            return fileio.resolve_in_root(self.root, self.relpath)
        except PathOutsideRootError as exc:
            raise MemoryBackendError(str(exc), "INVALID_CONFIG", self.backend_id, exc) from exc

    @contextmanager
    def look(self) -> Iterator[Look]:
        """Open and read the mirror file (confined to the project: a link out, a FIFO or a folder is refused,
        never read); the descriptor stays open for the write that follows."""
        logical, real = self._paths()
        try:
            fd = os.open(logical, os.O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        except FileNotFoundError:
            yield Look(None)
            return
        except OSError as exc:
            raise MemoryBackendError(f"{self.relpath} cannot be read: {exc.strerror or exc}", "READ_FAILED",
                                     self.backend_id, exc) from exc
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise MemoryBackendError(f"{self.relpath} is not a regular file; it is not mirrored", "READ_FAILED",
                                         self.backend_id)
            checked: os.stat_result | None
            lst: os.stat_result | None
            try:
                checked = os.stat(real)
                lst = os.lstat(logical)
            except OSError:
                checked = lst = None
            if checked is None or (checked.st_dev, checked.st_ino) != (st.st_dev, st.st_ino):
                raise MemoryBackendError(f"{self.relpath} changed while it was opened; it is not mirrored now",
                                         "READ_FAILED", self.backend_id)
            chunks, total, limit = [], 0, fileio.MAX_READ_SIZE
            while total <= limit:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
            if total > limit:
                raise MemoryBackendError(f"{self.relpath} is over {limit:,} bytes; it is not mirrored", "READ_FAILED",
                                         self.backend_id)
            plain = lst is not None and stat.S_ISREG(lst.st_mode) and st.st_nlink == 1
            yield Look(fd, st.st_dev, st.st_ino, b"".join(chunks), plain)
        finally:
            os.close(fd)

    @contextmanager
    def safe_look(self) -> Iterator[Look]:
        """:meth:`look`, with a file that cannot be looked at given as a look holding the error."""
        with ExitStack() as stack:
            try:
                look = stack.enter_context(self.look())
            except MemoryBackendError as exc:
                look = Look(None, error=exc)
            yield look

    def _paths(self) -> tuple[Path, Path]:
        try:
            return fileio.resolve_both_in_root(self.root, self.relpath)
        except PathOutsideRootError as exc:
            raise MemoryBackendError(str(exc), "INVALID_CONFIG", self.backend_id, exc) from exc

    def step(self, look: Look, db_text: str | None, whole: Callable[[str], str]) -> Step:
        """Split the file by the note: take the agents' additions in once; else ``whole(file_text)`` decides."""
        current = db_text or ""
        db_hash = fileio.content_hash(current)
        if look.error is not None:
            raise look.error
        if look.data is None:
            return Step(current, False, 0, "", False)
        note = self.load(db_hash)
        if (note is not None and (note.dev, note.ino) == (look.dev, look.ino) and len(look.data) >= note.size
                and hashlib.sha256(look.data[:note.size]).hexdigest() == note.sha):
            pending = self._pending_append()
            if pending is not None and note.size <= pending[0]:
                # memdesk died between its entry's commit and the end of its append to the file: the file's
                # part of the entry (none, some or all of it) is dropped, what agents appended is taken in
                # once, and the file is rewritten. The entry is in the database if the commit happened.
                entry, start = pending[3], max(pending[2] - note.size, 0)
                tail = look.data[note.size:]
                at = tail.find(entry) if entry else -1
                if at >= 0:  # all of it reached the file
                    rest = tail[:at] + tail[at + len(entry):]
                else:  # a part, where the note says it went (agents' bytes before and after it are theirs)
                    got = tail[start:start + len(entry)]
                    k = next(k for k in range(len(got), -1, -1) if entry.startswith(got[:k]))
                    after = tail[start + k:]
                    rest = tail[:start] + (after.lstrip(b"\x00") if k else after)
                taken = rest[:_complete(rest)].decode("utf-8", "replace")
                return Step(current + taken, False, len(look.data), taken, bool(taken))
            if pending is not None:
                self.end_append()  # taken in before: a leftover
            upto = note.size + _complete(look.data[note.size:])
            added: str | None
            try:
                added = look.data[note.size:upto].decode("utf-8")
            except UnicodeDecodeError:
                added = None
            if added is not None:
                in_step = note.db == db_hash
                return Step(current + added, in_step, upto, added, bool(added))
        text = fileio.decode_utf8(look.data, self.relpath, self.backend_id)
        base = whole(text)
        return Step(base, base == text, len(look.data), "" if base == current else base, base != current)

    # -- writing -----------------------------------------------------------------------------------
    def append(self, dev: int, ino: int, prefix: bytes, addition: str, noted: str | None = None
               ) -> tuple[str, int]:
        """Append ``addition`` with ``O_APPEND`` to the file ``(dev, ino)``, which must still start with
        ``prefix`` (else :class:`Moved`: it was rewritten in place); return the text agents appended after
        ``prefix`` and before ``addition`` (in the file's order) and the offset where ``addition`` ends."""
        upto = len(prefix)
        data = addition.encode("utf-8")
        try:  # confined, O_NOFOLLOW, a regular file with no other link (the file layer's checks)
            fd = fileio.open_regular_for_append(self.root, self.relpath, create=False, backend_id=self.backend_id,
                                                readable=True)
        except MemoryBackendError as exc:
            if exc.code == "INVALID_CONFIG":  # a link out of the project: never written through
                raise
            raise Moved(self.relpath) from exc
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != (dev, ino) or st.st_nlink != 1 or not stat.S_ISREG(st.st_mode):
                raise Moved(self.relpath)
            if st.st_size < upto or os.pread(fd, upto, 0) != prefix:  # cut or rewritten in place since the look
                raise Moved(self.relpath)
            if noted is not None:
                self._appending_at(upto, st.st_size, noted)
            try:
                fileio.write_all(fd, data, _write)
            except fileio.AppendFailed as failed:
                error, written = failed.error, failed.written
                with suppress(OSError):
                    fileio.rollback_append(fd, os.fstat(fd).st_size - written, written)
                raise MemoryBackendError(f"cannot append to the mirror {self.relpath}: {error.strerror or error}",
                                         "WRITE_FAILED", self.backend_id, error) from error
            end = os.lseek(fd, 0, os.SEEK_CUR)  # O_APPEND: the end of what this write put down
            start = end - len(data)
            between = os.pread(fd, start - upto, upto) if start > upto else b""
        finally:
            os.close(fd)
        return between.decode("utf-8", "replace"), end

    def replace(self, look: Look, content: str) -> tuple[str, int, int, int]:
        """Rename ``content`` over the file; bytes agents appended to the old file until then (past what
        was read) are appended after it. Returns (the text after ``content`` in the file's order, the
        offset it ends at, the new file's dev and inode)."""
        data = content.encode("utf-8")
        target = self.path()
        if look.fd is not None and look.data is not None:
            try:
                now = os.lstat(target)
            except FileNotFoundError:
                now = None
            if os.fstat(look.fd).st_size < len(look.data) or (
                    now is not None and stat.S_ISREG(now.st_mode) and (now.st_dev, now.st_ino) != (look.dev, look.ino)):
                raise Moved(self.relpath)  # cut, or replaced by another program since the look: its text is kept
        try:
            fileio.atomic_write_bytes(target, data)
            st = os.stat(target)
        except OSError as exc:
            raise MemoryBackendError(f"cannot write the mirror {self.relpath}: {exc.strerror or exc}", "WRITE_FAILED",
                                     self.backend_id, exc) from exc
        late = b""
        if look.fd is not None and look.data is not None:
            late = os.pread(look.fd, fileio.MAX_READ_SIZE, len(look.data))  # agents' appends to the old file
            late = late[:_complete(late)]
        if not late:
            return "", len(data), st.st_dev, st.st_ino
        text = late.decode("utf-8", "replace")
        between, end = self.append(st.st_dev, st.st_ino, data, text)
        return between + text, end, st.st_dev, st.st_ino

    def note_for(self, dev: int, ino: int, file_prefix: bytes, db_text: str) -> Note:
        """The note saying the file's first ``len(file_prefix)`` bytes spell ``db_text``."""
        return Note(dev, ino, len(file_prefix), hashlib.sha256(file_prefix).hexdigest(), fileio.content_hash(db_text))
