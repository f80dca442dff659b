"""The server records changes it notices but did not make (issue 19): another program's rewrite of a served
document keeps the text before it in history; the server's own writes are not recorded twice."""

from __future__ import annotations

import time
from pathlib import Path

from core.storage.history import versions as history
from core.storage.noticed import EXTERNAL_CHANGE

MEM = ".fusion/memory.md"


def external_versions(root: Path) -> list[history.Version]:
    return [v for v in history.list_versions(root, MEM) if v.source == EXTERNAL_CHANGE]


def wait_for(predicate, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_a_rewrite_by_another_program_between_two_reads_keeps_the_text_before(serve, token, sample_project: Path):
    c = serve(sample_project).client(token)
    first = c.get("/api/memory").json()["content"]
    # the server's own write: its before-version is kept by the pipeline, not again as a program's
    assert c.put("/api/memory", json={"content": first + "\n- written through the API\n"}).status_code == 200
    c.get("/api/memory")
    served = c.get("/api/memory").json()["content"]
    assert external_versions(sample_project) == []
    (sample_project / MEM).write_text(served.replace("## Pitfalls", "## Traps"), encoding="utf-8")  # a program
    assert "## Traps" in c.get("/api/memory").json()["content"]
    assert wait_for(lambda: len(external_versions(sample_project)) == 1)
    kept = external_versions(sample_project)[0]
    assert kept.author == "program" and history.get_version(sample_project, kept.id)[1] == served
