"""``memory_get``'s ``startLine`` and ``lineCount``, taken as Fusion's ``fn_memory_get`` takes them.

Read from Runfusion/Fusion (never copied): ``packages/engine/src/agent-tools.ts`` at
51870ed27ba844cd6c0016f25bca9ac56955e8d5, ``memoryGetParams``: both are ``Type.Number`` (any JSON number,
no minimum or maximum); ``packages/core/src/memory-backend.ts`` at b1f6740b5198d0e7cea9a6555c9ee9414e0ccb3f,
``getMemoryFile``: ``startLine = max(1, floor(startLine ?? 1))`` and ``lineCount = min(max(1, floor(lineCount
?? 120)), 400)``. So a fractional number is floored (``2.5`` reads from line 2; a ``lineCount`` of ``0.5``
reads one line), a missing or ``null`` one is the default, and a huge one is a window past the end (start)
or 400 lines (count). :func:`line_number` floors the same way; the clamps stay where they were
(:func:`core.server.mcp_models.window_lines`, ``max(1, …)`` in the tool).

What stays a one-line ``INVALID_ARGUMENT`` (see :func:`line_number`): a value that is neither a JSON number
nor a string spelling one, and a number that is not finite.
"""

from __future__ import annotations

import math
import re
from typing import Annotated

from pydantic import PlainValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

__all__ = ["LineNumber", "line_number"]


def line_number(value: object) -> int:
    """``value`` floored to a whole line number, as Fusion's ``Math.floor``; a refusal for what is no number.

    Fusion's agent tools check their arguments with type coercion (``pi-ai``'s AJV, ``coerceTypes: true``:
    badlogic/pi-mono ``packages/ai/src/utils/validation.ts`` at 160d6834) before ``getMemoryFile`` sees them,
    and models often quote their numbers: so a string that is a number (``"3"``, ``" 2.5 "``) is that number,
    and ``true``/``false`` are 1 and 0, as there (memdesk took ``"3"`` and ``true`` before it floored, too).

    Refused, and why (Fusion's answer to each, for the record):

    - a string that is not a decimal number (``"abc"``, ``""``, ``"1_000"``, ``"Infinity"``): AJV refuses what
      JavaScript's ``+value`` does not read (Python's ``float`` would take ``1_000``; JavaScript not); a
      hexadecimal ``"0x10"``, which JavaScript reads as 16, is refused too: no one means a line that way;
    - NaN: ``Math.floor(NaN)`` is NaN and ``Math.max(1, NaN)`` is NaN, so Fusion answers an empty window
      whose ``startLine``/``endLine`` are ``null``: nonsense, not a window.
    - an infinity (the literal ``Infinity``, or ``1e400``, which overflows): RFC 8259 JSON has neither NaN
      nor Infinity (``JSON.parse`` refuses the literals), and a ``startLine`` of Infinity gives Fusion
      ``startLine: null``; memdesk cannot tell ``1e400`` from the literal once parsed, so every infinity
      is refused.
    - anything else (a list, an object): not a number.
    """
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        value = _decimal(value)
    if not isinstance(value, int | float):
        kind = "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else "that"
        raise PydanticCustomError("line_number", "input should be a number (a line number or count), not {kind}",
                                  {"kind": kind})
    if isinstance(value, float):
        if not math.isfinite(value):
            raise PydanticCustomError("line_number", "input should be a finite number")
        return math.floor(value)
    return value


_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _decimal(text: str) -> int | float:
    """The number a string spells as a JSON or JavaScript decimal (spaces around it allowed), else a refusal."""
    spelled = text.strip()
    if not _DECIMAL.fullmatch(spelled):
        raise PydanticCustomError("line_number", "input should be a number (a line number or count), not {text}",
                                  {"text": repr(text[:40])})
    whole = spelled.lstrip("+-").isdigit() and len(spelled) <= 30  # longer: a float (its infinity refused)
    return int(spelled) if whole else float(spelled)


#: A line number or count: any finite JSON number, floored. Advertised as ``number`` (as Fusion's
#: ``Type.Number``), so a client that checks arguments against the schema sends ``2.5`` too.
LineNumber = Annotated[int, PlainValidator(line_number), WithJsonSchema({"type": "number"})]
