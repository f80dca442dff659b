"""Issue 23's leftover 2: MCP ``resources/list`` comes in pages with an opaque ``nextCursor`` (it answered 20,000
entries, 3.9 MB, at once), through real servers and real clients:

- ``memdesk mcp`` over stdio with the ``mcp`` SDK's client: pages of at most 1,000, followed by their cursor to
  the end, give every document once, in the unpaged order; a cursor this server did not give is a JSON-RPC
  error naming it;
- ``memdesk serve`` over streamable HTTP: a path-limited read token's pages hold only its paths, and a cursor
  another token was given shows it nothing more;
- the MCP Inspector's CLI (npm) follows the cursors itself and lists every document.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from mcp.client import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_types import PaginatedRequestParams

from core.project import Project
from core.server.mcp_pages import PAGE
from tests.core.server.conftest import cli_env, many_agents
from tests.core.server.test_mcp_inspector import INSPECTOR
from tests.core.server.test_server_mcp import run_http, run_stdio

AGENTS = 250
PER_AGENT = 10  # 2,500 agent documents: three pages



async def _follow(s: ClientSession) -> tuple[list[str], list[int], list[str]]:
    """Every page's URIs, page sizes and cursors, the cursor followed as the SDK hands it back."""
    uris: list[str] = []
    sizes: list[int] = []
    cursors: list[str] = []
    cursor = None
    while True:
        page = await s.list_resources(params=PaginatedRequestParams(cursor=cursor))
        uris += [str(r.uri) for r in page.resources]
        sizes.append(len(page.resources))
        if page.next_cursor is None:
            return uris, sizes, cursors
        cursor = page.next_cursor
        cursors.append(cursor)


def test_pages_over_stdio_give_every_document_once_and_a_bad_cursor_is_named(layered_project, user_config_dir):
    many_agents(layered_project, AGENTS, PER_AGENT)
    expected = [f"memdesk://layered/{d.path}" for d in Project(layered_project).documents()]
    assert len(expected) == AGENTS * PER_AGENT + 10

    async def body(s: ClientSession) -> dict[str, Any]:
        uris, sizes, cursors = await _follow(s)
        again, _, _ = await _follow(s)
        refused = {}
        for bad in ("not-a-cursor", "eyJrIjoxfQ", cursors[0] + "x" * 3000):
            try:
                await s.list_resources(params=PaginatedRequestParams(cursor=bad))
            except MCPError as exc:
                refused[bad[:20]] = (exc.error.code, exc.error.message)
        small = await s.list_resources()
        return {"uris": uris, "sizes": sizes, "cursors": cursors, "again": again, "refused": refused,
                "first": [str(r.uri) for r in small.resources], "next": small.next_cursor}

    got = run_stdio(layered_project, user_config_dir, body)
    assert got["sizes"] == [PAGE, PAGE, len(expected) - 2 * PAGE]
    assert got["uris"] == expected and got["again"] == expected
    assert got["first"] == expected[:PAGE] and got["next"]
    assert all("/" not in c and str(layered_project) not in c for c in got["cursors"])  # opaque, no path in it
    assert len(got["refused"]) == 3, got["refused"]
    for shown, (code, message) in got["refused"].items():
        assert code == -32602, (code, message)  # INVALID_PARAMS
        assert message.startswith("resources/list: cursor ") and shown[:10] in message and "\n" not in message
        assert "list again without a cursor" in message and len(message) < 400


def test_a_limited_token_pages_only_its_paths_and_gains_nothing_from_anothers_cursor(serve, tokens, layered_project):
    many_agents(layered_project, AGENTS, PER_AGENT)
    owner = tokens.create("owner")
    narrow = tokens.create("narrow", scope="read", paths=[".fusion/agent-memory/agent-01*/**"])
    srv = serve(layered_project)

    async def owners(s: ClientSession) -> tuple[list[str], list[str]]:
        uris, _, cursors = await _follow(s)
        return uris, cursors

    everything, cursors = run_http(srv.url, owner, owners)
    assert len(everything) == AGENTS * PER_AGENT + 10

    async def narrows(s: ClientSession) -> tuple[list[str], list[str]]:
        mine, _, _ = await _follow(s)
        try:  # the owner's cursor: its kept listing is the owner's, and it goes on after a document not the narrow's
            page = await s.list_resources(params=PaginatedRequestParams(cursor=cursors[0]))
        except MCPError as exc:
            return mine, [exc.error.message]
        return mine, [str(r.uri) for r in page.resources]

    mine, through_owners = run_http(srv.url, narrow, narrows)
    assert len(mine) == 100 * PER_AGENT
    assert all(u.startswith("memdesk://layered/.fusion/agent-memory/agent-01") for u in mine)
    assert len(through_owners) == 1 and "which this caller's listing does not hold" in through_owners[0], through_owners


@pytest.mark.skipif(not INSPECTOR, reason="the MCP Inspector CLI is not installed (npm)")
def test_the_inspector_cli_follows_the_cursors(layered_project, user_config_dir):
    many_agents(layered_project, AGENTS, PER_AGENT)
    out = subprocess.run([str(INSPECTOR), "--cli", *[sys.executable, "-m", "core.cli", "mcp", "--project",
                                                     str(layered_project)], "--method", "resources/list"],
                         capture_output=True, text=True, env=cli_env(user_config_dir), timeout=180)
    assert out.returncode == 0, out.stderr
    uris = [r["uri"] for r in json.loads(out.stdout)["resources"]]
    assert uris == [f"memdesk://layered/{d.path}" for d in Project(layered_project).documents()]


def test_kept_listings_are_bounded_and_an_old_cursor_still_goes_on():
    """A listing kept for its pages costs memory (some 8 MB for 20,000 resources): one a caller, four in all.
    A cursor whose kept listing was dropped lists again and goes on after its last resource."""
    from core.server.access import Access
    from core.server.mcp_pages import Entry, ResourcePages

    made: list[str] = []

    def listing(who: Access) -> list[Entry]:
        made.append(who.name or "")
        return [Entry(f"memdesk://p/{i:05d}.md", f"p: {i}", "doc", i) for i in range(2500)]

    pages = ResourcePages(listing)
    first, cursor = pages.page(Access("a"), None)
    again, newer = pages.page(Access("a"), None)  # the same caller starts over: its older listing goes
    assert len(pages._kept) == 1 and cursor and newer and cursor != newer
    for name in "bcdefgh":
        pages.page(Access(name), None)
    assert len(pages._kept) == 4
    made.clear()
    second, nxt = pages.page(Access("a"), cursor)  # its kept listing is gone: listed again, on after page one
    assert made == ["a"] and [e.uri for e in second] == [f"memdesk://p/{i:05d}.md" for i in range(1000, 2000)]
    third, end = pages.page(Access("a"), nxt)
    assert made == ["a"] and len(third) == 500 and end is None  # the rest from the listing kept again
