"""Read-only views of the memory firewall's inbox for agents: ``GET /api/memory/inbox`` and the
``memory_inbox`` MCP tool, so an agent can see that its write waits for review and why.

They show ids, documents, writers, rules and statuses, never the held text: a held injection must
not reach another agent, and a held secret not even redacted. Accepting and rejecting stay with the
operator (the app and ``memdesk inbox``).
"""


from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import Depends, Query, Request
from fastapi.responses import JSONResponse
from mcp.server.mcpserver import Context
from pydantic import Field

from core.firewall.inbox import Inbox, InboxError
from core.project.model import Project
from core.server.refusals import bounded

Status = Literal["pending", "accepted", "rejected", "all"]


def inbox_items(project: Project, status: str = "pending", item_id: str | None = None,
                readable: Callable[[str], bool] | None = None) -> dict[str, Any]:
    """``{"items": [...]}`` (``status`` ``all`` for every item; ``item_id`` for one); ``ValueError`` on a bad inbox.

    ``readable(path)``: whether the caller may read that document; items about others are left out (a
    ``--scope read --path`` token sees nothing of documents outside its paths, not even that writes to them wait).
    """
    from core.storage.userdirs import user_config_dir

    if status not in ("pending", "accepted", "rejected", "all"):
        raise ValueError(f"status must be pending, accepted, rejected or all, not {status!r}")
    try:
        inbox = Inbox(project.root, user_config_dir())
        if item_id is not None:
            views = [inbox.get(item_id).api_view()]
        else:
            views = [i.api_view() for i in inbox.items(status=None if status == "all" else status)]
    except InboxError as exc:
        raise ValueError(str(exc)) from exc
    if readable is not None:
        shown = [v for v in views if isinstance(v.get("path"), str) and readable(v["path"])]
        if item_id is not None and not shown:
            raise ValueError(f"no inbox item {item_id!r} among the documents this caller may read")
        views = shown
    return {"items": views}


def register_http(app: Any, project_dependency: Any, allow: Any, access: Any = None) -> None:
    """Add ``GET /api/memory/inbox`` to the HTTP API (``read`` scope; ``access(request)`` the token's scope)."""

    @app.get("/api/memory/inbox", tags=["firewall"])
    def get_inbox(request: Request, p: Annotated[Project, Depends(project_dependency)],
                  status: Annotated[str, Query()] = "pending",
                  id: Annotated[str | None, Query()] = None) -> JSONResponse:  # noqa: A002 - the query's name
        """Writes the memory firewall holds for review (read-only): id, document, writer, rules, status."""
        allow(request, p, "read")
        try:
            who = access(request) if access is not None else None
            readable = (lambda rel: who.can("read", rel, p.root)) if who is not None else None
            return JSONResponse(inbox_items(p, status, id, readable))
        except ValueError as exc:
            return JSONResponse({"error": bounded(str(exc)), "code": "INVALID_INBOX",
                                 "details": {"code": "INVALID_INBOX", "backend": None}}, status_code=400)


def register_mcp(mcp: Any, project_of: Any, read_hints: Any, refusal: Any, caller: Any = None) -> None:
    """Add the read-only ``memory_inbox`` tool (``caller(ctx)``: the caller's scope)."""

    @mcp.tool(annotations=read_hints, structured_output=True,
              description="Writes the memory firewall holds for a person to review (yours included): id, "
                          "document, writer, the rules that held it and the status (pending, accepted, "
                          "rejected). Read-only; the held text is never shown. status: pending (default), "
                          "accepted, rejected or all; id: one item.")
    def memory_inbox(
        ctx: Context,
        status: Annotated[Status, Field(description="pending, accepted, rejected or all")] = "pending",
        id: Annotated[str | None, Field(description="One inbox id (from a held write's inboxId).")] = None,  # noqa: A002
        project: Annotated[str | None, Field(description="The project's key (memory_projects).")] = None,
    ) -> dict[str, Any]:
        p, _ = project_of(project, ctx)
        who = caller(ctx) if caller is not None else None
        readable = (lambda rel: who.can("read", rel, p.root)) if who is not None else None
        try:
            return inbox_items(p, status, id, readable)
        except ValueError as exc:
            raise refusal("INVALID_INBOX", str(exc)) from exc
