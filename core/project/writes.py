"""The project's writes (:class:`ProjectWrites`): replacing, creating and appending documents, every one
through the write pipeline (:mod:`core.storage.pipeline`) and so through the firewall's screen."""

from __future__ import annotations

from datetime import UTC, date, datetime

from core.documents.layout import SEED_MEMORY
from core.errors import MemoryBackendError
from core.logs import get_logger
from core.project.reads import ProjectReads
from core.project.results import AppendLayer, AppendOutcome, Changes, MemoryDisabledError, WriteResult
from core.storage import fileio, pipeline
from core.storage.pipeline import Writer

log = get_logger("core.project.model")  # the model's logger, as before the split


class ProjectWrites(ProjectReads):
    """Writing, creating and appending memory documents."""

    # -- writing -----------------------------------------------------------------------------------
    def write(self, path: str | None, content: str, *, expected_hash: str | None = None,
              source: str = "write", author: str | None = None, writer: Writer | None = None) -> WriteResult:
        """Replace a document through the write pipeline (:mod:`core.storage.pipeline`; previous version kept in history first).

        ``status`` is ``written``, or ``held`` (``inbox_id``) when the screen holds it; a refusal raises
        :class:`core.storage.pipeline.WriteRefused`.
        """
        if not isinstance(content, str):
            raise MemoryBackendError(f"content must be a string, not {type(content).__name__}",
                                     "INVALID_CONFIG", self.backend.id)
        rel = self.resolve_path(path)
        self.backend.require_writable()  # even a write that changes nothing: the answer must not depend on it
        data = self._encoded(content, f"the new text of {rel}")
        author = author if author is not None else self.default_author  # the app's or the CLI's user
        who = writer or pipeline.writer_for(source, author)
        done = pipeline.replace(self, rel, content, writer=who, source=source, expected_hash=expected_hash,
                                author=author, data=data)
        flags = tuple(f.to_json() for f in done.flags)
        if not done.changed:
            return WriteResult(rel, False, len(data), data=data, status=done.status, flags=flags,
                               inbox_id=done.inbox_id)
        before = done.before
        changes = Changes(documents=frozenset({rel}), history=before is not None,
                          insights=rel == self.insights_path)
        warnings = tuple(self._warnings(rel, before or "", content)) + done.warnings
        return WriteResult(rel, True, len(data), changes, warnings, data, status=done.status, flags=flags)

    def write_insights(self, content: str, *, expected_hash: str | None = None, source: str = "insights-merge",
                       author: str | None = None, writer: Writer | None = None) -> WriteResult:
        """Replace the insights document (at this layout's path)."""
        return self.write(self.insights_path, content, expected_hash=expected_hash, source=source, author=author,
                          writer=writer)

    def _check_text(self, text: str, what: str) -> None:
        """Refuse (``INVALID_CONFIG``) text that cannot be a UTF-8 memory file, before any I/O."""
        self._encoded(text, what)

    def _encoded(self, text: str, what: str) -> bytes:
        """``text`` as UTF-8; ``INVALID_CONFIG`` (before any I/O) when it cannot be a UTF-8 memory file."""
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as exc:  # lone surrogates: a non-UTF-8 argument decoded by Python
            raise MemoryBackendError(
                f"{what} holds a character that is not valid UTF-8 (at character {exc.start}; a command-line "
                "argument in another encoding?); nothing was written", "INVALID_CONFIG", self.backend.id) from exc

    def _check_creatable(self, rel: str, current: str | bytes | None) -> None:
        """Refuse creating a file of the other layout: the legacy ``.fusion/memory.md`` of a layered project."""
        if current is None and self.layout.layered and rel == SEED_MEMORY:
            raise MemoryBackendError(
                f"{SEED_MEMORY} is the seed layout's file and this project is layered: Fusion would not read it, "
                f"so memdesk does not create it (write {self.memory_path} instead); nothing was written",
                "INVALID_CONFIG", self.backend.id)

    def create_document(self, path: str | None = None) -> Changes:
        """Create a missing document with its layout's exact scaffold (never overwrites); what changed."""
        rel = self.resolve_path(path)
        self.backend.require_writable()
        if not self.exists(rel):
            self._check_creatable(rel, None)
        scaffold = self.layout.scaffold_for(rel)
        if scaffold is None:
            scaffold = ""
        if self.exists(rel):
            return Changes()
        done = pipeline.append(self, rel, scaffold, lambda current: None if current else scaffold,
                               writer=pipeline.MEMDESK, source="create")
        return Changes(documents=frozenset({rel})) if done.added else Changes()

    # -- appending ---------------------------------------------------------------------------------
    def append_target(self, *, layer: AppendLayer | None = None, agent: str | None = None,
                      path: str | None = None, today: date | None = None) -> str:
        """The document an append goes to: ``path``, else by layout, layer and agent (design §2a)."""
        if path is not None:
            if layer is not None or agent is not None:
                raise MemoryBackendError("give either --file or --layer/--agent, not both", "INVALID_CONFIG",
                                         self.backend.id)
            rel = self.resolve_path(path)
            self._check_append_target(rel)
            return rel
        if not self.layout.layered:
            if layer == "daily" or agent is not None:
                raise MemoryBackendError(
                    "this project is in the seed layout (.fusion/memory.md): it has no daily notes or "
                    "per-agent memory; append without --layer daily/--agent", "INVALID_CONFIG", self.backend.id)
            return self.memory_path
        day = today or datetime.now(UTC).date()
        if (layer or "daily") == "daily":
            return self.layout.daily_path(day, agent)
        return self.layout.long_term_path(agent)

    def _check_append_target(self, rel: str) -> None:
        """Entries go to memory documents only: not to insights (merged by review), the archive or the legacy file."""
        why = None
        if rel == self.insights_path:
            why = "insights are added by extraction and review (memdesk insights), never appended as raw text"
        elif rel == self.layout.archive_path:
            why = "the archive only receives entries memdesk rotates out of the working memory"
        elif self.layout.layered and rel == SEED_MEMORY:
            why = "Fusion does not read the legacy file in a layered project; append to MEMORY.md or a daily note " \
                  "(and move the legacy file with `memdesk migrate`)"
        if why:
            raise MemoryBackendError(f"cannot append to {rel}: {why}; nothing was written", "INVALID_CONFIG",
                                     self.backend.id)

    def append(self, text: str | None, *, layer: AppendLayer | None = None, agent: str | None = None,
               path: str | None = None, author: str | None = None, source: str = "append",
               force: bool = False, today: date | None = None, max_lines: int | None = None,
               writer: Writer | None = None) -> AppendOutcome:
        """Append an entry with seed 002's guards: empty → no I/O at all; already present → no write.

        Seed layout: ``\\n\\n<!-- YYYY-MM-DD -->\\n<content>`` and batched archive rotation. Layered
        layout: Fusion's ``\\n<content>\\n``, today's daily note created with its scaffold when missing.
        With memory switched off the append is refused unless ``force``. History's thread is woken for the
        append's event once the append is done (:func:`core.storage.history.jobs.hold_here`; a server's answer
        extends the hold until it is sent), not while the append still runs beside it.
        """
        from core.storage.history import (
            worker as history_worker,  # not core.storage.history.versions: an append needs no versions
        )

        with history_worker.hold_here():
            return self._append(text, layer=layer, agent=agent, path=path, author=author, source=source,
                                force=force, today=today, max_lines=max_lines, writer=writer)

    def _append(self, text: str | None, *, layer: AppendLayer | None, agent: str | None, path: str | None,
                author: str | None, source: str, force: bool, today: date | None, max_lines: int | None,
                writer: Writer | None) -> AppendOutcome:
        from core.project import appending as entries
        from core.storage.history import worker as history_worker

        trimmed = (text or "").strip()
        if not trimmed:
            return AppendOutcome("skipped_empty", None, None, entries.tool_message_for("skipped_empty", None))
        if not self.settings.memory_enabled and not force:
            raise MemoryDisabledError(
                "memory is switched off for this project (memoryEnabled is false); nothing was written. "
                "Switch it on, or pass --force to write anyway", "READ_ONLY", self.backend.id)
        self._check_text(trimmed, "the entry")
        if "\x00" in trimmed:
            raise MemoryBackendError(
                f"the entry holds a NUL character (at character {trimmed.index(chr(0))}); memory files are text, so "
                "nothing was written", "INVALID_CONFIG", self.backend.id)
        rel = self.append_target(layer=layer, agent=agent, path=path, today=today)
        self.backend.require_writable()
        # An entry that could never fit is refused before any lock or folder is made.
        fileio.check_size(trimmed.encode("utf-8"), f"{rel} with this entry", self.backend.id)
        layered_format = self.layout.layered
        # Seed 002 creates a missing file with the entry alone; Fusion's layered files start from their scaffold.
        scaffold = (self.layout.scaffold_for(rel) or "") if layered_format else ""

        def build(current: str) -> str | None:
            if trimmed in current:
                return None
            entry = f"\n{trimmed}\n" if layered_format else entries.format_entry(trimmed, today)
            history_worker.open_soon(self.root)  # the entry will be written: its event follows
            return (scaffold if not current else "") + entry

        author = author if author is not None else self.default_author  # the app's or the CLI's user
        who = writer or pipeline.writer_for(source, author)
        done = pipeline.append(self, rel, trimmed, build, writer=who, source=source, author=author,
                               event=trimmed)  # the event (who wrote it) is recorded by the pipeline
        before = done.before or ""
        added = done.added
        file_path = self.root / rel
        flags = tuple(f.to_json() for f in done.flags)
        if done.status == "held":
            return AppendOutcome("held", file_path, rel, f"Memory entry held for review ({done.inbox_id}) — {rel}",
                                 flags=flags, inbox_id=done.inbox_id)
        if not added:
            return AppendOutcome("skipped_duplicate", file_path, rel,
                                 entries.tool_message_for("skipped_duplicate", file_path), flags=flags)
        archived = 0
        after = done.after if done.after is not None else before + added  # a MiB copied once, not twice
        warnings: list[str] = []
        if not layered_format and rel == self.layout.memory_path and self.backend.file_canonical:
            try:
                archived = entries.rotate_if_needed(self, rel, max_lines, seen=after)
            except MemoryBackendError as exc:  # the entry is written: report that, and why rotation waits
                log.warning("archive rotation of %s skipped: %s", rel, exc)
                warnings.append(f"the entry was written, but old entries were not moved to the archive: {exc}")
        changes = Changes(documents=frozenset({rel} | ({self.layout.archive_path} if archived else set())),
                          history=bool(archived))
        warnings += self._warnings(rel, before, after)
        warnings += done.warnings
        if agent is not None and not before and layered_format:  # a new agent file: its folder as Fusion makes it
            from core.project.agent_files import complete_agent_folder

            made, more = complete_agent_folder(self, agent, rel, today)
            changes, warnings = changes | made, warnings + more
        return AppendOutcome("written", file_path, rel, entries.tool_message_for("written", file_path), archived,
                             changes, tuple(warnings), flags)

    def _warnings(self, rel: str, before: str | bytes, after: str) -> list[str]:
        from core.budget import project_append_warnings  # here: only a write needs the budget

        try:
            return list(project_append_warnings(self, rel, before, after))
        except Exception as exc:
            log.warning("load-budget check failed for %s: %s", rel, exc)
            return []

