"""Issue 23, Fusion's dashboard on memdesk: the requests Fusion's dashboard makes at start-up and in its memory
view, sent as its client sends them (``/api`` + path, ``?projectId=``, JSON, bearer token), against a real
``memdesk serve`` process, with the response shapes its code reads.

Read from Runfusion/Fusion: ``packages/dashboard/app/api/projects/projects.ts`` (``fetchProjects``,
``ProjectInfo``), ``app/hooks/useAppSettings.ts`` (``fetchConfig`` + ``fetchSettings`` at start-up),
``app/api/memory.ts`` (``fetchMemoryFiles``, ``fetchMemoryFile``, ``saveMemoryFile``, ``fetchMemoryStats``,
``fetchMemoryInsights``, ``fetchMemoryBackendStatus``, ``testMemoryRetrieval``), ``app/api/client/client.ts``
(errors read as ``{error, details}``), ``app/api/client/health.ts`` (``withProjectId``). No Fusion code is
in memdesk; these are the requests and shapes, restated. Every call of ``app/api/memory.ts`` at Fusion's commit
c81144c7c37b4ec58f87e2771c2b599ed88c16cc that reads or writes memory is sent here (``fetchMemory``,
``saveMemory``, ``fetchMemoryFiles``, ``fetchMemoryFile``, ``saveMemoryFile``, ``fetchMemoryInsights``,
``saveMemoryInsights``, ``fetchMemoryAudit``, ``fetchMemoryStats``, ``fetchMemoryBackendStatus``,
``testMemoryRetrieval``); those that run an AI or a command (``compactMemory``, ``triggerMemoryDreams``,
``triggerInsightExtraction``, ``installQmd``) are not served (docs/servers.md).

No published build of the dashboard could be run from outside: Fusion's packages are not on the npm registry
this project reaches (``npm view @runfusion/fusion``, ``@fusion/dashboard``, ``runfusion``,
``fusion-dashboard``: each E404, 2026-12-01).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from core.server.tokens import TokenStore
from tests.core.server.conftest import cli_env


@pytest.fixture
def memdesk_serve(user_config_dir: Path, layered_project: Path, sample_project: Path) -> Iterator[tuple[str, str]]:
    """``memdesk serve -p layered -p sample --port 0`` as its own process; (base URL, token)."""
    token = TokenStore().create("fusion-dashboard")
    proc = subprocess.Popen([sys.executable, "-m", "core.cli", "serve", "--port", "0", "-p", str(layered_project),
                             "-p", str(sample_project)], env=cli_env(user_config_dir), stderr=subprocess.PIPE,
                            text=True)
    url = None
    deadline = time.monotonic() + 60
    assert proc.stderr is not None
    while url is None and time.monotonic() < deadline:
        line = proc.stderr.readline()
        found = re.search(r"on (http://127\.0\.0\.1:\d+)", line)
        if found:
            url = found.group(1)
    assert url, "memdesk serve did not start"
    try:
        yield url, token
    finally:
        proc.terminate()
        proc.wait(20)


def _api(base: str, token: str) -> httpx.Client:
    # As Fusion's api(): "/api" + path, Content-Type: application/json, the bearer token.
    return httpx.Client(base_url=f"{base}/api", headers={"Content-Type": "application/json",
                                                          "Authorization": f"Bearer {token}"}, timeout=60)


def test_the_dashboards_start_up_and_memory_view_requests(memdesk_serve, layered_project):
    base, token = memdesk_serve
    with _api(base, token) as api:
        projects = api.get("/projects")
        assert projects.status_code == 200
        infos = projects.json()
        assert [p["id"] for p in infos] == ["layered", "sample"]
        for p in infos:
            assert set(p) >= {"id", "name", "path", "status", "isolationMode", "createdAt", "updatedAt"}
            assert p["status"] == "active" and p["isolationMode"] in ("in-process", "child-process")
        pid = "layered"
        config = api.get(f"/config?projectId={pid}").json()
        assert isinstance(config["maxConcurrent"], int) and config["rootDir"] == str(layered_project)
        settings = api.get(f"/settings?projectId={pid}")
        assert settings.status_code == 200 and isinstance(settings.json(), dict)
        assert "memoryEnabled" in settings.json()

        files = api.get(f"/memory/files?projectId={pid}").json()["files"]
        assert files and all(set(f) >= {"path", "label", "layer", "size", "updatedAt"} for f in files)
        first = files[0]["path"]
        doc = api.get(f"/memory/file?path={first}&projectId={pid}").json()
        assert doc["path"] == first and doc["content"] == (layered_project / first).read_text(encoding="utf-8")
        stats = api.get(f"/memory/stats?projectId={pid}").json()
        assert {type(stats[k]) for k in ("workingMemorySize", "insightsSize")} == {int}
        assert isinstance(stats["insightsExists"], bool)
        insights = api.get(f"/memory/insights?projectId={pid}").json()
        assert set(insights) >= {"content", "exists"}
        backend = api.get(f"/memory/backend?projectId={pid}").json()
        assert set(backend["capabilities"]) >= {"readable", "writable", "supportsAtomicWrite",
                                                "hasConflictResolution", "persistent"}
        assert isinstance(backend["availableBackends"], list) and isinstance(backend["currentBackend"], str)

        test = api.post(f"/memory/test?projectId={pid}", json={"query": "Decisions"})
        assert test.status_code == 200
        body = test.json()
        assert set(body) == {"query", "qmdAvailable", "usedFallback", "qmdInstallCommand", "results"}
        assert body["query"] == "Decisions" and body["results"]
        for hit in body["results"]:
            assert set(hit) == {"path", "lineStart", "lineEnd", "snippet", "score", "backend"}

        # saveMemoryFile sends {path, content} (no hash): memdesk writes it with history, as Fusion does.
        new = doc["content"] + "\n- Saved from Fusion's dashboard.\n"
        saved = api.put(f"/memory/file?projectId={pid}", json={"path": first, "content": new})
        assert saved.status_code == 200 and saved.json()["success"] is True
        assert (layered_project / first).read_text(encoding="utf-8") == new

        # fetchMemory / saveMemory ({content} → {success}), saveMemoryInsights, fetchMemoryAudit (MemoryAuditReport).
        memory = api.get(f"/memory?projectId={pid}")
        assert memory.status_code == 200 and isinstance(memory.json()["content"], str)
        saved = api.put(f"/memory?projectId={pid}", json={"content": memory.json()["content"] + "\n- From the view.\n"})
        assert saved.status_code == 200 and saved.json()["success"] is True
        assert api.get(f"/memory?projectId={pid}").json()["content"].endswith("- From the view.\n")
        ins = api.put(f"/memory/insights?projectId={pid}", json={"content": "# Memory Insights\n\n- one\n"})
        assert ins.status_code == 200 and ins.json()["success"] is True
        back = api.get(f"/memory/insights?projectId={pid}").json()
        assert back["content"] == "# Memory Insights\n\n- one\n" and back["exists"] is True
        audit = api.get(f"/memory/audit?projectId={pid}").json()
        assert set(audit) >= {"generatedAt", "workingMemory", "insightsMemory", "extraction", "pruning", "checks",
                              "health"} and audit["health"] in ("healthy", "warning", "issues")
        assert isinstance(audit["workingMemory"]["exists"], bool) and isinstance(audit["checks"], list)

        # Errors in Fusion's shape {error, details: {code, backend}}, memdesk's code beside it.
        missing = api.get(f"/memory/file?path=2001-01-01.md&projectId={pid}")
        assert missing.status_code == 404
        err = missing.json()
        assert err["details"]["code"] == "NOT_FOUND" == err["code"] and "backend" in err["details"]
        assert isinstance(err["error"], str) and err["error"]
        other = api.get("/memory?projectId=nowhere")
        assert other.status_code == 404 and "nowhere" in other.json()["error"]
        empty = api.post(f"/memory/test?projectId={pid}", json={"query": ""})
        assert empty.status_code == 400 and empty.json()["error"]


def test_a_read_token_cannot_change_settings(memdesk_serve, layered_project):
    base, _ = memdesk_serve
    reader = TokenStore().create("dash-reader", scope="read")
    before = sorted(p.name for p in (layered_project / ".fusion").iterdir())
    with _api(base, reader) as api:
        assert api.get("/settings?projectId=layered").status_code == 200
        refused = api.put("/settings?projectId=layered", json={"memoryEnabled": False})
        assert refused.status_code == 403 and refused.json()["details"]["code"] == "SCOPE"
        assert "scope read" in refused.json()["error"]
    assert sorted(p.name for p in (layered_project / ".fusion").iterdir()) == before


def test_the_dashboard_shows_its_memory_view(memdesk_serve, layered_project):
    """Fusion's dashboard shows its Memory view only when ``GET /api/settings`` answers
    ``experimentalFeatures.memoryView: true`` (``packages/dashboard/app/hooks/useAppSettings.ts`` at
    a1cac3a6a323c7d0e7172026bb98b0617b3954c0: ``setMemoryEnabled(features.memoryView === true)``, read after
    ``fetchConfig`` and ``fetchSettings`` at start-up). memdesk turns it on unless the settings turn it off."""
    base, token = memdesk_serve
    with _api(base, token) as api:
        features = api.get("/settings?projectId=layered").json()["experimentalFeatures"]
        assert features["memoryView"] is True
        # Flags Fusion itself stored in the project's settings are answered as they are.
        config = layered_project / ".fusion" / "config.json"
        stored = json.loads(config.read_text(encoding="utf-8"))
        stored["settings"]["experimentalFeatures"] = {"memoryView": False, "insights": True}
        config.write_text(json.dumps(stored), encoding="utf-8")
        assert api.get("/settings?projectId=layered").json()["experimentalFeatures"] == {"memoryView": False,
                                                                                         "insights": True}
        # The other project's settings are its own.
        assert api.get("/settings?projectId=sample").json()["experimentalFeatures"] == {"memoryView": True}


def test_the_dashboard_turns_its_memory_view_off_and_changes_fusions_other_settings(memdesk_serve, layered_project):
    """Issue 23 item 5: the dashboard's switch sends ``PUT /api/settings`` ``{"experimentalFeatures": {...}}``
    and its settings toggles Fusion's other project settings (``autoMerge``); memdesk takes each by the type
    Fusion gives it (``core/settings/fusion_keys.py``, Runfusion/Fusion ``settings-schema.ts`` at 00982d1c),
    writes it to the project's store and answers it on the next GET. A key Fusion does not have is 400 in
    Fusion's error shape and changes no byte."""
    base, token = memdesk_serve
    config = layered_project / ".fusion" / "config.json"
    with _api(base, token) as api:
        resp = api.put("/settings?projectId=layered", json={"experimentalFeatures": {"memoryView": False}})
        assert resp.status_code == 200, resp.text
        assert resp.json()["experimentalFeatures"] == {"memoryView": False}
        assert api.get("/settings?projectId=layered").json()["experimentalFeatures"]["memoryView"] is False
        assert json.loads(config.read_text(encoding="utf-8"))["settings"]["experimentalFeatures"] == {
            "memoryView": False}
        assert api.put("/settings?projectId=layered", json={"autoMerge": False}).status_code == 200
        assert api.get("/settings?projectId=layered").json()["autoMerge"] is False
        before = config.read_bytes()
        refused = api.put("/settings?projectId=layered", json={"autoMerge": "off", "maxConcurrent": 9})
        assert refused.status_code == 400
        assert refused.json()["details"]["field"] == "autoMerge" and "boolean" in refused.json()["error"]
        unknown = api.put("/settings?projectId=layered", json={"notAFusionSetting": True})
        assert unknown.status_code == 400 and set(unknown.json()["details"]) >= {"code", "backend", "field"}
        assert unknown.json()["details"]["field"] == "notAFusionSetting"
        assert config.read_bytes() == before
        # The other project's flags are its own.
        assert api.get("/settings?projectId=sample").json()["experimentalFeatures"] == {"memoryView": True}


