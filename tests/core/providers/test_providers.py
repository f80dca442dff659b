"""Providers against real things: a loopback chat-completions server, real scripts, and the offline rules."""

from __future__ import annotations

import json
import socket
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.errors import SettingsError
from core.insights import parse_insight_extraction_response, validate_prune_candidate
from core.providers import (
    CommandProvider,
    OfflineProvider,
    OpenAIProvider,
    ProviderError,
    ProviderRequest,
    resolve_provider,
)
from core.settings.user_config import (
    ProviderConfig,
    UserConfig,
    load_user_config,
    remove_provider,
    set_default_provider,
    set_provider,
    user_config_path,
)
from tests.core.chat_server import (
    API_KEY,
    API_KEY_ENV,
    EMPTY,
    GOOD_REPLY,
    NOT_JSON_BODY,
    SAMPLE_FUSION,
    SERVER_ERROR,
    UNAUTHORIZED,
    slow,
)

MEMORY = (SAMPLE_FUSION / "memory.md").read_text(encoding="utf-8")
INSIGHTS = (SAMPLE_FUSION / "memory-insights.md").read_text(encoding="utf-8")
REQUEST = ProviderRequest("Extract insights please", MEMORY, INSIGHTS)
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def openai(server, timeout_s: float = 5.0, key_env: str | None = API_KEY_ENV) -> OpenAIProvider:
    return OpenAIProvider("test-llm", server.base_url, "test-model", key_env, timeout_s)


# -- OpenAI-compatible endpoint -------------------------------------------------------------------


def test_openai_sends_the_chat_completions_request_and_returns_the_content(chat_server, monkeypatch):
    provider = openai(chat_server)
    monkeypatch.setenv(API_KEY_ENV, API_KEY)  # read at call time, not when the provider is built
    steps = []
    reply = provider.complete(REQUEST, progress=lambda pct, msg: steps.append(pct))
    assert reply == GOOD_REPLY
    [req] = chat_server.requests
    assert req.path == "/v1/chat/completions"
    assert req.headers["Authorization"] == f"Bearer {API_KEY}"
    assert req.body["model"] == "test-model" and req.body["temperature"] == 0
    assert [m["role"] for m in req.body["messages"]] == ["system", "user"]
    assert req.body["messages"][1]["content"] == "Extract insights please"
    assert steps[-1] == 100


def test_openai_without_key_env_sends_no_authorization(chat_server):
    openai(chat_server, key_env=None).complete(REQUEST)
    assert "Authorization" not in chat_server.requests[0].headers


def test_openai_missing_key_is_an_auth_error_before_any_request(chat_server, monkeypatch):
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    with pytest.raises(ProviderError) as err:
        openai(chat_server).complete(REQUEST)
    assert err.value.kind == "auth" and API_KEY_ENV in err.value.message
    assert chat_server.requests == []


@pytest.mark.parametrize(("scripted", "kind", "words"), [
    (UNAUTHORIZED, "auth", ["HTTP 401", API_KEY_ENV, "Incorrect API key"]),
    (SERVER_ERROR, "server", ["HTTP 500", "server failed"]),
    (NOT_JSON_BODY, "bad_reply", ["not JSON", "gateway says hi"]),
])
def test_openai_http_failures_have_clear_messages(chat_server, monkeypatch, scripted, kind, words):
    monkeypatch.setenv(API_KEY_ENV, API_KEY)
    chat_server.script(scripted)
    with pytest.raises(ProviderError) as err:
        openai(chat_server).complete(REQUEST)
    assert err.value.kind == kind
    for word in words:
        assert word in err.value.message
    assert API_KEY not in err.value.message


def test_openai_empty_content_is_returned_as_empty(chat_server):
    chat_server.script(EMPTY)
    assert openai(chat_server, key_env=None).complete(REQUEST) == ""


def test_openai_timeout(chat_server):
    chat_server.script(slow(10))
    started = time.monotonic()
    with pytest.raises(ProviderError) as err:
        openai(chat_server, timeout_s=0.4, key_env=None).complete(REQUEST)
    assert err.value.kind == "timeout" and "0.4 s" in err.value.message
    assert time.monotonic() - started < 3


