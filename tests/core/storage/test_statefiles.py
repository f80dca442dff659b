"""The state-file door (core.storage.statefiles): what, where, lock, atomic write, record, and state read back untrusted."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from core.errors import MemoryBackendError
from core.storage import fileio, statefiles
from core.storage.history import versions as history
from core.storage.pipeline import STATE_FILES


def test_only_named_files_and_well_formed_keys_pass_stage_what(project: Path):
    with pytest.raises(MemoryBackendError, match="not one of memdesk's state files"):
        statefiles.write("../../etc/passwd", project, "x", source="t")
    for key in ("../x", "a/b", "", ".hidden", "x" * 65, "a\x00b", None):
        with pytest.raises(MemoryBackendError, match="not a valid name for an extraction proposal"):
            statefiles.write("proposal", project, "{}", key=key, source="t")  # type: ignore[arg-type]
    with pytest.raises(MemoryBackendError, match="takes no key"):
        statefiles.write("settings", project, "{}", key="x", source="t")
    assert not (project / ".fusion").exists()  # nothing created by a refusal


def test_the_pipeline_admits_the_registrys_project_files():
    assert {".fusion/memdesk/settings.json", ".fusion/config.json", ".fusion/memory-audit.md"} <= STATE_FILES
    assert not any("{key}" in p for p in STATE_FILES)


def test_a_write_is_atomic_logged_and_keeps_history_where_it_should(project: Path):
    first = statefiles.write("settings", project, '{"a": 1}\n', source="settings", writer="cli:ana")
    assert first.changed and (project / ".fusion/memdesk/settings.json").read_text() == '{"a": 1}\n'
    again = statefiles.write("settings", project, '{"a": 1}\n', source="settings")
    assert not again.changed
    statefiles.write("settings", project, '{"a": 2}\n', source="settings", writer="operator")
    kept = history.list_versions(project, ".fusion/memdesk/settings.json")
    assert [history.get_version(project, v.id)[1] for v in kept] == ['{"a": 1}\n']
    assert kept[0].author == "operator" and kept[0].source == "settings"
    statefiles.write("schedule-state", project, "{}\n", source="schedule", writer="memdesk")  # no history for schedule state
    assert history.list_versions(project, ".fusion/memdesk/schedule-state.json") == []
    log = statefiles.read_log(project)
    assert [(c.file, c.writer, c.source) for c in log] == [
        ("settings", "cli:ana", "settings"), ("settings", "operator", "settings"), ("schedule-state", "memdesk", "schedule")]
    assert not list((project / ".fusion/memdesk").glob(".*.tmp"))


def test_a_stale_base_is_a_conflict_and_changes_nothing(project: Path):
    statefiles.write("automations", project, "[]\n", source="t")
    with pytest.raises(MemoryBackendError) as err:
        statefiles.write("automations", project, "[1]\n", source="t", expected_hash=fileio.content_hash("[2]\n"))
    assert err.value.code == "CONFLICT"
    assert (project / ".fusion/memdesk/automations.json").read_text() == "[]\n"


def test_exclusive_creates_once(tmp_path: Path):
    statefiles.write("firewall-key", None, b"one\n", source="t", directory=tmp_path, exclusive=True)
    with pytest.raises(MemoryBackendError) as err:
        statefiles.write("firewall-key", None, b"two\n", source="t", directory=tmp_path, exclusive=True)
    assert err.value.code == "CONFLICT" and (tmp_path / "firewall.key").read_bytes() == b"one\n"
    assert oct((tmp_path / "firewall.key").stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("kind", ["fifo", "folder", "hardlink", "file-in-the-way"])
def test_where_refuses_what_is_not_a_plain_file_of_its_own(project: Path, tmp_path: Path, kind: str):
    state = project / ".fusion" / "memdesk"
    state.mkdir(parents=True)
    target = state / "settings.json"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    elif kind == "hardlink":
        other = tmp_path / "other.json"
        other.write_text("{}")
        os.link(other, target)
    else:
        (state / "proposals").write_text("not a folder")
    name, key = ("proposal", "20260101T000000-abcdef") if kind == "file-in-the-way" else ("settings", None)
    with pytest.raises(MemoryBackendError) as err:
        statefiles.write(name, project, "{}\n", key=key, source="t")
    message = str(err.value)
    assert "\n" not in message and "nothing was written" in message
    assert (".fusion/memdesk/proposals" if kind == "file-in-the-way" else ".fusion/memdesk/settings.json") in message
    if kind == "hardlink":
        assert (tmp_path / "other.json").read_text() == "{}"


def test_concurrent_read_modify_writes_under_the_lock_lose_nothing(project: Path):
    statefiles.write("consolidation-state", project, json.dumps({"n": 0}), source="t")

    def bump() -> None:
        for _ in range(20):
            with statefiles.lock("consolidation-state", project):
                n = json.loads(statefiles.read("consolidation-state", project))["n"]
                statefiles.write("consolidation-state", project, json.dumps({"n": n + 1}), source="t")

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert json.loads(statefiles.read("consolidation-state", project))["n"] == 80


def test_state_read_back_is_capped_and_one_line(project: Path):
    state = project / ".fusion" / "memdesk"
    state.mkdir(parents=True)
    (state / "consolidation-state.json").write_bytes(b" " * (64 * 1024 + 1))
    with pytest.raises(MemoryBackendError) as err:
        statefiles.read("consolidation-state", project)
    assert "\n" not in str(err.value) and ".fusion/memdesk/consolidation-state.json" in str(err.value)
    assert "65,537 bytes" in str(err.value)
    (state / "settings.json").write_bytes(b'{"a": "\xff"}')
    with pytest.raises(MemoryBackendError, match="not valid UTF-8"):
        statefiles.read("settings", project)
    os.mkfifo(state / "automations.json")  # never blocks
    with pytest.raises(MemoryBackendError, match="not a regular file"):
        statefiles.read("automations", project)


def test_a_damaged_state_log_is_read_line_by_line(project: Path):
    statefiles.write("settings", project, "{}\n", source="settings")
    log = project / ".fusion/memdesk/state-log.jsonl"
    good = log.read_text()
    log.write_text(good + "not json\n" + '{"at": 1}\n' + "[" * 100_000 + "\n" + good)
    skipped: list[str] = []
    assert len(statefiles.read_log(project, skipped=skipped)) == 2
    assert len(skipped) == 3 and all(s.startswith(".fusion/memdesk/state-log.jsonl line ") for s in skipped)


def test_the_state_log_stays_within_its_limit(project: Path):
    limit = statefiles.REGISTRY["state-log"].max_size
    for i in range(1500):
        statefiles.write("schedule-state", project, json.dumps({"i": i, "pad": "x" * 50}), source="schedule")
    size = (project / ".fusion/memdesk/state-log.jsonl").stat().st_size
    assert size <= limit
    log = statefiles.read_log(project)
    assert log and log[-1].size == len(json.dumps({"i": 1499, "pad": "x" * 50}))
