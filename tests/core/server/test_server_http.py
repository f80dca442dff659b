"""Every route of ``memdesk serve`` on a real uvicorn server, through a real HTTP client: success and error codes,
and the bytes on disk afterwards."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.storage.fileio import content_hash
from tests.conftest import REAL_MEMORY

MEMORY = ".fusion/memory.md"


def _set_config(root: Path, settings: dict) -> None:
    (root / ".fusion").mkdir(parents=True, exist_ok=True)
    (root / ".fusion" / "config.json").write_text(json.dumps(settings), encoding="utf-8")


# -- GET/PUT /api/memory ----------------------------------------------------------------------------
def test_get_memory_returns_the_file_whole_and_empty_string_when_absent(serve, token, sample_project, project):
    srv = serve(sample_project, project)
    c = srv.client(token)
    disk = (sample_project / MEMORY).read_text(encoding="utf-8")
    r = c.get("/api/memory")
    assert r.status_code == 200
    assert r.json()["content"] == disk
    assert r.json()["hash"] == content_hash(disk)
    empty = c.get("/api/memory", params={"project": "project"})
    assert empty.status_code == 200 and empty.json()["content"] == ""
    assert not (project / ".fusion").exists()  # a read creates nothing


def test_put_memory_writes_keeps_history_and_refuses_bad_input(serve, token, sample_project):
    from core.storage.history import versions as history

    c = serve(sample_project).client(token)
    before = (sample_project / MEMORY).read_bytes()
    r = c.put("/api/memory", json={"content": "# Project Memory\n\nreplaced\n"})
    assert r.status_code == 200 and r.json()["success"] is True
    assert (sample_project / MEMORY).read_text(encoding="utf-8") == "# Project Memory\n\nreplaced\n"
    versions = history.list_versions(sample_project, MEMORY)
    assert history.get_version(sample_project, versions[0].id)[1].encode("utf-8") == before

    now = (sample_project / MEMORY).read_bytes()
    for bad in ({"content": 5}, {"content": None}, {}, {"content": ["a"]}):
        r = c.put("/api/memory", json=bad)
        assert r.status_code == 400, bad
        assert "content" in r.json()["error"]
    r = c.put("/api/memory", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert (sample_project / MEMORY).read_bytes() == now


def test_put_memory_with_a_stale_hash_is_409_with_the_current_hash(serve, token, sample_project):
    c = serve(sample_project).client(token)
    start = c.get("/api/memory").json()
    (sample_project / MEMORY).write_text(start["content"] + "\n\nan agent wrote this meanwhile\n", encoding="utf-8")
    on_disk = (sample_project / MEMORY).read_text(encoding="utf-8")
    r = c.put("/api/memory", json={"content": "my edit", "expectedHash": start["hash"]})
    assert r.status_code == 409
    assert r.json()["code"] == "CONFLICT" and r.json()["currentHash"] == content_hash(on_disk)
    assert (sample_project / MEMORY).read_text(encoding="utf-8") == on_disk
    r = c.put("/api/memory", json={"content": "my edit", "expectedHash": r.json()["currentHash"]})
    assert r.status_code == 200 and r.json()["hash"] == content_hash("my edit")


def test_memory_switched_off_still_reads_and_writes_through_the_api(serve, token, sample_project):
    _set_config(sample_project, {"memoryEnabled": False})
    c = serve(sample_project).client(token)
    assert c.get("/api/memory").status_code == 200
    assert c.put("/api/memory", json={"content": "still writable\n"}).status_code == 200
    assert (sample_project / MEMORY).read_text(encoding="utf-8") == "still writable\n"


def test_readonly_backend_refuses_every_write_with_409(serve, token, sample_project):
    _set_config(sample_project, {"memoryBackend": "readonly"})
    c = serve(sample_project).client(token)
    before = (sample_project / MEMORY).read_bytes()
    assert c.get("/api/memory").status_code == 200
    for method, url, body in (("PUT", "/api/memory", {"content": "x"}),
                              ("PUT", "/api/memory/file", {"path": MEMORY, "content": "x"}),
                              ("POST", "/api/memory/append", {"content": "a new entry"}),
                              ("PUT", "/api/memory/insights", {"content": "# Memory Insights\n"})):
        r = c.request(method, url, json=body)
        assert r.status_code == 409, url
        assert r.json()["code"] == "READ_ONLY"
    assert (sample_project / MEMORY).read_bytes() == before
    backend = c.get("/api/memory/backend").json()
    assert backend["currentBackend"] == "readonly" and backend["capabilities"]["writable"] is False
    assert backend["readOnlyReason"]


def test_a_memory_over_one_mib_is_413_quota_exceeded(serve, token, sample_project):
    c = serve(sample_project).client(token)
    before = (sample_project / MEMORY).read_bytes()
    r = c.put("/api/memory", json={"content": "x" * (1_048_576 + 10)})
    assert r.status_code == 413 and r.json()["code"] == "QUOTA_EXCEEDED"
    assert "1,048,586 bytes" in r.json()["error"]
    assert (sample_project / MEMORY).read_bytes() == before


# -- files ------------------------------------------------------------------------------------------
def test_files_lists_the_layered_documents_in_order(serve, token, layered_project):
    c = serve(layered_project).client(token)
    r = c.get("/api/memory/files")
    assert r.status_code == 200
    files = r.json()["files"]
    paths = [f["path"] for f in files]
    assert paths[0] == ".fusion/memory/MEMORY.md"
    assert {"path", "label", "layer", "size", "updatedAt"} <= set(files[0])
    assert files[0]["label"] == "Long-term memory" and files[0]["layer"] == "long-term"
    daily = [f["path"] for f in files if f["layer"] == "daily" and f["agent"] is None]
    assert daily == sorted(daily, reverse=True) and daily


def test_get_file_is_whole_never_cut_at_400_lines(serve, token, layered_project):
    shutil.copyfile(REAL_MEMORY, layered_project / ".fusion/memory/MEMORY.md")
    c = serve(layered_project).client(token)
    disk = (layered_project / ".fusion/memory/MEMORY.md").read_text(encoding="utf-8")
    assert disk.count("\n") > 1000
    for name in ("MEMORY.md", "memory/MEMORY.md", ".fusion/memory/MEMORY.md"):
        r = c.get("/api/memory/file", params={"path": name})
        assert r.status_code == 200, name
        assert r.json()["path"] == ".fusion/memory/MEMORY.md"
        assert r.json()["content"] == disk
        assert r.json()["totalLines"] == len(disk.split("\n"))


def test_get_file_errors(serve, token, layered_project, tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text("TOP SECRET", encoding="utf-8")
    c = serve(layered_project).client(token)
    assert c.get("/api/memory/file").status_code == 400
    assert c.get("/api/memory/file", params={"path": ".fusion/memory/2001-01-01.md"}).status_code == 404
    for bad in ("../secret.md", str(secret), ".fusion/config.json", ".fusion/memory/../../../secret.md",
                "..\\secret.md", "notes.txt"):
        r = c.get("/api/memory/file", params={"path": bad})
        assert r.status_code in (400, 404), bad
        assert "TOP SECRET" not in r.text


def test_a_symlink_out_of_the_root_is_never_read_or_written(serve, token, layered_project, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("outside the project\n", encoding="utf-8")
    dreams = layered_project / ".fusion/memory/DREAMS.md"
    dreams.unlink(missing_ok=True)
    dreams.symlink_to(outside)
    c = serve(layered_project).client(token)
    r = c.get("/api/memory/file", params={"path": "DREAMS.md"})
    assert r.status_code in (400, 404, 500) and "outside the project" not in r.text
    r = c.put("/api/memory/file", json={"path": "DREAMS.md", "content": "overwritten"})
    assert r.status_code in (400, 404, 409, 500)
    assert outside.read_text(encoding="utf-8") == "outside the project\n"


def test_put_file_writes_one_document_and_guards_its_base(serve, token, layered_project):
    c = serve(layered_project).client(token)
    doc = c.get("/api/memory/file", params={"path": "MEMORY.md"}).json()
    edited = doc["content"] + "\n- decided: one lock per document\n"
    r = c.put("/api/memory/file", params={"path": "MEMORY.md"},
              json={"content": edited, "expectedHash": doc["hash"]})
    assert r.status_code == 200 and r.json()["success"] is True and r.json()["path"] == ".fusion/memory/MEMORY.md"
    assert (layered_project / ".fusion/memory/MEMORY.md").read_text(encoding="utf-8") == edited
    stale = c.put("/api/memory/file", json={"path": "MEMORY.md", "content": "lost?", "expectedHash": doc["hash"]})
    assert stale.status_code == 409 and stale.json()["currentHash"] == content_hash(edited)
    assert (layered_project / ".fusion/memory/MEMORY.md").read_text(encoding="utf-8") == edited
    new_day = c.put("/api/memory/file", json={"path": "2030-01-02.md", "content": "# Daily Memory 2030-01-02\n",
                                                "expectedHash": content_hash("")})
    assert new_day.status_code == 200
    assert (layered_project / ".fusion/memory/2030-01-02.md").read_text(encoding="utf-8") == "# Daily Memory 2030-01-02\n"
    assert c.put("/api/memory/file", json={"content": "x"}).status_code == 400
    assert c.put("/api/memory/file", params={"path": "MEMORY.md"},
                 json={"path": "DREAMS.md", "content": "x"}).status_code == 400
    assert c.put("/api/memory/file", json={"path": "../../evil.md", "content": "x"}).status_code == 400
    assert c.put("/api/memory/file", json={"path": ".fusion/config.json", "content": "{}"}).status_code == 404
    assert not (layered_project.parent / "evil.md").exists()


# -- append -----------------------------------------------------------------------------------------
def test_append_statuses_follow_seed_002(serve, token, sample_project):
    c = serve(sample_project).client(token)
    before = (sample_project / MEMORY).read_text(encoding="utf-8")
    r = c.post("/api/memory/append", json={"content": "  The lease clock comes from the database.  "})
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "written" and body["path"] == MEMORY
    assert body["message"].startswith("Memory written to project scope (")
    assert isinstance(body["warnings"], list)
    after = (sample_project / MEMORY).read_text(encoding="utf-8")
    assert after.startswith(before) and after.endswith("-->\nThe lease clock comes from the database.")
    dup = c.post("/api/memory/append", json={"content": "The lease clock comes from the database."})
    assert dup.status_code == 200 and dup.json()["status"] == "skipped_duplicate"
    assert dup.json()["message"].startswith("Memory entry already present (no-op)")
    empty = c.post("/api/memory/append", json={"content": " \n\t "})
    assert empty.status_code == 400 and empty.json()["status"] == "skipped_empty"
    assert empty.json()["message"] == "Error: VALIDATION_ERROR — memory_write content cannot be empty"  # seed 002
    # ... and, as every refusal, an error in one line with its code, in Fusion's shape: nothing about memory_write.
    assert empty.json()["error"] == "the entry is empty (only white space); nothing was written"
    assert empty.json()["code"] == empty.json()["details"]["code"] == "EMPTY_ENTRY"
    assert c.post("/api/memory/append", json={"content": 3}).status_code == 400
    assert c.post("/api/memory/append", json={"content": "x", "layer": "weekly"}).status_code == 400
    seed_daily = c.post("/api/memory/append", json={"content": "a daily note", "layer": "daily"})
    assert seed_daily.status_code == 400 and seed_daily.json()["code"] == "INVALID_CONFIG"
    assert (sample_project / MEMORY).read_text(encoding="utf-8") == after


def test_append_in_a_layered_project_goes_to_the_layer_and_agent_asked(serve, token, layered_project):
    c = serve(layered_project).client(token)
    r = c.post("/api/memory/append", json={"content": "durable: never cut reads", "layer": "long-term"})
    assert r.status_code == 200 and r.json()["path"] == ".fusion/memory/MEMORY.md"
    assert (layered_project / ".fusion/memory/MEMORY.md").read_text(encoding="utf-8").endswith(
        "\ndurable: never cut reads\n")
    r = c.post("/api/memory/append", json={"content": "my own note", "agent": "Rev Bot/2", "layer": "long-term"})
    assert r.status_code == 200
    assert r.json()["path"] == ".fusion/agent-memory/Rev-Bot-2/MEMORY.md"
    assert "my own note" in (layered_project / ".fusion/agent-memory/Rev-Bot-2/MEMORY.md").read_text(encoding="utf-8")
    r = c.post("/api/memory/append", json={"content": "x", "agent": "../../etc"})
    assert r.status_code == 200
    written = (layered_project / r.json()["path"]).resolve()
    assert written.parent.parent == (layered_project / ".fusion/agent-memory").resolve()


# -- backend, insights, audit, stats ----------------------------------------------------------------
def test_backend_route_has_fusions_shape(serve, token, sample_project):
    c = serve(sample_project).client(token)
    r = c.get("/api/memory/backend")
    assert r.status_code == 200
    body = r.json()
    assert body["currentBackend"] == "file"
    assert body["capabilities"] == {"readable": True, "writable": True, "supportsAtomicWrite": True,
                                    "hasConflictResolution": True, "persistent": True}
    assert {"file", "readonly", "sqlite"} <= set(body["availableBackends"])


def test_unknown_backend_falls_back_to_file_and_says_why(serve, token, sample_project):
    _set_config(sample_project, {"memoryBackend": "nosuch"})
    body = serve(sample_project).client(token).get("/api/memory/backend").json()
    assert body["currentBackend"] == "file" and body["configuredBackend"] == "nosuch"
    assert "nosuch" in body["fallbackReason"]


def test_insights_null_when_absent_then_written(serve, token, project):
    c = serve(project).client(token)
    r = c.get("/api/memory/insights")
    assert r.status_code == 200 and r.json() == {"content": None, "exists": False, "hash": None}
    text = "# Memory Insights\n\n## Patterns\n- one lock per document\n"
    assert c.put("/api/memory/insights", json={"content": text}).status_code == 200
    assert (project / ".fusion/memory-insights.md").read_text(encoding="utf-8") == text
    assert c.get("/api/memory/insights").json()["content"] == text
    assert c.put("/api/memory/insights", json={"content": 1}).status_code == 400
    stale = c.put("/api/memory/insights", json={"content": "x", "expectedHash": content_hash("")})
    assert stale.status_code == 409 and stale.json()["currentHash"] == content_hash(text)


def test_stats_and_audit(serve, token, sample_project):
    c = serve(sample_project).client(token)
    stats = c.get("/api/memory/stats").json()
    assert stats == {"workingMemorySize": len((sample_project / MEMORY).read_text(encoding="utf-8")),
                     "insightsSize": len((sample_project / ".fusion/memory-insights.md").read_text(encoding="utf-8")),
                     "insightsExists": True}
    audit = c.get("/api/memory/audit")
    assert audit.status_code == 200
    body = audit.json()
    assert body["workingMemory"]["exists"] is True and body["health"] in {"healthy", "warning", "issues"}
    assert {c_["id"] for c_ in body["checks"]} >= {"working-memory-exists"}
    assert not (sample_project / ".fusion/memory-audit.md").exists()  # GET computes, writes nothing


def _located(root: Path, hit: dict) -> bool:
    """Whether the hit's text is in its document at the line it names."""
    lines = (root / hit["path"]).read_text(encoding="utf-8").split("\n")
    window = " ".join(" ".join(lines[hit["lineStart"] - 1:hit["lineStart"] + 10]).split())
    piece = max(hit["snippet"].split("…"), key=len).strip()[:40]
    return bool(piece) and piece in window


