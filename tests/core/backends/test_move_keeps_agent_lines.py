"""``memdesk backend move`` never writes over a line an agent appended during the move (core/project/backend_move.py).

The move reads every document, copies it and its history into the database (seconds on a real project), then
makes the files the mirror by replacing each with the text it read. An agent appending with ``>>`` meanwhile
(no lock) had its line written over: in neither the file nor the database. Now each file must still hold the
bytes the move read, else the move stops with ``CONFLICT`` before the settings change, the agent's line kept.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core.backends import postgres_move
from core.errors import MemoryBackendError
from core.project.backend_move import move_to_postgres
from core.settings import load_settings
from tests.core.pg_server import project_key

MEM = ".fusion/memory.md"
TEXT = "# Project Memory\n\n- ours\n"


def test_an_agents_line_appended_during_the_move_is_kept(project: Path, pg_connection: str,
                                                         monkeypatch: pytest.MonkeyPatch):
    (project / ".fusion").mkdir()
    (project / MEM).write_text(TEXT, encoding="utf-8")
    real = postgres_move.copy_local_history

    def and_an_agent_appends(*args, **kwargs):
        found = real(*args, **kwargs)
        subprocess.run(["sh", "-c", f"printf '\\n- an agent line during the move\\n' >> {MEM}"], cwd=project,
                       check=True)
        return found

    monkeypatch.setattr(postgres_move, "copy_local_history", and_an_agent_appends)
    with pytest.raises(MemoryBackendError) as info:
        move_to_postgres(project, pg_connection, project_key())
    assert info.value.code == "CONFLICT" and "\n" not in str(info.value)
    assert (project / MEM).read_text(encoding="utf-8") == TEXT + "\n- an agent line during the move\n"
    assert load_settings(project).memory_backend in (None, "file")
