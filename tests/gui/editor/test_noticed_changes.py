"""Changes memdesk notices but did not make are recorded (issue 19): another program's rewrite keeps the
version before it in history (writer kind ``program``), an agent's ``>>`` is an append event; memdesk's own
writes are not recorded twice. A real window, real second processes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from core.storage.history import versions as history
from core.storage.noticed import EXTERNAL_APPEND, EXTERNAL_CHANGE
from gui.main_window import MainWindow
from tests.gui.editor.test_external_changes import APPEND, REWRITE, WAIT_MS, other_process

MEMORY = ".fusion/memory.md"


def test_another_programs_rewrite_keeps_the_version_before(qtbot, sample_window: MainWindow, sample_project: Path):
    editor = sample_window.editor
    before = (sample_project / MEMORY).read_text(encoding="utf-8")
    assert "## Pitfalls" in before
    other_process(REWRITE, str(sample_project), "## Pitfalls", "## Traps")
    qtbot.waitUntil(lambda: "## Traps" in editor.text_edit.toPlainText(), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: any(v.source == EXTERNAL_CHANGE for v in history.list_versions(sample_project, MEMORY)),
                    timeout=WAIT_MS)
    kept = [v for v in history.list_versions(sample_project, MEMORY) if v.source == EXTERNAL_CHANGE]
    assert len(kept) == 1 and kept[0].author == "program"
    assert history.get_version(sample_project, kept[0].id)[1] == before  # byte-exact, restorable
    assert kept[0].label == "before another program's change"


def test_an_agents_shell_append_is_an_event_and_memdesks_own_is_not_doubled(qtbot, sample_window: MainWindow,
                                                                             sample_project: Path):
    editor = sample_window.editor
    with (sample_project / MEMORY).open("a", encoding="utf-8") as fh:  # what an agent's `>>` does
        fh.write("\n- appended by a shell redirect\n")
    qtbot.waitUntil(lambda: "appended by a shell redirect" in editor.text_edit.toPlainText(), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: any(e.source == EXTERNAL_APPEND for e in history.list_events(sample_project, MEMORY)),
                    timeout=WAIT_MS)
    ext = [e for e in history.list_events(sample_project, MEMORY) if e.source == EXTERNAL_APPEND]
    assert len(ext) == 1 and ext[0].author == "program" and "appended by a shell redirect" in ext[0].text
    # memdesk's own append from another process: recorded once, by memdesk, not again as a program's
    assert other_process(APPEND, str(sample_project), "Leases use the DB clock") == "written"
    qtbot.waitUntil(lambda: "Leases use the DB clock" in editor.text_edit.toPlainText(), timeout=WAIT_MS)
    events = history.list_events(sample_project, MEMORY)
    assert [e.text.strip() for e in events].count("Leases use the DB clock") == 1
    assert len([e for e in events if e.source == EXTERNAL_APPEND]) == 1
    assert subprocess.run(["true"]).returncode == 0
