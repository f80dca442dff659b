"""``GET /api/memory``: the memory's body, and the request answered without FastAPI's generic layers.

The read agents send most after an append. Through FastAPI it passes five middlewares, the router's match over
every route and the dependency solver (the project, its two query names, the request) before the one read; on
the 0.88 MiB bench memory that was a third of the event loop's CPU for an unchanged read (docs/servers.md).
:func:`handle` takes the ordinary request here, after the guard (host, token) has run:

* only ``GET /api/memory`` with at most the query names ``project`` or ``projectId`` (once each), a served
  project whose cached model is current, which the token may use and whose memory it may read. Anything
  else, before anything is read, goes on to the FastAPI route as before: its refusals (403, 404, …) keep
  their exact shape;
* then what the route does, by the same function (:func:`read_memory`, which the route calls too): the read,
  on the event loop when the text is the one served last or that text with more after it, else in the pool;
  the read put on record; the same body and headers;
* an error raised there is answered by the app's own exception handlers, as the route's would be.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from core.server import models, service
from core.server.access import FULL
from core.server.fast_append import refusal_response, served_project
from core.server.guard import ACCESS_KEY, AUTHOR_KEY
from core.storage.readlog import client_label

if TYPE_CHECKING:
    from fastapi import FastAPI
    from starlette.types import Receive, Scope, Send

    from core.project.model import Project
    from core.server.memo import TextFacts

__all__ = ["PATH", "PartsResponse", "document_json", "facts_json", "handle", "read_memory"]

PATH = "/api/memory"


def document_json(project: Project, doc: models.FileResponse, model: BaseModel) -> Response:
    """``model`` (which holds ``doc``'s content) as JSON, with the content's literal spliced in from the
    document's remembered facts: a 1 MiB text is escaped once, and after an append only its tail is.
    Each shape's body is kept on the facts, so it is made again only when the text changed.

    ``doc`` was read (and any change it showed noticed) by :func:`service.read_file`: the facts are looked up as
    those of a read older than any other (ticket 0), so a newer read remembered meanwhile is not taken for a change
    back to ``doc``'s text."""
    return facts_json(service.text_facts(project, doc.path, doc.content, 0), model, pieces=False)


def facts_json(facts: TextFacts, model: BaseModel, *, pieces: bool = True) -> Response:
    """``model`` as JSON, its ``content`` (whatever it holds) being the text ``facts`` are of: see :func:`document_json`.

    After an append the literal is still in pieces (the old literal's view, the tail's): with ``pieces`` they are
    sent as they lie (:class:`PartsResponse`: the transport sends them in one vectored write), not joined into a
    new MiB first; else, and for a literal in one piece, the body is made once and kept for the next read."""
    shape = type(model).__name__
    body = facts.bodies.get(shape)
    if body is None:
        # Serialised with an empty content: ``"content":""`` can only be that field (in a string value
        # every quote is escaped), and it is replaced by the whole literal.
        shell = type(model).__pydantic_serializer__.to_json(model.model_copy(update={"content": ""}), by_alias=True)
        head, _, tail = shell.partition(b'"content":""')
        parts = facts.json_parts()
        if pieces and len(parts) > 1:
            return PartsResponse((head + b'"content":', *parts, tail))
        body = facts.bodies[shape] = b"".join((head, b'"content":', *parts, tail))  # the MiB copied once
        start = len(head) + len(b'"content":')
        facts.adopt_json(memoryview(body)[start:start + sum(len(part) for part in parts)])
    return Response(body, media_type="application/json")


class PartsResponse(Response):
    """A JSON response sent from the buffers it is made of, in order, without joining them: the same status,
    headers and bytes as ``Response(b"".join(parts), media_type="application/json")``."""

    def __init__(self, parts: tuple[bytes | memoryview, ...]) -> None:
        super().__init__(b"", media_type="application/json")
        self.parts = parts
        length = str(sum(len(p) for p in parts)).encode()
        self.raw_headers = [(k, length if k == b"content-length" else v) for k, v in self.raw_headers]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        last = len(self.parts) - 1
        for i, part in enumerate(self.parts):
            await send({"type": "http.response.body", "body": part, "more_body": i < last})
        if self.background is not None:
            await self.background()


def note_whole(key: str, p: Project, doc: models.FileResponse, client: str | None, token: str | None) -> None:
    """Log that a request read ``doc`` whole (:mod:`core.storage.readlog`)."""
    total = doc.total_lines or 1
    service.note_read(key, p.root, doc.path, doc.hash, doc.size or 0, 1, total, total, client=client, token=token,
                      via="http")


async def read_memory(served: service.ServedProjects, p: Project, client: str | None, token: str | None) -> Response:
    """The memory's body, the read on record. A file-backed memory unchanged since this process last served it
    is answered on the event loop (one local read of its bytes and a compare; the body kept for them is sent), and
    so is one that only grew (its tail decoded and worked out, the literal's pieces sent as they lie; the whole
    text is not built): no thread-pool hop and back, the bulk of such a read's latency; the read goes on record
    once the body is sent. Any other backend, a first serve, a rewrite or a memory that is missing, empty or not
    UTF-8 is read again and served in the pool."""
    if p.backend.id == "file":
        rel, facts = service.read_unchanged(p, None)
        if facts is not None:
            response = facts_json(facts, models.ContentResponse(content="", path=rel, hash=facts.hash))
            key, lines, digest, size = served.key_of(p), facts.lines, facts.hash, facts.size

            async def noted() -> None:
                service.note_read(key, p.root, rel, digest, size, 1, lines, lines, client=client, token=token,
                                  via="http")

            response.background = BackgroundTask(noted)  # on record once sent: the client waits for the body only
            return response
    doc, response = await run_in_threadpool(_memory_json, p, lambda: service.read_file(p, None))
    note_whole(served.key_of(p), p, doc, client, token)
    return response


def _memory_json(p: Project, read: Any) -> tuple[models.FileResponse, Response]:
    """In the pool, in one hop: the memory read (or its read finished) by ``read()`` and its response."""
    doc = read()
    return doc, document_json(p, doc, models.ContentResponse(content=doc.content, path=doc.path, hash=doc.hash))


async def handle(api: FastAPI, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer ``GET /api/memory`` here when it is an ordinary read, else through the FastAPI route."""
    served: service.ServedProjects = api.state.served
    p = served_project(api, scope)
    state = scope.get("state", {})
    if p is not None:
        try:
            state.get(ACCESS_KEY, FULL).check("read", served.key_of(p), p.root, p.memory_path)
        except Exception:  # out of scope: the route refuses it, in its words
            p = None
    if p is None:
        await api(scope, receive, send)
        return
    client = client_label(next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"user-agent"),
                               None))  # the first User-Agent, as the route's request.headers.get reads it
    try:
        response = await read_memory(served, p, client, state.get(AUTHOR_KEY))
    except Exception as exc:
        response = await refusal_response(api, scope, receive, exc)
    await response(scope, receive, send)
