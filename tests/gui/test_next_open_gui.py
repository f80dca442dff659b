"""Opening the app after another program replaced a document memdesk wrote keeps memdesk's text in history."""

from __future__ import annotations

from pathlib import Path

from core.project import Project, forget_project
from core.storage.history import versions as history
from core.storage.noticed import EXTERNAL_CHANGE
from gui.session import ProjectSession

MEM = ".fusion/memory.md"


def test_the_first_read_in_a_window_records_a_rewrite_made_while_it_was_closed(qtbot, sample_project: Path):
    p = Project(sample_project)
    p.write(MEM, "# Project Memory\n\n- the operator's last save\n")
    p.close()
    forget_project(sample_project)
    (sample_project / MEM).write_text("# Project Memory\n\n- replaced by another program\n", encoding="utf-8")
    session = ProjectSession(sample_project)
    try:
        assert "replaced by another program" in session.adapter.read()
        kept = [v for v in history.list_versions(sample_project, MEM) if v.source == EXTERNAL_CHANGE]
        assert len(kept) == 1
        assert history.get_version(sample_project, kept[0].id)[1] == "# Project Memory\n\n- the operator's last save\n"
        session.adapter.read()  # once per window: nothing more
        assert len([v for v in history.list_versions(sample_project, MEM) if v.source == EXTERNAL_CHANGE]) == 1
    finally:
        session.close()
