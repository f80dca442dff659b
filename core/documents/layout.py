"""Where a project's memory lives on disk: the seed layout (design §2) or current Fusion's layered one (§2a).

A project is *layered* when ``.fusion/memory/`` is a folder; otherwise it is in the *seed* layout.
This module only looks: it lists the documents, normalises the paths users and clients give, and
knows each layout's scaffolds. It never creates a file or a folder, so opening a project changes
nothing on disk. The listing never follows a symlink out of the project root; every name in it is
one a user could give back to :meth:`Layout.normalize` and get the same document.
"""

from __future__ import annotations

import os
import re
import stat
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

from core.errors import MemoryBackendError
from core.frozen import Record

LayoutKind = Literal["seed", "layered"]
Layer = Literal["working", "long-term", "daily", "dreams", "insights", "archive", "legacy"]

FUSION_DIR = ".fusion"
LAYERED_DIR = ".fusion/memory"
AGENT_DIR = ".fusion/agent-memory"
SEED_MEMORY = ".fusion/memory.md"
SEED_INSIGHTS = ".fusion/memory-insights.md"
SEED_AUDIT = ".fusion/memory-audit.md"
SEED_AUDIT_STATE = ".fusion/memory-audit-state.json"
ARCHIVE = ".fusion/memory-archive.md"
LONG_TERM_NAME = "MEMORY.md"
DREAMS_NAME = "DREAMS.md"

# ASCII digits only and no trailing newline: ``\d`` takes fullwidth digits and ``$`` takes "...md\n".
DAILY_RE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}\.md\Z")
_AGENT_UNSAFE = re.compile(r"[^a-zA-Z0-9._-]+")
#: Longest on-disk agent id: far under the 255-byte name limit of file systems, with room for the
#: lock file name memdesk builds from the document's path.
MAX_AGENT_ID = 128
#: Longest name of one path component a user may give (the common file-system limit, in bytes).
MAX_NAME_BYTES = 255

_SEED_SCAFFOLD_LINES = (
    "# Project Memory",
    "<!-- This file stores durable project learnings. Agents consult and update it during triage and execution. -->",
    "## Architecture",
    "<!-- Key architectural patterns, module boundaries, and design decisions -->",
    "## Conventions",
    "<!-- Project-specific coding standards, naming patterns, file organization -->",
    "## Pitfalls",
    "<!-- Known issues, common mistakes, and things to avoid -->",
    "## Context",
    "<!-- Important background information, dependency constraints, deployment notes -->",
)
#: The seed layout's working-memory scaffold: every non-empty line but the last followed by a blank line.
SEED_SCAFFOLD = "\n\n".join(_SEED_SCAFFOLD_LINES) + "\n"
LONG_TERM_SCAFFOLD = (
    "# Project Memory\n\n<!-- Curated long-term memory. Store durable decisions, conventions, preferences, "
    "and pitfalls. -->\n\n## Decisions\n\n## Conventions\n\n## Pitfalls\n\n## Context\n"
)
DREAMS_SCAFFOLD = (
    "# Memory Dreams\n\n<!-- Periodic synthesized patterns from daily notes. Promote durable lessons to "
    "MEMORY.md. -->\n"
)


def agent_memory_scaffold(name: str | None = None) -> str:
    """An agent's new MEMORY.md as Fusion's ``ensureAgentMemoryFiles`` writes it (no seeded memory):
    the title (with the agent's name when it has one), the comment, the empty memory and a newline."""
    title = f"# Agent Memory: {name.strip()}" if name and name.strip() else "# Agent Memory"
    return f"{title}\n\n<!-- Per-agent memory. Keep separate from workspace Project Memory. -->\n\n\n"


#: The scaffold of an agent's own MEMORY.md created by memdesk (it knows the agent's id, not its name).
AGENT_LONG_TERM_SCAFFOLD = agent_memory_scaffold()
#: Fusion's scaffold of an agent's DREAMS.md (same place).
AGENT_DREAMS_SCAFFOLD = "# Agent Memory Dreams\n\n<!-- Synthesized patterns from this agent's daily notes. -->\n"
#: The comment of an agent's daily note.
AGENT_DAILY_COMMENT = "<!-- Running observations for this agent. -->"


