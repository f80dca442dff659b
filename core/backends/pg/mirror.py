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

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

from core.documents.textmerge import merge3
from core.errors import MemoryBackendError, PathOutsideRootError
from core.storage import fileio, statefiles

log = logging.getLogger(__name__)

STATE_DIR = f"{fileio.MEMDESK_DIR}/mirror"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Mirrored:
    """What was last mirrored: the text's hash and its length in characters."""

    hash: str
    length: int


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

    def torn(self, relpath: str, db_text: str) -> bool:
        """Whether the mirror file, not valid UTF-8, holds the start of ``db_text``'s bytes (NULs at its end
        aside): a crash part-way through an append that cut a character. Such a file is behind, rewritten."""
        try:
            data = fileio.read_bytes(self.path(relpath), self.backend_id)
        except MemoryBackendError:
            return False
        return data is not None and db_text.encode("utf-8").startswith(data.rstrip(b"\x00"))

    def _key(self, relpath: str) -> str:
        """The key of the note of ``relpath`` (:data:`core.storage.statefiles.REGISTRY`'s ``mirror-mark``)."""
        return f"{self.project_key}/{relpath.replace('/', '__')}"

    def _state(self, relpath: str) -> Path:
        """Where the note of ``relpath`` is (confined to the project: a link out is refused)."""
        return statefiles.check_note("mirror-mark", self.root, key=self._key(relpath))

    def last(self, relpath: str) -> Mirrored | None:
        """What this host last mirrored for ``relpath`` (``None`` when unknown or unreadable)."""
        try:
            data = statefiles.read_note("mirror-mark", self.root, key=self._key(relpath))
        except MemoryBackendError as exc:
            log.warning("the mirror note of %s is not used: %s", relpath, exc)
            return None
        if data is None:
            return None
        parts = data.decode("ascii", "replace").split()
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
        # One width for every note, so the next one overwrites it in place: a file of its own rewritten
        # costs microseconds, a new file renamed over it a fraction of a millisecond (two journalled
        # changes of the folder) on every append. A note cut by a crash does not parse or does not match
        # the file's text, which only costs a merge. Both through memdesk's door for notes (confined).
        line = f"{digest or fileio.content_hash(content)} {len(content)}".ljust(_STATE_WIDTH - 1) + "\n"
        data, key = line.encode("ascii"), self._key(relpath)
        try:
            if not statefiles.overwrite_note("mirror-mark", self.root, data, key=key, truncate=True,
                                             max_size=4 * len(data)):
                statefiles.put_note("mirror-mark", self.root, data, key=key)
        except (OSError, MemoryBackendError) as exc:
            log.warning("cannot remember the mirror state of %s: %s", relpath, exc)


#: The size of a state note: 64 hex digits, a space, the length, spaces, a newline (read back by ``split``).
_STATE_WIDTH = 96


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