# -- search -----------------------------------------------------------------------------------------
def test_search_is_501_on_a_backend_that_cannot_search_unless_derived(serve, token, sample_project):
    c = serve(sample_project).client(token)
    r = c.post("/api/memory/search", json={"query": "lease"})
    assert r.status_code == 501 and r.json()["code"] == "CAPABILITY_UNSUPPORTED"
    r = c.post("/api/memory/search", json={"query": "lease", "derived": True, "limit": 3})
    assert r.status_code == 200
    hits = r.json()["results"]
    assert 0 < len(hits) <= 3
    assert all("lease" in h["snippet"].lower() and "«" not in h["snippet"] for h in hits)
    assert all(_located(sample_project, h) for h in hits)
    assert c.post("/api/memory/search", json={"query": ""}).status_code == 400
    assert c.post("/api/memory/search", json={"query": "x", "limit": 0}).status_code == 400


def test_search_on_a_backend_that_searches(serve, token, sample_project):
    _set_config(sample_project, {"memoryBackend": "sqlite"})
    c = serve(sample_project).client(token)
    r = c.post("/api/memory/search", json={"query": "lease clock"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["query"] == "lease clock" and body["results"]
    assert body["results"][0]["backend"] == "sqlite"
    assert all(_located(sample_project, h) for h in body["results"])


# -- projects ---------------------------------------------------------------------------------------
def test_project_query_selects_among_served_projects(serve, token, sample_project, layered_project, project):
    c = serve(sample_project, layered_project).client(token)
    assert c.get("/api/memory").json()["path"] == MEMORY  # the first served
    r = c.get("/api/memory", params={"project": "layered"})
    assert r.json()["path"] == ".fusion/memory/MEMORY.md"
    assert c.get("/api/memory", params={"project": str(layered_project)}).json()["path"] == ".fusion/memory/MEMORY.md"
    for other in ("nope", str(project), "../sample"):
        r = c.get("/api/memory", params={"project": other})
        assert r.status_code == 404, other
        assert "not served" in r.json()["error"]
    r = c.post("/api/memory/append", params={"project": str(project)}, json={"content": "wrong project"})
    assert r.status_code == 404 and not (project / ".fusion").exists()


@pytest.mark.parametrize("route", ["/api/memory", "/api/memory/files", "/api/memory/stats"])
def test_a_backend_that_is_down_is_503(serve, token, sample_project, route):
    from core.backends import default_registry
    from core.backends.file import FileMemoryBackend
    from core.errors import MemoryBackendError

    class DownBackend(FileMemoryBackend):
        """A real backend whose store is unreachable (as a database server that is down)."""

        id = "down"
        name = "Down"

        def read(self) -> str:
            raise MemoryBackendError("the database at db.internal is not answering", "BACKEND_UNAVAILABLE", self.id)

        def read_document(self, relpath: str) -> str | None:
            return self.read()

    registry = default_registry()
    registry.register(DownBackend)
    _set_config(sample_project, {"memoryBackend": "down"})
    c = serve(sample_project, registry=registry).client(token)
    r = c.get(route)
    if route == "/api/memory/files":  # the listing comes from the folder; it does not need the store
        assert r.status_code in (200, 503)
        return
    assert r.status_code == 503 and r.json()["code"] == "BACKEND_UNAVAILABLE"
    assert "not answering" in r.json()["error"]


def test_a_layered_project_without_a_backend_key_uses_qmd_and_says_none_was_configured(serve, token,
                                                                                      layered_project):
    body = serve(layered_project).client(token).get("/api/memory/backend").json()
    assert body["currentBackend"] == "qmd" and body["configuredBackend"] is None
    assert body["fallbackReason"] is None


def test_a_settings_change_is_obeyed_at_the_next_request(serve, token, sample_project):
    c = serve(sample_project).client(token)
    assert c.post("/api/memory/append", json={"content": "before the switch"}).status_code == 200
    _set_config(sample_project, {"memoryBackend": "readonly"})  # the operator switches, in the app or the CLI
    r = c.post("/api/memory/append", json={"content": "after the switch"})
    assert r.status_code == 409 and r.json()["code"] == "READ_ONLY"
    assert "after the switch" not in (sample_project / MEMORY).read_text(encoding="utf-8")


def test_an_append_past_a_consumers_load_limit_comes_back_with_a_warning(serve, token, real_project):
    _set_config(real_project, {"memdeskBudgetConsumers": {MEMORY: ["claude-code"]}})
    c = serve(real_project).client(token)
    r = c.post("/api/memory/append", json={"content": "an entry at the end of a 1,293-line memory"})
    assert r.status_code == 200 and r.json()["status"] == "written"
    warnings = r.json()["warnings"]
    assert warnings and "claude-code" in warnings[0]
    assert (real_project / MEMORY).read_text(encoding="utf-8").endswith("an entry at the end of a 1,293-line memory")


def test_a_read_after_any_change_returns_the_new_text(serve, token, sample_project):
    c = serve(sample_project).client(token)
    first = c.get("/api/memory").json()
    text = first["content"]
    same_size = text.replace("Architecture", "Arch1tecture", 1)  # same length, one byte differs
    (sample_project / MEMORY).write_text(same_size, encoding="utf-8")
    for url in ("/api/memory", f"/api/memory/file?path={MEMORY}"):
        again = c.get(url).json()
        assert again["content"] == same_size and again["hash"] == content_hash(same_size), url
    (sample_project / MEMORY).write_text(text, encoding="utf-8")
    assert c.get("/api/memory").json() == first


def test_text_memo_forgets_by_size_and_never_answers_for_other_text():
    from core.server.memo import TextMemo

    memo = TextMemo(max_chars=10)
    memo.put("a", "12345", 1)
    memo.put("b", "67890", 2)
    assert memo.get("a", "12345") == 1 and memo.get("a", "12346") is None
    memo.put("c", "xyz", 3)  # over 10 characters: the least recently used ("b") goes
    assert memo.get("b", "67890") is None and memo.get("a", "12345") == 1 and memo.get("c", "xyz") == 3
    memo.put("d", "x" * 11, 4)  # bigger than the whole memo: not kept
    assert memo.get("d", "x" * 11) is None


def test_text_facts_grown_by_a_tail_equal_facts_worked_out_afresh():
    import hashlib
    import json

    from core.server.memo import FactsMemo, TextFacts

    memo = FactsMemo()
    text = "# Memory\n\n- “quoted” \"x\" \\ back\tslash é 字\n"
    tails = ["\n- more \x01\x1f control", "\r\n- crlf “é”", "\n- 😀 astral", "\"", "\\"]
    first = memo.facts("doc", text)
    for tail in tails:
        text += tail
        grown = memo.facts("doc", text)
        fresh = TextFacts.of(text)
        assert (grown.hash, grown.size, grown.lines, grown.json) == (fresh.hash, fresh.size, fresh.lines, fresh.json)
        assert grown.hash == hashlib.sha256(text.encode()).hexdigest() and json.loads(grown.json) == text
    assert first.grown(first.text) is None and first.grown("other") is None
    shorter = memo.facts("doc", text[:-3])  # cut at the end: not a growth, worked out afresh
    assert shorter.hash == hashlib.sha256(text[:-3].encode()).hexdigest()


def test_read_after_another_writer_appends_answers_the_whole_new_text(serve, token, sample_project):
    c = serve(sample_project).client(token)
    before = c.get("/api/memory").json()
    with (sample_project / MEMORY).open("a", encoding="utf-8") as fh:
        fh.write('\n- appended by an agent: “quotes” "and" \\ back\\slash\n')
    text = (sample_project / MEMORY).read_text(encoding="utf-8")
    for url in ("/api/memory", f"/api/memory/file?path={MEMORY}"):
        r = c.get(url)
        assert r.json()["content"] == text and r.json()["hash"] == content_hash(text), url
        assert r.json()["hash"] != before["hash"]
    file = c.get(f"/api/memory/file?path={MEMORY}").json()
    assert file["size"] == len(text.encode()) and file["totalLines"] == text.count("\n") + 1
