"""``memory_get`` takes a fractional ``startLine``/``lineCount`` as Fusion's ``fn_memory_get`` takes it: floored.

Read from Runfusion/Fusion (never copied): ``packages/core/src/memory-backend.ts`` at
b1f6740b5198d0e7cea9a6555c9ee9414e0ccb3f, ``getMemoryFile``: ``startLine = max(1, floor(startLine ?? 1))``,
``lineCount = min(max(1, floor(lineCount ?? 120)), 400)``; ``packages/engine/src/agent-tools.ts`` at
51870ed27ba844cd6c0016f25bca9ac56955e8d5, ``memoryGetParams``: both ``Type.Number``. memdesk refused ``2.5``
with ``INVALID_ARGUMENT`` (verify7 row 1.6). What is not a finite JSON number stays a one-line refusal
(:mod:`core.server.line_args` says why for each). Real processes only: ``memdesk mcp`` over stdio and
``memdesk serve`` over streamable HTTP, each through the official ``mcp`` SDK client; the read log records
the lines actually served (the floored ones).
"""

from __future__ import annotations

import json
import math
import subprocess
import time
from pathlib import Path
from typing import Any

from mcp.client import ClientSession

from core.storage import readlog
from tests.core.server.conftest import REPO, cli_env, mcp_command, serve_process
from tests.core.server.test_server_mcp import _text, run_http, run_stdio

DOC = ".fusion/memory.md"

# (startLine, lineCount) as a client sends them; None: left out.
FRACTIONS: list[tuple[float | None, float | None]] = [
    (2.5, None), (None, 2.5), (2.5, 3.99), (0.5, 0.5), (-3.7, 3.2), (9.999999, 1.5), (1290.9, 400.99),
    (None, 400.7), (None, 0.999), (None, -0.5), (2.0, 3.0), (1e-300, 2.5),
]


def _fusion_window(text: str, start: float | None, count: float | None) -> dict[str, Any]:
    """Fusion's ``getMemoryFile`` window, restated (``Math.floor`` as ``math.floor``)."""
    lines = text.split("\n")
    first = max(1, math.floor(start if start is not None else 1))
    n = min(max(1, math.floor(count if count is not None else 120)), 400)
    begin = min(first - 1, len(lines))
    end = min(begin + n, len(lines))
    return {"content": "\n".join(lines[begin:end]), "startLine": first, "endLine": end, "totalLines": len(lines)}


def _args(start: float | None, count: float | None) -> dict[str, Any]:
    return {k: v for k, v in (("startLine", start), ("lineCount", count)) if v is not None}


def _ask_all(s: ClientSession) -> Any:
    async def go() -> list[Any]:
        return [await s.call_tool("memory_get", _args(start, count)) for start, count in FRACTIONS]
    return go()


def _check_answers(disk: str, got: list[Any]) -> None:
    for (start, count), res in zip(FRACTIONS, got, strict=True):
        assert not res.is_error, (start, count, _text(res))
        sc = res.structured_content
        want = _fusion_window(disk, start, count)
        assert {k: sc[k] for k in want} == want, (start, count)
        assert sc["nextStartLine"] == (sc["endLine"] + 1 if sc["endLine"] < sc["totalLines"] else None)


def _logged(root: Path, via: str, n: int) -> list[readlog.ReadEvent]:
    """The ``n`` reads ``via`` recorded for ``root``, oldest first (a server's writer may still be batching)."""
    deadline = time.monotonic() + 60
    while True:
        rows = [e for e in readlog.query(root=root) if e.via == via]
        if len(rows) >= n or time.monotonic() > deadline:
            return sorted(rows, key=lambda e: e.id or 0)
        time.sleep(0.2)


def _check_log(rows: list[readlog.ReadEvent], disk: str) -> None:
    """Each read is on record with the lines it served: floored, never the fraction asked."""
    assert len(rows) == len(FRACTIONS)
    for (start, count), e in zip(FRACTIONS, rows, strict=True):
        want = _fusion_window(disk, start, count)
        assert (e.path, e.start_line, e.end_line, e.total_lines) == (DOC, want["startLine"], want["endLine"],
                                                                      want["totalLines"]), (start, count)
        assert type(e.start_line) is int and type(e.end_line) is int