def agent_daily_scaffold(day: str) -> str:
    """Return Fusion's scaffold of an agent's daily note for ``day`` (``YYYY-MM-DD``)."""
    return f"# Agent Daily Memory {day}\n\n{AGENT_DAILY_COMMENT}\n"


def daily_scaffold(day: str) -> str:
    """Return Fusion's scaffold of a new daily note for ``day`` (``YYYY-MM-DD``)."""
    return (
        f"# Daily Memory {day}\n\n<!-- Append running observations, open loops, and day-to-day notes here. "
        "Promote evergreen facts to MEMORY.md. -->\n"
    )


def sanitize_agent_id(agent: str) -> str:
    """Return the on-disk agent id: runs of ``[^a-zA-Z0-9._-]`` become ``-``; empty gives ``agent``.

    ``.`` and ``..`` (allowed characters, but a path escape) also give ``agent``.
    """
    cleaned = _AGENT_UNSAFE.sub("-", agent or "")
    return "agent" if cleaned in {"", ".", ".."} else cleaned


def check_agent_id(agent: str) -> str:
    """Return the sanitized agent id, or raise ``INVALID_CONFIG`` when it is too long to be a folder name."""
    cleaned = sanitize_agent_id(agent)
    if len(cleaned) > MAX_AGENT_ID:
        raise MemoryBackendError(f"agent id {_shown(agent)} is {len(cleaned):,} characters long; the limit is "
                                 f"{MAX_AGENT_ID}. Nothing was written", "INVALID_CONFIG", "file")
    return cleaned


def _shown(text: str, limit: int = 80) -> str:
    """``repr`` of user input, cut to ``limit`` characters so an error stays one readable line."""
    shown = repr(text)
    return shown if len(shown) <= limit else f"{shown[:limit - 5]}...{shown[-1]} ({len(text):,} characters)"


def detect_layout(root: str | os.PathLike[str]) -> LayoutKind:
    """Return ``"layered"`` when ``.fusion/memory/`` is a folder, else ``"seed"``.

    A ``.fusion/memory`` that is a link to a folder counts too, as it does for Fusion: reads and
    writes through it are then refused when it leads out of the root, instead of memdesk falling
    back to the seed layout and creating ``.fusion/memory.md``, a file Fusion would not read.
    """
    return "layered" if os.path.isdir(Path(root) / LAYERED_DIR) else "seed"


class DocumentInfo(Record):
    """One memory document as the picker and ``memdesk files`` list it (a frozen :class:`~core.frozen.Record`,
    not a dataclass: this module is on every ``memdesk append`` process's path)."""

    __slots__ = _fields = ("path", "label", "layer", "agent", "size", "updated_at", "legacy")
    path: str
    label: str
    layer: Layer
    agent: str | None
    size: int | None
    updated_at: str | None
    legacy: bool

    def __init__(self, path: str, label: str, layer: Layer, agent: str | None = None, size: int | None = None,
                 updated_at: str | None = None, legacy: bool = False) -> None:
        put = object.__setattr__  # the fields one by one: a listing makes 20,000 of these
        put(self, "path", path)
        put(self, "label", label)
        put(self, "layer", layer)
        put(self, "agent", agent)
        put(self, "size", size)
        put(self, "updated_at", updated_at)
        put(self, "legacy", legacy)

    def to_json(self) -> dict[str, object]:
        """The camelCase JSON shape of ``memdesk files --json`` and ``GET /api/memory/files``."""
        return {"path": self.path, "label": self.label, "layer": self.layer, "agent": self.agent,
                "size": self.size, "updatedAt": self.updated_at, "legacy": self.legacy}


