"""History: versions kept before every replacing write, deduplicated, pruned by retention, restored."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.backends.sqlite import SqliteMemoryBackend
from core.errors import MemoryBackendError
from core.storage import fileio, saving
from core.storage.history import versions as history

MEMORY = ".fusion/memory.md"


def backdate(root: Path, days: int, path: str = MEMORY) -> None:
    when = (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="seconds")
    conn = sqlite3.connect(root / history.HISTORY_DB)
    with conn:
        conn.execute("UPDATE versions SET created_at = ? WHERE path = ?", (when, path))
    conn.close()


def test_every_replacement_keeps_the_previous_version(project: Path):
    saving.replace_text(project, MEMORY, "v1\n", source="editor")
    assert history.list_versions(project) == []  # nothing was replaced yet
    saving.replace_text(project, MEMORY, "v2\n", source="prune")
    saving.replace_text(project, MEMORY, "v3\n", source="insights-merge")
    versions = history.list_versions(project, MEMORY)
    assert [(v.source, v.size) for v in versions] == [("insights-merge", 3), ("prune", 3)]
    assert history.get_version(project, versions[-1].id)[1] == "v1\n"
    assert history.get_version(project, 9999) is None


def test_same_content_is_stored_once_and_redated(project: Path):
    for text in ("a\n", "b\n", "a\n", "b\n", "a\n"):
        saving.replace_text(project, MEMORY, text)
    versions = history.list_versions(project, MEMORY)
    assert sorted(history.get_version(project, v.id)[1] for v in versions) == ["a\n", "b\n"]


def test_retention_policy_from_settings_and_defaults():
    assert history.retention_policy() == history.RetentionPolicy(90, 20)
    assert history.retention_policy({"historyRetentionDays": 7, "historyMinVersions": 3}) == (
        history.RetentionPolicy(7, 3))
    assert history.retention_policy({"history_retention_days": 0}) == history.RetentionPolicy(0, 20)
    assert history.retention_policy({"historyRetentionDays": -1, "historyMinVersions": 0}) == (
        history.RetentionPolicy(90, 20))
    assert history.retention_policy({"historyRetentionDays": True}).days == 90

    class Model:
        history_retention_days = 30
        history_min_versions = 5

    assert history.retention_policy(Model()) == history.RetentionPolicy(30, 5)
    assert history.retention_policy(Model(), days=1) == history.RetentionPolicy(1, 5)


def test_prune_keeps_recent_and_the_minimum_number(project: Path):
    for i in range(8):
        saving.replace_text(project, MEMORY, f"v{i}\n")
    backdate(project, 100)
    saving.replace_text(project, "other.md", "o1\n")
    saving.replace_text(project, "other.md", "o2\n")
    backdate(project, 100, "other.md")
    assert history.prune_history(project, days=90, min_versions=3, relpath=MEMORY) == 4
    assert len(history.list_versions(project, MEMORY)) == 3
    assert history.prune_history(project, days=0, min_versions=1) == 0  # 0 days: no age limit
    assert history.prune_history(project, days=90, min_versions=1) == 2
    assert len(history.list_versions(project, "other.md")) == 1


def test_recording_applies_the_project_policy(project: Path):
    (project / ".fusion").mkdir()
    (project / ".fusion" / "config.json").write_text(json.dumps({"historyRetentionDays": 10,
                                                                 "historyMinVersions": 2}))
    for i in range(5):
        saving.replace_text(project, MEMORY, f"v{i}\n")
    backdate(project, 30)
    saving.replace_text(project, MEMORY, "latest\n")
    kept = [history.get_version(project, v.id)[1] for v in history.list_versions(project, MEMORY)]
    assert kept == ["v4\n", "v3\n"]


def test_a_save_prunes_old_append_events_too_and_only_when_some_are_old(project: Path):
    (project / ".fusion").mkdir()
    (project / ".fusion" / "config.json").write_text(json.dumps({"historyRetentionDays": 10,
                                                                 "historyMinVersions": 2}))
    for i in range(5):
        history.record_append(project, MEMORY, f"entry {i}").result()
    saving.replace_text(project, MEMORY, "one\n")
    saving.replace_text(project, MEMORY, "two\n")  # nothing old yet: every event stays
    assert len(history.list_events(project, MEMORY)) == 5
    when = (datetime.now(UTC) - timedelta(days=30)).isoformat(timespec="seconds")
    conn = sqlite3.connect(project / history.HISTORY_DB)
    with conn:
        conn.execute("UPDATE events SET created_at = ?", (when,))
    conn.close()
    saving.replace_text(project, MEMORY, "three\n")
    assert [e.text for e in history.list_events(project, MEMORY)] == ["entry 4", "entry 3"]


def test_malformed_config_never_blocks_a_write(project: Path):
    (project / ".fusion").mkdir()
    (project / ".fusion" / "config.json").write_text("{not json")
    saving.replace_text(project, MEMORY, "a\n")
    saving.replace_text(project, MEMORY, "b\n")
    assert len(history.list_versions(project, MEMORY)) == 1


def test_restore_writes_through_the_safe_path_and_is_recorded(project: Path):
    saving.replace_text(project, MEMORY, "original\n")
    saving.replace_text(project, MEMORY, "edited\n")
    old = history.list_versions(project, MEMORY)[0]
    result = saving.restore_version(project, old.id)
    assert result.changed and result.path == MEMORY
    assert (project / MEMORY).read_text() == "original\n"
    newest = history.list_versions(project, MEMORY)[0]
    assert newest.source == "restore" and history.get_version(project, newest.id)[1] == "edited\n"
    assert not saving.restore_version(project, old.id).changed


def test_restore_refuses_unknown_and_stale(project: Path):
    with pytest.raises(MemoryBackendError) as err:
        saving.restore_version(project, 42)
    assert err.value.code == "NOT_FOUND"
    saving.replace_text(project, MEMORY, "a\n")
    saving.replace_text(project, MEMORY, "b\n")
    vid = history.list_versions(project)[0].id
    with pytest.raises(MemoryBackendError) as err:
        saving.restore_version(project, vid, expected_hash=fileio.content_hash("stale"))
    assert err.value.code == "CONFLICT"
    assert (project / MEMORY).read_text() == "b\n"


def test_restore_through_a_database_backend(project: Path):
    b = SqliteMemoryBackend()
    b.initialize({"mirror": False}, project)
    try:
        b.write("first\n")
        b.write("second\n")
        vid = history.list_versions(project, MEMORY)[0].id
        saving.restore_version(project, vid, backend=b)
        assert b.read() == "first\n"
        assert not (project / MEMORY).exists()
        assert history.list_versions(project, MEMORY)[0].source == "restore"
    finally:
        b.shutdown()


def test_unified_diff():
    assert history.unified_diff("a\n", "a\n", "m") == ""
    diff = history.unified_diff("a\nb", "a\nc\n", "m", "version 3")
    assert diff.startswith("--- m (version 3)\n+++ m (now)\n") and "-b\n" in diff and "+c\n" in diff
