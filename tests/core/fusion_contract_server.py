"""A local server speaking Fusion's settings API as read in Fusion's dashboard code, for contract tests.

Written from Runfusion/Fusion (read, not copied):
- auth: ``packages/dashboard/src/__tests__/auth-middleware-integration.test.ts`` (commit 9cf8671a): with a
  daemon token every ``/api`` route but ``/api/health`` needs ``Authorization: Bearer <token>``, else 401
  ``{"error": "Unauthorized", "message": "Valid bearer token required"}``.
- project scoping: ``packages/dashboard/src/routes/context.ts`` (9bea9510): ``?projectId=`` (or the body's).
- ``GET /api/settings`` / ``PUT /api/settings``: ``packages/dashboard/src/routes/register-settings-memory-
  routes.ts`` (1dfb04f4): GET answers the merged settings plus ``prAuthAvailable``,
  ``trackingAuthAvailable``, ``trackingAuthReason``; PUT strips those, refuses global-only keys (400
  "Cannot update global settings via this endpoint. Use PUT /settings/global instead. Global fields
  found: …"), checks ``memoryBackendType`` is a string or null, then ``updateSettings`` (null deletes:
  ``packages/core/src/task-store/settings-ops.ts``) and answers the merged settings. Errors are
  ``{"error": message}``.
- defaults: ``packages/core/src/config/settings-schema.ts`` (00982d1c), the memory keys only.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PROJECT_DEFAULTS: dict[str, Any] = {
    "memoryEnabled": True, "memoryBackendType": "qmd", "insightExtractionEnabled": False,
    "insightExtractionSchedule": "0 2 * * *", "insightExtractionMinIntervalMs": 86_400_000,
    "memoryAutoSummarizeEnabled": False, "memoryAutoSummarizeThresholdChars": 50_000,
    "memoryAutoSummarizeSchedule": "0 3 * * *", "memoryDreamsEnabled": False, "memoryDreamsSchedule": "0 4 * * *",
    "memoryBackupEnabled": False, "memoryBackupSchedule": "0 3 * * *", "memoryBackupRetention": 14,
    "memoryBackupDir": ".fusion/backups/memory", "memoryBackupScope": "all", "maxConcurrent": 2,
}
GLOBAL_DEFAULTS: dict[str, Any] = {"agentMemoryInclusionMode": "full", "daemonPort": 4040, "themeMode": "system"}
GLOBAL_ONLY = frozenset(GLOBAL_DEFAULTS)
SERVER_KEYS = ("githubTokenConfigured", "prAuthAvailable", "trackingAuthAvailable", "trackingAuthReason")


@dataclass
class FusionState:
    token: str | None = "fn_contract_token"
    projects: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> {"path", "settings"}
    global_settings: dict[str, Any] = field(default_factory=dict)
    requests: list[tuple[str, str, Any]] = field(default_factory=list)  # (method, path, body)
    revisions: list[dict[str, Any]] = field(default_factory=list)
    answer_nonsense: bool = False

    def merged(self, project_id: str) -> dict[str, Any]:
        return {**PROJECT_DEFAULTS, **GLOBAL_DEFAULTS, **self.global_settings, **self.projects[project_id]["settings"]}


class _Handler(BaseHTTPRequestHandler):
    state: FusionState

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _send(self, status: int, body: Any) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if not isinstance(body, bytes) else "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"{}") if length else {}

    def _route(self, method: str) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        body = self._body() if method == "PUT" else None
        self.state.requests.append((method, parts.path, body))
        if parts.path == "/api/health":
            return self._send(200, {"status": "ok"})
        token = self.state.token
        if token and self.headers.get("Authorization") != f"Bearer {token}":
            return self._send(401, {"error": "Unauthorized", "message": "Valid bearer token required"})
        if self.state.answer_nonsense:
            return self._send(200, b"<html>not the API</html>")
        project_id = (query.get("projectId") or [None])[0] or (body or {}).get("projectId") \
            or next(iter(self.state.projects))
        if parts.path == "/api/projects" and method == "GET":
            return self._send(200, [{"id": pid, "name": pid, "path": p["path"], "status": "active"}
                                    for pid, p in self.state.projects.items()])
        if project_id not in self.state.projects:
            return self._send(404, {"error": f"Project {project_id} not found"})
        if parts.path == "/api/settings" and method == "GET":
            return self._send(200, {**self.state.merged(project_id), "prAuthAvailable": False,
                                    "trackingAuthAvailable": False, "trackingAuthReason": "no token"})
        if parts.path == "/api/settings" and method == "PUT":
            patch = {k: v for k, v in body.items() if k not in SERVER_KEYS}
            found = [k for k in patch if k in GLOBAL_ONLY]
            if found:
                return self._send(400, {"error": "Cannot update global settings via this endpoint. Use PUT "
                                                 f"/settings/global instead. Global fields found: {', '.join(found)}"})
            if "memoryBackendType" in patch and patch["memoryBackendType"] is not None \
                    and not isinstance(patch["memoryBackendType"], str):
                return self._send(400, {"error": "memoryBackendType must be a string or null"})
            if "memoryBackupRetention" in patch and not (isinstance(patch["memoryBackupRetention"], int)
                                                         and 1 <= patch["memoryBackupRetention"] <= 100):
                return self._send(400, {"error": "memoryBackupRetention must be between 1 and 100"})
            stored = self.state.projects[project_id]["settings"]
            before = dict(stored)
            for key, value in patch.items():
                if value is None:
                    stored.pop(key, None)
                else:
                    stored[key] = value
            self.state.revisions.append({"before": before, "after": dict(stored)})
            return self._send(200, self.state.merged(project_id))
        if parts.path == "/api/settings/global" and method == "PUT":
            for key, value in body.items():
                if value is None:
                    self.state.global_settings.pop(key, None)
                else:
                    self.state.global_settings[key] = value
            return self._send(200, self.state.merged(project_id))
        return self._send(404, {"error": "Not found"})

    def do_GET(self) -> None:  # noqa: N802
        self._route("GET")

    def do_PUT(self) -> None:  # noqa: N802
        self._route("PUT")


@dataclass
class RunningFusion:
    url: str
    state: FusionState
    server: ThreadingHTTPServer

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def start_fusion(state: FusionState) -> RunningFusion:
    handler = type("Handler", (_Handler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return RunningFusion(f"http://127.0.0.1:{server.server_address[1]}", state, server)

