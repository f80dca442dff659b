"""Validating and applying a pruned working memory proposed by the AI.

Validation is Fusion's ``validatePruneCandidate``: a candidate must be non-blank and keep at least two
of ``## Architecture``, ``## Conventions`` and ``## Pitfalls``. Applying it writes through
``core.fileio.replace_text`` so the previous memory stays in history.

Fixes over Fusion (memdesk design, section 3): the written file ends with exactly one newline (Fusion
wrote the trimmed text with none), ``new_size`` is the length of what was written, and a write that
fails is reported in the outcome instead of raised.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from core import fileio
from core.errors import MemoryBackendError
from core.insights._text import js_trim
from core.insights.files import read_working_memory, write_working_memory
from core.insights.model import (
    MEMORY_WORKING_PATH,
    PRUNE_NOT_OFFERED_REASON,
    PruneOutcome,
    PruneValidationResult,
)

__all__ = ["REQUIRED_MEMORY_SECTIONS", "apply_memory_pruning", "validate_prune_candidate"]

log = logging.getLogger(__name__)

REQUIRED_MEMORY_SECTIONS: tuple[str, ...] = ("Architecture", "Conventions", "Pitfalls")
_MIN_REQUIRED = 2


def validate_prune_candidate(candidate: Any) -> PruneValidationResult:
    """Check a prune candidate: non-blank and keeping at least 2 of the 3 required sections; never raises."""
    if not isinstance(candidate, str) or not candidate:
        return PruneValidationResult(False, "Prune candidate is undefined or empty", 0, False)
    trimmed = js_trim(candidate)
    if not trimmed:
        return PruneValidationResult(False, "Prune candidate is empty after trimming", 0, False)
    found = tuple(name for name in REQUIRED_MEMORY_SECTIONS if f"## {name}" in trimmed)
    size = len(trimmed)
    if len(found) < _MIN_REQUIRED:
        reason = (
            f"Missing required sections: only {len(found)} of {len(REQUIRED_MEMORY_SECTIONS)} "
            f"required sections found ({', '.join(found) or 'none'})"
        )
        return PruneValidationResult(False, reason, size, False, found)
    return PruneValidationResult(True, f"Keeps {', '.join(found)}", size, True, found)


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
