"""Issue 23 item 5, design §3b: with Fusion not running, ``PUT /api/settings/global`` (Fusion's dashboard's
``updateGlobalSettings``) changes Fusion's global settings where Fusion reads them, ``$HOME/.fusion/settings.json``,
as Fusion's ``GlobalSettingsStore.updateSettings`` does (Runfusion/Fusion ``packages/core/src/config/global-settings.ts``
at 34e0e664d2013e8337f8367ab7bf4c18eb2fee00; its test ``packages/core/src/__tests__/global-settings.test.ts`` at
2f23d2260d903acdf56c8fc8bcef56065cc2478c): the patch merged into the file's object, unknown keys kept, ``null``
deletes, an invalid file refused and left as it was, the folder and file created when missing, written as
``JSON.stringify(settings, null, 2)``. Never into a project's ``.fusion/config.json``, which may be committed with
the secrets in it. Through a real ``memdesk serve`` process whose ``HOME`` is a temporary folder.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from core.server.tokens import TokenStore
from tests.core.server.conftest import cli_env

SECRET = "ntfy-token-4b1d9e"


@pytest.fixture
def home_serve(tmp_path: Path, user_config_dir: Path, layered_project: Path,
               sample_project: Path) -> Iterator[tuple[str, str, Path]]:
    """``memdesk serve -p layered -p sample`` as its own process with ``HOME`` a temporary folder; (URL, token, HOME)."""
    home = tmp_path / "home"
    home.mkdir()
    token = TokenStore().create("owner")
    env = cli_env(user_config_dir)
    env["HOME"] = str(home)
    env.pop("MEMDESK_FUSION_HOME", None)  # Fusion's home from HOME, as Fusion's defaultGlobalDir()
    proc = subprocess.Popen([sys.executable, "-m", "core.cli", "serve", "--port", "0", "-p", str(layered_project),
                             "-p", str(sample_project)], env=env, stderr=subprocess.PIPE, text=True)
    url = None
    deadline = time.monotonic() + 60
    assert proc.stderr is not None
    while url is None and time.monotonic() < deadline:
        found = re.search(r"on (http://127\.0\.0\.1:\d+)", proc.stderr.readline())
        if found:
            url = found.group(1)
    assert url, "memdesk serve did not start"
    try:
        yield url, token, home
    finally:
        proc.terminate()
        proc.wait(20)


def _api(base: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=f"{base}/api", headers={"Authorization": f"Bearer {token}"}, timeout=60)


def _project_bytes(*roots: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for root in roots for p in (root / ".fusion").rglob("*")
            if p.is_file() and "memdesk" not in p.parts}


def test_a_global_put_changes_fusions_settings_json_as_fusion_does(home_serve, layered_project, sample_project,
                                                                   user_config_dir):
    base, token, home = home_serve
    settings = home / ".fusion" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"themeMode":"light","someFutureKey":{"a":[1,"é"]},"ntfyTopic":"t1"}', encoding="utf-8")
    before = _project_bytes(layered_project, sample_project)
    with _api(base, token) as api:
        put = api.put("/settings/global", json={"themeMode": "dark", "ntfyAccessToken": SECRET, "ntfyTopic": None,
                                                "dashboardFontScalePct": 110})
        assert put.status_code == 200, put.text
        assert put.json()["themeMode"] == "dark" and "ntfyTopic" not in put.json()
        # Merged into the file's object, its unknown key kept, null deleted, written as JSON.stringify(o, null, 2).
        assert settings.read_bytes() == (
            '{\n  "themeMode": "dark",\n  "someFutureKey": {\n    "a": [\n      1,\n      "é"\n    ]\n  },\n'
            f'  "ntfyAccessToken": "{SECRET}",\n  "dashboardFontScalePct": 110\n}}').encode()
        # Read back from there, in every served project's view and on the global route.
        for route in ("/settings", "/settings?projectId=sample", "/settings/global"):
            got = api.get(route).json()
            assert (got["themeMode"], got["ntfyAccessToken"], got["dashboardFontScalePct"]) == ("dark", SECRET, 110)
    # Never in a project: its files (a committed .fusion/config.json among them) are as they were.
    assert _project_bytes(layered_project, sample_project) == before
    assert not [p for root in (layered_project, sample_project) for p in root.rglob("*")
                if p.is_file() and SECRET.encode() in p.read_bytes()]
    # One line in the user's state log, with no value.
    log = (user_config_dir / "state-log.jsonl").read_text(encoding="utf-8")
    assert '"file": "fusion-global"' in log and SECRET not in log and "dark" not in log
    # A read token is answered the theme, never the token.
    with _api(base, TokenStore().create("reader", scope="read")) as api:
        got = api.get("/settings").json()
        assert got["themeMode"] == "dark" and "ntfyAccessToken" not in got and SECRET not in api.get("/settings").text


def test_the_folder_and_file_are_made_when_missing_and_the_memory_view_switch_stays_the_projects(
        home_serve, layered_project):
    base, token, home = home_serve
    with _api(base, token) as api:
        put = api.put("/settings/global", json={"themeMode": "dark", "experimentalFeatures": {"memoryView": False}})
        assert put.status_code == 200, put.text
    settings = home / ".fusion" / "settings.json"
    assert settings.read_bytes() == b'{\n  "themeMode": "dark"\n}'
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600
    config = json.loads((layered_project / ".fusion/config.json").read_text(encoding="utf-8"))
    config = config.get("settings", config)
    assert config["experimentalFeatures"]["memoryView"] is False and "themeMode" not in config


def _refused(api: httpx.Client, words: str) -> None:
    got = api.put("/settings/global", json={"themeMode": "dark"})
    assert got.status_code == 400, got.text
    error = got.json()["error"]
    assert words in error and "\n" not in error and "nothing was" in error, error


def test_an_invalid_file_is_refused_and_left_as_it_was(home_serve, layered_project):
    base, token, home = home_serve
    settings = home / ".fusion" / "settings.json"
    settings.parent.mkdir()
    invalid = b'{"themeMode":"light",'  # Fusion's own test's invalid file
    settings.write_bytes(invalid)
    config = (layered_project / ".fusion/config.json").read_bytes()
    with _api(base, token) as api:
        _refused(api, "not valid JSON")
        assert settings.read_bytes() == invalid
        settings.write_bytes(b"[1, 2]")
        _refused(api, "not a JSON object")
        assert settings.read_bytes() == b"[1, 2]"
        assert api.get("/settings").status_code == 200  # the project's settings still answer, as Fusion's readRaw
    assert (layered_project / ".fusion/config.json").read_bytes() == config


def test_a_link_out_or_a_fifo_at_its_name_is_refused_and_nothing_is_written_outside(home_serve, tmp_path):
    base, token, home = home_serve
    fusion = home / ".fusion"
    fusion.mkdir()
    outside = tmp_path / "outside.json"
    outside.write_bytes(b"{}")
    (fusion / "settings.json").symlink_to(outside)
    with _api(base, token) as api:
        _refused(api, "settings.json")
        assert outside.read_bytes() == b"{}" and (fusion / "settings.json").is_symlink()
        (fusion / "settings.json").unlink()
        os.mkfifo(fusion / "settings.json")
        _refused(api, "settings.json")
        assert stat.S_ISFIFO(os.lstat(fusion / "settings.json").st_mode)
        assert api.get("/settings").status_code == 200  # read as untrusted: a FIFO never blocks the answer
        (fusion / "settings.json").unlink()
        (fusion / "settings.json").mkdir()
        _refused(api, "settings.json")
    assert sorted(p.name for p in fusion.iterdir()) == ["settings.json"]


def test_fusions_own_lock_is_waited_for_a_stale_one_taken_over_and_a_fifo_refused(home_serve):
    """Fusion's ``withSettingsWriteLock`` (global-settings.ts at 34e0e664): ``settings.json.lock`` beside the file,
    ``{"pid", "acquiredAt"}``; memdesk takes the same lock, so a change beside Fusion's CLI is never lost."""
    base, token, home = home_serve
    fusion = home / ".fusion"
    fusion.mkdir()
    settings, lock = fusion / "settings.json", fusion / "settings.json.lock"
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(30)
    lock.write_text(json.dumps({"pid": gone.pid, "acquiredAt": int(time.time() * 1000)}), encoding="utf-8")
    with _api(base, token) as api:
        put = api.put("/settings/global", json={"themeMode": "dark"})  # its holder is gone: taken over
        assert put.status_code == 200, put.text
        assert json.loads(settings.read_text(encoding="utf-8")) == {"themeMode": "dark"} and not lock.exists()
        # Held by a live process (this one): memdesk waits, writes nothing meanwhile, then writes.
        lock.write_text(json.dumps({"pid": os.getpid(), "acquiredAt": int(time.time() * 1000)}), encoding="utf-8")
        answers: list[httpx.Response] = []
        waiting = threading.Thread(target=lambda: answers.append(api.put("/settings/global",
                                                                         json={"themeMode": "light"})))
        waiting.start()
        time.sleep(1.0)
        assert json.loads(settings.read_text(encoding="utf-8")) == {"themeMode": "dark"} and waiting.is_alive()
        lock.unlink()  # the holder lets go
        waiting.join(30)
        assert answers and answers[0].status_code == 200, answers
        assert json.loads(settings.read_text(encoding="utf-8")) == {"themeMode": "light"} and not lock.exists()
        os.mkfifo(lock)
        _refused(api, "not a regular file")
        assert stat.S_ISFIFO(os.lstat(lock).st_mode)
        assert json.loads(settings.read_text(encoding="utf-8")) == {"themeMode": "light"}


def test_a_legacy_fusion_home_is_never_shadowed(home_serve, layered_project):
    """Fusion moves ``~/.pi/fusion`` to ``~/.fusion`` when it starts and ``~/.fusion`` is not there
    (``resolveGlobalDirForHome``, global-settings.ts at 34e0e664): memdesk making ``~/.fusion`` first would leave
    the settings there unread, so it refuses in one line and makes nothing."""
    base, token, home = home_serve
    legacy = home / ".pi" / "fusion"
    legacy.mkdir(parents=True)
    (legacy / "settings.json").write_bytes(b'{"themeMode":"light"}')
    config = (layered_project / ".fusion/config.json").read_bytes()
    with _api(base, token) as api:
        _refused(api, "start Fusion once")
        assert api.get("/settings").json()["themeMode"] == "light"  # read from there meanwhile, as Fusion would
    assert not (home / ".fusion").exists() and (legacy / "settings.json").read_bytes() == b'{"themeMode":"light"}'
    assert (layered_project / ".fusion/config.json").read_bytes() == config
