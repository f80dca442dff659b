"""Project state files changed by several processes at once keep every change (round-5 review, issue 19): the
firewall policy (set from the CLI and the app at once) and the consolidation state were read outside their state
file's lock, so concurrent changes were lost; the extraction schedule's state is written under the run's lock, which
is the state file's own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from core.automation.schedule import SCHEDULE_STATE_PATH
from core.storage import statefiles
from tests.core.server.conftest import REPO, cli_env

N = 8


def _run_all(code: str, root: Path, user_config_dir: Path) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", code, str(root), str(i)], cwd=REPO, env=cli_env(user_config_dir),
                              stderr=subprocess.PIPE) for i in range(N)]
    errors = [p.communicate(timeout=180)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * N, errors


def test_concurrent_policy_rules_each_kept(tmp_path: Path, user_config_dir: Path):
    """8 processes each setting 5 rules of their own writer: all 40 kept (before the fix some were lost)."""
    code = ("import sys; from core.firewall.policy import set_rule\n"
            "for rule in ('secret', 'injection', 'near-duplicate', 'contradiction', 'error'):\n"
            "    set_rule(sys.argv[1], f'token:bot{sys.argv[2]}', rule, 'refuse')\n")
    _run_all(code, tmp_path, user_config_dir)
    rules = json.loads((tmp_path / ".fusion/memdesk/firewall-policy.json").read_text(encoding="utf-8"))["rules"]
    assert {w: sorted(t) for w, t in rules.items()} == {
        f"token:bot{i}": sorted(("secret", "injection", "near-duplicate", "contradiction", "error")) for i in range(N)}


def test_concurrent_consolidation_notes_each_kept(tmp_path: Path, user_config_dir: Path):
    """8 processes each noting 5 runs of their own kinds in the consolidation state: all 40 kept."""
    code = ("import sys; from core.consolidation.scheduled import note_runs\n"
            "for n in range(5): note_runs(sys.argv[1], {f'kind{sys.argv[2]}-{n}': '2026-12-01T00:00:00Z'})\n")
    _run_all(code, tmp_path, user_config_dir)
    state = json.loads((tmp_path / ".fusion/memdesk/consolidation-state.json").read_text(encoding="utf-8"))
    assert sorted(state) == sorted(f"kind{i}-{n}" for i in range(N) for n in range(5))


def test_first_seen_schedule_start_is_not_moved(tmp_path: Path):
    """``only_new`` (a schedule seen for the first time) keeps a start another process noted first."""
    from core.consolidation.scheduled import note_runs

    note_runs(tmp_path, {"dream": "2026-01-01T00:00:00Z"})
    note_runs(tmp_path, {"dream": "2026-06-01T00:00:00Z", "compact": "2026-06-01T00:00:00Z"}, only_new=True)
    state = json.loads((tmp_path / ".fusion/memdesk/consolidation-state.json").read_text(encoding="utf-8"))
    assert state == {"dream": "2026-01-01T00:00:00Z", "compact": "2026-06-01T00:00:00Z"}


def test_schedule_run_lock_is_the_state_files_lock(tmp_path: Path, user_config_dir: Path):
    """A scheduled run holds the schedule state's own lock: while another process holds it, a run reports busy
    (so its read-change-write of schedule-state.json cannot interleave with another)."""
    (tmp_path / ".fusion").mkdir()
    (tmp_path / ".fusion/config.json").write_text(json.dumps({"settings": {"insightExtractionEnabled": True}}))
    code = ("import sys; from core.automation.schedule import run_scheduled\n"
            "print(run_scheduled(sys.argv[1]).status)\n")
    with statefiles.lock("schedule-state", tmp_path):
        out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=REPO, env=cli_env(user_config_dir),
                             capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "busy", (out.stdout, out.stderr, SCHEDULE_STATE_PATH)


def test_concurrent_consolidation_policy_fields_each_kept(tmp_path: Path, user_config_dir: Path):
    """The consolidation policy (the app's switch beside ``memdesk consolidation-policy``): 4 processes changing the
    change limit 40 times each while 4 flip the switch 40 times, last to on; each field keeps its last value
    (before the fix a limit change that read before a flip undid it)."""
    code = ("import sys; from core.consolidation.policy import change_policy\n"
            "i = int(sys.argv[2])\n"
            "for n in range(40):\n"
            "    if i % 2: change_policy(sys.argv[1], unattended=n == 39)\n"
            "    else: change_policy(sys.argv[1], max_change_bytes=4096 + n)\n")
    _run_all(code, tmp_path, user_config_dir)
    stored = json.loads((tmp_path / ".fusion/memdesk/consolidation.json").read_text(encoding="utf-8"))
    assert stored == {"unattended": True, "maxChangeBytes": 4096 + 39}


def test_consolidation_policy_cli_changes_one_field(tmp_path: Path, user_config_dir: Path):
    """``memdesk consolidation-policy --max-change-bytes`` keeps the switch the app turned on, and a bad limit
    exits 2 with one line, changing nothing."""
    from core.consolidation.policy import change_policy

    change_policy(tmp_path, unattended=True)
    before = (tmp_path / ".fusion/memdesk/consolidation.json").read_bytes()
    cli = [sys.executable, "-m", "core.cli", "consolidation-policy", "--project", str(tmp_path)]
    bad = subprocess.run([*cli, "--max-change-bytes", "-1"], cwd=REPO, env=cli_env(user_config_dir),
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert (tmp_path / ".fusion/memdesk/consolidation.json").read_bytes() == before
    ok = subprocess.run([*cli, "--max-change-bytes", "2048"], cwd=REPO, env=cli_env(user_config_dir),
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    stored = json.loads((tmp_path / ".fusion/memdesk/consolidation.json").read_text(encoding="utf-8"))
    assert stored == {"unattended": True, "maxChangeBytes": 2048}


def test_concurrent_settings_patches_each_kept(tmp_path: Path, user_config_dir: Path):
    """memdesk's own settings and Fusion's ``config.json`` patched by 8 processes at once (5 keys each): all 40 kept
    in each (before, a patch read outside the lock and was refused as a conflict, or lost)."""
    code = ("import sys; from core.settings.store.own import patch_own\n"
            "from core.settings.store.config_json import ConfigJsonStore\n"
            "for n in range(5):\n"
            "    patch_own(sys.argv[1], {f'own{sys.argv[2]}-{n}': n})\n"
            "    ConfigJsonStore(sys.argv[1]).patch({f'fusion{sys.argv[2]}-{n}': n})\n")
    (tmp_path / ".fusion").mkdir()
    (tmp_path / ".fusion/config.json").write_text('{"settings": {}}\n')
    _run_all(code, tmp_path, user_config_dir)
    own = json.loads((tmp_path / ".fusion/memdesk/settings.json").read_text(encoding="utf-8"))
    fusion = json.loads((tmp_path / ".fusion/config.json").read_text(encoding="utf-8"))["settings"]
    assert sorted(own) == sorted(f"own{i}-{n}" for i in range(N) for n in range(5))
    assert sorted(fusion) == sorted(f"fusion{i}-{n}" for i in range(N) for n in range(5))


def test_concurrent_automation_syncs_all_succeed_with_one_schedule(tmp_path: Path, user_config_dir: Path):
    """8 processes syncing the extraction schedule at once (each scheduled run does): every one succeeds and one
    schedule is stored (before, all but one could fail with a conflict)."""
    code = ("import sys; from core.insights.automation import sync_insight_extraction_automation as sync\n"
            "for n in range(5): sync(sys.argv[1], {'insightExtractionEnabled': True,\n"
            "                                      'insightExtractionSchedule': f'{n} 2 * * *'})\n")
    _run_all(code, tmp_path, user_config_dir)
    stored = json.loads((tmp_path / ".fusion/memdesk/automations.json").read_text(encoding="utf-8"))
    assert len(stored) == 1 and stored[0]["cronExpression"] == "4 2 * * *", stored
