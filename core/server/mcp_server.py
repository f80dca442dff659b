"""memdesk's MCP server (official ``mcp`` SDK): memory tools and one resource per document.

``memdesk mcp`` runs it over stdio for one project; ``memdesk serve`` mounts it at ``/mcp`` over
streamable HTTP for every served project. Tools: ``memory_files``, ``memory_get``, ``memory_search``,
``memory_append``, ``memory_write``; each returns structured content. Resources are
``memdesk://<project>/<document path>`` (markdown). Writes record their author: the MCP client's
name over stdio; over HTTP the token's name and the client's name.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import Resource as MCPResource
from pydantic import BaseModel, Field

from core.errors import MemoryBackendError, PathOutsideRootError, SettingsError
from core.project import Project
from core.server import models, service
from core.server.guard import bearer
from core.server.service import ProjectNotServed, ServedProjects
from core.server.tokens import TokenStore

INSTRUCTIONS = (
    "Project memory of AI coding agents, managed by memdesk. Read with memory_files / memory_get / "
    "memory_search; add what you learnt with memory_append (one short, self-contained markdown entry: a "
    "decision, convention, pitfall or piece of context; never secrets, never a copy of code). Replace a "
    "whole document only with memory_write, passing the hash memory_get gave you."
)

ProjectArg = Annotated[str | None, Field(
    description="Which served project (its key as listed by memory_files, or its folder). "
                "Leave out when the server serves one project.")]


class GetResult(BaseModel):
    """A line window of one document, and the hash of the whole document (camelCase as Fusion's memory_get)."""

    path: str
    content: str
    startLine: int
    endLine: int
    totalLines: int
    hash: str = Field(description="SHA-256 of the whole document: memory_write's expectedHash.")
    backend: str


class FilesResult(BaseModel):
    """The documents of a project."""

    project: str
    files: list[models.FileInfo]


class McpServer(MCPServer):
    """An :class:`MCPServer` that lists one resource per memory document of each served project."""

    def __init__(self, served: ServedProjects, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.served = served

    async def list_resources(self) -> list[MCPResource]:
        """One markdown resource per existing document of each served project."""
        out = []
        for s in self.served.served:
            try:
                docs = self.served.get(s.key).documents()
            except (MemoryBackendError, SettingsError):
                continue
            for d in docs:
                out.append(MCPResource(uri=f"memdesk://{s.key}/{d.path}", name=f"{s.key}: {d.label}",
                                       description=f"{d.layer} memory document {d.path} of {s.key}",
                                       mime_type="text/markdown", size=d.size))
        return out


@contextlib.contextmanager
def _tool_errors() -> Iterator[None]:
    """A tool's project-model error as its :class:`ToolError` (see :func:`_fail`)."""
    try:
        yield
    except (MemoryBackendError, PathOutsideRootError) as exc:
        raise _fail(exc) from exc


def _fail(exc: Exception) -> ToolError:
    """One line an agent can act on, with the error code in brackets."""
    if isinstance(exc, MemoryBackendError):
        extra = ""
        current = getattr(exc, "current_hash", None)
        if exc.code == "CONFLICT" and current:
            extra = (f"; the document's current hash is {current}: read it again with memory_get, merge your "
                     "change, and retry with that expectedHash")
        return ToolError(f"{exc.message} [{exc.code}]{extra}")
    if isinstance(exc, PathOutsideRootError | ProjectNotServed | SettingsError):
        return ToolError(str(exc.args[0]) if exc.args else str(exc))
    return ToolError(f"{type(exc).__name__}: {exc}")


def build_mcp_server(served: ServedProjects, *, tokens: TokenStore | None = None) -> McpServer:
    """The MCP server over ``served``; ``tokens`` names the HTTP callers (``None`` over stdio)."""
    mcp = McpServer(served, name="memdesk", instructions=INSTRUCTIONS, log_level="WARNING")

    def _project_of(selector: str | None) -> Project:
        try:
            return served.get(selector)
        except (ProjectNotServed, SettingsError) as exc:
            raise _fail(exc) from exc

    def author(ctx: Context) -> str:
        params = ctx.session.client_params if ctx.request_context is not None else None
        client = params.client_info.name if params is not None and params.client_info else None
        headers = ctx.headers
        if tokens is not None and headers is not None:
            # The guard already refused requests without a valid token; this only finds its name.
            name = tokens.verify(bearer(headers.get("authorization")))
            if name:
                return f"{name} ({client})" if client else name
        return client or "mcp-client"

    @mcp.tool(description="List the project's memory documents (long-term memory, daily notes, dreams, "
                          "each agent's files, insights) with layer, size and last change. Start here to "
                          "find a document's path for memory_get.")
    def memory_files(project: ProjectArg = None) -> FilesResult:
        p = _project_of(project)
        with _tool_errors():
            return FilesResult(project=served.key_of(p), files=service.files(p).files)

    @mcp.tool(description="Read a memory document, whole by default or a window of lines. path: a path "
                          "from memory_files, or MEMORY.md / DREAMS.md / YYYY-MM-DD.md; leave out for the "
                          "long-term memory. Returns the lines and the hash of the whole document "
                          "(memory_write needs it).")
    def memory_get(
        path: Annotated[str | None, Field(description="Document path; default: the long-term memory.")] = None,
        startLine: Annotated[int, Field(ge=1, description="First line, 1-based.")] = 1,
        lineCount: Annotated[int | None, Field(ge=1, description="How many lines; default: to the end.")] = None,
        project: ProjectArg = None,
    ) -> GetResult:
        p = _project_of(project)
        with _tool_errors():
            w = service.file_window(p, path, startLine, lineCount)
        return GetResult(path=w.path, content=w.content, startLine=w.start_line, endLine=w.end_line,
                         totalLines=w.total_lines, hash=w.hash, backend=p.backend.id)

    @mcp.tool(description="Search the project's memory and get the best matching entries with their "
                          "document, line and section. mode: keyword (words, default), semantic (meaning; "
                          "when a local model is installed) or hybrid.")
    def memory_search(
        query: Annotated[str, Field(min_length=1, description="What to look for.")],
        mode: Annotated[Literal["keyword", "semantic", "hybrid"], Field(description="Search mode.")] = "keyword",
        limit: Annotated[int, Field(ge=1, le=50, description="Most hits to return.")] = 5,
        project: ProjectArg = None,
    ) -> models.SearchResponse:
        p = _project_of(project)
        with _tool_errors():
            return service.search(p, query, limit=limit, mode=mode, derived=True)

    @mcp.tool(description="Add one entry to memory: a short, self-contained markdown note (a decision, "
                          "convention, pitfall or context) that a later agent should know. It is dated and "
                          "appended; an empty entry is refused (skipped_empty) and one already present is "
                          "not added twice (skipped_duplicate). In a layered project, layer picks the document: "
                          "daily (today's running notes, the default) or long-term (durable MEMORY.md); agent: "
                          "your agent id, to write to your own memory instead of the project's.")
    def memory_append(
        content: Annotated[str, Field(description="The entry's markdown.")],
        ctx: Context,
        layer: Annotated[Literal["long-term", "daily"] | None, Field(
            description="Layered projects: daily (default) or long-term.")] = None,
        agent: Annotated[str | None, Field(description="Agent id for the agent's own memory.")] = None,
        project: ProjectArg = None,
    ) -> models.AppendResponse:
        p = _project_of(project)
        with _tool_errors():
            return service.append(p, content, layer=layer, agent=agent, author=author(ctx), source="mcp-append")

    @mcp.tool(description="Replace a whole memory document. Only after memory_get: pass the hash it gave as "
                          "expectedHash; if the document changed since, nothing is written and the error "
                          "gives the current hash (read again, merge, retry). The old text is kept in "
                          "history. Prefer memory_append for adding an entry.")
    def memory_write(
        path: Annotated[str, Field(description="Document path, as memory_files lists it.")],
        content: Annotated[str, Field(description="The document's complete new text.")],
        expectedHash: Annotated[str, Field(min_length=64, max_length=64,
                                           description="The hash memory_get returned for this document.")],
        ctx: Context,
        project: ProjectArg = None,
    ) -> models.WriteResponse:
        p = _project_of(project)
        with _tool_errors():
            return service.write_file(p, path, content, expected_hash=expectedHash, author=author(ctx),
                                      source="mcp-write")

    @mcp.resource("memdesk://{project}/{+path}", name="memory-document", mime_type="text/markdown",
                  description="A memory document of a served project, whole.")
    def document(project: str, path: str) -> str:
        try:
            return service.read_file(served.get(project), path).content
        except (MemoryBackendError, PathOutsideRootError, ProjectNotServed, SettingsError) as exc:
            raise ResourceError(str(_fail(exc))) from exc

    return mcp
