"""Issue 23, reads on record: the lines a search serves are reads too. An agent that searches and acts on a
snippet loaded those lines, so each hit is logged as a read of its document (its lines, the document's hash
and size as the search answered; no text), over HTTP and MCP, and ``memdesk activity --open`` gives back the
text the snippet came from.

Found from outside: ``POST /api/memory/search`` and ``memory_search`` served snippets of MEMORY.md and left
nothing in ``memdesk activity --reads``."""

from __future__ import annotations

from typing import Any

from mcp.client import ClientSession

from core.project import Project
from core.storage import readlog
from core.storage.fileio import content_hash
from tests.core.server.test_server_mcp import run_stdio

LONG = ".fusion/memory/MEMORY.md"


def test_search_hits_over_http_and_mcp_are_reads_of_their_lines(serve, tokens, layered_project, user_config_dir):
    token = tokens.create("searcher")
    srv = serve(layered_project)
    r = srv.client(token, {"User-Agent": "search-agent/2"}).post("/api/memory/search", json={"query": "lease"})
    assert r.status_code == 200, r.text
    hits = r.json()["results"]
    assert hits and all(h["lineStart"] for h in hits)
    logged = readlog.query(root=layered_project, client="search-agent")
    assert sorted((e.path, e.start_line, e.end_line) for e in logged) == \
        sorted((h["path"], h["lineStart"], h["lineEnd"]) for h in hits)
    assert {e.via for e in logged} == {"http-search"} and {e.token for e in logged} == {"searcher"}
    project = Project(layered_project)
    try:
        for e in logged:
            text = project.read(e.path)
            assert e.hash == content_hash(text) and e.size == len(text.encode("utf-8"))
            served = readlog.version_read(project, e)
            assert served is not None
            lines = served.split("\n")[e.start_line - 1:e.end_line]
            snippet = next(h["snippet"] for h in hits if (h["path"], h["lineStart"]) == (e.path, e.start_line))
            assert snippet.split()[0] in "\n".join(lines)  # the snippet came from these lines
    finally:
        project.close()

    async def search(s: ClientSession) -> Any:
        return (await s.call_tool("memory_search", {"query": "lease", "limit": 3})).structured_content

    got = run_stdio(layered_project, user_config_dir, search, client="mcp-searcher")
    mcp_logged = readlog.query(root=layered_project, client="mcp-searcher")
    assert len(mcp_logged) == len(got["results"]) > 0
    assert {e.via for e in mcp_logged} == {"mcp-search"} and {e.path for e in mcp_logged} <= {LONG} | {
        h["path"] for h in got["results"]}


def test_dashboard_retrieval_test_snippets_are_reads(serve, tokens, layered_project):
    """Fusion's dashboard's retrieval test (``POST /api/memory/test``, ``testMemoryRetrieval`` in
    ``packages/dashboard/app/api/memory.ts`` at c81144c7) serves snippets too: each is a read on record.
    Found from outside: the route answered snippets of MEMORY.md and logged nothing."""
    token = tokens.create("dash")
    srv = serve(layered_project)
    r = srv.client(token, {"User-Agent": "fusion-dashboard/1"}).post("/api/memory/test", json={"query": "lease"})
    assert r.status_code == 200, r.text
    hits = r.json()["results"]
    assert hits
    logged = readlog.query(root=layered_project, client="fusion-dashboard")
    assert sorted((e.path, e.start_line, e.end_line) for e in logged) == \
        sorted((h["path"], h["lineStart"], h["lineEnd"]) for h in hits)
    assert {e.via for e in logged} == {"http-test-search"} and {e.token for e in logged} == {"dash"}