def test_every_error_has_fusions_shape(memdesk_serve, layered_project):
    """Every refusal ``memdesk serve`` makes on the dashboard's routes is ``{error, details: {code, backend}}``
    (Fusion's ``app/api/client/client.ts`` reads ``error`` and ``details``) with memdesk's ``code`` beside it:
    bad bodies, bad paths, unknown projects, routes and methods, no token, a foreign Host, a scope, a
    conflict, a refused setting. One line each, and nothing on disk changes."""
    base, token = memdesk_serve
    reader = TokenStore().create("dash-reader-2", scope="read")
    def documents() -> dict[Path, bytes]:  # memdesk's own lock files under .fusion/memdesk/ aside
        return {p: p.read_bytes() for p in layered_project.rglob("*")
                if p.is_file() and "memdesk" not in p.relative_to(layered_project).parts}

    before = documents()
    pid = "layered"
    sent = [
        ("PUT", f"/memory?projectId={pid}", {"content": b"{bad"}, token, 400, "INVALID_ARGUMENT"),
        ("PUT", f"/memory?projectId={pid}", {"json": {}}, token, 400, "INVALID_ARGUMENT"),
        ("PUT", f"/memory?projectId={pid}", {"json": {"content": 5}}, token, 400, "INVALID_ARGUMENT"),
        ("POST", f"/memory/test?projectId={pid}", {"json": {}}, token, 400, "INVALID_ARGUMENT"),
        ("GET", f"/memory/file?projectId={pid}", {}, token, 400, "INVALID_ARGUMENT"),
        ("GET", f"/memory/file?path=../../etc/passwd&projectId={pid}", {}, token, 400, None),
        ("GET", "/memory?projectId=nowhere", {}, token, 404, "PROJECT_NOT_SERVED"),
        ("GET", f"/memory/nope?projectId={pid}", {}, token, 404, "NOT_FOUND"),
        ("DELETE", f"/memory?projectId={pid}", {}, token, 405, "METHOD_NOT_ALLOWED"),
        ("GET", f"/memory?projectId={pid}", {}, None, 401, "UNAUTHORIZED"),
        ("PUT", f"/memory?projectId={pid}", {"json": {"content": "x"}}, reader, 403, "SCOPE"),
        ("PUT", f"/memory/file?projectId={pid}", {"json": {"path": ".fusion/memory/MEMORY.md", "content": "x",
                                                           "expectedHash": "0" * 64}}, token, 409, "CONFLICT"),
        ("PUT", f"/settings?projectId={pid}", {"json": {"memoryDreamsSchedule": "not a cron"}}, token, 400,
         "INVALID_CONFIG"),
    ]
    for method, path, kw, who, status, code in sent:
        headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {who}"} if who else {})
        r = httpx.request(method, f"{base}/api{path}", headers=headers, timeout=60, **kw)
        body = r.json()
        assert r.status_code == status, (method, path, r.text)
        assert isinstance(body["error"], str) and body["error"] and "\n" not in body["error"], (method, path)
        assert body["details"]["code"] == body["code"] and "backend" in body["details"], (method, path, body)
        assert code is None or body["code"] == code, (method, path, body)
        assert str(layered_project) not in body["error"] and "pydantic" not in body["error"]
    foreign = httpx.get(f"{base}/api/memory", headers={"Authorization": f"Bearer {token}", "Host": "evil.example"})
    assert foreign.status_code == 421 and foreign.json()["details"] == {"code": "WRONG_HOST", "backend": None}
    assert documents() == before