def test_openai_cancel_stops_waiting(chat_server):
    chat_server.script(slow(10))
    started = time.monotonic()
    with pytest.raises(ProviderError) as err:
        openai(chat_server, key_env=None).complete(REQUEST, cancel=lambda: time.monotonic() - started > 0.2)
    assert err.value.kind == "cancelled"
    assert time.monotonic() - started < 2


def test_openai_unreachable_is_a_network_error():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider = OpenAIProvider("gone", f"http://127.0.0.1:{port}/v1", "m", None, 2)
    with pytest.raises(ProviderError) as err:
        provider.complete(REQUEST)
    assert err.value.kind == "network" and f"127.0.0.1:{port}" in err.value.message


def test_openai_wrong_path_is_a_config_error(chat_server):
    provider = OpenAIProvider("t", chat_server.base_url.removesuffix("/v1"), "m", None, 5)
    with pytest.raises(ProviderError) as err:
        provider.complete(REQUEST)
    assert err.value.kind == "config" and "404" in err.value.message


# -- local command ---------------------------------------------------------------------------------


def script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return [sys.executable, str(path)]


def test_command_gets_the_prompt_on_stdin_and_returns_stdout(tmp_path):
    argv = script(tmp_path, """
        import os, sys, pathlib
        prompt = sys.stdin.read()
        pathlib.Path(sys.argv[1]).write_text(f"{len(prompt)} {os.getcwd()}")
        sys.stdout.write('{"summary": "from a script", "insights": []}')
    """) + [str(tmp_path / "seen.txt")]
    big = "x" * 300_000  # larger than a pipe buffer: no deadlock
    reply = CommandProvider("script", argv, 10).complete(ProviderRequest(big, MEMORY, None, tmp_path))
    assert json.loads(reply)["summary"] == "from a script"
    size, cwd = (tmp_path / "seen.txt").read_text().split(" ", 1)
    assert int(size) == len(big)
    assert Path(cwd) != tmp_path and not Path(cwd).exists()  # a fresh temporary folder, removed afterwards


def test_command_failure_reports_status_and_stderr(tmp_path):
    argv = script(tmp_path, """
        import sys
        sys.stdin.read()
        print("model not loaded: out of memory", file=sys.stderr)
        sys.exit(3)
    """)
    with pytest.raises(ProviderError) as err:
        CommandProvider("script", argv, 10).complete(REQUEST)
    assert err.value.kind == "server"
    assert "status 3" in err.value.message and "out of memory" in err.value.message


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
        return state == "Z"
    except (FileNotFoundError, IndexError):
        return True


@pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX here")
@pytest.mark.parametrize("how", ["timeout", "cancel"])
def test_command_timeout_and_cancel_kill_the_whole_group(tmp_path, how):
    argv = script(tmp_path, f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(tmp_path / "child.pid")!r}, "w").write(str(child.pid))
        time.sleep(60)
    """)
    started = time.monotonic()
    cancel = (lambda: (tmp_path / "child.pid").exists()) if how == "cancel" else (lambda: False)
    with pytest.raises(ProviderError) as err:
        CommandProvider("script", argv, 3.0 if how == "timeout" else 30).complete(REQUEST, cancel=cancel)
    assert err.value.kind == ("timeout" if how == "timeout" else "cancelled")
    assert time.monotonic() - started < 10
    deadline = time.monotonic() + 5
    while not (tmp_path / "child.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int((tmp_path / "child.pid").read_text())
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid), "the grandchild survived"


def test_command_not_found_and_bad_output(tmp_path):
    with pytest.raises(ProviderError) as err:
        CommandProvider("x", [str(tmp_path / "no-such-model")], 5).complete(REQUEST)
    assert err.value.kind == "config" and "not found" in err.value.message
    argv = script(tmp_path, "import sys; sys.stdin.read(); sys.stdout.buffer.write(b'\\xff\\xfe')")
    with pytest.raises(ProviderError) as err:
        CommandProvider("x", argv, 5).complete(REQUEST)
    assert err.value.kind == "bad_reply" and "UTF-8" in err.value.message


# -- offline rules ---------------------------------------------------------------------------------


def test_offline_reply_is_extraction_json_by_section():
    reply = OfflineProvider().complete(ProviderRequest("", MEMORY, INSIGHTS, now=NOW))
    result = parse_insight_extraction_response(reply)
    assert "rule-based" in result.summary
    by_category = {}
    for insight in result.insights:
        by_category.setdefault(insight.category, []).append(insight)
    assert set(by_category) == {"pattern", "principle", "convention", "pitfall", "context"}
    assert all(i.source.startswith("memory.md § ") for i in result.insights)
    assert any("SKIP LOCKED" in i.content for i in by_category["principle"])
    assert any("PgBouncer" in i.content for i in by_category["pitfall"])
    texts = " ".join(i.content for i in result.insights)
    assert "TODO for this session" not in texts and "Waiting on review" not in texts


def test_offline_prune_drops_old_dated_entries_and_transient_lines_only():
    memory = MEMORY + "\n<!-- 2026-11-28 -->\nRaised the SSE heartbeat to 20 s after proxy idle timeouts.\n"
    result = parse_insight_extraction_response(
        OfflineProvider(prune_after_days=30).complete(ProviderRequest("", memory, INSIGHTS, now=NOW)))
    pruned = result.pruned_memory
    assert pruned is not None and validate_prune_candidate(pruned).valid
    assert "<!-- 2026-10-14 -->" not in pruned and "<!-- 2026-10-29 -->" not in pruned
    assert "<!-- 2026-11-28 -->\nRaised the SSE heartbeat" in pruned  # recent: kept
    assert "TODO for this session" not in pruned and "Currently mid-way" not in pruned
    assert "probably nothing" not in pruned
    assert "FOR UPDATE SKIP LOCKED" in pruned and "## Context" in pruned
    assert "\n\n\n" not in pruned
    kept = [line for line in memory.splitlines() if line.strip()]
    assert len([line for line in pruned.splitlines() if line.strip()]) == len(kept) - 10


def test_offline_offers_no_prune_when_nothing_is_transient_or_old():
    memory = "# Project Memory\n\n## Architecture\n\n- One queue per tenant.\n\n## Conventions\n\n- Kebab case.\n"
    reply = json.loads(OfflineProvider().complete(ProviderRequest("", memory, None, now=NOW)))
    assert reply["prunedMemory"] is None and "no prune proposed" in reply["summary"]
    assert [(i["category"], i["content"]) for i in reply["insights"]] == [
        ("pattern", "One queue per tenant."), ("convention", "Kebab case.")]


def test_offline_skips_insights_already_known():
    memory = "## Architecture\n- Use leases.\n## Conventions\n- Kebab case.\n## Pitfalls\n- Clock skew.\n"
    existing = "# Memory Insights\n\n## Conventions\n- kebab   CASE. (source: x)\n"
    reply = json.loads(OfflineProvider().complete(ProviderRequest("", memory, existing, now=NOW)))
    assert [i["content"] for i in reply["insights"]] == ["Use leases.", "Clock skew."]


def test_offline_handles_real_fusion_memory_quickly(real_project):
    memory = (real_project / ".fusion" / "memory.md").read_text(encoding="utf-8")
    started = time.monotonic()
    result = parse_insight_extraction_response(OfflineProvider().complete(ProviderRequest("", memory, None)))
    assert time.monotonic() - started < 3
    assert result.insights
    assert result.pruned_memory is None or validate_prune_candidate(result.pruned_memory).valid


# -- user config -----------------------------------------------------------------------------------


def test_user_config_defaults_save_and_reload(user_config_dir):
    config = load_user_config()
    assert list(config.providers) == ["offline"] and config.default_provider == "offline"
    assert config.auto_apply_prune is False
    set_provider("local", {"kind": "openai", "baseUrl": "http://127.0.0.1:1/v1/", "model": "m",
                           "apiKeyEnv": "LOCAL_KEY", "timeoutS": 30})
    set_provider("script", {"kind": "command", "command": ["my-llm", "--json"]})
    set_default_provider("local")
    assert user_config_path() == user_config_dir / "config.json"
    data = json.loads(user_config_path().read_text())
    assert data["defaultProvider"] == "local" and data["autoApplyPrune"] is False
    assert data["providers"]["local"] == {"kind": "openai", "baseUrl": "http://127.0.0.1:1/v1", "model": "m",
                                          "apiKeyEnv": "LOCAL_KEY", "timeoutS": 30.0, "pruneAfterDays": 30}
    assert isinstance(resolve_provider(), OpenAIProvider)
    assert isinstance(resolve_provider("script"), CommandProvider)
    assert isinstance(resolve_provider("offline"), OfflineProvider)
    remove_provider("local")
    assert load_user_config().default_provider == "offline"


@pytest.mark.parametrize(("settings", "words"), [
    ({"kind": "openai", "model": "m"}, "needs baseUrl and model"),
    ({"kind": "openai", "baseUrl": "file:///etc/passwd", "model": "m"}, "not an http"),
    ({"kind": "openai", "baseUrl": "http://x", "model": "m", "apiKeyEnv": "sk-abc"}, "not an environment"),
    ({"kind": "command"}, "needs a command"),
    ({"kind": "command", "command": ["x"], "timeoutS": 0}, "greater than 0"),
    ({"kind": "shell", "command": ["x"]}, "kind"),
])
def test_user_config_refuses_bad_providers(user_config_dir, settings, words):
    with pytest.raises(SettingsError) as err:
        set_provider("bad", settings)
    assert words in str(err.value)
    assert not user_config_path().exists()


def test_user_config_offline_is_built_in_and_broken_files_are_kept(user_config_dir):
    with pytest.raises(SettingsError):
        remove_provider("offline")
    with pytest.raises(SettingsError):
        set_provider("offline", {"kind": "command", "command": ["x"]})
    user_config_dir.mkdir(parents=True, exist_ok=True)
    user_config_path().write_text("{not json", encoding="utf-8")
    with pytest.raises(SettingsError) as err:
        load_user_config()
    assert "not valid JSON" in str(err.value)
    with pytest.raises(ProviderError) as perr:
        resolve_provider()
    assert perr.value.kind == "config"
    assert user_config_path().read_text() == "{not json"


def test_unknown_provider_names_the_configured_ones(user_config_dir):
    with pytest.raises(ProviderError) as err:
        resolve_provider("gpt", UserConfig())
    assert err.value.kind == "config" and "offline" in err.value.message


def test_user_config_dir_defaults_to_platformdirs(monkeypatch):
    monkeypatch.delenv("MEMDESK_CONFIG_DIR", raising=False)
    from platformdirs import user_config_dir as platform_dir

    assert user_config_path() == Path(platform_dir("memdesk", appauthor=False)) / "config.json"


def test_provider_config_reads_snake_case_too():
    cfg = ProviderConfig.model_validate({"kind": "openai", "base_url": "https://h/v1", "model": "m",
                                         "api_key_env": "K", "timeout_s": 9})
    assert cfg.to_json()["baseUrl"] == "https://h/v1" and cfg.timeout_s == 9


def test_provider_protocol_is_satisfied():
    from core.providers import Provider

    for provider in (OfflineProvider(), CommandProvider("c", ["x"]), OpenAIProvider("o", "http://h", "m")):
        assert isinstance(provider, Provider)


def test_offline_prune_gives_a_reason_for_each_removed_line():
    memory = MEMORY + "\n<!-- 2026-11-28 -->\nRaised the SSE heartbeat to 20 s after proxy idle timeouts.\n"
    result = parse_insight_extraction_response(
        OfflineProvider(prune_after_days=30).complete(ProviderRequest("", memory, INSIGHTS, now=NOW)))
    kept = set(result.pruned_memory.splitlines())
    removed = [line for line in memory.splitlines() if line.strip() and line not in kept]
    assert [r.line for r in result.prune_reasons] == removed
    by_line = {r.line: r.reason for r in result.prune_reasons}
    assert by_line["<!-- 2026-10-14 -->"] == "dated entry older than 30 days"
    assert {by_line[line] for line in removed if "TODO for this session" in line} == {"transient"}
    assert set(by_line.values()) == {"dated entry older than 30 days", "transient"}


def test_offline_without_a_prune_gives_no_reasons():
    memory = "# Project Memory\n\n## Architecture\n\n- One queue per tenant.\n\n## Conventions\n\n- Kebab case.\n"
    reply = json.loads(OfflineProvider().complete(ProviderRequest("", memory, None, now=NOW)))
    assert "pruneReasons" not in reply
