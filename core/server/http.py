"""``memdesk serve``'s HTTP API (design §7): the seed's memory routes in current Fusion's shapes.

Routes (each takes ``?project=KEY|PATH`` to pick one of the served projects; not served → 404):
``GET/PUT /api/memory``, ``GET /api/memory/files``, ``GET/PUT /api/memory/file?path=``,
``POST /api/memory/append``, ``GET /api/memory/backend``, ``GET/PUT /api/memory/insights``,
``GET /api/memory/audit``, ``GET /api/memory/stats``, ``POST /api/memory/search``; OpenAPI at
``/docs``; the MCP server over streamable HTTP at ``/mcp``. Error codes map as the seed and Fusion's
dashboard do: ``READ_ONLY``/``CAPABILITY_UNSUPPORTED``/``CONFLICT`` → 409 (a ``CONFLICT`` carries
``currentHash``), ``QUOTA_EXCEEDED`` → 413, ``BACKEND_UNAVAILABLE`` → 503, ``NOT_FOUND`` → 404, a bad
path or body → 400, a backend that cannot search → 501 on the search route.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterable
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from core.errors import MemoryBackendError, PathOutsideRootError, SettingsError
from core.project.model import Project
from core.server import fast_append, listing, memory_read, models, service
from core.server.access import FULL, Access, ScopeError
from core.server.guard import ACCESS_KEY, AUTHOR_KEY, Guard, author, client_name
from core.server.refusals import bounded, scrub
from core.server.service import ProjectNotServed, ServedProjects
from core.server.tokens import TokenStore
from core.storage.fileio import TargetRefused

STATUS_BY_CODE = {
    "READ_ONLY": 409, "CAPABILITY_UNSUPPORTED": 409, "CONFLICT": 409, "QUOTA_EXCEEDED": 413,
    "BACKEND_UNAVAILABLE": 503, "NOT_FOUND": 404, "INVALID_CONFIG": 400,
}
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": models.ErrorResponse} for code in (400, 401, 404, 409, 413, 421, 500, 503)
}


class ApiError(Exception):
    """An error with its HTTP status."""

    def __init__(self, status: int, message: str, code: str | None = None, backend: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.backend = status, message, code, backend


def _json(model: BaseModel, status: int = 200) -> Response:
    """The model as JSON (camelCase), serialised once by pydantic: a 1 MiB memory is not validated twice."""
    body = type(model).__pydantic_serializer__.to_json(model, by_alias=True)  # bytes: no second encode
    return Response(body, status_code=status, media_type="application/json")


#: The code of an error raised without one, by its status.
_CODE_BY_STATUS = {400: "INVALID_ARGUMENT", 403: "SCOPE", 404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED",
                   409: "CONFLICT", 413: "QUOTA_EXCEEDED", 503: "BACKEND_UNAVAILABLE"}


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
    """Every error in Fusion's shape, ``{error, details: {code, backend}}`` (Fusion's dashboard reads it:
    ``app/api/client/client.ts``), memdesk's ``code`` beside it; an error raised without a code gets its
    status's."""
    extra["code"] = extra.get("code") or _CODE_BY_STATUS.get(status, "INTERNAL")
    body = models.ErrorResponse(error=message, **extra).model_dump(by_alias=True, exclude_none=True)
    body["details"] = {"code": body["code"], "backend": body.get("backend")}
    return JSONResponse(body, status_code=status)


