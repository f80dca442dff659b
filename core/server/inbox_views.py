"""Read-only views of the memory firewall's inbox for agents: ``GET /api/memory/inbox`` and the
``memory_inbox`` MCP tool, so an agent can see that its write waits for review and why.

They show ids, documents, writers, rules and statuses, never the held text: a held injection must
not reach another agent, and a held secret not even redacted. Accepting and rejecting stay with the
operator (the app and ``memdesk inbox``).
"""


from typing import Annotated, Any, Literal

from fastapi import Depends, Query, Request
from fastapi.responses import JSONResponse
from mcp.server.mcpserver import Context
from pydantic import Field

from core.firewall.inbox import Inbox, InboxError
from core.project.model import Project
from core.server.refusals import bounded

Status = Literal["pending", "accepted", "rejected", "all"]


def inbox_items(project: Project, status: str = "pending", item_id: str | None = None) -> dict[str, Any]:
    """``{"items": [...]}`` (``status`` ``all`` for every item; ``item_id`` for one); ``ValueError`` on a bad inbox."""
    from core.storage.userdirs import user_config_dir

    if status not in ("pending", "accepted", "rejected", "all"):
        raise ValueError(f"status must be pending, accepted, rejected or all, not {status!r}")
    try:
        inbox = Inbox(project.root, user_config_dir())
        if item_id is not None:
            return {"items": [inbox.get(item_id).api_view()]}
        items = inbox.items(status=None if status == "all" else status)
    except InboxError as exc:
        raise ValueError(str(exc)) from exc
    return {"items": [i.api_view() for i in items]}


def register_http(app: Any, project_dependency: Any, allow: Any) -> None:
    """Add ``GET /api/memory/inbox`` to the HTTP API (``read`` scope)."""

    @app.get("/api/memory/inbox", tags=["firewall"])
    def get_inbox(request: Request, p: Annotated[Project, Depends(project_dependency)],
                  status: Annotated[str, Query()] = "pending",
                  id: Annotated[str | None, Query()] = None) -> JSONResponse:  # noqa: A002 - the query's name
        """Writes the memory firewall holds for review (read-only): id, document, writer, rules, status."""
        allow(request, p, "read")
        try:
            return JSONResponse(inbox_items(p, status, id))
        except ValueError as exc:
            return JSONResponse({"error": bounded(str(exc)), "code": "INVALID_INBOX",
                                 "details": {"code": "INVALID_INBOX", "backend": None}}, status_code=400)


def register_mcp(mcp: Any, project_of: Any, read_hints: Any, refusal: Any) -> None:
    """Add the read-only ``memory_inbox`` tool."""

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
        try:
            return inbox_items(p, status, id)
        except ValueError as exc:
            raise refusal("INVALID_INBOX", str(exc)) from exc
