"""The file mirror of a database-backed project: each document also written to its layout path, and edits
made to those files by agents that only know files taken back into the database by content.

What this host last mirrored is remembered per document as a content hash and length in
``.fusion/memdesk/mirror/<project key>/<path>.sha256`` (untrusted: anything but 64 hex digits and a
number is ignored). The length finds the mirrored text inside a file an agent appended to, by content:
the file's first ``length`` characters must hash to the remembered hash.
:func:`reconcile` decides, from the file's text alone, what to do with it:

- the file holds the database's text, or what was last mirrored, or any version the document once had,
  or what was last mirrored plus the start of what the database added since (a crash part-way through
  appending to the mirror) → the file is merely behind: it is rewritten with the database's text
  (nothing in it is lost);
- the file is what was last mirrored (or the database's text) plus text at the end (an agent
  appended) → that text is appended to the database's current text;
- an emptied file → written again, like a deleted one (emptiness is never imported);
- anything else → a three-way merge of last-mirrored / database / file; when both sides changed the
  same lines, the database wins and the file's text is kept in history (``mirror-conflict``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from core.documents.textmerge import merge3
from core.errors import MemoryBackendError, PathOutsideRootError
from core.storage import fileio
from core.storage.safepath import O_CLOEXEC, O_NOCTTY, O_NOFOLLOW, O_NONBLOCK

log = logging.getLogger(__name__)

STATE_DIR = f"{fileio.MEMDESK_DIR}/mirror"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def _write(fd: int, data: memoryview) -> int:
    # A seam for the crash tests: a process that dies here leaves part of an append in the mirror.
    return os.write(fd, data)


@dataclass(frozen=True)
class Mirrored:
    """What was last mirrored: the text's hash and its length in characters."""

    hash: str
    length: int


class NotAppendable(Exception):
    """The mirror file is not a plain regular file of its own (a link, a hard-linked file): replace it."""


class MirrorFiles:
    """The mirror files of one project key under one project root."""

    def __init__(self, root: Path, project_key: str, backend_id: str = "postgres") -> None:
        self.root = root
        self.project_key = project_key
        self.backend_id = backend_id

    def path(self, relpath: str) -> Path:
        """The absolute mirror path (confined to the root; ``INVALID_CONFIG`` otherwise)."""
        try:
            return fileio.resolve_in_root(self.root, relpath)
        except PathOutsideRootError as exc:
            raise MemoryBackendError(str(exc), "INVALID_CONFIG", self.backend_id, exc) from exc

    def read(self, relpath: str) -> str | None:
        """The mirror file's text (``None`` when absent); a folder, FIFO or device is refused, never opened."""
        p = self.path(relpath)
        if p.exists() and not p.is_file():
            raise MemoryBackendError(f"{relpath} is not a regular file; it is not mirrored", "READ_FAILED",
                                     self.backend_id)
        return fileio.read_text(p, self.backend_id)

    def stat(self, relpath: str) -> tuple[int, int] | None:
        """``(mtime_ns, size)`` of the mirror file, ``None`` when it is missing."""
        try:
            st = os.stat(self.path(relpath))
        except (OSError, MemoryBackendError):
            return None
        return st.st_mtime_ns, st.st_size

    def write(self, relpath: str, content: str) -> None:
        """Replace the mirror file atomically. No local history: every text it held is in the database."""
        try:
            fileio.atomic_write_bytes(self.path(relpath), content.encode("utf-8"))
        except OSError as exc:
            raise MemoryBackendError(f"cannot write the mirror {relpath}: {exc.strerror or exc}", "WRITE_FAILED",
                                     self.backend_id, exc) from exc

    def append(self, relpath: str, size: int, addition: str) -> tuple[int, int] | None:
        """Append ``addition`` to the mirror file, which must be ``size`` bytes long (the text it was read
        with, which the database's text extends): one write and one fsync instead of a replace.

        Returns the file's ``(mtime_ns, size)`` after the append, ``None`` when it then holds more than
        the two (someone appended meanwhile: ``O_APPEND`` put the bytes after theirs, and their text is
        imported by content on the next read). A file of another size is left alone (``WRITE_FAILED``);
        one that is not a plain file (a link, another hard link to it) raises :class:`NotAppendable`, to
        be replaced as every other write does. A write that fails part-way is cut back to ``size``; a
        crash part-way leaves the text read plus a prefix of ``addition``, which :func:`reconcile` knows
        as behind (rewritten, never imported).
        """
        data = addition.encode("utf-8")
        try:
            fd = os.open(self.path(relpath), os.O_WRONLY | os.O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        except OSError as exc:  # a symbolic link (ELOOP), gone, a FIFO without a reader...
            raise NotAppendable(relpath) from exc
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                raise NotAppendable(relpath)
            if st.st_size != size:
                raise MemoryBackendError(f"{relpath} changed while it was mirrored; it is imported on the next read",
                                         "WRITE_FAILED", self.backend_id)
            try:
                fileio.write_all(fd, data, _write)
            except fileio.AppendFailed as failed:
                error = failed.error
                try:
                    fileio.rollback_append(fd, size, failed.written)
                except OSError as again:
                    log.error("could not cut the mirror %s back after a failed append: %s", relpath, again)
                raise MemoryBackendError(f"cannot append to the mirror {relpath}: {error.strerror or error}",
                                         "WRITE_FAILED", self.backend_id, error) from error
            st = os.fstat(fd)
        finally:
            os.close(fd)
        return (st.st_mtime_ns, st.st_size) if st.st_size == size + len(data) else None

    def torn(self, relpath: str, db_text: str) -> bool:
        """Whether the mirror file, not valid UTF-8, holds the start of ``db_text``'s bytes (NULs at its end
        aside): a crash part-way through an append that cut a character. Such a file is behind, rewritten."""
        try:
            data = fileio.read_bytes(self.path(relpath), self.backend_id)
        except MemoryBackendError:
            return False
        return data is not None and db_text.encode("utf-8").startswith(data.rstrip(b"\x00"))

    def _state(self, relpath: str) -> Path:
        name = relpath.replace("/", "__")
        return self.root / STATE_DIR / self.project_key / f"{name}.sha256"

    def last(self, relpath: str) -> Mirrored | None:
        """What this host last mirrored for ``relpath`` (``None`` when unknown or unreadable)."""
        p = self._state(relpath)
        try:
            if p.is_symlink() or not p.is_file() or p.stat().st_size > 200:
                return None
            parts = p.read_text(encoding="ascii").split()
        except (OSError, UnicodeDecodeError):
            return None
        if len(parts) != 2 or not _HEX64.match(parts[0]) or not parts[1].isdigit():
            return None
        return Mirrored(parts[0], int(parts[1]))

    def base_of(self, relpath: str, text: str) -> str | None:
        """The text last mirrored, when ``text`` (the file now) still starts with it; else ``None``."""
        last = self.last(relpath)
        if last is None or len(text) < last.length:
            return None
        head = text[:last.length]
        return head if fileio.content_hash(head) == last.hash else None

    def remember(self, relpath: str, content: str, digest: str | None = None) -> None:
        """Note that the mirror of ``relpath`` now holds ``content`` (best effort: losing it only costs a merge);
        ``digest`` is its hash when known."""
        p = self._state(relpath)
        # One width for every note, so the next one overwrites it in place: a file of its own rewritten
        # costs microseconds, a new file renamed over it a fraction of a millisecond (two journalled
        # changes of the folder) on every append. A note cut by a crash does not parse or does not match
        # the file's text, which only costs a merge.
        line = f"{digest or fileio.content_hash(content)} {len(content)}".ljust(_STATE_WIDTH - 1) + "\n"
        try:
            fileio.resolve_in_root(self.root, p.relative_to(self.root))
            if _overwrite(p, line.encode("ascii")):
                return
            p.parent.mkdir(parents=True, exist_ok=True)
            tmp = p.with_name(p.name + ".tmp")
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)  # a leftover or a planted link: only the name goes, never its target
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            try:
                os.write(fd, line.encode("ascii"))
            finally:
                os.close(fd)
            os.replace(tmp, p)  # replaces the name only: a planted link's target is never written
        except (OSError, PathOutsideRootError, ValueError) as exc:
            log.warning("cannot remember the mirror state of %s: %s", relpath, exc)


