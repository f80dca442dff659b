"""Mirror imports and other hosts' changes pass the firewall's screen too (issue 19, item 1), with real processes.

An agent appends a line holding a fake AWS key to a mirrored file with the shell's ``>>`` (no memdesk);
memdesk's next ``memdesk append`` (a process of its own) takes it into the database exactly once, and the
firewall's report is on record: ``memdesk activity`` prints the document and the rule, ``--json`` the
flags ``{rule, kind, line, span}``; the key itself is printed nowhere. On ``sqlite`` and ``postgres``; on
``postgres`` a second host's change is screened on the first host too.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.core.pg_server import PgServer, project_key

REPO = Path(__file__).resolve().parents[3]
MEMORY = ".fusion/memory.md"
KEY = "AKIAIOSFODNN7EXAMPLE"  # the sample the firewall's rules flag (tests/core/firewall/test_rules.py)


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-m", "core.cli", *args, "--project", str(root)], capture_output=True,
                          text=True, env=env, timeout=120, cwd=root)
    assert done.returncode == 0, done.stderr
    return done


def agent_appends(root: Path, line: str) -> None:
    subprocess.run(["sh", "-c", f"printf '%s\\n' '{line}' >> {MEMORY}"], cwd=root, check=True)


def reports(root: Path) -> tuple[str, list[dict]]:
    text = cli(root, "activity").stdout
    rows = json.loads(cli(root, "activity", "--json").stdout)
    return text, [r for r in rows if r["source"] == "firewall-import"]


def check_reported(root: Path, client: str) -> None:
    """One report of the key's line, naming the document, the rule and the line where the key now is."""
    doc = (root / MEMORY).read_text(encoding="utf-8")
    line = doc[:doc.index(KEY)].count("\n") + 1
    text, rows = reports(root)
    assert KEY not in text and KEY not in json.dumps(rows)
    assert re.search(rf"^    secret\.aws-key \(secret\) at line {line} in {re.escape(MEMORY)}: flagged by the memory "
                     "firewall", text, re.M), text
    assert len(rows) == 1 and rows[0]["client"] == client
    (flag,) = rows[0]["flags"]
    assert flag["rule"] == "secret.aws-key" and flag["kind"] == "secret" and flag["line"] == line
    start, end = flag["span"]
    assert doc[start:end] == KEY  # the span points at the key in the document (the key itself is not stored)


@pytest.fixture
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMDESK_CONFIG_DIR", str(tmp_path / "cfg"))
    return tmp_path / "cfg"


def test_sqlite_an_agents_mirrored_line_is_imported_once_and_its_key_reported(project: Path, user_config: Path):
    (project / ".fusion").mkdir()
    (project / ".fusion" / "config.json").write_text(json.dumps({"memoryBackend": "sqlite",
                                                                 "memoryBackendConfig": {"mirror": True}}))
    cli(project, "append", "first entry")
    assert reports(project)[1] == []  # memdesk's own entries are screened by the pipeline, not reported here
    agent_appends(project, f"- deploy key {KEY} for ci")
    out = cli(project, "append", "second entry")
    assert KEY not in out.stdout + out.stderr
    with sqlite3.connect(project / ".fusion" / "memdesk" / "memory.db") as conn:
        (db,) = conn.execute("SELECT content FROM memory").fetchone()
    assert db.count(KEY) == 1 and db.index(KEY) < db.index("second entry")
    assert (project / MEMORY).read_text(encoding="utf-8") == db
    check_reported(project, "program:mirror")
    cli(project, "append", "third entry")  # taken in once, reported once
    assert len(reports(project)[1]) == 1


def configure_pg(root: Path, key: str) -> None:
    from core.settings.bindings import confirm

    (root / ".fusion").mkdir(parents=True)
    (root / ".fusion" / "config.json").write_text(json.dumps({
        "memoryBackend": "postgres", "memoryBackendConfig": {"connection": "team", "projectKey": key,
                                                              "mirror": True}}), encoding="utf-8")
    confirm(root, "team", key)


def stored(pg: PgServer, key: str) -> str:
    with psycopg.connect(pg.dsn()) as conn:
        return conn.execute("SELECT content FROM memdesk_documents WHERE project_key = %s AND path = %s",
                            (key, MEMORY)).fetchone()[0]


def test_postgres_an_agents_line_and_another_hosts_change_are_screened_once(tmp_path: Path, pg_connection: str,
                                                                             pg: PgServer):
    key = project_key()
    a, b = tmp_path / "host-a", tmp_path / "host-b"
    for root in (a, b):
        configure_pg(root, key)
    cli(a, "append", "first entry")
    cli(b, "append", "b's entry")  # host b mirrors the shared text, then adds to it
    cli(a, "append", "a's entry")
    assert reports(a)[1] == []  # another host's entry holding no secret: nothing to report

    agent_appends(b, f"- deploy key {KEY} for ci")
    out = cli(b, "append", "second entry")
    assert KEY not in out.stdout + out.stderr
    assert stored(pg, key).count(KEY) == 1
    assert (b / MEMORY).read_text(encoding="utf-8") == stored(pg, key)
    check_reported(b, "program:mirror")

    cli(a, "append", "a's second entry")  # host a takes host b's change in from the shared database
    assert stored(pg, key).count(KEY) == 1
    assert (a / MEMORY).read_text(encoding="utf-8") == stored(pg, key)
    check_reported(a, "program:other-host")
    cli(a, "append", "a's third entry")
    assert len(reports(a)[1]) == 1


def test_a_refuse_for_an_agents_mirrored_line_is_reported_not_applied(project: Path, user_config: Path):
    (project / ".fusion").mkdir()
    (project / ".fusion" / "config.json").write_text(json.dumps({"memoryBackend": "sqlite",
                                                                 "memoryBackendConfig": {"mirror": True}}))
    cli(project, "policy", "set", "program:mirror", "secret", "refuse")
    cli(project, "append", "first entry")
    agent_appends(project, f"- deploy key {KEY} for ci")
    cli(project, "append", "second entry")
    with sqlite3.connect(project / ".fusion" / "memdesk" / "memory.db") as conn:
        (db,) = conn.execute("SELECT content FROM memory").fetchone()
    assert db.count(KEY) == 1 and (project / MEMORY).read_text(encoding="utf-8") == db  # imported, once
    text, rows = reports(project)
    assert "reported, not applied" in text and "(policy: refuse)" in text and KEY not in text
    assert len(rows) == 1
    assert cli(project, "inbox").stdout.strip() == "The inbox is empty."  # nothing held: the text is in
