"""memdesk's MCP server (official ``mcp`` SDK): memory tools and one resource per document.

``memdesk mcp`` runs it over stdio for one project; ``memdesk serve`` mounts it at ``/mcp`` over
streamable HTTP for every served project. Tools (each annotated with MCP's hints):
``memory_projects``, ``memory_files``, ``memory_get`` (a window of lines, 120 by default, at most 400,
as Fusion's ``fn_memory_get``), ``memory_search``, ``memory_recent``, ``memory_history`` (read only);
``memory_append`` (additive); ``memory_write``, ``memory_edit``, ``memory_remove_entry`` (under the
document's ``expectedHash``). Every write goes through :meth:`Project.write`/:meth:`Project.append`,
so through memdesk's write pipeline. Every refusal is a tool error ``CODE: reason. Next: tool.`` with
the same fields as structured content (:mod:`core.server.refusals`); no message carries a server path.
Resources are ``memdesk://<project>/<document path>``; a subscribed client gets
``notifications/resources/updated`` when the document changes (:mod:`core.server.notify`).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata
from typing import Annotated, Any, Literal

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedToolError
from mcp_types import (
    CallToolResult,
    EmptyResult,
    SubscribeRequestParams,
    SubscriptionsListenRequestParams,
    TextContent,
    ToolAnnotations,
    UnsubscribeRequestParams,
)
from mcp_types import Resource as MCPResource
from pydantic import Field, ValidationError

from core.errors import MemoryBackendError, PathOutsideRootError, SettingsError
from core.project.model import Project
from core.server import editing, listing, models, service
from core.server.access import FULL, Access, ScopeError
from core.server.changes import document_history, parse_since, recent_changes
from core.server.guard import bearer
from core.server.line_args import LineNumber
from core.server.mcp_models import (
    DEFAULT_LINES,
    MAX_LINES,
    EditResult,
    FilesResult,
    GetResult,
    HistoryResult,
    ProjectInfo,
    ProjectsResult,
    RecentResult,
    window_lines,
)
from core.server.mcp_pages import BadCursor, Entry, ResourcePages
from core.server.notify import ListenHook, ResourceHub, documents_key
from core.server.refusals import Refusal, for_agents, refusal_of, validation_refusal
from core.server.search_reads import note_search_hits
from core.server.service import ProjectNotServed, ServedProjects
from core.server.tokens import TokenStore
from core.storage.fileio import content_hash
from core.storage.readlog import client_label

INSTRUCTIONS = (
    "Project memory of AI coding agents, managed by memdesk. Read with memory_files / memory_get (a window of "
    "lines; follow nextStartLine) / memory_search; see what changed with memory_recent and memory_history. Add "
    "what you learnt with memory_append (one short, self-contained markdown entry: a decision, convention, "
    "pitfall or piece of context; never secrets, never a copy of code). Change existing text with memory_edit "
    "or memory_remove_entry, replace a whole document with memory_write: each needs the hash memory_get gave "
    "you. With several projects served, memory_projects lists them."
)

ProjectArg = Annotated[str | None, Field(
    description="Which served project (its key, as memory_projects lists it). Leave out when the server serves "
                "one project.")]
HashArg = Annotated[str, Field(min_length=64, max_length=64,
                               description="The hash memory_get returned for this document.")]


def server_version() -> str:
    """memdesk's version, from the installed package's metadata."""
    try:
        return metadata.version("memdesk")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def _hints(*, read_only: bool, destructive: bool = False, idempotent: bool = True, title: str) -> ToolAnnotations:
    # Every hint is said, also destructiveHint on a read-only tool: MCP's default for it is true, and a client
    # that reads the hints without readOnlyHint first would take a read for a destructive tool.
    return ToolAnnotations(title=title, read_only_hint=read_only, destructive_hint=False if read_only else destructive,
                           idempotent_hint=idempotent, open_world_hint=False)


READ = {"read_only": True}
#: Where a refusal's code, message and next tool go in a tool error's ``_meta``. Not structured content:
#: clients check that against the tool's output schema even on errors (the MCP Inspector does).
ERROR_META = "memdesk/error"


class McpServer(MCPServer):
    """An :class:`MCPServer` over served projects: lists one resource per document, turns every refusal into
    a tool error with a code and the next tool, and keeps documents' subscriptions."""

    def __init__(self, served: ServedProjects, **kwargs: Any) -> None:
        from mcp.server.subscriptions import (
            InMemorySubscriptionBus,
            ListenHandler,
            ResourcesListChanged,
            ResourceUpdated,
        )

        bus = InMemorySubscriptionBus()  # subscriptions/listen streams hear the hub's changes through it
        super().__init__(subscriptions=bus, **kwargs)
        self.served = served
        self.hub = ResourceHub(self._locate, publish=lambda uri: bus.publish(ResourceUpdated(uri=uri)),
                               listing=lambda: documents_key(s.root for s in served.served),
                               publish_list=lambda: bus.publish(ResourcesListChanged()))
        low = self._lowlevel_server
        low.add_request_handler("resources/subscribe", SubscribeRequestParams, self._subscribe)
        low.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, self._unsubscribe)
        low.add_request_handler("subscriptions/listen", SubscriptionsListenRequestParams,
                                ListenHook(ListenHandler(bus), self.hub, lambda ctx, uri: self.may_follow(ctx, uri)))
        #: ``may_follow(request_ctx, uri)``: whether the caller's scope lets it read (so follow) that document;
        #: :func:`build_mcp_server` sets it from the token or the stdio scope.
        self.may_follow: Callable[[Any, str], bool] = lambda _ctx, _uri: True
        #: ``access_of(request_ctx)``: the caller's scope (its token's, or the stdio scope).
        self.access_of: Callable[[Any], Access] = lambda _ctx: FULL
        self.pages = ResourcePages(self._entries)

    # -- refusals --------------------------------------------------------------------------------
    def roots(self) -> list[tuple[str, Any]]:
        """(key, folder) of each served project: what :func:`refusals.scrub` hides."""
        return [(s.key, s.root) for s in self.served.served]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Run a tool; any anticipated failure becomes ``CODE: reason. Next: tool.`` with ``isError``."""
        tool = self._tool_manager.get_tool(name)
        unknown = sorted(set(arguments or {}) - set(tool.parameters.get("properties", {}))) if tool else []
        if unknown:  # an argument the tool does not have is refused, never ignored (the agent meant something)
            takes = ", ".join(tool.parameters.get("properties", {})) if tool else ""
            refusal = Refusal("INVALID_ARGUMENT", f"{name} has no argument {', '.join(map(repr, unknown))} (it takes "
                              f"{takes}); nothing was done", next=f"{name} with the argument fixed")
            return CallToolResult(content=[TextContent(type="text", text=refusal.text)],
                                  _meta={ERROR_META: refusal.to_json()}, is_error=True)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            known = (Refusal, ValidationError, MemoryBackendError, PathOutsideRootError, ProjectNotServed, SettingsError,
                 ScopeError)
            if isinstance(exc, UnexpectedToolError) and not isinstance(cause, known):
                raise  # a crash: the SDK logs it and tells the client only the tool's name
            if isinstance(cause, Refusal):
                refusal = refusal_of(cause, self.roots())
            elif isinstance(cause, ScopeError):
                refusal = Refusal("SCOPE", str(cause))
            elif isinstance(cause, ValidationError):
                refusal = validation_refusal(name, cause)
            elif isinstance(cause, MemoryBackendError | PathOutsideRootError | ProjectNotServed | SettingsError):
                refusal = refusal_of(cause, self.roots())
            elif cause is None and self._tool_manager.get_tool(name) is None:
                refusal = Refusal("UNKNOWN_TOOL", f"memdesk has no tool {name!r}")
            else:
                refusal = Refusal("INVALID_ARGUMENT", str(exc).split(": ", 1)[-1])
            return CallToolResult(content=[TextContent(type="text", text=refusal.text)],
                                  _meta={ERROR_META: refusal.to_json()}, is_error=True)

    # -- resources -------------------------------------------------------------------------------
    async def list_resources(self) -> list[MCPResource]:
        """One markdown resource per existing document of each served project (all of them, unpaged)."""
        return [_resource(e) for e in self._entries(FULL)]

    def _entries(self, who: Access) -> list[Entry]:
        """Every document ``who`` may read, project by project in the served order, each in its layout's."""
        out = []
        for s in self.served.served:
            if not who.sees_project(s.key, s.root):
                continue
            try:
                p = self.served.get(s.key)
                docs = listing.Visible(who, p.root).filter(p.documents())
            except (MemoryBackendError, SettingsError):
                continue
            out += [Entry(f"memdesk://{s.key}/{d.path}", f"{s.key}: {d.label}",
                          f"{d.layer} memory document {d.path} of {s.key}", d.size) for d in docs]
        return out

    async def _handle_list_resources(self, ctx: Any, params: Any) -> Any:
        """``resources/list``: only the documents the caller may read (its projects, its paths), in pages of
        :data:`mcp_pages.PAGE` with an opaque ``nextCursor`` (:mod:`core.server.mcp_pages`)."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import INVALID_PARAMS, ListResourcesResult

        cursor = getattr(params, "cursor", None) if params is not None else None
        try:
            page, nxt = await anyio.to_thread.run_sync(self.pages.page, self.access_of(ctx), cursor)
        except BadCursor as exc:
            raise MCPError(INVALID_PARAMS, f"resources/list: {exc}") from exc
        return ListResourcesResult(resources=[_resource(e) for e in page], next_cursor=nxt)

    def _locate(self, uri: str) -> str:
        """The file of a document URI (``memdesk://KEY/PATH``); a refusal for anything else."""
        key, rel = _split_uri(uri)
        project = self.served.get(key)
        return str(project.root / project.resolve_path(rel))

    async def _subscribe(self, ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
        try:
            if not self.may_follow(ctx, str(params.uri)):
                raise Refusal("SCOPE", f"this caller's scope does not cover {params.uri}; nothing was subscribed")
            self.hub.subscribe(_connection(ctx), str(params.uri))
        except (Refusal, MemoryBackendError, PathOutsideRootError, ProjectNotServed, SettingsError) as exc:
            from mcp.shared.exceptions import MCPError
            from mcp_types import INVALID_PARAMS

            raise MCPError(INVALID_PARAMS, refusal_of(exc, self.roots()).text) from exc
        return EmptyResult()

    async def _unsubscribe(self, ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
        self.hub.unsubscribe(_connection(ctx), str(params.uri))
        return EmptyResult()


def _resource(e: Entry) -> MCPResource:
    return MCPResource(uri=e.uri, name=e.name, description=e.description, mime_type="text/markdown", size=e.size)


def _connection(ctx: Any) -> Any:
    """The client's connection (it lives as long as the client; the request's session proxy does not)."""
    return getattr(ctx.session, "_connection", ctx.session)


def _split_uri(uri: str) -> tuple[str, str]:
    prefix = "memdesk://"
    if not uri.startswith(prefix) or "/" not in uri[len(prefix):]:
        raise Refusal("INVALID_PATH", f"{uri!r} is not a memdesk document URI (memdesk://PROJECT/PATH)",
                      next="resources/list to see the documents")
    key, _, rel = uri[len(prefix):].partition("/")
    return key, rel


def build_mcp_server(served: ServedProjects, *, tokens: TokenStore | None = None, access: Access = FULL
                     ) -> McpServer:
    """The MCP server over ``served``; ``tokens`` names the HTTP callers and gives their scopes (``None`` over
    stdio, where ``access`` is the scope ``memdesk mcp`` was started with)."""
    mcp = McpServer(served, name="memdesk", title="memdesk", instructions=INSTRUCTIONS, version=server_version(),
                    log_level="WARNING")  # no website_url: memdesk has no page of its own to name

    def access_of(headers: Any) -> Access:
        if tokens is None or headers is None:
            return access
        info = tokens.lookup(bearer(headers.get("authorization")))
        return info.access if info is not None else Access("unknown", "read", projects=("\0",))

    def caller(ctx: Context | None) -> Access:
        if ctx is None or ctx.request_context is None:
            return access
        return access_of(ctx.headers)

    def may_follow(request_ctx: Any, uri: str) -> bool:
        """Whether the caller of a subscribe or listen request may read the document ``uri``."""
        who = access_of(getattr(getattr(request_ctx, "request", None), "headers", None))
        try:
            key, path = _split_uri(uri)
            found = served.find(key)
            who.check("read", found.key, found.root, resolve(served.get(key), path))
        except ScopeError:
            return False
        except (Refusal, MemoryBackendError, PathOutsideRootError, ProjectNotServed, SettingsError):
            return True  # not a served document: refused (subscribe) or never fires (listen) as before
        return True

    mcp.may_follow = may_follow
    mcp.access_of = lambda request_ctx: access_of(getattr(getattr(request_ctx, "request", None), "headers", None))

    def project_of(selector: str | None, ctx: Context | None = None, need: str = "read",
                   path: str | None = None, *, doc: bool = False) -> tuple[Project, str | None]:
        """The project (checked against the caller's scope) and, with ``doc``, the document ``path`` resolved
        and checked for ``need``."""
        found = served.find(selector)
        who = caller(ctx)
        who.check_project(found.key, found.root)
        p = served.get(selector)
        rel = resolve(p, path) if doc else None
        who.check(need, found.key, found.root, rel)
        return p, rel

    def author(ctx: Context) -> str:
        params = ctx.session.client_params if ctx.request_context is not None else None
        client = client_label(params.client_info.name) if params is not None and params.client_info else None
        headers = ctx.headers
        if tokens is not None and headers is not None:
            # The guard already refused requests without a valid token; this only finds its name.
            name = tokens.verify(bearer(headers.get("authorization")))
            if name:
                return f"{name} ({client})" if client else name
        return client or "mcp-client"

    def reader(ctx: Context) -> dict[str, Any]:
        """Who reads, as the read log names it: ``client``, ``token`` and ``via``."""
        params = ctx.session.client_params if ctx.request_context is not None else None
        client = client_label(params.client_info.name) if params is not None and params.client_info else None
        over_http = tokens is not None and ctx.request_context is not None and ctx.headers is not None
        token = caller(ctx).name if over_http else None
        return {"client": client, "token": token, "via": "mcp-http" if over_http else "mcp"}

    def on_record(ctx: Context, p: Project, rel: str, digest: str, size: int, start: int, end: int,
                  total: int) -> None:
        service.note_read(served.key_of(p), p.root, rel, digest, size, start, end, total, **reader(ctx))

    def resolve(p: Project, path: str | None) -> str:
        try:
            return p.resolve_path(path)
        except MemoryBackendError as exc:  # a path that names no document: not a configuration problem
            raise Refusal("INVALID_PATH", for_agents(exc.message)) from exc

    async def changed(ctx: Context | None = None, p: Project | None = None, rel: str | None = None) -> None:
        """Tell subscribers at once: those of ``resources/subscribe`` and the ``subscriptions/listen`` streams
        that follow the document (both through the hub, which sees the file changed)."""
        await mcp.hub.check_now()

    from core.server import inbox_views  # the memory firewall's inbox, read-only (issue 20)

    inbox_views.register_mcp(mcp, project_of, _hints(**READ, title="Held writes (inbox)"), Refusal, caller)

    # -- reading ---------------------------------------------------------------------------------
    @mcp.tool(annotations=_hints(**READ, title="List served projects"),
              description="List the projects this server serves, with their layout, backend, whether they can "
                          "be written and what this caller may do there. Pass a project's key as the project "
                          "argument of the other tools.")
    def memory_projects(ctx: Context) -> ProjectsResult:
        out = []
        who = caller(ctx)
        for s in served.served:
            if not who.sees_project(s.key, s.root):
                continue
            p = served.get(s.key)
            reason = p.writable()
            out.append(ProjectInfo(key=s.key, layout="layered" if p.layout.layered else "seed",
                                   memoryPath=p.memory_path, backend=p.backend.id, writable=reason is None,
                                   readOnlyReason=reason, documents=len(p.documents()), access=who.describe()))
        return ProjectsResult(projects=out)

    @mcp.tool(annotations=_hints(**READ, title="List memory documents"),
              description="List the project's memory documents (long-term memory, daily notes, dreams, "
                          "each agent's files, insights) with layer, size and last change. Start here to "
                          "find a document's path for memory_get.")
    def memory_files(ctx: Context, project: ProjectArg = None) -> FilesResult:
        p, _ = project_of(project, ctx)
        who = caller(ctx)
        return FilesResult(project=served.key_of(p), files=[models.FileInfo.model_validate({**d.to_json(), "kind": d.layer}) for d in
                                                            listing.Visible(who, p.root).filter(p.documents())])

    @mcp.tool(annotations=_hints(**READ, title="Read a memory document"),
              description=f"Read a window of a memory document: {DEFAULT_LINES} lines from startLine by default, "
                          f"at most {MAX_LINES}. A document of up to {DEFAULT_LINES} lines comes whole in one "
                          "call; for a longer one, call again from nextStartLine. path: a path from "
                          "memory_files, or MEMORY.md / DREAMS.md / YYYY-MM-DD.md; leave out for the long-term "
                          "memory. The hash is the whole document's (memory_write, memory_edit and "
                          "memory_remove_entry need it).")
    def memory_get(
        ctx: Context,
        path: Annotated[str | None, Field(description="Document path; default: the long-term memory.")] = None,
        startLine: Annotated[LineNumber | None, Field(description="First line, 1-based (below 1 reads from 1; "
                                                      "a fraction is floored, as Fusion's).")] = 1,
        lineCount: Annotated[LineNumber | None, Field(description=f"How many lines (default {DEFAULT_LINES}; more "
                                                      f"than {MAX_LINES} gives {MAX_LINES}, fewer than 1 gives 1; "
                                                      "a fraction is floored).")] = None,
        project: ProjectArg = None,
    ) -> GetResult:
        p, _ = project_of(project, ctx, "read", path, doc=True)
        w = service.file_window(p, path, max(1, 1 if startLine is None else startLine), window_lines(lineCount))
        on_record(ctx, p, w.path, w.hash, w.size, w.start_line, w.end_line, w.total_lines)
        return GetResult(path=w.path, content=w.content, startLine=w.start_line, endLine=w.end_line,
                         totalLines=w.total_lines, nextStartLine=w.end_line + 1 if w.end_line < w.total_lines
                         else None, hash=w.hash, backend=p.backend.id)

    @mcp.tool(annotations=_hints(**READ, title="Search memory"),
              description="Search the project's memory and get the best matching entries with their "
                          "document, line and section. mode: keyword (words, default), semantic (meaning; "
                          "when a local model is installed) or hybrid.")
    def memory_search(
        query: Annotated[str, Field(min_length=1, description="What to look for.")],
        ctx: Context,
        mode: Annotated[Literal["keyword", "semantic", "hybrid"], Field(description="Search mode.")] = "keyword",
        limit: Annotated[int, Field(ge=1, le=50, description="Most hits to return.")] = 5,
        includeSuperseded: Annotated[bool, Field(  # noqa: N803 - the tool's argument name, as over HTTP
            description="Also entries marked [superseded DATE] (left out by default).")] = False,
        project: ProjectArg = None,
    ) -> models.SearchResponse:
        p, _ = project_of(project, ctx)
        found = service.search(p, query, limit=limit, mode=mode, derived=True, include_superseded=includeSuperseded)
        found.results = [h for h in found.results if caller(ctx).can("read", h.path, p.root)]
        note_search_hits(p, served.key_of(p), found.results, **reader(ctx))  # the lines served are reads too
        return found

    @mcp.tool(annotations=_hints(**READ, title="Recent changes"),
              description="What changed in the project's memory since a time, newest first: each append (with "
                          "its text) and each replacement of a document, with who made it. since: ISO 8601 "
                          "(2026-12-01T09:00:00Z) or a span back from now (30m, 24h, 7d); default 24h.")
    def memory_recent(
        ctx: Context,
        since: Annotated[str | None, Field(description="ISO 8601 time or 30m / 24h / 7d.")] = None,
        path: Annotated[str | None, Field(description="Only this document.")] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="Most changes to return.")] = 50,
        project: ProjectArg = None,
    ) -> RecentResult:
        p, rel = project_of(project, ctx, "read", path, doc=path is not None)
        who = caller(ctx)
        return recent_changes(p, parse_since(since), path=rel, limit=limit, allowed=lambda r: who.can("read", r, p.root))

    @mcp.tool(annotations=_hints(**READ, title="Versions of a document"),
              description="The stored versions of a memory document, newest first: each is the text as it was "
                          "before a change (a save, a write, an edit, a removed entry, a restore), with when, "
                          "why and by whom, and its hash. memdesk keeps them; the operator can restore any.")
    def memory_history(
        ctx: Context,
        path: Annotated[str | None, Field(description="Document path; default: the long-term memory.")] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="Most versions to return.")] = 50,
        project: ProjectArg = None,
    ) -> HistoryResult:
        p, rel = project_of(project, ctx, "read", path, doc=True)
        assert rel is not None
        return document_history(p, rel, limit=limit)

    # -- writing ---------------------------------------------------------------------------------
    @mcp.tool(annotations=_hints(read_only=False, destructive=False, title="Append a memory entry"),
              description="Add one entry to memory: a short, self-contained markdown note (a decision, "
                          "convention, pitfall or context) that a later agent should know. It is appended; "
                          "one already present is not added twice (status skipped_duplicate); an empty one is "
                          "refused. In a layered project, layer picks the document: daily (today's running "
                          "notes, the default) or long-term (durable MEMORY.md); agent: your agent id, to write "
                          "to your own memory instead of the project's.")
    async def memory_append(
        content: Annotated[str, Field(description="The entry's markdown.")],
        ctx: Context,
        layer: Annotated[Literal["long-term", "daily"] | None, Field(
            description="Layered projects: daily (default) or long-term.")] = None,
        agent: Annotated[str | None, Field(description="Agent id for the agent's own memory.")] = None,
        project: ProjectArg = None,
    ) -> models.AppendResponse:
        if not content.strip():
            raise Refusal("EMPTY_ENTRY", "the entry is empty (only white space); nothing was written")
        p, _ = project_of(project, ctx, "append")
        target = p.append_target(layer=layer, agent=agent)
        caller(ctx).check("append", served.key_of(p), p.root, target)
        result = service.append(p, content, layer=layer, agent=agent, author=author(ctx), source="mcp-append")
        result.message = mcp_scrub(result.message)
        if result.status == "written":
            await changed(ctx, p, result.path)
        return result

    def mcp_scrub(text: str) -> str:
        from core.server.refusals import scrub

        return scrub(text, mcp.roots())

    @mcp.tool(annotations=_hints(read_only=False, destructive=True, title="Replace a memory document"),
              description="Replace a whole memory document. Only after memory_get: pass the hash it gave as "
                          "expectedHash; if the document changed since, nothing is written and the error "
                          "gives the current hash (read again, merge, retry). The old text is kept in "
                          "history. Prefer memory_edit to change a part and memory_append to add an entry.")
    async def memory_write(
        path: Annotated[str, Field(description="Document path, as memory_files lists it.")],
        content: Annotated[str, Field(description="The document's complete new text.")],
        expectedHash: HashArg,
        ctx: Context,
        project: ProjectArg = None,
    ) -> models.WriteResponse:
        p, _ = project_of(project, ctx, "write", path, doc=True)
        result = service.write_file(p, path, content, expected_hash=expectedHash, author=author(ctx),
                                    source="mcp-write")
        await changed(ctx, p, result.path)
        return result

    async def rewrite(p: Project, rel: str, expected: str, new_text: str, ctx: Context, source: str,
                      removed: str | None = None) -> EditResult:
        from core.storage.pipeline import Writer

        # "edit" and "remove-entry" name the change; the writer is the MCP client (an agent: the firewall's
        # agent policy applies, never the operator's).
        who = author(ctx)
        result = service.write_file(p, rel, new_text, expected_hash=expected, author=who, source=source,
                                    writer=Writer("mcp", who))
        await changed(ctx, p, result.path)
        return EditResult(status=result.status, inboxId=result.inbox_id, path=result.path,
                          hash=result.hash or content_hash(new_text), changed=result.changed, removed=removed,
                          warnings=result.warnings, flags=result.flags)

    def current(p: Project, rel: str, expected: str) -> str:
        text = p.read(rel)
        if not p.exists(rel):
            raise Refusal("NOT_FOUND", f"{rel} does not exist yet; nothing was written",
                          next="memory_append to start it, or memory_files to list the documents")
        if content_hash(text) != expected:
            raise Refusal("CONFLICT", f"{rel} changed since you read it (its hash is now {content_hash(text)}); "
                          "nothing was written", extra={"currentHash": content_hash(text)})
        return text

    @mcp.tool(annotations=_hints(read_only=False, destructive=True, idempotent=False, title="Edit a memory document"),
              description="Change one part of a memory document under the hash memory_get gave you: either "
                          "replace the one exact occurrence of oldText with newText, or give section (a heading, "
                          "'## Pitfalls' or 'Pitfalls') to replace that section's body with newText (the heading "
                          "stays). The text before is kept in history; a stale hash is refused with the current "
                          "one.")
    async def memory_edit(
        path: Annotated[str, Field(description="Document path, as memory_files lists it.")],
        expectedHash: HashArg,
        newText: Annotated[str, Field(description="The replacement text (may be empty to delete the span).")],
        ctx: Context,
        oldText: Annotated[str | None, Field(description="The exact text to replace; it must occur once.")] = None,
        section: Annotated[str | None, Field(description="A heading whose body newText replaces.")] = None,
        project: ProjectArg = None,
    ) -> EditResult:
        if (oldText is None) == (section is None):
            raise Refusal("INVALID_ARGUMENT", "give exactly one of oldText and section; nothing was written",
                          next="memory_edit with oldText or section")
        p, rel = project_of(project, ctx, "write", path, doc=True)
        assert rel is not None
        text = current(p, rel, expectedHash)
        new = editing.replace_span(text, oldText, newText) if oldText is not None else \
            editing.replace_section(text, section or "", newText)
        return await rewrite(p, rel, expectedHash, new, ctx, "edit")

    @mcp.tool(annotations=_hints(read_only=False, destructive=True, idempotent=False, title="Remove a memory entry"),
              description="Remove one entry from a memory document under the hash memory_get gave you: give the "
                          "entry's exact text (or part of it, occurring once) or one of its line numbers. The whole "
                          "entry goes (its paragraph or list item, with a seed entry's date marker); the document "
                          "before is kept in history, so the operator can restore it.")
    async def memory_remove_entry(
        path: Annotated[str, Field(description="Document path, as memory_files lists it.")],
        expectedHash: HashArg,
        ctx: Context,
        text: Annotated[str | None, Field(description="Text of the entry (exact, occurring once).")] = None,
        line: Annotated[int | None, Field(ge=1, description="A 1-based line of the entry.")] = None,
        project: ProjectArg = None,
    ) -> EditResult:
        p, rel = project_of(project, ctx, "write", path, doc=True)
        assert rel is not None
        doc = current(p, rel, expectedHash)
        new, removed = editing.remove_entry(doc, entry=text, line=line)
        return await rewrite(p, rel, expectedHash, new, ctx, "remove-entry", removed=removed)

    @mcp.resource("memdesk://{project}/{+path}", name="memory-document", mime_type="text/markdown",
                  description="A memory document of a served project, whole. Subscribe to be told when it changes.")
    def document(project: str, path: str, ctx: Context) -> str:
        try:
            p, _ = project_of(project, ctx, "read", path, doc=True)
            doc = service.read_file(p, path)
            n = doc.total_lines or 1
            on_record(ctx, p, doc.path, doc.hash, doc.size or 0, 1, n, n)
            return doc.content
        except ScopeError as exc:
            raise ResourceError(Refusal("SCOPE", str(exc)).text) from exc
        except (Refusal, MemoryBackendError, PathOutsideRootError, ProjectNotServed, SettingsError) as exc:
            raise ResourceError(refusal_of(exc, mcp.roots()).text) from exc

    return mcp