#: The size of a state note: 64 hex digits, a space, the length, spaces, a newline (read back by ``split``).
_STATE_WIDTH = 96


def _overwrite(path: Path, data: bytes) -> bool:
    """Write ``data`` over ``path`` in place when it is a regular file with no other link (and not one);
    False when it is anything else or missing (then it is replaced instead)."""
    try:
        fd = os.open(path, os.O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_size > 4 * len(data):
            return False
        if os.pwrite(fd, data, 0) != len(data):
            return False
        if st.st_size > len(data):
            os.ftruncate(fd, len(data))
        return True
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Decision:
    """What to do with a mirror file: ``keep`` the database's text, or store ``content`` (an import).

    ``appended`` is the text an agent appended (stored by appending), ``conflict`` the file's text that
    could not be merged (kept in history only).
    """

    action: str  # "keep" | "replace" | "append" | "conflict"
    content: str | None = None
    appended: str | None = None


def reconcile(file_text: str, db_text: str | None, base: str | None, known_old: bool) -> Decision:
    """Decide what the mirror file's text means (see the module docstring).

    ``base`` is the text last mirrored by this host (``None`` when unknown); ``known_old`` says the file's
    text is a version the document once had.
    """
    if db_text is None or db_text == "":
        return Decision("keep") if file_text == (db_text or "") else Decision("replace", file_text)
    if not file_text.strip():
        # An emptied file is treated as a deleted one (a crash mid-save, ``> memory.md``): never imported
        # as "the memory is now empty"; it is written again from the database.
        return Decision("keep")
    if file_text == db_text or (base is not None and file_text == base) or known_old:
        return Decision("keep")
    # What was mirrored plus part of what the database added since: a crash part-way through appending
    # to the mirror (or between that append and noting it). Behind, never an edit: importing the part
    # would store a cut copy of an entry the database holds whole. NULs at the end are what a crash can
    # leave of bytes never written; no agent writes them.
    head = file_text.rstrip("\x00")
    if db_text.startswith(head) and (base is None or head.startswith(base)):
        return Decision("keep")
    # A text the file held plus an agent's addition at its end: of what was mirrored and the database's
    # text, the longer one the file starts with (the database's text is in the file because it was
    # mirrored, though a crash or a failed note of it may have left the older ``base``: appending from
    # there would store the database's own tail twice). Without a record, the database's text alone.
    held = [t for t in (base, db_text) if t is not None and file_text.startswith(t)]
    if held:
        return Decision("append", appended=file_text[len(max(held, key=len)):])
    if base is not None:
        if db_text == base:
            return Decision("replace", file_text)
        merged = merge3(base, db_text, file_text)
        if merged.conflicts == 0:
            return Decision("replace", merged.text)
    return Decision("conflict", file_text)
