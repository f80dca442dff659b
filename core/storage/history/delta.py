"""Byte deltas between two versions of a file, as history stores them (a copy/insert list, zlib-compressed).

A delta says how to build the new bytes from the base: copy ``length`` bytes from ``offset`` of the
base, or insert literal bytes. Memory files change in few places (an append at the end, an edited
line, entries rotated out), so :func:`make_delta` first takes the common prefix and suffix (memcmp
speed) and only matches lines in what is left between them. :func:`apply_delta` checks every
offset against the base: history rows are untrusted input and a bad delta raises
:class:`DeltaError` instead of building wrong text.
"""

from __future__ import annotations

import struct
import zlib
from itertools import accumulate

from core.documents.runs import common_prefix, common_suffix

MAGIC = b"MDD1"
_HEADER = struct.Struct("<4sQQ")  # magic, base size, target size
_COPY = struct.Struct("<QQ")
_LEN = struct.Struct("<Q")
#: Shorter matches are cheaper to insert than to copy.
MIN_COPY = 32
#: Lines shorter than this are not used as anchors (blank lines and short markers match everywhere).
MIN_ANCHOR = 12

Op = tuple[int, int] | bytes


class DeltaError(ValueError):
    """A delta that does not fit its base (corrupt or planted history data)."""


def _line_starts(data: bytes, start: int, end: int) -> tuple[list[bytes], list[int]]:
    """The lines of ``data[start:end]`` (without their newline) and the offset each starts at."""
    lines = data[start:end].split(b"\n")
    offsets = list(accumulate((len(line) + 1 for line in lines[:-1]), initial=start))
    return lines, offsets


#: Lines looked up with ``bytes.find`` before an index of the base's lines is built (most edits need one).
FIND_TRIES = 8


def _middle(base: bytes, new: bytes, b0: int, b1: int, n0: int, n1: int) -> list[Op]:
    """Ops building ``new[n0:n1]`` from ``base`` (whose unmatched part is ``base[b0:b1]``), by line anchors.

    A line of the new text is looked up in the base, and a match is extended as far as the bytes
    agree. The first few lookups use ``bytes.find`` over the unmatched part (C speed, and usually
    the one lookup an edit needs); after that a dict of the base's lines is built once.
    """
    if n1 <= n0:
        return []
    if b1 - b0 < MIN_COPY or n1 - n0 < MIN_COPY:
        return [new[n0:n1]]
    anchors: dict[bytes, int] | None = None
    tries = FIND_TRIES
    ops: list[Op] = []
    pending = pos = n0  # pending: start of the literal bytes not yet emitted; pos: the line looked at
    while pos < n1:
        nl = new.find(b"\n", pos, n1)
        end = n1 if nl < 0 else nl
        line = new[pos:end]
        at: int | None = None
        if len(line) >= MIN_ANCHOR:
            if anchors is None and tries > 0:
                tries -= 1
                found = base.find(line + b"\n", b0, b1 + 1)
                at = found if found >= 0 else None
            else:
                if anchors is None:
                    blines, boffsets = _line_starts(base, b0, b1)
                    anchors = dict(zip(blines, boffsets, strict=True))
                at = anchors.get(line)
        length = common_prefix(base, new, at, pos, n1 - pos) if at is not None else 0
        if length < MIN_COPY:
            pos = end + 1
            continue
        if pos > pending:
            ops.append(new[pending:pos])
        ops.append((at, length))  # type: ignore[arg-type]
        pending = pos = pos + length
        if pos < n1 and new[pos - 1] != 0x0A:  # the match ended inside a line: go on at the next one
            nl = new.find(b"\n", pos, n1)
            pos = n1 if nl < 0 else nl + 1
    if pending < n1:
        ops.append(new[pending:n1])
    return ops


def make_delta(base: bytes, new: bytes) -> tuple[bytes, int]:
    """Return the compressed delta from ``base`` to ``new`` and how many literal bytes it carries."""
    prefix = common_prefix(base, new)
    suffix = common_suffix(base, new, min(len(base), len(new)) - prefix)
    ops: list[Op] = [(0, prefix)] if prefix else []
    ops += _middle(base, new, prefix, len(base) - suffix, prefix, len(new) - suffix)
    if suffix:
        ops.append((len(base) - suffix, suffix))
    parts = [_HEADER.pack(MAGIC, len(base), len(new))]
    literal = 0
    for op in ops:
        if isinstance(op, bytes):
            literal += len(op)
            parts += [b"I", _LEN.pack(len(op)), op]
        else:
            parts += [b"C", _COPY.pack(*op)]
    return zlib.compress(b"".join(parts), 6), literal


#: Largest target a delta may build unless the caller says otherwise (the largest document memdesk reads).
MAX_TARGET = 16 * 1_048_576


def apply_delta(base: bytes, delta: bytes, *, max_size: int = MAX_TARGET) -> bytes:
    """Build the target bytes of ``delta`` from ``base``; :class:`DeltaError` when the delta does not fit.

    Deltas are untrusted: the decompressed delta and its target are capped (``max_size``), so a
    planted bomb is refused instead of filling memory.
    """
    try:
        inflater = zlib.decompressobj()
        # A delta holds its inserted bytes and 17 bytes an operation: a sane one is far under this.
        cap = 4 * max_size + 4096
        raw = inflater.decompress(delta, cap + 1)
        if len(raw) > cap or inflater.unconsumed_tail:
            raise DeltaError(f"the delta decompresses to more than {cap:,} bytes")
        magic, base_size, target_size = _HEADER.unpack_from(raw, 0)
    except (zlib.error, struct.error) as exc:
        raise DeltaError(f"unreadable delta: {exc}") from exc
    if magic != MAGIC or base_size != len(base):
        raise DeltaError("the delta was made against other content")
    if target_size > max_size:
        raise DeltaError(f"the delta builds {target_size:,} bytes, more than the {max_size:,} a document may hold")
    pieces: list[bytes] = []
    pos, total = _HEADER.size, 0
    try:
        while pos < len(raw):
            kind = raw[pos:pos + 1]
            pos += 1
            if kind == b"C":
                offset, length = _COPY.unpack_from(raw, pos)
                pos += _COPY.size
                if offset + length > len(base):
                    raise DeltaError("the delta copies past the end of its base")
                pieces.append(base[offset:offset + length])
            elif kind == b"I":
                (length,) = _LEN.unpack_from(raw, pos)
                pos += _LEN.size
                if pos + length > len(raw):
                    raise DeltaError("the delta is cut short")
                pieces.append(raw[pos:pos + length])
                pos += length
            else:
                raise DeltaError("the delta holds an unknown operation")
            total += length
            if total > target_size:
                raise DeltaError("the delta builds more than its stated size")
    except struct.error as exc:
        raise DeltaError(f"the delta is cut short: {exc}") from exc
    if total != target_size:
        raise DeltaError("the delta builds less than its stated size")
    return b"".join(pieces)