def _inside(path: Path | str, root_real: str) -> bool:
    """Whether the real path of ``path`` is inside ``root_real`` (a link loop counts as outside)."""
    try:
        real = os.path.realpath(path)
    except (OSError, RuntimeError):
        return False
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def _regular_stat(path: Path, root_real: str) -> os.stat_result | None:
    """Stat a listed file; ``None`` unless it is a regular file whose real path stays inside the root.

    Only a symlink costs a ``realpath``: the folders it sits in are checked once by the caller.
    """
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            if not _inside(path, root_real):
                return None
            st = os.stat(path)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def _iso(ts: float) -> str:
    """``2026-08-20T10:04:05Z``: the time to the second, in UTC (as ``datetime.isoformat`` gives it, a third of the
    cost: a listing stamps 20,000 of these)."""
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
    except (OverflowError, OSError, ValueError):
        return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class Layout:
    """The memory layout of one project folder: its paths, its documents, and path normalisation."""

    def __init__(self, root: str | os.PathLike[str], kind: LayoutKind | None = None) -> None:
        self.root = Path(root)
        self._root_real = os.path.realpath(self.root)
        #: Per listing: whether each folder's real path is inside the root (a linked-out one lists nothing).
        self._folders_inside: dict[str, bool] = {}
        self.kind: LayoutKind = kind or detect_layout(self.root)
        layered = self.kind == "layered"
        #: The long-term document: what commands use when no ``--file`` is given.
        self.memory_path = f"{LAYERED_DIR}/{LONG_TERM_NAME}" if layered else SEED_MEMORY
        self.insights_path = f"{LAYERED_DIR}/memory-insights.md" if layered else SEED_INSIGHTS
        self.audit_path = f"{LAYERED_DIR}/memory-audit.md" if layered else SEED_AUDIT
        self.audit_state_path = f"{LAYERED_DIR}/memory-audit-state.json" if layered else SEED_AUDIT_STATE
        self.archive_path = ARCHIVE
        self.dreams_path = f"{LAYERED_DIR}/{DREAMS_NAME}"

    @property
    def layered(self) -> bool:
        """Whether this is current Fusion's layered layout."""
        return self.kind == "layered"

    # -- paths -------------------------------------------------------------------------------------
    def daily_path(self, day: date | None = None, agent: str | None = None) -> str:
        """Return the daily note of ``day`` (today in UTC by default), the project's or an agent's."""
        name = f"{(day or datetime.now(UTC).date()).isoformat()}.md"
        return f"{self._base(agent)}/{name}"

    def long_term_path(self, agent: str | None = None) -> str:
        """Return the long-term document, the project's or an agent's."""
        return self.memory_path if agent is None else f"{self._base(agent)}/{LONG_TERM_NAME}"

    def _base(self, agent: str | None) -> str:
        return LAYERED_DIR if agent is None else f"{AGENT_DIR}/{check_agent_id(agent)}"

    def scaffold_for(self, relpath: str) -> str | None:
        """Return the exact text Fusion gives a new ``relpath`` (``None`` when it has no scaffold here)."""
        name = relpath.rsplit("/", 1)[-1]
        if self.layered and self.is_layered_memory(relpath):
            if relpath.startswith(f"{AGENT_DIR}/"):
                if name == DREAMS_NAME:
                    return AGENT_DREAMS_SCAFFOLD
                return AGENT_LONG_TERM_SCAFFOLD if name == LONG_TERM_NAME else agent_daily_scaffold(name[:-3])
            if name == LONG_TERM_NAME:
                return LONG_TERM_SCAFFOLD
            if name == DREAMS_NAME:
                return DREAMS_SCAFFOLD
            if DAILY_RE.match(name):
                return daily_scaffold(name[:-3])
        if not self.layered and relpath == SEED_MEMORY:
            return SEED_SCAFFOLD
        return None

    @staticmethod
    def is_layered_memory(relpath: str) -> bool:
        """Whether ``relpath`` names a layered memory document (long-term, daily or dreams, any agent)."""
        parts = relpath.split("/")
        if len(parts) == 3 and "/".join(parts[:2]) == LAYERED_DIR:
            name = parts[2]
        elif len(parts) == 4 and "/".join(parts[:2]) == AGENT_DIR and sanitize_agent_id(parts[2]) == parts[2] \
                and len(parts[2]) <= MAX_AGENT_ID:
            name = parts[3]
        else:
            return False
        return name in {LONG_TERM_NAME, DREAMS_NAME} or bool(DAILY_RE.match(name))

    def is_document(self, relpath: str) -> bool:
        """Whether ``relpath`` is a memory document of this layout (a file memdesk may read and write)."""
        if relpath in {self.memory_path, self.insights_path, self.archive_path}:
            return True
        if self.layered:
            return self.is_layered_memory(relpath) or relpath == SEED_MEMORY  # the legacy file
        return False

    def normalize(self, user_path: str) -> str:
        """Normalise a path a user or client gave to a document's project-relative path.

        ``MEMORY.md``, ``memory/MEMORY.md`` and ``.fusion/memory/MEMORY.md`` (and the same for
        ``DREAMS.md`` and daily names) all give ``.fusion/memory/<file>``; agents' files are named
        ``.fusion/agent-memory/<id>/<file>`` (or ``agent-memory/<id>/<file>``). An absolute path, one
        with ``..`` or a backslash, or one that is not a memory document is refused.
        """
        if not isinstance(user_path, str) or not user_path.strip():
            raise MemoryBackendError("no document path given", "INVALID_CONFIG", "file")
        raw = user_path.strip()
        shown = _shown(raw)
        if "\x00" in raw or "\\" in raw:
            raise MemoryBackendError(f"document path {shown} has a NUL or backslash", "INVALID_CONFIG", "file")
        if raw.startswith("/") or re.match(r"^[A-Za-z]:", raw):
            raise MemoryBackendError(f"document path {shown} is absolute; give a path inside the project",
                                     "INVALID_CONFIG", "file")
        parts = [p for p in raw.split("/") if p not in {"", "."}]
        if ".." in parts:
            raise MemoryBackendError(f"document path {shown} contains '..'", "INVALID_CONFIG", "file")
        if any(len(p.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES for p in parts):
            raise MemoryBackendError(f"document path {shown} has a name over {MAX_NAME_BYTES} bytes long",
                                     "INVALID_CONFIG", "file")
        rel = "/".join(parts)
        candidates = [rel]
        name = parts[-1] if parts else ""
        if len(parts) == 1 and (name in {LONG_TERM_NAME, DREAMS_NAME} or DAILY_RE.match(name)):
            candidates.insert(0, f"{LAYERED_DIR}/{name}")
        elif rel.startswith("memory/") or rel.startswith("agent-memory/"):
            candidates.insert(0, f"{FUSION_DIR}/{rel}")
        elif len(parts) == 1 and not self.layered and name in {"memory.md", "memory-insights.md",
                                                                "memory-archive.md"}:
            candidates.insert(0, f"{FUSION_DIR}/{name}")
        elif len(parts) == 1 and self.layered and name == "memory-insights.md":
            candidates.insert(0, self.insights_path)
        for cand in candidates:
            if self.is_document(cand):
                return cand
        raise MemoryBackendError(
            f"{shown} is not a memory document of this project ({self.kind} layout); "
            "`memdesk files` lists them", "NOT_FOUND", "file")

    # -- listing -----------------------------------------------------------------------------------
    def documents(self) -> list[DocumentInfo]:
        """Every memory document that exists, in design §2a order (seed: memory, insights, archive)."""
        out: list[DocumentInfo] = []
        self._folders_inside = {}  # a folder may have been linked since the last listing
        if not self.layered:
            self._add(out, SEED_MEMORY)
            self._add(out, SEED_INSIGHTS)
            self._add(out, ARCHIVE)
            return out
        self._add_layered(out, LAYERED_DIR, None)
        agents_dir = self.root / AGENT_DIR
        try:
            agents = sorted(e.name for e in os.scandir(agents_dir) if e.is_dir(follow_symlinks=False)) \
                if _inside(agents_dir, self._root_real) else []
        except OSError:
            agents = []
        for agent in agents:
            if sanitize_agent_id(agent) == agent and len(agent) <= MAX_AGENT_ID:
                # A folder (not a link) inside a folder that is inside the root is inside: no realpath each.
                self._folders_inside[f"{AGENT_DIR}/{agent}"] = True
                self._add_layered(out, f"{AGENT_DIR}/{agent}", agent)
        self._add(out, self.insights_path)
        self._add(out, ARCHIVE)
        self._add(out, SEED_MEMORY)  # legacy in this layout: Fusion no longer reads it
        return out

    def _add_layered(self, out: list[DocumentInfo], base: str, agent: str | None) -> None:
        """List one memory folder from a single ``scandir``: its entries' own ``lstat`` (no path built and
        looked up again per file), a link's target checked as :meth:`_add` does."""
        if base not in self._folders_inside:
            self._folders_inside[base] = _inside(self.root / base, self._root_real)
        entries: dict[str, os.DirEntry[str]] = {}
        if self._folders_inside[base]:
            try:
                with os.scandir(os.path.join(self.root, base)) as it:
                    entries = {e.name: e for e in it}
            except OSError:
                entries = {}
        daily = sorted((n for n in entries if DAILY_RE.match(n)), reverse=True)
        for name in (LONG_TERM_NAME, *daily, DREAMS_NAME):
            entry = entries.get(name)
            if entry is None:
                continue
            try:
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    st = _regular_stat(Path(entry.path), self._root_real)  # type: ignore[assignment]
            except OSError:
                continue
            if st is not None and stat.S_ISREG(st.st_mode):
                out.append(self.describe(f"{base}/{name}", st.st_size, _iso(st.st_mtime)))

    def _add(self, out: list[DocumentInfo], rel: str) -> None:
        """List ``rel`` (labelled by :meth:`describe`) when it is a regular file inside the project."""
        folder = rel.rsplit("/", 1)[0]
        if folder not in self._folders_inside:  # one realpath per folder, not per file
            self._folders_inside[folder] = _inside(self.root / folder, self._root_real)
        st = _regular_stat(self.root / rel, self._root_real) if self._folders_inside[folder] else None
        if st is None:
            return
        out.append(self.describe(rel, st.st_size, _iso(st.st_mtime)))

    def describe(self, relpath: str, size: int | None = None, updated_at: str | None = None) -> DocumentInfo:
        """The listing entry of ``relpath`` (a document of this layout) without looking at the disk.

        The one place labels and layers are named: the disk listing uses it, and so do backends that
        keep documents themselves (``postgres``, ``sqlite`` without its mirror).
        """
        parts = relpath.split("/")
        agent = parts[2] if relpath.startswith(AGENT_DIR + "/") and len(parts) == 4 else None
        prefix = f"{agent}: " if agent else ""
        name = parts[-1]
        if relpath == self.insights_path:
            label, layer = "Insights", "insights"
        elif relpath == ARCHIVE:
            label, layer = "Archive", "archive"
        elif relpath == SEED_MEMORY:
            label, layer = (("Legacy memory.md (not read by Fusion)", "legacy") if self.layered
                            else ("Working memory", "working"))
        elif name == LONG_TERM_NAME:
            label, layer = f"{prefix}Long-term memory", "long-term"
        elif name == DREAMS_NAME:
            label, layer = f"{prefix}Dreams", "dreams"
        else:
            label, layer = f"{prefix}Daily notes {name[:-3]}", "daily"
        return DocumentInfo(relpath, label, layer, agent, size, updated_at, layer == "legacy")  # type: ignore[arg-type]

    @staticmethod
    def order_key(doc: DocumentInfo) -> tuple[object, ...]:
        """Design §2a order: the project's files, then each agent's; long-term, daily (newest first), dreams."""
        rank = {"working": 0, "long-term": 0, "daily": 1, "dreams": 2, "insights": 3, "archive": 4, "legacy": 5}
        day = doc.path.rsplit("/", 1)[-1] if doc.layer == "daily" else ""
        inverted = "".join(chr(0x7F - ord(c)) for c in day)  # newest first
        agent_group = (1, doc.agent) if doc.agent and doc.layer in {"long-term", "daily", "dreams"} else (0, "")
        project_tail = doc.layer in {"insights", "archive", "legacy"}
        return (project_tail, agent_group, rank.get(doc.layer, 9), inverted)

    def info(self, relpath: str) -> DocumentInfo | None:
        """The listing entry of one document, ``None`` when it does not exist."""
        return next((d for d in self.documents() if d.path == relpath), None)