def _clean(request: Request, text: str) -> str:
    """``text`` without server paths (clients may be remote): a served project's folder as its key, any
    other absolute path hidden (:func:`core.server.refusals.scrub`)."""
    served = getattr(request.app.state, "served", None)
    return bounded(scrub(text, [(s.key, s.root) for s in served.served] if served is not None else []))


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api(request: Request, exc: ApiError) -> JSONResponse:
        return _error(exc.status, _clean(request, exc.message), code=exc.code, backend=exc.backend)

    @app.exception_handler(MemoryBackendError)
    async def _backend(request: Request, exc: MemoryBackendError) -> JSONResponse:
        status = 409 if isinstance(exc, TargetRefused) else STATUS_BY_CODE.get(exc.code, 500)  # the file's state
        return _error(status, _clean(request, exc.message), code=exc.code,
                      backend=exc.backend_id or None, currentHash=getattr(exc, "current_hash", None))

    @app.exception_handler(PathOutsideRootError)
    async def _path(request: Request, exc: PathOutsideRootError) -> JSONResponse:
        return _error(400, _clean(request, str(exc)), code="INVALID_CONFIG")

    @app.exception_handler(ProjectNotServed)
    async def _project(_request: Request, exc: ProjectNotServed) -> JSONResponse:
        return _error(404, str(exc.args[0]), code="PROJECT_NOT_SERVED")

    @app.exception_handler(SettingsError)
    async def _settings(request: Request, exc: SettingsError) -> JSONResponse:
        return _error(500, _clean(request, f"project settings cannot be used: {exc}"), code="INVALID_CONFIG")

    @app.exception_handler(ScopeError)
    async def _scope(_request: Request, exc: ScopeError) -> JSONResponse:
        return _error(403, str(exc), code="SCOPE")

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        # Fusion answers 400 (not FastAPI's 422) to a body whose content is not a string.
        err = exc.errors()[0]
        if err.get("type") == "json_invalid":
            return _error(400, "the body is not valid JSON; send a JSON object", code="INVALID_ARGUMENT")
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        return _error(400, f"{where}: {err.get('msg', 'invalid value')}", code="INVALID_ARGUMENT")

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # No such route (404) or method (405): the same shape as every other error, not FastAPI's {detail}.
        if exc.status_code in (404, 405):
            message = f"{exc.detail}: no such route or method here; /docs lists the routes"
        elif exc.status_code == 400 and exc.detail == "There was an error parsing the body":  # FastAPI's, on bytes
            message = "the body could not be parsed (not UTF-8 JSON); send a JSON object in UTF-8"
        else:
            message = str(exc.detail)
        resp = _error(exc.status_code, message)
        resp.headers.update(exc.headers or {})  # a 405 keeps its Allow
        return resp


async def _project(request: Request,
                   project: Annotated[str | None, Query(description="served project: its key or its folder")] = None,
                   projectId: Annotated[str | None, Query(  # noqa: N803 - Fusion's dashboard's name for it
                       description="the same, as Fusion's dashboard names it")] = None,
                   ) -> Project:
    project = project if project is not None else projectId
    # On the event loop when the cached model is current (two stats, cheaper than a thread-pool hop);
    # building one (a settings change: the backend opens its store) runs in the pool.
    served: ServedProjects = request.app.state.served
    found = served.find(project)
    access(request).check_project(found.key, found.root)
    cached = served.cached(project)
    return cached if cached is not None else await run_in_threadpool(served.get, project)


Proj = Annotated[Project, Depends(_project)]


def access(request: Request) -> Access:
    """The scope of the token the guard accepted (full when no guard runs: the tests' bare API)."""
    return request.scope.get("state", {}).get(ACCESS_KEY, FULL)


def allow(request: Request, p: Project, need: str, rel: str | None = None) -> None:
    """Raise :class:`ScopeError` (403) unless the request's token may ``need`` document ``rel`` of ``p``."""
    access(request).check(need, request.app.state.served.key_of(p), p.root, rel)


def _on_record(request: Request, p: Project, doc: models.FileResponse) -> None:
    """Log that this request read ``doc`` whole (:mod:`core.storage.readlog`)."""
    memory_read.note_whole(request.app.state.served.key_of(p), p, doc, client_name(request), author(request))


