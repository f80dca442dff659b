"""The shipped consumers: what each agent loads of a memory document, with the source of each limit.

This table is the documentation (``docs/budget.md`` renders it; keep the two in step). Limits were
checked against the consumers' public documentation and, where the documentation is loose, their
source code; each rule's ``source`` says which. User-defined consumers from the user's config are
added by :func:`core.budget.registry.all_consumers`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.budget.plain import PlainConsumer as Consumer
from core.budget.plain import PlainRule as LoadRule

if TYPE_CHECKING:
    from core.documents.load_rules import Consumer as ConsumerModel

FUSION = Consumer(id="fusion", name="Fusion", builtin=True, rules=(
    LoadRule(
        what="layered memory through the agent's memory_get tool: at most 400 lines a read (120 unless asked)",
        applies_to=(".fusion/memory/*.md", ".fusion/agent-memory/*/*.md"), read_window=400,
        source="Fusion packages/core/src/memory-backend.ts: MAX_MEMORY_GET_LINES = 400 "
               "(DEFAULT_MEMORY_GET_LINES = 120); lines counted with split('\\n')"),
    LoadRule(
        what="the working memory, whole: prompts name the file and agents read it with their own tools",
        applies_to=("**",),
        source="seed 000 (memory instructions name .fusion/memory.md; no line cap) and "
               "Fusion packages/core/src/memory/project-memory.ts"),
))

CLAUDE_CODE = Consumer(id="claude-code", name="Claude Code", builtin=True, rules=(
    LoadRule(
        what="MEMORY.md at the start of every session: the first 200 lines or 25 KB, whichever comes first",
        applies_to=("**/MEMORY.md",), lines=200, utf16=25_000, trim=True, whole_lines=True,
        source="docs.claude.com/en/docs/claude-code/memory (Auto memory: 'The first 200 lines of MEMORY.md, "
               "or the first 25KB, whichever comes first'); how: memdir.ts truncateEntrypointContent as quoted "
               "in public analyses of Claude Code's source (trim, 200 lines, then the last newline before "
               "MAX_ENTRYPOINT_BYTES = 25_000 of the JavaScript string length)"),
))

CODEX = Consumer(id="codex", name="Codex", builtin=True, rules=(
    LoadRule(
        what="AGENTS.md files, concatenated, up to project_doc_max_bytes (32 KiB by default)",
        applies_to=("**/AGENTS.md", "**/AGENTS.override.md"), bytes=32 * 1024,
        source="developers.openai.com/codex/guides/agents-md and codex-rs/core/src/project_doc.rs: "
               "project_doc_max_bytes = 32 KiB, content truncated at the byte budget"),
    LoadRule(
        what="memories/memory_summary.md in the developer instructions: 2,500 tokens, head and tail kept",
        applies_to=("**/memory_summary.md",), tokens=2_500, load="head_tail", trim=True,
        source="codex-rs/ext/memories/src/lib.rs: MEMORY_TOOL_DEVELOPER_INSTRUCTIONS_SUMMARY_TOKEN_LIMIT = "
               "2_500; truncate_middle_with_token_budget keeps half from each end, 4 bytes a token"),
))

GEMINI_CLI = Consumer(id="gemini-cli", name="Gemini CLI", builtin=True, rules=(
    LoadRule(
        what="GEMINI.md context files, whole, with every prompt",
        applies_to=("**/GEMINI.md",),
        source="geminicli.com/docs/cli/gemini-md: context files are concatenated and sent with every "
               "prompt (no length limit)"),
    LoadRule(
        what="other files through read_file: 2,000 lines a read",
        applies_to=("**",), read_window=2_000,
        source="gemini-cli packages/core/src/utils/fileUtils.ts: DEFAULT_MAX_LINES_TEXT_FILE = 2000 "
               "(lines longer than 2,000 characters are shortened too)"),
))

WINDSURF = Consumer(id="windsurf", name="Windsurf", builtin=True, rules=(
    LoadRule(
        what="rule files: 12,000 characters each, the rest truncated",
        applies_to=(".windsurfrules", "**/.windsurf/rules/*.md", "**/global_rules.md"), chars=12_000,
        source="12,000 characters per workspace rule file, as current Windsurf guides state; the copy of "
               "docs.windsurf.com/windsurf/cascade/memories seen here says 6,000 per file and 12,000 for "
               "global and workspace rules together (override with a user rule if yours is older)"),
))

#: The shipped consumers as plain data (an append's budget check reads them without pydantic).
PLAIN_CONSUMERS: tuple[Consumer, ...] = (FUSION, CLAUDE_CODE, CODEX, GEMINI_CLI, WINDSURF)
DEFAULT_CONSUMER = FUSION.id
_models: tuple[ConsumerModel, ...] | None = None


def __getattr__(name: str) -> Any:
    # BUILTIN_CONSUMERS: the same table validated into Consumer models, made (pydantic imported) on first use.
    global _models
    if name != "BUILTIN_CONSUMERS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _models is None:
        from core.documents.load_rules import Consumer as Model

        _models = tuple(Model.model_validate(c.data()) for c in PLAIN_CONSUMERS)
    return _models
