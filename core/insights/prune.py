"""Validating and applying a pruned working memory proposed by the AI.

Validation is Fusion's ``validatePruneCandidate``: a candidate must be non-blank and keep at least two
of ``## Architecture``, ``## Conventions`` and ``## Pitfalls`` (as real heading lines, see
:func:`validate_prune_candidate`); :func:`unattended_prune_refusal` is the stricter test a prune
applied without the operator must pass. Applying it writes through
the project model, so the previous memory stays in history.

Fixes over Fusion (memdesk design, section 3): the written file ends with exactly one newline (Fusion
wrote the trimmed text with none), ``new_size`` is the length of what was written, and a write that
fails is reported in the outcome instead of raised.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from core.documents import blocks
from core.errors import MemoryBackendError
from core.insights._text import js_trim
from core.insights.files import read_working_memory, write_working_memory
from core.insights.model import (
    MEMORY_WORKING_PATH,
    PRUNE_NOT_OFFERED_REASON,
    PruneOutcome,
    PruneValidationResult,
)
from core.storage import fileio

__all__ = [
    "LAYERED_REQUIRED_SECTIONS",
    "REQUIRED_MEMORY_SECTIONS",
    "apply_memory_pruning",
    "count_entries",
    "memory_headings",
    "required_sections",
    "unattended_prune_refusal",
    "validate_prune_candidate",
]

log = logging.getLogger(__name__)

REQUIRED_MEMORY_SECTIONS: tuple[str, ...] = ("Architecture", "Conventions", "Pitfalls")
#: Current Fusion's layered MEMORY.md has ``## Decisions`` where the seed layout has ``## Architecture``.
LAYERED_REQUIRED_SECTIONS: tuple[str, ...] = ("Decisions", "Conventions", "Pitfalls")
_MIN_REQUIRED = 2

_BULLET_RE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+\S")
_DATED_RE = re.compile(r"^<!-- \d{4}-\d{2}-\d{2} -->$")


def _block_lines(text: str) -> list[str]:
    """The lines of ``text`` outside code (fenced or indented) and HTML blocks, comments included."""
    found = blocks.scan(text)
    lines = text.split("\n")
    return [ln.rstrip("\r") for n, ln in enumerate(lines[:found.lines]) if not found.opaque(n)]


def memory_headings(text: str) -> tuple[str, ...]:
    """The texts of the real level-2 headings of ``text``: top-level, as CommonMark reads them
    (:mod:`core.documents.blocks`: ``##\tTitle`` and setext headings count; none inside code or comments)."""
    return tuple(h.title for h in blocks.scan(text).top(2) if h.level == 2)


def required_sections(layout: str = "seed") -> tuple[str, ...]:
    """The sections a prune must keep (two of three) for ``layout`` ("seed" or "layered")."""
    return LAYERED_REQUIRED_SECTIONS if layout == "layered" else REQUIRED_MEMORY_SECTIONS


def validate_prune_candidate(candidate: Any, *, layout: str = "seed") -> PruneValidationResult:
    """Check a prune candidate: non-blank and keeping at least 2 of the 3 required sections; never raises.

    Fix over Fusion (which looks for the text ``## Architecture`` anywhere): a section counts only as a
    real level-2 heading line with exactly that text, outside code fences and HTML comments, so
    ``#### Architecture``, ```` `## Architecture` ```` or ``## Conventionsx`` keep nothing. In a
    layered project (``layout="layered"``) ``## Decisions`` stands in for ``## Architecture``.
    """
    if not isinstance(candidate, str) or not candidate:
        return PruneValidationResult(False, "Prune candidate is undefined or empty", 0, False)
    trimmed = js_trim(candidate)
    if not trimmed:
        return PruneValidationResult(False, "Prune candidate is empty after trimming", 0, False)
    names = required_sections(layout)
    headings = set(memory_headings(trimmed))
    found = tuple(name for name in names if name in headings)
    size = len(trimmed)
    if len(found) < _MIN_REQUIRED:
        reason = (
            f"Missing required sections: only {len(found)} of {len(names)} "
            f"required sections found ({', '.join(found) or 'none'})"
        )
        return PruneValidationResult(False, reason, size, False, found)
    return PruneValidationResult(True, f"Keeps {', '.join(found)}", size, True, found)


def count_entries(text: str) -> int:
    """How many entries ``text`` holds: list items plus dated entry markers (``<!-- YYYY-MM-DD -->``)."""
    return sum(1 for line in _block_lines(text) if _BULLET_RE.match(line)) + sum(
        1 for line in text.splitlines() if _DATED_RE.match(line.strip()))


def unattended_prune_refusal(current: str, candidate: str, *, layout: str = "seed") -> str | None:
    """Why a prune must wait for the operator instead of being applied unattended, or ``None``.

    Unattended changes are conservative (design section 6): an invalid candidate, or one that removes
    more than half of the memory's entries or more than half of its bytes, is never applied by a
    scheduled run, however valid its headings look.
    """
    validation = validate_prune_candidate(candidate, layout=layout)
    if not validation.valid:
        return validation.reason
    before, after = count_entries(current), count_entries(candidate)
    if before and before - after > before / 2:
        return (f"it removes {before - after} of {before} entries (more than half); "
                "review it before it is applied")
    old_bytes, new_bytes = len(current.encode("utf-8")), len(js_trim(candidate).encode("utf-8")) + 1
    if old_bytes and old_bytes - new_bytes > old_bytes / 2:
        return (f"it removes {old_bytes - new_bytes:,} of {old_bytes:,} bytes (more than half); "
                "review it before it is applied")
    return None


def _not_applied(reason: str, original_size: int) -> PruneOutcome:
    return PruneOutcome(False, reason, 0, original_size, original_size)


def apply_memory_pruning(
    root: Path | str, candidate: str | None, *, expected_hash: str | None = None
) -> PruneOutcome:
    """Validate ``candidate`` and, when valid, write it as the working memory; never raises.

    ``None`` means the AI offered no prune (reason :data:`PRUNE_NOT_OFFERED_REASON`, not a failure).
    ``expected_hash`` is the hash of the memory the candidate was made from; without it, the memory
    read here is the reference, so an append landing between this read and the write is not lost
    (the write is refused with ``CONFLICT``). Any refused or failed write leaves the file as it was.
    """
    try:
        current = read_working_memory(root)
    except Exception as exc:  # reported in the outcome, never raised
        log.warning("prune not applied: cannot read %s: %s", MEMORY_WORKING_PATH, exc)
        return _not_applied(f"Working memory could not be read: {exc}", 0)
    original_size = len(current)
    if candidate is None:
        return _not_applied(PRUNE_NOT_OFFERED_REASON, original_size)
    validation = validate_prune_candidate(candidate)
    if not validation.valid:
        return _not_applied(validation.reason, original_size)

    new_content = js_trim(candidate) + "\n"
    reference = expected_hash if expected_hash is not None else fileio.content_hash(current)
    try:
        write_working_memory(root, new_content, expected_hash=reference, source="prune")
    except MemoryBackendError as exc:
        log.warning("prune not applied (%s): %s", exc.code, exc)
        return _not_applied(f"Prune candidate could not be written ({exc.code}): {exc}", original_size)
    except Exception as exc:  # reported in the outcome, never raised
        log.warning("prune not applied: %s", exc)
        return _not_applied(f"Prune candidate could not be written: {exc}", original_size)
    new_size = len(new_content)
    return PruneOutcome(True, "Prune candidate validated and applied", new_size - original_size, original_size, new_size)
