"""Issue 23: the MCP Inspector's CLI (``@modelcontextprotocol/inspector`` from npm) against ``memdesk mcp`` over
stdio and ``memdesk serve`` over streamable HTTP: it lists the annotated tools, gets a window, and reads a
refusal as a tool error it accepts (its schema checks run on error results too).

The Inspector is not a Python dependency: the test runs where it is installed (``MEMDESK_MCP_INSPECTOR`` names
its ``mcp-inspector`` command, or one on PATH; ``npm install @modelcontextprotocol/inspector``) and is skipped
elsewhere.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.core.server.conftest import cli_env

INSPECTOR = os.environ.get("MEMDESK_MCP_INSPECTOR") or shutil.which("mcp-inspector")
pytestmark = pytest.mark.skipif(not INSPECTOR, reason="the MCP Inspector CLI is not installed (npm)")


def _inspect(target: list[str], *args: str, env: dict[str, str]) -> Any:
    out = subprocess.run([str(INSPECTOR), "--cli", *target, *args], capture_output=True, text=True, env=env,
                         timeout=180)
    got = json.loads(out.stdout)
    # The Inspector exits 1 on a tool error, having printed it whole.
    assert out.returncode == 0 or got.get("isError") is True, out.stdout + out.stderr
    return got


def test_the_inspector_cli_over_stdio(layered_project: Path, user_config_dir: Path):
    env = cli_env(user_config_dir)
    stdio = [sys.executable, "-m", "core.cli", "mcp", "--project", str(layered_project)]
    tools = {t["name"]: t for t in _inspect(stdio, "--method", "tools/list", env=env)["tools"]}
    assert {"memory_get", "memory_edit", "memory_remove_entry", "memory_recent", "memory_history",
            "memory_projects"} <= set(tools)
    for t in tools.values():
        hints = t.get("annotations") or {}
        assert "readOnlyHint" in hints and hints.get("openWorldHint") is False, t["name"]
    got = _inspect(stdio, "--method", "tools/call", "--tool-name", "memory_get", "--tool-arg", "lineCount=3", env=env)
    assert got["isError"] is False and got["structuredContent"]["endLine"] == 3
    assert got["structuredContent"]["nextStartLine"] == 4
    empty = _inspect(stdio, "--method", "tools/call", "--tool-name", "memory_append", "--tool-arg", "content= ",
                     env=env)
    assert empty["isError"] is True and empty["content"][0]["text"].startswith("EMPTY_ENTRY: ")
    assert empty["_meta"]["memdesk/error"]["next"].startswith("memory_append")


def test_the_inspector_cli_over_http(serve, tokens, sample_project: Path, user_config_dir: Path):
    token = tokens.create("inspector")
    srv = serve(sample_project)
    env = cli_env(user_config_dir)
    target = [f"{srv.url}/mcp", "--transport", "http", "--header", f"Authorization: Bearer {token}"]
    tools = _inspect(target, "--method", "tools/list", env=env)["tools"]
    assert "memory_append" in {t["name"] for t in tools}
    wrote = _inspect(target, "--method", "tools/call", "--tool-name", "memory_append", "--tool-arg",
                     "content=Written by the MCP Inspector.", env=env)
    assert wrote["structuredContent"]["status"] == "written"
    assert (sample_project / ".fusion/memory.md").read_text(encoding="utf-8").endswith("Written by the MCP Inspector.")
