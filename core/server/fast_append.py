"""``POST /api/memory/append`` without FastAPI's generic layers: the same answer, less work per request.

An append is the request agents send most. Through FastAPI it passes five middlewares, the router's match
over every route, the dependency solver (the project, its two query names, the request) and the generic
body reader before its one hop to the thread pool; measured in one process through the ASGI app, that is
about as much CPU as the append itself on a small document (docs/servers.md). :func:`handle` takes the
ordinary request here, after the guard (host, token, body size) has run:

* only a JSON object body that :class:`core.server.models.AppendRequest` accepts, with at most the query
  names ``project`` or ``projectId`` (once each), and a served project whose cached model is current and
  which the token may use. Anything else, before anything is done, goes on to the FastAPI route as before
  (``None``): its refusals (400, 403, 404, …) keep their exact shape;
* in one hop to the pool: the scope check on the target document, the append (:func:`core.server.service.append`,
  the pipeline with every guard), the message scrubbed of server paths, the JSON; the answer is the
  route's, byte for byte (the route calls :func:`append_response` too);
* an error raised there is answered by the app's own exception handlers, as the route's would be;
* history's thread is woken for the append's event once the answer is sent, not while the append and its
  answer are still under way (:class:`core.storage.history.jobs.Hold`): the event is queued in its order at
  once, and anything that waits on a history job (a rotation's version) wakes the thread itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from core.server import models, service
from core.server.access import FULL
from core.server.guard import ACCESS_KEY, AUTHOR_KEY
from core.server.handoff import Handoff
from core.server.refusals import scrub
from core.storage.history.worker import Hold

if TYPE_CHECKING:
    from fastapi import FastAPI
    from starlette.types import Message, Receive, Scope, Send

    from core.project.model import Project

PATH = "/api/memory/append"
_QUERY_NAMES = frozenset({"project", "projectId"})


def append_response(served: service.ServedProjects, p: Project, body: models.AppendRequest, scope: Any) -> Response:
    """Append ``body`` to ``p`` for the request ``scope`` (its token's scope checked first); the JSON answer."""
    state = scope.get("state", {})
    who = state.get(ACCESS_KEY, FULL)
    if body.content.strip():
        who.check("append", served.key_of(p), p.root, p.append_target(layer=body.layer, agent=body.agent,
                                                                         path=body.path))
    result = service.append(p, body.content, layer=body.layer, agent=body.agent, path=body.path,
                            author=state.get(AUTHOR_KEY), source="http-append")
    result.message = scrub(result.message, [(s.key, s.root) for s in served.served])  # no server paths
    if result.status == "skipped_empty":  # seed 002's body, and an error as every refusal has it (Fusion's shape)
        return JSONResponse(result.model_dump(by_alias=True) | EMPTY_ERROR
                            | {"details": {"code": EMPTY_ERROR["code"], "backend": p.backend.id}}, status_code=400)
    data = models.AppendResponse.__pydantic_serializer__.to_json(result, by_alias=True)
    return Response(data, status_code=200, media_type="application/json")


#: An empty append's refusal beside seed 002's body (whose message names the seed's tool).
EMPTY_ERROR = {"error": "the entry is empty (only white space); nothing was written", "code": "EMPTY_ENTRY"}


async def handle(api: FastAPI, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer ``POST /api/memory/append`` here when it is an ordinary append, else through the FastAPI route."""
    messages, body = await _body(receive)
    request = _parse(api, scope, body)
    if request is None:
        await api(scope, _replay(messages, receive), send)
        return
    p, parsed = request
    served: service.ServedProjects = api.state.served
    hold = Hold()  # history's wake-up waits for the answer (released in every case, the client gone too)
    try:
        try:
            response = await _in_pool(_held, hold, served, p, parsed, scope)
        except Exception as exc:
            response = await refusal_response(api, scope, receive, exc)
        await response(scope, receive, send)
    finally:
        hold.release()


def _held(hold: Hold, served: service.ServedProjects, p: Project, body: models.AppendRequest, scope: Any
          ) -> Response:
    """:func:`append_response` with history's jobs held by ``hold`` (on the appends' thread)."""
    with hold.holding():
        return append_response(served, p, body, scope)


_T = TypeVar("_T")
_handoff: Handoff | None = None
_handoff_lock = threading.Lock()


async def _in_pool(fn: Callable[..., _T], *args: Any) -> _T:
    """``fn(*args)`` on the appends' threads (:class:`core.server.handoff.Handoff`): one queue put there and one
    ``call_soon_threadsafe`` back, not AnyIO's hop (its capacity limiter, run-var and cancel-scope bookkeeping
    on the event loop) nor the executor's (measured, docs/servers.md). As with AnyIO, an append once handed
    off runs to its end even if the client goes away."""
    global _handoff
    if _handoff is None:
        with _handoff_lock:
            if _handoff is None:
                _handoff = Handoff("memdesk-append")
    return await _handoff.run(fn, *args)


async def _body(receive: Receive) -> tuple[list[Message], bytes]:
    """The request's messages (the guard buffered them, at most its body limit) and the body they carry."""
    messages: list[Message] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request" or not message.get("more_body", False):
            break
    return messages, b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay


def _parse(api: FastAPI, scope: Scope, body: bytes) -> tuple[Project, models.AppendRequest] | None:
    """The project and the body, when this request is one the fast path answers exactly as the route would."""
    # The first Content-Type, as the route reads it (Starlette's ``headers.get``): a second one never decides.
    kind = next((v for k, v in scope.get("headers", ()) if k == b"content-type"), b"")
    if kind.split(b";")[0].strip().lower() != b"application/json":
        return None
    p = served_project(api, scope)
    if p is None:
        return None
    try:
        parsed = models.AppendRequest.model_validate_json(body)
    except Exception:  # a bad body (ValidationError): the route answers, in its words
        return None
    return p, parsed


def served_project(api: FastAPI, scope: Scope) -> Project | None:
    """The project a request names (``?project=`` or ``?projectId=``, at most once each, no other query name),
    when it is served, its cached model current and the token may use it; else ``None`` (the route answers)."""
    try:
        pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True,
                          strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        return None
    names = [k for k, _v in pairs]
    if len(set(names)) != len(names) or not set(names) <= _QUERY_NAMES:
        return None
    query = dict(pairs)
    selector = query.get("project", query.get("projectId"))
    served: service.ServedProjects = api.state.served
    try:
        found = served.find(selector)
        scope.get("state", {}).get(ACCESS_KEY, FULL).check_project(found.key, found.root)
        return served.cached_for(found)
    except Exception:  # not served, out of scope: the route answers, in its words
        return None


async def refusal_response(api: FastAPI, scope: Any, receive: Any, exc: Exception) -> Response:
    """What the app's own exception handler for ``exc`` answers (found by its class's MRO, as Starlette looks it
    up); with none, ``exc`` is raised again, as the app's error middleware does (uvicorn answers 500 and logs it)."""
    for cls in type(exc).__mro__:
        handler = api.exception_handlers.get(cls)
        if handler is not None:
            scope.setdefault("app", api)
            answered = handler(Request(scope, receive), exc)
            return answered if isinstance(answered, Response) else await answered
    raise exc
