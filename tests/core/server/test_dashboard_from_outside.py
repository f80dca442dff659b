"""Issue 23 item 5: what running Fusion's dashboard code against a real ``memdesk serve`` from outside found.

Fusion's dashboard client and hooks (Runfusion/Fusion ``packages/dashboard/app/api/memory.ts`` at c81144c7,
``app/api/client/client.ts`` at 34e0e664, ``app/api/settings/settings.ts`` at fb741739,
``app/api/global-and-pi-settings.ts`` at 776e90bf, ``app/hooks/useMemoryData.ts`` at b1f6740b,
``app/hooks/useAppSettings.ts`` at a1cac3a6) were run in headless Chromium against ``memdesk serve`` on the
fixtures, outside this repository (nothing of Fusion's is here; docs/servers.md, "Fusion's dashboard").
Each test sends the exact request that code sent and asserts the shape that code reads.
"""

from __future__ import annotations

import json
import socket
import time

import httpx

from core.server.limits import Limits
from core.server.tokens import TokenStore
from tests.core.server.test_fusion_dashboard import _api, memdesk_serve  # noqa: F401  (the real server fixture)


def test_the_dashboards_global_settings_are_answered(memdesk_serve, layered_project):  # noqa: F811
    """``fetchGlobalSettings`` sends ``GET /api/settings/global`` with no ``projectId``
    (``global-and-pi-settings.ts`` at 776e90bf) and reads a ``GlobalSettings`` object; memdesk answered 405, so
    the dashboard's settings screen failed to load. It now answers the global settings it serves
    (``experimentalFeatures``), from the store ``PUT /api/settings/global`` writes (the first served project, or
    the one ``?projectId=`` names); any token that may read may ask."""
    base, token = memdesk_serve
    with _api(base, token) as api:
        got = api.get("/settings/global")
        assert got.status_code == 200, got.text
        assert got.headers["content-type"].startswith("application/json")
        assert got.json() == {"experimentalFeatures": {"memoryView": True}}

        saved = api.put("/settings/global", json={"experimentalFeatures": {"memoryView": False, "insights": True}})
        assert saved.status_code == 200, saved.text
        assert api.get("/settings/global").json() == {"experimentalFeatures": {"memoryView": False, "insights": True}}
        # The same flags GET /api/settings answers for that project; the other project keeps its own.
        assert api.get("/settings?projectId=layered").json()["experimentalFeatures"] == {"memoryView": False,
                                                                                         "insights": True}
        # The other project keeps its own flags; its config.json holds two of Fusion's global settings too,
        # answered since tests/core/server/test_dashboard_global_settings.py.
        assert api.get("/settings/global?projectId=sample").json() == {
            "experimentalFeatures": {"memoryView": True}, "ntfyEnabled": False, "defaultProvider": "anthropic"}
        unknown = api.get("/settings/global?projectId=nowhere")
        assert unknown.status_code == 404 and unknown.json()["details"]["code"] == "PROJECT_NOT_SERVED"

    reader = TokenStore().create("dash-global-reader", scope="read")
    with _api(base, reader) as api:
        assert api.get("/settings/global").json()["experimentalFeatures"]["memoryView"] is False
    assert httpx.get(f"{base}/api/settings/global").status_code == 401


