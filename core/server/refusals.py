"""What an agent is told when memdesk refuses: a stable code, one line of reason, and the tool to use next.

Every refusal of the MCP tools is a :class:`Refusal`; :func:`refusal_of` turns the project model's
errors (and pydantic's validation errors) into one. Messages never carry a server path:
:func:`scrub` replaces the served projects' folders, the user's config folder and the home folder
before any text leaves the server.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.errors import MemoryBackendError, PathOutsideRootError, SettingsError
from core.storage.fileio import TargetRefused

__all__ = ["Refusal", "refusal_of", "scrub", "validation_refusal"]

#: The tool to use next for each code (``None``: nothing an agent can do but tell the operator).
NEXT: dict[str, str | None] = {
    "EMPTY_ENTRY": "memory_append with the entry's text",
    "INVALID_ARGUMENT": None,  # set per call: the same tool with the argument fixed
    "INVALID_PATH": "memory_files to list the documents' paths",
    "NOT_FOUND": "memory_files to list the documents that exist",
    "CONFLICT": "memory_get to read the document again, then retry with its hash",
    "READ_ONLY": "memory_get (reading still works); ask the operator to make memory writable",
    "QUOTA_EXCEEDED": "memory_edit or memory_remove_entry to make room",
    "BACKEND_UNAVAILABLE": "the same tool again later",
    "CAPABILITY_UNSUPPORTED": "memory_get to read the documents instead",
    "PROJECT_NOT_SERVED": "memory_projects to list the served projects",
    "SETTINGS_INVALID": "memory_projects; ask the operator to fix the project's settings",
    "SPAN_NOT_FOUND": "memory_get to read the document, then memory_edit with text copied from it",
    "SPAN_AMBIGUOUS": "memory_edit with a longer oldText that occurs once",
    "SECTION_NOT_FOUND": "memory_get to see the document's headings",
    "ENTRY_NOT_FOUND": "memory_get or memory_search to find the entry's exact text or line",
    "ENTRY_AMBIGUOUS": "memory_remove_entry with the entry's line instead of its text",
    "SCOPE": "memory_projects to see what this token may do",
    "REFUSED": "memory_get; ask the operator (memdesk inbox) if the text must be kept",
    "UNKNOWN_TOOL": "tools/list to see memdesk's tools",
    "WRITE_FAILED": "the same tool again; tell the operator if it keeps failing",
    "READ_FAILED": "the same tool again; tell the operator if it keeps failing",
    "LIMIT": "resources/unsubscribe from the documents no longer followed",
}


@dataclass
class Refusal(Exception):
    """A refusal an agent can act on: ``code`` (stable), ``reason`` (one line), ``next`` (what to call)."""

    code: str
    reason: str
    next: str | None = None
    extra: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        super().__init__(self.text)
        if self.next is None:
            self.next = NEXT.get(self.code)

    @property
    def text(self) -> str:
        """``CODE: reason. Next: tool.`` on one line."""
        reason = bounded(self.reason).rstrip(".")
        hint = f" Next: {self.next}." if self.next else ""
        return f"{self.code}: {reason}.{hint}"

    def __str__(self) -> str:
        return self.text

    def to_json(self) -> dict[str, Any]:
        """The structured form sent beside the text (``error``)."""
        out: dict[str, Any] = {"code": self.code, "message": bounded(self.reason), "next": self.next}
        if self.extra:
            out.update(self.extra)
        return out


#: The longest reason sent: a refusal that quotes a caller's 5,000-character id or name whole says no more.
MAX_REASON = 1000


def bounded(text: str) -> str:
    """``text`` on one line and at most :data:`MAX_REASON` characters, saying how much was cut."""
    line = " ".join(text.split())
    if len(line) <= MAX_REASON:
        return line
    return f"{line[:MAX_REASON]}… ({len(line) - MAX_REASON:,} characters cut)"


_HOME = str(Path.home())


def scrub(text: str, roots: Iterable[tuple[str, os.PathLike[str] | str]] = ()) -> str:
    """``text`` with server paths replaced: a served project's folder by its key, the user's config folder
    by ``<memdesk config>``, the home folder by ``~``."""
    from core.settings.user_config import user_config_dir

    pairs: list[tuple[str, str]] = []
    for key, root in roots:
        for form in {str(root), os.path.realpath(root)}:
            pairs.append((form.rstrip("/") + "/", ""))
            pairs.append((form, f"<{key}>"))
    try:
        pairs.append((str(user_config_dir()), "<memdesk config>"))
    except Exception:  # noqa: BLE001 - no config folder: nothing to hide
        pass
    if _HOME not in ("", "/"):
        pairs.append((_HOME, "~"))
    for old, new in sorted(pairs, key=lambda p: -len(p[0])):  # longest first: a root inside home stays a key
        if old:
            text = text.replace(old, new)
    # Any other absolute path is the server's too (a link's target outside the project, a temporary file):
    # hidden. A path in quotes is the caller's own argument, echoed back, and stays.
    return _OTHER_PATH.sub("<a server path>", text)


#: An absolute path not in quotes and not part of a word, a relative path or a URL.
_OTHER_PATH = re.compile(r"(?<![\w.:/<>~'\"`-])/[^\s'\",;:()`]+")


_CODE_MAP = {"INVALID_CONFIG": "INVALID_ARGUMENT", "NOT_INITIALIZED": "BACKEND_UNAVAILABLE"}

#: The project model's messages speak to the CLI's user; an agent gets the tools' words instead.
_FOR_AGENTS = (
    ("`memdesk files` lists them", "memory_files lists them"),
    ("Switch it on, or pass --force to write anyway", "Ask the operator to switch it on"),
    ("give either --file or --layer/--agent, not both", "give either path or layer/agent, not both"),
    ("append without --layer daily/--agent", "append without layer daily or agent"),
    ("(and move the legacy file with `memdesk migrate`)", "(the operator can move the legacy file into MEMORY.md)"),
)
_CLI_COMMAND = re.compile(r"`memdesk [^`]*`")


def for_agents(text: str) -> str:
    """``text`` with the CLI's commands and flags put as an agent can act on them."""
    for old, new in _FOR_AGENTS:
        text = text.replace(old, new)
    return _CLI_COMMAND.sub("a memdesk command the operator can run", text)


