"""Mirrors exactly once (issue 19, item 2), with real processes racing.

Agents append to the mirrored file with the shell's ``>>`` in a tight loop (no lock, no memdesk) while
a memdesk process appends entries and saves edits through the backend; on ``sqlite`` and ``postgres``.
Afterwards every agent line and every memdesk entry is in the database and in the file exactly once,
and the file holds the database's text. (Before: sqlite lost 8 of 300 agent lines; postgres turned
200 into 995.)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
MEMORY = ".fusion/memory.md"
HEAD = "# Project Memory\n\n## Notes\n"
AGENTS, LINES, ENTRIES = 3, 300, 80

WORKER = textwrap.dedent('''
    import sys, json
    sys.path.insert(0, sys.argv[1])
    from pathlib import Path
    from core.errors import MemoryBackendError
    kind, root, config = sys.argv[2], Path(sys.argv[3]), json.loads(sys.argv[4])
    if kind == "sqlite":
        from core.backends.sqlite import SqliteMemoryBackend as B
    else:
        from core.backends.postgres import PostgresMemoryBackend as B
    from core.storage.fileio import content_hash
    b = B()
    b.initialize(config, root)
    path = ".fusion/memory.md"
    b.read_document(path)
    print("ready", flush=True)
    sys.stdin.readline()  # the agents have started
    for j in range({entries}):
        entry = f"memdesk entry {{j}}"
        b.append_document(path, lambda cur, e=entry: None if e + "\\n" in cur else f"\\n- {{e}}\\n")
        if j % 2 == 1:  # a save: the operator retitles the memory (agents' lines must survive it)
            for _ in range(50):
                cur = b.read_document(path)
                new = cur.replace("# Project Memory", "# Project Memory", 1).replace("## Notes", f"## Notes", 1)
                new = new.replace("\\n## Notes\\n", f"\\n## Notes\\n", 1)
                lines = new.split("\\n")
                lines[0] = f"# Project Memory (save {{j}})"
                try:
                    b.write_document(path, "\\n".join(lines), expected_hash=content_hash(cur), source="save")
                    break
                except MemoryBackendError as exc:
                    if exc.code != "CONFLICT":
                        raise
    b.shutdown()
''').format(entries=ENTRIES)

AGENT = ('i=0; while [ $i -lt {n} ]; do i=$((i+1)); printf "\\n- agent {a} line %s\\n" $i >> .fusion/memory.md; done')


def open_backend(kind: str, root: Path, config: dict):
    if kind == "sqlite":
        from core.backends.sqlite import SqliteMemoryBackend as B
    else:
        from core.backends.postgres import PostgresMemoryBackend as B
    b = B()
    b.initialize(config, root)
    return b


def race(kind: str, root: Path, config: dict) -> tuple[str, str]:
    import json

    b = open_backend(kind, root, config)
    b.write_document(MEMORY, HEAD)
    b.shutdown()
    env = dict(os.environ)
    memdesk = subprocess.Popen([sys.executable, "-c", WORKER, str(REPO), kind, str(root), json.dumps(config)],
                               env=env, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert memdesk.stdout is not None and memdesk.stdout.readline() == "ready\n"
    agents = [subprocess.Popen(["sh", "-c", AGENT.format(n=LINES, a=a)], cwd=root) for a in range(AGENTS)]
    _out, err = memdesk.communicate("go\n", timeout=300)
    for p in agents:
        assert p.wait(timeout=300) == 0
    assert memdesk.returncode == 0, err
    b = open_backend(kind, root, config)
    try:
        db = b.read_document(MEMORY)
    finally:
        b.shutdown()
    return db or "", (root / MEMORY).read_text(encoding="utf-8")


def exactly_once(text: str) -> list[str]:
    """What is missing or repeated: every agent line and memdesk entry must be there once."""
    wrong = []
    for a in range(AGENTS):
        for i in range(1, LINES + 1):
            n = len(re.findall(rf"^- agent {a} line {i}$", text, re.M))
            if n != 1:
                wrong.append(f"agent {a} line {i} x{n}")
    for j in range(ENTRIES):
        n = len(re.findall(rf"^- memdesk entry {j}$", text, re.M))
        if n != 1:
            wrong.append(f"memdesk entry {j} x{n}")
    return wrong


def test_sqlite_mirror_takes_every_agent_line_exactly_once(project: Path):
    db, file = race("sqlite", project, {})
    assert exactly_once(db) == []
    assert file == db


def test_postgres_mirror_takes_every_agent_line_exactly_once(project: Path, pg_connection: str):
    from tests.core.pg_server import project_key

    db, file = race("postgres", project, {"connection": "team", "projectKey": project_key(), "mirror": True})
    assert exactly_once(db) == []
    assert file == db