def _send_body_after_refusal(port: int, token: str, declared: int, sent: int, project: str) -> tuple[bytes, str | None]:
    """Headers declaring ``declared`` bytes and 512 KiB of body; a pause (the server answers from the headers);
    then the rest up to ``sent`` bytes, as a client that writes its whole body before it reads. What came back,
    and the error sending raised (``None`` when the whole body went)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    head = (f"PUT /api/memory/file?projectId={project} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {declared}\r\n\r\n").encode()
    first = 512 * 1024
    sock.sendall(head + b"x" * first)
    time.sleep(0.3)  # the 413 is written and the server closes its side now
    error = None
    try:
        for _ in range((sent - first) // 65536):
            sock.sendall(b"x" * 65536)
    except OSError as exc:
        error = type(exc).__name__
    answer = b""
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    except OSError as exc:
        error = error or type(exc).__name__
    sock.close()
    return answer, error


def test_a_body_refused_from_its_headers_gets_its_answer_not_a_reset(serve, token, layered_project):
    """Fusion's ``saveMemoryFile`` with a 2 MiB document (``app/api/memory.ts`` at c81144c7), sent through a Node
    reverse proxy, came back as 502 "write ECONNRESET" instead of memdesk's 413: the guard answers from the
    Content-Length and the connection was closed with the body still arriving, so the client's next bytes met a
    reset (Python's ``urllib`` got a broken pipe one time in three). The server now half-closes and drops the
    rest of the body (bounded: :mod:`core.server.linger`): the client sends its whole body, then reads the 413
    in Fusion's shape. A client that never stops sending is still cut off past the bound."""
    srv = serve(layered_project, mcp=False, limits=Limits(linger=5.0, linger_bytes=4 * 1024 * 1024))
    before = (layered_project / ".fusion/memory/DREAMS.md").read_bytes()
    for _ in range(3):
        answer, error = _send_body_after_refusal(srv.port, token, 2 * 1024 * 1024, 2 * 1024 * 1024, "layered")
        assert error is None
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 413 ")
        refusal = json.loads(body)
        assert refusal["details"] == {"code": "QUOTA_EXCEEDED", "backend": None} and "limit" in refusal["error"]
    # Past linger_bytes of dropped body the connection is closed: sending 64 MiB does not go through.
    answer, error = _send_body_after_refusal(srv.port, token, 64 * 1024 * 1024, 64 * 1024 * 1024, "layered")
    assert error is not None
    assert (layered_project / ".fusion/memory/DREAMS.md").read_bytes() == before
    # The server still answers.
    assert srv.client(token).get("/api/memory/files?project=layered").status_code == 200


def test_the_memory_views_engines_tab_gets_a_qmd_answer(memdesk_serve):  # noqa: F811
    """Fusion's Memory view (``components/MemoryView.tsx`` at 745971a8) shows its QMD card from
    ``fetchMemoryBackendStatus`` (``GET /api/memory/backend``): "Installed" when ``qmdAvailable === true``, "not
    installed … <qmdInstallCommand>" when ``=== false``, and "Checking qmd availability…" otherwise. memdesk sent no
    ``qmdAvailable``, so the card said "Checking" for ever; and ``POST /api/memory/test`` answered
    ``qmdAvailable: false, usedFallback: false``, which the view printed as "qmd missing · qmd path used". memdesk
    never runs qmd: both now say so (``qmdAvailable: false``; every test result ``usedFallback: true``)."""
    base, token = memdesk_serve
    with _api(base, token) as api:
        for pid in ("layered", "sample"):
            status = api.get(f"/memory/backend?projectId={pid}").json()
            assert status["qmdAvailable"] is False
            assert status["qmdInstallCommand"] == "bun install -g @tobilu/qmd"
            assert isinstance(status["currentBackend"], str) and status["capabilities"]["readable"] is True
            test = api.post(f"/memory/test?projectId={pid}", json={"query": "memory"}).json()
            assert test["qmdAvailable"] is False and test["usedFallback"] is True
            assert test["qmdInstallCommand"] == status["qmdInstallCommand"]


def test_a_token_that_may_not_save_sees_a_read_only_backend(memdesk_serve, layered_project):  # noqa: F811
    """Fusion's Memory view decides from ``capabilities.writable`` of ``GET /api/memory/backend`` whether to show its
    read-only banner, a read-only editor and no Save (``components/MemoryView.tsx`` at 745971a8). Run with a read
    token, memdesk answered ``writable: true``: the view offered Save, and the save came back 403 ("Failed to save
    memory"). A token that may not replace documents (scope read or append) is now told the backend is not writable
    for it, and why; a write token still sees it writable."""
    base, token = memdesk_serve
    store = TokenStore()
    for name, scope in (("dash-ro", "read"), ("dash-append", "append")):
        with _api(base, store.create(name, scope=scope)) as api:
            status = api.get("/memory/backend?projectId=layered").json()
            assert status["capabilities"]["writable"] is False and status["capabilities"]["readable"] is True
            assert status["capabilities"]["supportsAtomicWrite"] is False
            assert f"scope {scope}" in status["readOnlyReason"] and name in status["readOnlyReason"]
            refused = api.put("/memory/file?projectId=layered", json={"path": ".fusion/memory/DREAMS.md",
                                                                     "content": "x"})
            assert refused.status_code == 403
    with _api(base, token) as api:
        status = api.get("/memory/backend?projectId=layered").json()
        assert status["capabilities"]["writable"] is True and status["readOnlyReason"] is None