def refusal_of(exc: BaseException, roots: Iterable[tuple[str, Any]] = ()) -> Refusal:
    """The :class:`Refusal` for a project-model error (anything else: a crash, re-raised by the caller)."""
    from core.server.service import ProjectNotServed

    roots = list(roots)
    if isinstance(exc, Refusal):
        exc.reason = scrub(exc.reason, roots)
        return exc
    if isinstance(exc, MemoryBackendError) and getattr(exc, "status", None) == "refused":  # the write screen
        flags = [f.to_json() for f in getattr(exc, "flags", ())]
        return Refusal("REFUSED", scrub(exc.message, roots), extra={"flags": flags} if flags else None)
    if isinstance(exc, MemoryBackendError):
        code = _CODE_MAP.get(exc.code, exc.code)
        extra = None
        current = getattr(exc, "current_hash", None)
        if exc.code == "CONFLICT" and current:
            extra = {"currentHash": current}
            return Refusal(code, f"{scrub(exc.message, roots)}; the document's current hash is {current}",
                           extra=extra)
        if isinstance(exc, TargetRefused):  # the file's state (a FIFO, hard links): retrying cannot help
            return Refusal(code, for_agents(scrub(exc.message, roots)),
                           next="memory_files to pick another document; tell the operator this one is not a "
                                "plain file")
        return Refusal(code, for_agents(scrub(exc.message, roots)))
    if isinstance(exc, PathOutsideRootError):
        return Refusal("INVALID_PATH", scrub(str(exc), roots))
    if isinstance(exc, ProjectNotServed):
        return Refusal("PROJECT_NOT_SERVED", scrub(str(exc.args[0]) if exc.args else str(exc), roots))
    if isinstance(exc, SettingsError):
        return Refusal("SETTINGS_INVALID", scrub(f"the project's settings cannot be used: {exc}", roots))
    raise TypeError(f"not a refusal: {type(exc).__name__}")


_URL = re.compile(r"\s*For further information visit \S+")


def validation_refusal(tool: str, exc: ValidationError) -> Refusal:
    """A pydantic validation error as one line naming each bad argument and what it must be (no URL)."""
    parts = []
    for err in exc.errors()[:4]:
        loc = ".".join(str(p) for p in err.get("loc", ()) if p not in ("body",)) or "arguments"
        msg = _URL.sub("", str(err.get("msg", "invalid value"))).rstrip(".")
        if err.get("type") == "missing":
            msg = "is required"
        elif err.get("type") == "extra_forbidden":
            msg = "is not an argument of this tool"
        else:
            msg = msg[0].lower() + msg[1:] if msg else "is invalid"
        parts.append(f"{loc} {msg}" if msg.startswith("is ") else f"{loc}: {msg}")
    more = f" (and {len(exc.errors()) - 4} more)" if len(exc.errors()) > 4 else ""
    return Refusal("INVALID_ARGUMENT", "; ".join(parts) + more + "; nothing was done",
                   next=f"{tool} with the argument fixed")