def test_fractions_are_floored_over_stdio_and_logged_as_served(real_project: Path, user_config_dir: Path):
    disk = (real_project / DOC).read_text(encoding="utf-8")
    got = run_stdio(real_project, user_config_dir, _ask_all, client="fraction-agent")
    _check_answers(disk, got)
    # 2.5 reads from line 2, a count of 3.99 is three lines, 0.5 is one: as Fusion, not a refusal.
    assert got[2].structured_content["content"] == "\n".join(disk.split("\n")[1:4])
    assert got[3].structured_content["content"] == disk.split("\n")[0]
    _check_log(_logged(real_project, "mcp", len(FRACTIONS)), disk)


def test_fractions_are_floored_over_http_by_memdesk_serve(real_project: Path, user_config_dir: Path, tokens):
    token = tokens.create("fraction-http", scope="read")
    disk = (real_project / DOC).read_text(encoding="utf-8")
    server, url = serve_process(real_project, cli_env(user_config_dir))
    try:
        got = run_http(url, token, _ask_all, client="fraction-http-agent")
        _check_answers(disk, got)
        rows = _logged(real_project, "mcp-http", len(FRACTIONS))
    finally:
        server.terminate()
        server.wait(30)
    _check_log(rows, disk)
    assert {(e.client, e.token) for e in rows} == {("fraction-http-agent", "fraction-http")}


NOT_NUMBERS: list[tuple[str, Any, str]] = [
    ("startLine", "abc", "not 'abc'"), ("lineCount", "", "not ''"), ("startLine", "1_000", "not '1_000'"),
    ("lineCount", "0x10", "not '0x10'"), ("startLine", [2], "not a list"), ("lineCount", {"n": 2}, "not an object"),
]


def _refusals(s: ClientSession) -> Any:
    async def go() -> list[Any]:
        return [await s.call_tool("memory_get", {name: value}) for name, value, _ in NOT_NUMBERS]
    return go()


def _check_refused(got: list[Any]) -> None:
    for (name, value, why), res in zip(NOT_NUMBERS, got, strict=True):
        text = _text(res)
        assert res.is_error, (name, value, res.structured_content)
        assert text == (f"INVALID_ARGUMENT: {name}: input should be a number (a line number or count), {why}; "
                        "nothing was done. Next: memory_get with the argument fixed."), (name, value)
        assert res.meta["memdesk/error"]["code"] == "INVALID_ARGUMENT"


def test_what_is_not_a_number_is_refused_in_one_line_on_both_doors(real_project: Path, user_config_dir: Path,
                                                                    tokens):
    """What neither is a number nor spells one (a word, an empty string, Python's ``1_000``, hexadecimal, a list,
    an object) is refused in one line. Nothing refused is logged."""
    _check_refused(run_stdio(real_project, user_config_dir, _refusals, client="quoting-agent"))
    token = tokens.create("quoting-http", scope="read")
    server, url = serve_process(real_project, cli_env(user_config_dir))
    try:
        _check_refused(run_http(url, token, _refusals, client="quoting-http-agent"))
        # A real read after the refusals: once it is on record, any refused call would be too.
        run_http(url, token, lambda s: s.call_tool("memory_get", {"startLine": 7.5, "lineCount": 1.5}))
        rows = _logged(real_project, "mcp-http", 1)
    finally:
        server.terminate()
        server.wait(30)
    assert [(e.start_line, e.end_line) for e in rows] == [(7, 7)]
    assert [e for e in readlog.query(root=real_project) if e.via == "mcp"] == []


