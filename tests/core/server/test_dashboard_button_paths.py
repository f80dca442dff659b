"""review7: Fusion's Extract Now (``POST /api/memory/extract``, fc2f5b5) stages a proposal that may prune the
working memory (accepted, it rewrites it) and rewrites the memory audit. A write token limited by ``--path`` to
the insights document could start it: the proposal it staged offered to rewrite a document outside its paths,
which Compact refuses the same token (it needs write on the document it compacts). Every document a button's
run may propose to change must be one the token may write; else 403 ``SCOPE`` in one line, nothing staged or
written. Through a real ``memdesk serve``.
"""

from __future__ import annotations

from pathlib import Path

from core.project.model import Project


def _state(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
            and "locks" not in p.parts and p.name not in ("state-log.jsonl",)}


def test_extract_needs_the_working_memory_in_the_token_paths_too(serve, tokens, sample_project):
    project = Project(sample_project)
    insights = project.insights_path
    narrow = tokens.create("insights-only", scope="write", paths=[insights])
    owner = tokens.create("owner")
    srv = serve(sample_project, mcp=False)
    c = srv.client(narrow)
    assert c.post("/api/memory/compact", json={"path": project.memory_path}).status_code == 403  # as Compact
    before = _state(sample_project)
    got = c.post("/api/memory/extract")
    assert got.status_code == 403, got.text
    body = got.json()
    assert body["details"]["code"] == "SCOPE" and project.memory_path in body["error"] and "\n" not in body["error"]
    assert _state(sample_project) == before  # no proposal, no audit, no insight
    # The owner's extraction still runs and stages its proposal.
    done = srv.client(owner).post("/api/memory/extract")
    assert done.status_code == 200 and done.json()["proposalId"], done.text


def test_dream_needs_the_daily_notes_it_would_mark_processed(serve, tokens, layered_project):
    """Dream Now's proposal replaces each daily note it dreamed over with Fusion's processed marker (accepted, the
    note's text is gone from it). A token allowed only MEMORY.md and DREAMS.md staged that rewrite of the three
    daily notes; now it is 403 ``SCOPE`` naming a note, nothing staged. An agent whose notes the token may not
    write is left out, as one whose MEMORY.md or DREAMS.md it may not write was."""
    two = tokens.create("two-docs", scope="write", paths=[".fusion/memory/MEMORY.md", ".fusion/memory/DREAMS.md"])
    agents_too = tokens.create("no-agent-notes", scope="write",
                               paths=[".fusion/memory/**", ".fusion/agent-memory/*/MEMORY.md",
                                      ".fusion/agent-memory/*/DREAMS.md"])
    srv = serve(layered_project, mcp=False)
    before = _state(layered_project)
    got = srv.client(two).post("/api/memory/dream")
    assert got.status_code == 403, got.text
    body = got.json()
    assert body["details"]["code"] == "SCOPE" and ".fusion/memory/2026-" in body["error"] and "\n" not in body["error"]
    assert _state(layered_project) == before
    # The project's notes it may write: its dream is staged, the agents' (whose notes it may not write) are not.
    done = srv.client(agents_too).post("/api/memory/dream")
    assert done.status_code == 200, done.text
    from core.consolidation import load as load_consolidation

    ids = done.json()["proposalIds"]
    assert len(ids) == 1
    assert all(not p.startswith(".fusion/agent-memory/") for p in load_consolidation(layered_project, ids[0]).paths)
