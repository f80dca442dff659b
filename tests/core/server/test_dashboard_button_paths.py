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