def test_nan_and_infinities_are_refused_null_is_the_default(real_project: Path, user_config_dir: Path):
    """NaN and Infinity are no JSON (RFC 8259), but Python's parser reads the literals and ``1e400`` overflows
    to infinity: Fusion would answer ``startLine: null`` for them, memdesk refuses each in one line. ``null``
    is the argument left out (Fusion's ``?? 1``): line 1, 120 lines. Raw JSON-RPC lines over stdio, as the
    SDK client writes NaN as ``null``."""
    calls = ['"startLine": NaN', '"lineCount": NaN', '"startLine": Infinity', '"lineCount": -Infinity',
             '"startLine": 1e400', '"lineCount": 1e400', '"startLine": null, "lineCount": null']
    proc = subprocess.Popen(mcp_command(real_project), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=cli_env(user_config_dir), cwd=REPO)
    assert proc.stdin is not None and proc.stdout is not None
    answers = []
    try:
        def send(line: str) -> None:
            assert proc.stdin is not None
            proc.stdin.write(line + "\n")
            proc.stdin.flush()

        send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw-json", "version": "1"}}}))
        assert json.loads(proc.stdout.readline())["id"] == 0
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for i, args in enumerate(calls, 1):
            send(f'{{"jsonrpc": "2.0", "id": {i}, "method": "tools/call", "params": {{"name": "memory_get", '
                 f'"arguments": {{{args}}}}}}}')
            answers.append(json.loads(proc.stdout.readline())["result"])
    finally:
        proc.stdin.close()
        proc.wait(30)
    *refused, null = answers
    for args, res in zip(calls, refused, strict=False):
        name = args.split('"')[1]
        assert res["isError"] is True, args
        assert res["content"][0]["text"] == (f"INVALID_ARGUMENT: {name}: input should be a finite number; nothing "
                                             "was done. Next: memory_get with the argument fixed."), args
    disk = (real_project / DOC).read_text(encoding="utf-8")
    sc = null["structuredContent"]
    assert not null.get("isError") and (sc["startLine"], sc["endLine"], sc["content"]) == (
        1, 120, "\n".join(disk.split("\n")[:120]))
    # The one read served is the one on record.
    assert [(e.start_line, e.end_line, e.client) for e in readlog.query(root=real_project)] == [(1, 120, "raw-json")]


def test_huge_numbers_read_past_the_end_or_400_lines_as_fusions(real_project: Path, user_config_dir: Path):
    """Fusion takes any finite number: a start far past the end is an empty window that says where it started,
    a count of 1e308 is 400 lines. memdesk too (the read log clamps what fits no SQLite integer)."""
    disk = (real_project / DOC).read_text(encoding="utf-8")
    total = len(disk.split("\n"))

    async def body(s: ClientSession) -> list[Any]:
        return [(await s.call_tool("memory_get", a)).structured_content
                for a in ({"startLine": 1e308}, {"lineCount": 1e308}, {"startLine": 10**30, "lineCount": -1e308})]

    past, most, far = run_stdio(real_project, user_config_dir, body)
    assert (past["content"], past["startLine"], past["endLine"], past["nextStartLine"]) == ("", math.floor(1e308),
                                                                                            total, None)
    assert (most["startLine"], most["endLine"], most["nextStartLine"]) == (1, 400, 401)
    assert (far["content"], far["startLine"], far["endLine"]) == ("", 10**30, total)


QUOTED: list[tuple[dict[str, Any], tuple[int, int]]] = [
    ({"startLine": "3", "lineCount": "2"}, (3, 4)), ({"startLine": " 2.5 ", "lineCount": "1.9"}, (2, 2)),
    ({"startLine": True, "lineCount": True}, (1, 1)), ({"startLine": "7", "lineCount": False}, (7, 7)),
    ({"startLine": "1e1", "lineCount": "+2"}, (10, 11)),
]


def test_quoted_numbers_and_booleans_are_taken_as_fusions_agent_tools_take_them(real_project: Path,
                                                                               user_config_dir: Path):
    """Fusion's agent tools coerce argument types before ``getMemoryFile`` (``pi-ai``'s AJV, ``coerceTypes``):
    a model that quotes its line number (``"3"``) reads from line 3, ``true`` is 1 and ``false`` 0 (a count of
    0 is one line), and the read log has the lines served."""
    async def ask(s: ClientSession) -> list[Any]:
        return [await s.call_tool("memory_get", args) for args, _ in QUOTED]

    lines = (real_project / ".fusion/memory.md").read_text(encoding="utf-8").split("\n")
    got = run_stdio(real_project, user_config_dir, ask, client="quoting-agent")
    for (args, (first, last)), res in zip(QUOTED, got, strict=True):
        assert not res.is_error, (args, _text(res))
        data = res.structured_content
        assert (data["startLine"], data["endLine"]) == (first, last), args
        assert data["content"] == "\n".join(lines[first - 1:last]), args
    rows = _logged(real_project, "mcp", len(QUOTED))
    assert sorted((e.start_line, e.end_line) for e in rows) == sorted(span for _, span in QUOTED)
