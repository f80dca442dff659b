"""Issue 23 item 5, left by the first run of Fusion's dashboard from outside: the Memory view's Compact, Dream Now,
Extract Now and Install qmd buttons answered 404 on ``memdesk serve`` ("Failed to …").

Each test sends the request Fusion's client sends (Runfusion/Fusion ``packages/dashboard/app/api/memory.ts`` at
c81144c7c37b4ec58f87e2771c2b599ed88c16cc: ``compactMemory``, ``triggerMemoryDreams``, ``triggerInsightExtraction``,
``installQmd``, through ``app/api/client/client.ts``'s ``api()``) to a real ``memdesk serve`` and asserts the shape
the client and its hook read (``app/hooks/useMemoryData.ts``: a compaction's ``content`` goes into the editor,
an extraction's ``summary`` into the toast; errors are ``{error, details}``). Fusion's server routes
(``packages/dashboard/src/routes/register-settings-memory-routes.ts`` at 1dfb04f41482cb60aaef44db2e2c9236d9efe161)
rewrite memory; memdesk's stage a proposal and write no memory (design §10), and say where it waits.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.consolidation import load as load_consolidation
from core.proposals import load_proposal
from core.server.tokens import TokenStore
from tests.core.server.test_fusion_dashboard import _api, memdesk_serve  # noqa: F401  (the real server fixture)


def _memory(root: Path) -> dict[str, bytes]:
    """Every memory document's bytes (memdesk's own state under .fusion/memdesk/ and the audit report, which an
    extraction rewrites as Fusion's does, left out)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / ".fusion").rglob("*.md"))
            if "memdesk" not in p.parts and p.name != "memory-audit.md"}


def test_compact_stages_a_proposal_and_leaves_the_document_as_it_is(memdesk_serve, layered_project):  # noqa: F811
    """``compactMemory(path, projectId)`` → ``POST /api/memory/compact?projectId=`` with ``{"path": …}``; the hook
    puts ``result.path`` and ``result.content`` in the editor. memdesk answers the document as it still is, and
    the proposal waiting for review."""
    base, token = memdesk_serve
    memory = layered_project / ".fusion/memory/MEMORY.md"
    text = memory.read_text(encoding="utf-8")
    memory.write_text(text + "\n" + text.splitlines()[12] + "\n", encoding="utf-8")  # an entry written twice
    before = _memory(layered_project)
    with _api(base, token) as api:
        got = api.post("/memory/compact?projectId=layered", json={"path": ".fusion/memory/MEMORY.md"})
        assert got.status_code == 200, got.text
        body = got.json()
        assert body["path"] == ".fusion/memory/MEMORY.md"
        assert body["content"] == (layered_project / ".fusion/memory/MEMORY.md").read_text(encoding="utf-8")
        assert body["success"] is True and body["status"] == "staged" and body["lostFacts"] == 0
        pid = body["proposalId"]
        assert f"memdesk proposals show {pid}" in body["message"] and "waits for review" in body["message"]
        assert load_consolidation(layered_project, pid).kind == "compact"
        # No path (compactMemory(projectId)): the long-term memory, body {}.
        default = api.post("/memory/compact?projectId=layered", json={})
        assert default.status_code == 200 and default.json()["path"] == ".fusion/memory/MEMORY.md"
        # A document with nothing to compact: success, nothing staged, the reason said.
        dreams = api.post("/memory/compact?projectId=layered", json={"path": ".fusion/memory/DREAMS.md"}).json()
        assert dreams["status"] == "nothing" and dreams["proposalId"] is None and "nothing to compact" in dreams["message"]
        # A path that is not a memory document: Fusion's error shape, nothing staged.
        bad = api.post("/memory/compact?projectId=layered", json={"path": "../../etc/passwd"})
        assert bad.status_code in (400, 404) and bad.json()["error"] and bad.json()["details"]["code"]
        not_text = api.post("/memory/compact?projectId=layered", json={"path": 7})
        assert not_text.status_code == 400 and not_text.json()["details"]["code"] == "INVALID_ARGUMENT"
    assert _memory(layered_project) == before


def test_dream_now_stages_proposals_and_writes_nothing(memdesk_serve, layered_project):  # noqa: F811
    """``triggerMemoryDreams(projectId)`` → ``POST /api/memory/dream`` (no body); reads ``{success, summary,
    dreamsWritten, longTermUpdatesWritten}``. The layered fixture has three unprocessed daily notes and two agents'."""
    base, token = memdesk_serve
    before = _memory(layered_project)
    with _api(base, token) as api:
        got = api.post("/memory/dream?projectId=layered")
        assert got.status_code == 200, got.text
        body = got.json()
        assert body["success"] is True and body["status"] == "staged"
        assert body["dreamsWritten"] is False and body["longTermUpdatesWritten"] is False
        ids = body["proposalIds"]
        assert len(ids) == 3  # the project's notes and each agent's
        assert "nothing was written" in body["summary"] and f"memdesk proposals show {ids[0]}" in body["summary"]
        assert {load_consolidation(layered_project, i).kind for i in ids} == {"dream"}
        # Again: every note already waits in a proposal, so nothing more is staged.
        again = api.post("/memory/dream?projectId=layered").json()
        assert again["success"] is True and again["status"] == "nothing" and again["proposalIds"] == []
        # A seed-layout project has no daily notes to dream over: Fusion's error shape, one line, what to do.
        seed = api.post("/memory/dream?projectId=sample")
        assert seed.status_code == 400
        assert "layered layout" in seed.json()["error"] and "\n" not in seed.json()["error"]
    assert _memory(layered_project) == before


