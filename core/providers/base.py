"""What every model provider implements, the request it receives, and the one error it raises.

A provider turns an extraction prompt into the model's raw reply text. It runs on a worker thread
(never the GUI thread), polls ``cancel()`` while it waits, and reports ``progress(percent, message)``.
Every failure is a :class:`ProviderError` whose message an operator can act on and whose ``kind``
the caller can branch on; it never contains an API key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

__all__ = [
    "DEFAULT_DEADLINE_S",
    "DEFAULT_MAX_REPLY_BYTES",
    "ERROR_KINDS",
    "CancelCheck",
    "ErrorKind",
    "ProgressCallback",
    "Provider",
    "ProviderError",
    "ProviderRequest",
    "format_bytes",
    "never_cancelled",
    "no_progress",
]

ErrorKind = Literal["auth", "server", "timeout", "network", "bad_reply", "cancelled", "config"]
#: ``config`` is a provider that cannot start: unknown name, missing command, invalid URL.
ERROR_KINDS: tuple[str, ...] = ("auth", "server", "timeout", "network", "bad_reply", "cancelled", "config")

#: A reply bigger than this is refused (``maxReplyBytes`` in the provider's config changes it).
DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024
#: No provider call lasts longer than this, however slowly the reply trickles in (``deadlineS``).
DEFAULT_DEADLINE_S = 600.0

CancelCheck = Callable[[], bool]
ProgressCallback = Callable[[int, str], None]


def format_bytes(n: int) -> str:
    """A size for a message: ``8 MiB``, ``512 KiB``, ``100 bytes``."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} bytes"


def never_cancelled() -> bool:
    """The default cancel check: the run is never cancelled."""
    return False


def no_progress(percent: int, message: str) -> None:
    """The default progress callback: progress is ignored."""


class ProviderError(Exception):
    """A provider call that failed; ``message`` is for the operator, ``kind`` is one of :data:`ERROR_KINDS`."""

    def __init__(self, message: str, kind: ErrorKind, provider: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.provider = provider

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"ProviderError({self.message!r}, kind={self.kind!r}, provider={self.provider!r})"


@dataclass(frozen=True)
class ProviderRequest:
    """One extraction request: the prompt for a model, and the memory it was built from.

    Model providers send ``prompt``; the offline provider reads ``working_memory`` and
    ``existing_insights`` directly. ``project_root`` names the project (a command provider never
    runs there: it gets a fresh temporary folder).
    """

    prompt: str
    working_memory: str
    existing_insights: str | None = None
    project_root: Path | None = None
    now: datetime | None = None
    #: A system prompt of the caller's own (compaction sends Fusion's); ``None``: the provider's default.
    system_prompt: str | None = None


@runtime_checkable
class Provider(Protocol):
    """A source of extraction replies: a chat-completions endpoint, a local command, or rules."""

    name: str

    def complete(
        self,
        request: ProviderRequest,
        *,
        cancel: CancelCheck = never_cancelled,
        progress: ProgressCallback = no_progress,
    ) -> str:
        """Return the raw reply text for ``request``; raise :class:`ProviderError` on any failure."""
        ...