def create_api(served: ServedProjects, *, lifespan: Any = None) -> FastAPI:
    """The FastAPI app of the memory routes over ``served`` (no guard: :func:`create_app` adds it)."""
    app = FastAPI(title="memdesk", version="1", lifespan=lifespan, responses=ERRORS,
                  description="Project memory of AI coding agents, with memdesk's guards. "
                              "Every request needs 'Authorization: Bearer <token>'.")
    _install_error_handlers(app)

    app.state.served = served
    from core.server.settings_routes import add_settings_routes  # GET/PUT /api/settings (issue 18)

    add_settings_routes(app, Proj)

    @app.get("/api/memory", response_model=models.ContentResponse, tags=["memory"])
    async def get_memory(p: Proj, request: Request) -> Response:
        """The working (long-term) memory; ``""`` when there is none."""
        allow(request, p, "read", p.memory_path)  # the fast path answers most of these (core.server.memory_read)
        return await memory_read.read_memory(served, p, client_name(request), author(request))

    @app.put("/api/memory", response_model=models.WriteResponse, tags=["memory"])
    def put_memory(body: models.ContentWrite, p: Proj, request: Request) -> Response:
        """Replace the working memory (previous version kept in history)."""
        allow(request, p, "write", p.memory_path)
        return _json(service.write_file(p, None, body.content, expected_hash=body.expected_hash,
                                        author=author(request), source="http-write"))

    @app.get("/api/memory/files", response_model=models.FilesResponse, tags=["files"])
    def get_files(p: Proj, request: Request) -> Response:
        """Every memory document of the project, in the layout's order (those the token may read)."""
        allow(request, p, "read")
        body = listing.files_body(listing.Visible(access(request), p.root).filter(p.documents()))
        return Response(body, media_type="application/json")

    @app.get("/api/memory/file", response_model=models.FileResponse, tags=["files"])
    def get_file(p: Proj, request: Request, path: Annotated[str | None, Query()] = None) -> Response:
        """One whole document (no line cap)."""
        if not path:
            raise ApiError(400, "path is required (?path=.fusion/memory/MEMORY.md, MEMORY.md, ...)")
        allow(request, p, "read", p.resolve_path(path))
        doc = service.read_file(p, path)
        _on_record(request, p, doc)
        return memory_read.document_json(p, doc, doc)

    @app.put("/api/memory/file", response_model=models.WriteResponse, tags=["files"])
    def put_file(body: models.FileWrite, p: Proj, request: Request,
                 path: Annotated[str | None, Query()] = None) -> Response:
        """Replace one document; with ``expectedHash``, a stale base is refused with 409 and ``currentHash``."""
        if path and body.path and path != body.path:
            raise ApiError(400, f"path given twice and different: {path!r} (query) and {body.path!r} (body)")
        target = path or body.path
        if not target:
            raise ApiError(400, "path is required (in the body or ?path=)")
        allow(request, p, "write", p.resolve_path(target))
        return _json(service.write_file(p, target, body.content, expected_hash=body.expected_hash,
                                        author=author(request), source="http-write"))

    @app.post("/api/memory/append", response_model=models.AppendResponse, tags=["memory"],
              responses={400: {"model": models.AppendResponse}})
    def post_append(body: models.AppendRequest, p: Proj, request: Request) -> Response:
        """Append one dated entry (seed 002): ``written``, ``skipped_duplicate``, or 400 ``skipped_empty``."""
        return fast_append.append_response(served, p, body, request.scope)  # the fast path's answer too

    @app.get("/api/memory/backend", response_model=models.BackendResponse, tags=["backend"])
    def get_backend(p: Proj, request: Request) -> Response:
        """The backend in use (after any fallback), its capabilities and the registered backends."""
        allow(request, p, "read")
        return _json(service.for_scope(service.backend_info(p, served.registry), access(request)))

    @app.get("/api/memory/insights", response_model=models.InsightsResponse, tags=["insights"])
    def get_insights(p: Proj, request: Request) -> Response:
        """The insights document; ``content: null`` when there is none."""
        allow(request, p, "read", p.insights_path)
        found = service.insights(p)
        if found.content is not None and found.hash is not None:
            n = found.content.count("\n") + 1
            service.note_read(served.key_of(p), p.root, p.insights_path, found.hash, len(found.content.encode()), 1,
                              n, n, client=client_name(request), token=author(request), via="http")
        return _json(found)

    @app.put("/api/memory/insights", response_model=models.WriteResponse, tags=["insights"])
    def put_insights(body: models.ContentWrite, p: Proj, request: Request) -> Response:
        """Replace the insights document."""
        allow(request, p, "write", p.insights_path)
        return _json(service.write_insights(p, body.content, expected_hash=body.expected_hash,
                                            author=author(request), source="http-insights"))

    @app.get("/api/memory/audit", response_model=models.AuditResponse, tags=["insights"])
    def get_audit(p: Proj, request: Request) -> Response:
        """The memory audit report (computed now; nothing is written)."""
        allow(request, p, "read", p.memory_path)  # it tells the working memory's sections and sizes
        allow(request, p, "read", p.insights_path)
        return _json(service.audit(p))

    from core.server import inbox_views  # the memory firewall's inbox, read-only (issue 20)

    inbox_views.register_http(app, _project, allow, access)
    from core.server.dashboard_routes import add_dashboard_routes  # what Fusion's dashboard needs (issue 23)

    add_dashboard_routes(app, Proj, allow, access)

    @app.get("/api/memory/stats", response_model=models.StatsResponse, tags=["memory"])
    def get_stats(p: Proj, request: Request) -> Response:
        """Sizes of working memory and insights, in characters."""
        allow(request, p, "read", p.memory_path)
        allow(request, p, "read", p.insights_path)
        return _json(service.stats(p))

    @app.post("/api/memory/search", response_model=models.SearchResponse, tags=["memory"],
              responses={501: {"model": models.ErrorResponse}})
    def post_search(body: models.SearchRequest, p: Proj, request: Request) -> Response:
        """Search the memory; a backend that cannot search answers 501 unless ``derived`` is true."""
        try:
            allow(request, p, "read")
            found = service.search(p, body.query, limit=body.limit, mode=body.mode, derived=body.derived,
                                   include_superseded=body.include_superseded)
            found.results = [h for h in found.results if access(request).can("read", h.path, p.root)]
            from core.server.search_reads import note_search_hits  # the lines served are reads too

            note_search_hits(p, served.key_of(p), found.results, client=client_name(request),
                             token=author(request), via="http")
            return _json(found)
        except MemoryBackendError as exc:
            if exc.code == "CAPABILITY_UNSUPPORTED":
                raise ApiError(501, f"{exc.message}; send \"derived\": true to search memdesk's own index",
                               exc.code, exc.backend_id or None) from exc
            raise

    return app


