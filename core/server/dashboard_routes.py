"""What Fusion's dashboard asks for besides the memory routes, so it can run whole against ``memdesk serve``.

Read from Fusion's dashboard client (Runfusion/Fusion ``packages/dashboard/app/api/projects/projects.ts``
``fetchProjects`` → ``GET /api/projects`` answering ``ProjectInfo[]``; ``app/hooks/useAppSettings.ts``
→ ``GET /api/config`` and ``GET /api/settings`` at start-up; ``app/api/memory.ts``
``testMemoryRetrieval`` → ``POST /api/memory/test`` with ``{query}`` answering
``MemoryRetrievalTestResult``; ``app/api/client/client.ts`` reading errors as ``{error, details}``).
Every request names its project with ``?projectId=`` (``withProjectId``), which memdesk takes as it
takes ``?project=``: a served project's key. ``/api/settings`` is the settings store's route
(:mod:`core.server.settings_routes`).

(No ``from __future__ import annotations``: FastAPI reads the routes' annotations, and the project
dependency is a value given at registration.)
"""

import os
import time
from datetime import UTC, datetime
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from core.server import service
from core.server.models import QMD_INSTALL_COMMAND

_STARTED = time.monotonic()


class MemoryTestRequest(BaseModel):
    """``POST /api/memory/test``: Fusion's ``{query}``."""

    model_config = ConfigDict(extra="ignore")
    query: StrictStr = Field(min_length=1, max_length=1000)


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def add_dashboard_routes(app: FastAPI, project_dep: Any, allow: Any, access: Any) -> None:
    """Register ``GET /api/projects``, ``GET /api/config``, ``GET /api/health`` and ``POST /api/memory/test``."""
    from core.server.dashboard_actions import add_action_routes  # Compact, Dream Now, Extract, Install qmd

    add_action_routes(app, project_dep, allow, access)

    @app.get("/api/projects", tags=["dashboard"])
    def get_projects(request: Request) -> Any:
        """The served projects as Fusion's ``ProjectInfo[]`` (those this token may use); ``id`` is the key."""
        out = []
        who = access(request)
        for s in request.app.state.served.served:
            if not who.sees_project(s.key, s.root):
                continue
            try:
                st = os.stat(s.root / ".fusion")
            except OSError:
                st = os.stat(s.root)
            out.append({"id": s.key, "name": s.key, "path": str(s.root), "status": "active",
                        "isolationMode": "in-process", "createdAt": _iso(st.st_ctime), "updatedAt": _iso(st.st_mtime),
                        "lastActivityAt": _iso(st.st_mtime)})
        return out

    @app.get("/api/config", tags=["dashboard"])
    def get_config(p: project_dep, request: Request) -> Any:  # type: ignore[valid-type]
        """Fusion's ``{maxConcurrent, rootDir}`` for the dashboard's start-up."""
        allow(request, p, "read")
        raw = getattr(p.settings, "model_extra", None) or {}
        value = raw.get("maxConcurrent", 2)
        return {"maxConcurrent": value if isinstance(value, int) and not isinstance(value, bool) else 2,
                "rootDir": str(p.root)}

    @app.get("/api/health", tags=["dashboard"])
    def get_health() -> Any:
        """Fusion's ``DashboardHealthResponse``: ``{status, version, uptime}``."""
        from core.server.mcp_server import server_version

        return {"status": "ok", "version": server_version(), "uptime": round(time.monotonic() - _STARTED, 3)}

    @app.post("/api/memory/test", tags=["memory"])
    def post_memory_test(body: MemoryTestRequest, p: project_dep, request: Request) -> Any:  # type: ignore[valid-type]
        """Fusion's retrieval test: the best matches for ``query`` from memdesk's search, in Fusion's
        ``MemoryRetrievalTestResult`` shape. memdesk never runs qmd, so every answer is what Fusion calls the local
        fallback (``qmdAvailable: false``, ``usedFallback: true``): its Memory view then says "qmd missing · local
        fallback used" instead of "qmd missing · qmd path used"."""
        allow(request, p, "read")
        who = access(request)
        found = service.search(p, body.query, limit=10, mode="keyword", derived=True)
        hits = [h for h in found.results if who.can("read", h.path, p.root)]
        from core.server.guard import author, client_name
        from core.server.search_reads import note_search_hits  # the snippets served are reads too

        note_search_hits(p, request.app.state.served.key_of(p), hits, client=client_name(request),
                         token=author(request), via="http-test")
        results = [{"path": h.path, "lineStart": h.line_start or 1, "lineEnd": h.line_end or h.line_start or 1,
                    "snippet": h.snippet, "score": h.score, "backend": h.backend} for h in hits]
        return JSONResponse({"query": body.query, "qmdAvailable": False, "usedFallback": True,
                             "qmdInstallCommand": QMD_INSTALL_COMMAND, "results": results})