def test_extract_now_stages_insights_for_review(memdesk_serve, layered_project, sample_project):  # noqa: F811
    """``triggerInsightExtraction(projectId)`` → ``POST /api/memory/extract``; the view toasts ``result.summary``,
    so the summary says where the insights wait. The insights document is unchanged."""
    base, token = memdesk_serve
    before = _memory(sample_project)
    with _api(base, token) as api:
        got = api.post("/memory/extract?projectId=sample")
        assert got.status_code == 200, got.text
        body = got.json()
        assert set(body) >= {"success", "summary", "insightCount", "pruned"}
        assert body["success"] is True and body["pruned"] is False and body["insightCount"] > 0
        assert f"memdesk proposals show {body['proposalId']}" in body["summary"]
        assert "Nothing was written to the insights" in body["summary"]
        assert len(load_proposal(sample_project, body["proposalId"]).insights) == body["insightCount"]
    assert _memory(sample_project) == before


def test_every_button_needs_write_scope(memdesk_serve, layered_project):  # noqa: F811
    base, _token = memdesk_serve
    before = _memory(layered_project)
    store = TokenStore()
    for name, scope in (("buttons-ro", "read"), ("buttons-append", "append")):
        with _api(base, store.create(name, scope=scope)) as api:
            for route, body in (("compact", {"path": ".fusion/memory/MEMORY.md"}), ("dream", None), ("extract", None)):
                got = api.post(f"/memory/{route}?projectId=layered", **({"json": body} if body else {}))
                assert got.status_code == 403, (route, got.text)
                assert got.json()["details"]["code"] == "SCOPE" and f"scope {scope}" in got.json()["error"]
    assert _memory(layered_project) == before
    assert not (layered_project / ".fusion/memdesk/consolidations").exists() or \
        not list((layered_project / ".fusion/memdesk/consolidations").iterdir())


def test_without_a_usable_provider_the_answer_says_what_to_configure(memdesk_serve, layered_project,  # noqa: F811
                                                                      user_config_dir):
    """The default provider names none configured (a hand-edited user config): each run answers Fusion's error
    shape saying what to configure, and nothing is staged or written."""
    base, token = memdesk_serve
    config = user_config_dir / "config.json"
    config.write_text(json.dumps({"defaultProvider": "gpt", "providers": {}}), encoding="utf-8")
    before = _memory(layered_project)
    with _api(base, token) as api:
        for route in ("compact", "dream", "extract"):
            got = api.post(f"/memory/{route}?projectId=layered", json={})
            assert got.status_code == 503, (route, got.text)
            error = got.json()["error"]
            assert "memdesk providers" in error and "\n" not in error
            assert got.json()["details"]["code"] == "PROVIDER_NOT_CONFIGURED"
    assert _memory(layered_project) == before


def test_install_qmd_is_refused_with_the_command(memdesk_serve):  # noqa: F811
    """``installQmd(projectId)`` → ``POST /api/memory/install-qmd``: memdesk installs nothing from a web request;
    Fusion's error shape with the command for the operator (the view toasts "Failed to install qmd")."""
    base, token = memdesk_serve
    with _api(base, token) as api:
        got = api.post("/memory/install-qmd?projectId=layered")
        assert got.status_code == 501
        body = got.json()
        assert "does not install programs" in body["error"] and "bun install -g @tobilu/qmd" in body["error"]
        assert body["details"] == {"code": "UNSUPPORTED", "backend": None, "qmdAvailable": False,
                                   "qmdInstallCommand": "bun install -g @tobilu/qmd"}


def test_a_second_run_while_one_runs_is_refused(serve, token, layered_project):
    """Two tabs' Dream Now at once would stage the same notes twice (each checks the pending proposals before
    either has stored one): while a button's run holds the project, another is 409 ``CONFLICT`` in one line and
    nothing is staged; once it ends, the next runs."""
    from core.server.dashboard_actions import run_lock

    client = serve(layered_project, mcp=False).client(token)
    lock = run_lock(layered_project)
    assert lock.acquire(timeout=5)
    try:
        for route, body in (("dream", None), ("compact", {"path": ".fusion/memory/MEMORY.md"}), ("extract", None)):
            got = client.post(f"/api/memory/{route}?project=layered", **({"json": body} if body else {}))
            assert got.status_code == 409, (route, got.text)
            assert got.json()["details"]["code"] == "CONFLICT" and "still running" in got.json()["error"]
        assert not (layered_project / ".fusion/memdesk/consolidations").exists() or \
            not list((layered_project / ".fusion/memdesk/consolidations").glob("*.json"))
    finally:
        lock.release()
    done = client.post("/api/memory/dream?project=layered")
    assert done.status_code == 200 and done.json()["status"] == "staged"