async def _send_json(send: Send, status: int, value: dict[str, Any]) -> None:
    body = json.dumps(value).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _may_change_settings(who: Access, path: str = "/api/settings") -> bool:
    """Settings are the whole project's: only a write token not limited to some documents may change them; Fusion's
    global settings are every project's (with Fusion running, its own: the CLI binaries it runs, its remote access),
    so only such a token not limited to some projects either."""
    return who.scope == "write" and not who.paths and (path != "/api/settings/global" or not who.projects)


class _Dispatch:
    """Send ``/mcp`` to the MCP server's streamable-HTTP handler and everything else to the API.

    An MCP session belongs to the token that opened it: the session id the SDK answers ``initialize``
    with is remembered with the token's name, and a request naming that session with another token is
    refused (403) before the SDK sees it.
    """

    MAX_SESSIONS = 10_000
    #: Open MCP sessions one token may hold. The SDK keeps at most 10,000 sessions (~38 KB each) for 30 idle
    #: minutes and answers 503 past that: one token opening sessions in a loop shut every other client out.
    PER_TOKEN = 64

    def __init__(self, api: ASGIApp, mcp: ASGIApp | None, live: Any = None) -> None:
        self.api, self.mcp = api, mcp
        self.owners: dict[str, str | None] = {}
        self.live = live  # () -> the session ids the SDK still holds (None: not known)

    def _held_by(self, who: str | None) -> int:
        """How many open sessions ``who`` holds (sessions the SDK closed are forgotten here)."""
        live = self.live() if self.live is not None else None
        if live is not None:
            for sid in [sid for sid in self.owners if sid not in live]:
                del self.owners[sid]
        return sum(1 for owner in self.owners.values() if owner == who)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if self.mcp is not None and scope["type"] == "http" and (path == "/mcp" or path.startswith("/mcp/")):
            await self._mcp(scope, receive, send)
        elif path == fast_append.PATH and scope.get("method") == "POST" and scope["type"] == "http":
            await fast_append.handle(self.api, scope, receive, send)  # type: ignore[arg-type]  # the FastAPI app
        elif path == memory_read.PATH and scope.get("method") == "GET" and scope["type"] == "http":
            await memory_read.handle(self.api, scope, receive, send)  # type: ignore[arg-type]  # the FastAPI app
        elif path in ("/api/settings", "/api/settings/global") and scope.get("method") not in ("GET", "HEAD") and \
                not _may_change_settings(scope.get("state", {}).get(ACCESS_KEY, FULL), path):
            who = scope["state"][ACCESS_KEY]
            what = "settings" if who.scope != "write" else "settings (its --path globs limit it to those documents)" \
                if who.paths else "Fusion's global settings (they are every project's; its --project limits it)"
            await _send_json(send, 403, {"error": f"token {who.name!r} has scope {who.describe()}: it may not change "
                                         f"{what}; nothing was done", "code": "SCOPE",
                                         "details": {"code": "SCOPE", "backend": None}})
        else:
            await self.api(scope, receive, send)

    async def _mcp(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self.mcp is not None
        who = scope.get("state", {}).get(AUTHOR_KEY)
        session = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"mcp-session-id"), None)
        if session is not None and session in self.owners and self.owners[session] != who:
            await _send_json(send, 403, {"error": "this MCP session was opened with another token; open your own "
                                         "session (initialize) with this token", "code": "SESSION_TOKEN"})
            return
        if session is None and scope.get("method") == "POST" and self._held_by(who) >= self.PER_TOKEN:
            await _send_json(send, 429, {"error": f"token {who!r} holds {self.PER_TOKEN} open MCP sessions, the most "
                                         "one token may; close one (DELETE /mcp with its mcp-session-id) or reuse "
                                         "it; an idle one closes after 30 minutes", "code": "SESSION_LIMIT"})
            return

        async def remember(message: Message) -> None:
            if message["type"] == "http.response.start":
                for k, v in message.get("headers", ()):
                    if k.lower() == b"mcp-session-id":
                        sid = v.decode("latin-1")
                        if sid not in self.owners:
                            if len(self.owners) >= self.MAX_SESSIONS:
                                self.owners.pop(next(iter(self.owners)))
                            self.owners[sid] = who
            await send(message)

        await self.mcp(scope, receive, remember)


