"""Who writes: the writer every change is recorded with, at the bottom of storage.

The write pipeline (:mod:`core.storage.pipeline`) stamps each write with a :class:`Writer`, and the record of
changes memdesk did not make (:mod:`core.storage.noticed`) takes one too; both import it from here, so neither
imports the other for it. ``core.storage.pipeline.Writer`` (and ``OPERATOR``, ``MEMDESK``, ``WRITER_KINDS``,
``WriterKind``) stay importable from the pipeline for its callers.
"""

from __future__ import annotations

from typing import Literal

from core.frozen import Record

WriterKind = Literal["operator", "cli", "token", "mcp", "program", "memdesk"]
WRITER_KINDS: tuple[str, ...] = ("operator", "cli", "token", "mcp", "program", "memdesk")


class Writer(Record):
    """Who writes: the operator in the app, the CLI, an HTTP token, an MCP client, another program, memdesk."""

    __slots__ = _fields = ("kind", "name")
    kind: WriterKind
    name: str | None

    def __init__(self, kind: WriterKind, name: str | None = None) -> None:
        if kind not in WRITER_KINDS:
            raise ValueError(f"writer kind {kind!r} is not one of {', '.join(WRITER_KINDS)}")
        self._set(kind=kind, name=name)

    @property
    def agent(self) -> bool:
        """Whether the writer is an agent or another program rather than the operator or memdesk itself."""
        return self.kind not in ("operator", "memdesk")

    @property
    def label(self) -> str:
        """``kind:name`` (or ``kind``) as history and notices show the writer."""
        return f"{self.kind}:{self.name}" if self.name else self.kind


OPERATOR = Writer("operator")
MEMDESK = Writer("memdesk")
#: Text memdesk takes in from a mirrored file (an agent's ``>>``, an edit outside memdesk): its history rows and
#: the firewall's report on it name this writer.
MIRROR = Writer("program", "mirror")
