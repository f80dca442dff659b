"""Issue 23: ``memory_get`` windows a document exactly as Fusion's ``fn_memory_get`` does, through the official
``mcp`` SDK against ``memdesk mcp`` (a real subprocess over stdio) on the real 1,293-line Fusion memory.

Read from Runfusion/Fusion (never copied): ``packages/core/src/memory-backend.ts`` at
b1f6740b5198d0e7cea9a6555c9ee9414e0ccb3f, ``getMemoryFile``: the lines are ``content.split("\\n")``,
``startLine = max(1, floor(startLine ?? 1))``, ``lineCount = min(max(1, floor(lineCount ?? 120)), 400)``,
the window is ``lines.slice(startLine - 1, startLine - 1 + lineCount).join("\\n")`` cut at the end, and the
answer is ``{path, content, startLine, endLine, totalLines, backend}``; ``packages/engine/src/agent-tools.ts``
(``memoryGetParams``: ``startLine`` and ``lineCount`` are plain numbers, no minimum or maximum). So a
count over 400 reads 400 lines and a count or start below 1 reads from 1, one line: not refusals.
memdesk adds ``nextStartLine`` and the whole document's ``hash``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.client import ClientSession

from tests.core.server.test_server_mcp import _text, run_stdio


def _fusion_window(text: str, start: int | None, count: int | None) -> dict[str, Any]:
    """Fusion's ``getMemoryFile`` window, restated."""
    lines = text.split("\n")
    first = max(1, start if start is not None else 1)
    n = min(max(1, count if count is not None else 120), 400)
    begin = min(first - 1, len(lines))
    end = min(begin + n, len(lines))
    return {"content": "\n".join(lines[begin:end]), "startLine": first, "endLine": end, "totalLines": len(lines)}


def test_memory_get_windows_as_fusions_fn_memory_get(real_project: Path, user_config_dir: Path):
    disk = (real_project / ".fusion" / "memory.md").read_text(encoding="utf-8")
    asks: list[tuple[int | None, int | None]] = [
        (None, None), (None, 1000), (None, 400), (None, 0), (None, -5), (0, 3), (-2, None), (1200, None),
        (1290, 400), (1294, None), (5000, 10),
    ]

    async def body(s: ClientSession) -> list[Any]:
        out = []
        for start, count in asks:
            args = {k: v for k, v in (("startLine", start), ("lineCount", count)) if v is not None}
            out.append(await s.call_tool("memory_get", args))
        out.append(await s.call_tool("memory_get", {"lineCount": "many"}))
        return out

    *got, bad = run_stdio(real_project, user_config_dir, body)
    for (start, count), res in zip(asks, got, strict=True):
        assert not res.is_error, (start, count, _text(res))
        sc = res.structured_content
        want = _fusion_window(disk, start, count)
        assert {k: sc[k] for k in want} == want, (start, count)
        assert sc["path"] == ".fusion/memory.md" and sc["backend"] == "file"
        assert sc["nextStartLine"] == (sc["endLine"] + 1 if sc["endLine"] < sc["totalLines"] else None)
    # Past 400 is 400 lines, and the next window follows on.
    assert got[1].structured_content["endLine"] == 400 and got[1].structured_content["nextStartLine"] == 401
    # A value that is not a number is still a refusal in memdesk's one-line form, no validator text or links.
    assert bad.is_error and _text(bad).startswith("INVALID_ARGUMENT: lineCount")
    assert "pydantic" not in _text(bad) and "http" not in _text(bad) and "\n" not in _text(bad)


def test_an_argument_a_tool_does_not_have_is_refused_not_ignored(layered_project: Path, user_config_dir: Path):
    """An agent that passes ``path`` to memory_append (it has none) or ``startline`` to memory_get meant
    something: the call is refused in one line naming the argument and the tool's arguments, and nothing is
    written (the SDK's own argument model would drop it and append to today's note instead)."""
    def documents() -> dict[Path, bytes]:  # memdesk's own state under .fusion/memdesk/ aside
        return {p: p.read_bytes() for p in (layered_project / ".fusion").rglob("*")
                if p.is_file() and "memdesk" not in p.parts}

    before = documents()

    async def body(s: ClientSession) -> list[Any]:
        return [await s.call_tool("memory_append", {"content": "meant for one file", "path": "MEMORY.md"}),
                await s.call_tool("memory_get", {"startline": 50})]

    append, get = run_stdio(layered_project, user_config_dir, body)
    assert append.is_error and _text(append) == (
        "INVALID_ARGUMENT: memory_append has no argument 'path' (it takes content, layer, agent, project); "
        "nothing was done. Next: memory_append with the argument fixed.")
    assert get.is_error and _text(get).startswith("INVALID_ARGUMENT: memory_get has no argument 'startline' (it "
                                                  "takes path, startLine, lineCount, project)")
    assert get.meta["memdesk/error"]["code"] == "INVALID_ARGUMENT"
    assert documents() == before
