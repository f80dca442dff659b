"""Request and response bodies of the HTTP API (design §7), in current Fusion's camelCase shapes.

Fusion's dashboard sends and reads these keys (``content``, ``path``, ``files``, ``currentBackend``,
``workingMemorySize`` ...); memdesk adds fields Fusion does not have (``hash``, ``expectedHash``,
``warnings``) without renaming any of Fusion's. Strings are strict: a number where text belongs is a
400, never coerced to text and written.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr

AppendLayer = Literal["long-term", "daily"]
SearchModeName = Literal["keyword", "semantic", "hybrid"]


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="ignore")


class _Request(BaseModel):
    # Unknown keys are refused, so a misspelt ``expectedhash`` cannot silently drop the guard.
    model_config = ConfigDict(populate_by_name=True, extra="forbid")


# -- errors ---------------------------------------------------------------------------------------
class ErrorResponse(_Model):
    """Every error: one line naming the problem, the backend error code when there is one."""

    error: str = Field(description="What went wrong, in one line.")
    code: str | None = Field(None, description="MemoryBackendError code (CONFLICT, READ_ONLY, ...).")
    backend: str | None = Field(None, description="The backend that refused.")
    current_hash: str | None = Field(None, alias="currentHash",
                                     description="On CONFLICT: the SHA-256 of the document as it is now.")


# -- GET/PUT /api/memory --------------------------------------------------------------------------
class ContentResponse(_Model):
    """``GET /api/memory``: the working (long-term) memory, ``""`` when there is none."""

    content: str
    path: str | None = Field(None, description="The document read (the layout's long-term memory).")
    hash: str | None = Field(None, description="SHA-256 of the content; send it back as expectedHash.")


class ContentWrite(_Request):
    """``PUT /api/memory`` and ``PUT /api/memory/insights``: the whole new text."""

    content: StrictStr
    expected_hash: StrictStr | None = Field(
        None, alias="expectedHash",
        description="SHA-256 of the text this edit started from; a stale one is refused with 409.")


class WriteResponse(_Model):
    """A successful whole-document write (Fusion's ``{success: true}`` plus what memdesk knows)."""

    success: bool = True
    path: str | None = None
    hash: str | None = Field(None, description="SHA-256 of the content now stored.")
    changed: bool | None = Field(None, description="False when the document already held this text.")
    size: int | None = Field(None, description="Bytes of UTF-8 stored.")
    warnings: list[str] = Field(default_factory=list)
    status: Literal["written", "held"] = "written"  # the memory firewall (issue 20): held → inboxId
    inbox_id: str | None = Field(None, alias="inboxId")
    flags: list[dict[str, Any]] = Field(default_factory=list, description="{rule, kind, line, span, message}")


# -- files ----------------------------------------------------------------------------------------
class FileInfo(_Model):
    """One memory document (design §2a)."""

    path: str
    label: str
    layer: str = Field(description="Over HTTP, one of Fusion's layers (long-term, daily, dreams); over MCP memdesk's "
                       "own, as kind")
    agent: str | None = None
    size: int | None = None
    updated_at: str | None = Field(None, alias="updatedAt")
    legacy: bool = False
    kind: str | None = Field(None, description="memdesk's layer: long-term, daily, dreams, working, insights, "
                             "archive or legacy")


class FilesResponse(_Model):
    """``GET /api/memory/files``: every document, in the layout's order."""

    files: list[FileInfo]


class FileResponse(_Model):
    """``GET /api/memory/file``: one whole document (never cut at a line count)."""

    path: str
    content: str
    hash: str
    size: int
    total_lines: int = Field(alias="totalLines")


class FileWrite(_Request):
    """``PUT /api/memory/file``: ``path`` here or in the query string."""

    path: StrictStr | None = None
    content: StrictStr
    expected_hash: StrictStr | None = Field(None, alias="expectedHash")


# -- append ---------------------------------------------------------------------------------------
class AppendRequest(_Request):
    """``POST /api/memory/append``: one entry, with seed 002's empty and duplicate guards."""

    content: StrictStr = Field(description="The entry's markdown; trimmed; empty is refused.")
    layer: AppendLayer | None = Field(None, description="Layered projects: daily (default) or long-term.")
    agent: StrictStr | None = Field(None, description="An agent id: append to that agent's own memory.")
    path: StrictStr | None = Field(None, description="A document path instead of layer/agent.")


class AppendResponse(_Model):
    """The append's seed-002 status and the tool's message."""

    status: Literal["written", "held", "skipped_empty", "skipped_duplicate"]
    message: str
    path: str | None = None
    archived_entries: int = Field(0, alias="archivedEntries")
    warnings: list[str] = Field(default_factory=list)
    inbox_id: str | None = Field(None, alias="inboxId")  # the memory firewall (issue 20)
    flags: list[dict[str, Any]] = Field(default_factory=list, description="{rule, kind, line, span, message}")


# -- backend, insights, stats, audit --------------------------------------------------------------
class BackendCapabilities(_Model):
    """Fusion's capability flags."""

    readable: bool
    writable: bool
    supports_atomic_write: bool = Field(alias="supportsAtomicWrite")
    has_conflict_resolution: bool = Field(alias="hasConflictResolution")
    persistent: bool


#: What Fusion's memory settings suggest to install qmd (``packages/core/src/memory-backend.ts``,
#: ``QMD_INSTALL_COMMAND``); memdesk searches with its own index, so qmd is never needed here.
QMD_INSTALL_COMMAND = "bun install -g @tobilu/qmd"


class BackendResponse(_Model):
    """``GET /api/memory/backend``."""

    current_backend: str = Field(alias="currentBackend", description="The backend in use after fallback.")
    configured_backend: str | None = Field(alias="configuredBackend",
                                           description="The id in .fusion/config.json (null: none given).")
    capabilities: BackendCapabilities
    capability_list: list[str] = Field(alias="capabilityList", description="memdesk's capability names.")
    available_backends: list[str] = Field(alias="availableBackends")
    fallback_reason: str | None = Field(None, alias="fallbackReason")
    writable_reason: str | None = Field(None, alias="readOnlyReason",
                                        description="Why writes are refused, when they are.")
    # Fusion's MemoryView shows "Checking qmd availability…" until this is true or false (components/MemoryView.tsx
    # at 745971a8); memdesk never runs the qmd CLI, so it is false, as POST /api/memory/test says.
    qmd_available: bool = Field(False, alias="qmdAvailable", description="Whether the qmd CLI is used: never here.")
    qmd_install_command: str = Field(QMD_INSTALL_COMMAND, alias="qmdInstallCommand")


class InsightsResponse(_Model):
    """``GET /api/memory/insights``: ``content`` is ``null`` (never ``""``) when there is no file."""

    content: str | None
    exists: bool
    hash: str | None = None


class StatsResponse(_Model):
    """``GET /api/memory/stats``: sizes in characters, as Fusion reports them."""

    working_memory_size: int = Field(alias="workingMemorySize")
    insights_size: int = Field(alias="insightsSize")
    insights_exists: bool = Field(alias="insightsExists")


class AuditResponse(_Model):
    """``GET /api/memory/audit``: Fusion's audit report."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    generated_at: str = Field(alias="generatedAt")
    working_memory: dict[str, Any] = Field(alias="workingMemory")
    insights_memory: dict[str, Any] = Field(alias="insightsMemory")
    extraction: dict[str, Any]
    pruning: dict[str, Any]
    checks: list[dict[str, Any]]
    health: str


# -- search ---------------------------------------------------------------------------------------
class SearchRequest(_Request):
    """``POST /api/memory/search``."""

    query: StrictStr = Field(min_length=1)
    limit: int = Field(5, ge=1, le=50)
    mode: SearchModeName = "keyword"
    derived: bool = Field(False, description="Search memdesk's own index when the backend cannot search "
                                             "(otherwise such a backend answers 501, as the seed says).")
    include_superseded: bool = Field(False, alias="includeSuperseded",
                                     description="Also entries marked [superseded DATE] (left out by default).")


class SearchHit(_Model):
    """One hit, in Fusion's shape plus the section heading."""

    path: str | None
    line_start: int | None = Field(alias="lineStart")
    line_end: int | None = Field(alias="lineEnd")
    snippet: str
    score: float
    backend: str
    section: str | None = None


class SearchResponse(_Model):
    """The hits, best first."""

    query: str
    results: list[SearchHit]