def create_app(served: ServedProjects, tokens: TokenStore, *, port: int, host: str = "127.0.0.1",
               mcp: bool = True, allow_hosts: Iterable[str] = ()) -> ASGIApp:
    """The whole ``serve`` app: the guard, then ``/mcp`` (when ``mcp``) or the API routes.

    ``Host`` headers may name the loopback names, ``host`` itself, and the names in ``allow_hosts``
    (the machine's names, when it listens on a LAN), each with ``port`` or no port.
    """
    mcp_handler = None
    lifespan = None
    if mcp:
        from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
        from mcp.server.transport_security import TransportSecuritySettings

        from core.server.mcp_server import build_mcp_server

        server = build_mcp_server(served, tokens=tokens)
        # The guard checks Host for every route, /mcp included; the SDK's own check would only repeat it.
        server.streamable_http_app(transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=False), json_response=True, host=host)
        manager = server.session_manager
        mcp_handler = StreamableHTTPASGIApp(manager)

        @contextlib.asynccontextmanager
        async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
            async with manager.run():
                yield

    api = create_api(served, lifespan=lifespan)
    names = {"127.0.0.1", "localhost", "::1", host, *allow_hosts}
    # Lifespan events pass the guard untouched and reach the API, which runs the MCP session manager.
    live = (lambda: getattr(manager, "_server_instances", None)) if mcp else None  # the SDK's open sessions
    return Guard(_Dispatch(api, mcp_handler, live), tokens=tokens, host_names=names, port=port)
