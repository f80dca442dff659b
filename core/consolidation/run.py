"""Running a dream or a compaction: read the documents, ask the provider, stage one proposal.

Nothing is written to memory by a run: it reads every document it needs, asks the provider (the offline
rules, or a model given Fusion's prompt), and stores one proposal over every document the run would
touch (:mod:`core.consolidation.stage`). A cancelled run, a failing provider or a refused reply stores
nothing and changes nothing. An unattended run (``origin="scheduled"``) then applies its proposal when
the policy allows (:mod:`core.consolidation.policy`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from core.consolidation import fusion, offline
from core.consolidation.model import ConsolidationProposal, LedgerEntry
from core.consolidation.stage import stage
from core.consolidation.store import list_consolidations
from core.documents.layout import AGENT_DIR, DAILY_RE, LAYERED_DIR
from core.providers import OfflineProvider, Provider, ProviderError, ProviderRequest
from core.providers.base import CancelCheck, ProgressCallback, never_cancelled, no_progress
from core.storage.fileio import MAX_FILE_SIZE

if TYPE_CHECKING:
    from core.project.model import Project

__all__ = ["RunCancelled", "RunOutcome", "list_agents", "run_compact", "run_dream"]


class RunCancelled(Exception):
    """The operator cancelled the run; nothing was staged or written."""


@dataclass(frozen=True)
class RunOutcome:
    """What a run did: ``status`` staged | applied | nothing | refused | failed | cancelled."""

    status: str
    message: str
    proposal: ConsolidationProposal | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether the run ended as it should (something staged or applied, or nothing to do)."""
        return self.status in ("staged", "applied", "nothing")

    def to_json(self) -> dict[str, Any]:
        """camelCase JSON for ``--json``."""
        return {"status": self.status, "message": self.message,
                "proposalId": self.proposal.id if self.proposal else None,
                "lostFacts": len(self.proposal.lost_facts) if self.proposal else 0, **self.details}


def list_agents(project: Project) -> list[str]:
    """The agents with a memory folder (``.fusion/agent-memory/<id>/``), sorted."""
    return sorted({d.agent for d in project.documents() if d.agent})


def _base(agent: str | None) -> str:
    return LAYERED_DIR if agent is None else f"{AGENT_DIR}/{agent}"


def _read(project: Project, rel: str) -> str | None:
    return project.backend.read_document(rel)


def _has_body(text: str) -> bool:
    from core.consolidation.entries import scan

    return any(not (e.structural and (e.start == 0 or e.kind == "comment")) for e in scan(text))


def _ask(provider: Provider, request: ProviderRequest, cancel: CancelCheck, progress: ProgressCallback) -> str:
    if cancel():
        raise RunCancelled()
    try:
        return provider.complete(request, cancel=cancel, progress=progress)
    except ProviderError as exc:
        if exc.kind == "cancelled" or cancel():
            raise RunCancelled() from exc
        raise


def _shift(entries: tuple[LedgerEntry, ...], section_paths: dict[str, tuple[str, int]]) -> list[LedgerEntry]:
    """Offline dream fates point into the reply's sections; move them to lines of the documents."""
    out = []
    for e in entries:
        target = section_paths.get(e.target_path or "")
        if target is None:
            out.append(e)
            continue
        path, offset = target
        line = e.target_line + offset if e.target_line is not None and offset >= 0 else e.target_line
        out.append(LedgerEntry(e.path, e.line, e.text, e.fate, path, line, e.reason))
    return out


def _over_limit(after: dict[str, str]) -> str | None:
    """``"DREAMS.md 1,100,000 bytes, over the 1,048,576-byte limit"`` for a document a run would make too big."""
    for rel, text in after.items():
        size = len(text.encode("utf-8"))
        if size > MAX_FILE_SIZE:
            return f"{rel} {size:,} bytes, over the {MAX_FILE_SIZE:,}-byte limit of a memory document"
    return None


def run_dream(project: Project, provider: Provider, *, agent: str | None = None, now: datetime | None = None,
              cancel: CancelCheck = never_cancelled, progress: ProgressCallback = no_progress,
              origin: str = "manual") -> RunOutcome:
    """Dream over every daily note (of the project, or of ``agent``) not yet processed, up to today."""
    moment = now or datetime.now(UTC)
    if not project.layout.layered:
        return RunOutcome("refused", "dreams need current Fusion's layered layout (.fusion/memory/); this project "
                          "uses the seed layout, whose .fusion/memory.md Fusion never dreamed over. Compact it "
                          "instead: memdesk compact --file .fusion/memory.md")
    base = _base(agent)
    long_path, dreams_path = f"{base}/MEMORY.md", f"{base}/DREAMS.md"
    today = moment.date().isoformat()
    notes = sorted(d.path for d in project.documents()
                   if d.layer == "daily" and d.agent == agent and d.path.rsplit("/", 1)[-1][:-3] <= today)
    before: dict[str, str | None] = {long_path: _read(project, long_path), dreams_path: _read(project, dreams_path)}
    had_memory, had_dreams = before[long_path], before[dreams_path]
    memory: str = had_memory if had_memory is not None else (
        fusion.agent_memory_scaffold(agent) if agent else project.layout.scaffold_for(long_path) or "")
    dreams: str = had_dreams if had_dreams is not None else (
        fusion.AGENT_DREAMS_SCAFFOLD if agent else project.layout.scaffold_for(dreams_path) or "")
    after: dict[str, str] = {}
    ledger: list[LedgerEntry] = []
    done: list[str] = []
    staged = {path for p in list_consolidations(project.root) if p.kind == "dream" for path in p.paths}
    pending = []
    for rel in notes:
        if rel in staged:
            continue  # waits for review in an earlier proposal: dreaming it again would stage it twice
        text = _read(project, rel)
        if text is not None and DAILY_RE.match(rel.rsplit("/", 1)[-1]) and _has_body(text):
            pending.append((rel, text))
    if not pending:
        return RunOutcome("nothing", f"no daily note to dream over in {base}/ (every note is processed, empty, "
                          "or waits for review in a pending proposal)")
    is_offline = isinstance(provider, OfflineProvider)
    for k, (rel, text) in enumerate(pending):
        if cancel():
            raise RunCancelled()
        day = rel.rsplit("/", 1)[-1][:-3]
        progress(int(100 * k / len(pending)), f"Dreaming over {rel.rsplit('/', 1)[-1]}")
        if is_offline:
            result = offline.dream(text, rel, memory, dreams, tuple(t for _r, t in pending[:k]))
            reply = fusion.DreamReply(result.dreams, result.updates)
        else:
            prompt = fusion.build_dream_prompt(day, memory, text, dreams, agent_id=agent, agent_name=agent)
            raw = _ask(provider, ProviderRequest(prompt=prompt, working_memory=text, project_root=project.root,
                                                 now=moment), cancel, progress)
            try:
                reply = fusion.parse_dream_reply(raw)
            except fusion.ReplyRefused as exc:
                return RunOutcome("refused", f"{provider.name}'s dream reply for {day} was refused: {exc}; "
                                  "nothing was written")
        offsets = {"DREAMS": (dreams_path, -1), "LONG_TERM_UPDATES": (long_path, -1), "MEMORY": (long_path, 0)}
        if reply.dreams:
            offsets["DREAMS"] = (dreams_path, dreams.count("\n") + 3)
            dreams += fusion.dreams_block(day, reply.dreams)
        if reply.long_term_updates:
            offsets["LONG_TERM_UPDATES"] = (long_path, memory.count("\n") + 3)
            memory += fusion.dream_updates_block(day, reply.long_term_updates)
        if is_offline:
            ledger.extend(_shift(result.ledger, offsets))
        before[rel] = text
        after[rel] = fusion.processed_marker(day, moment, agent=agent is not None)
        done.append(day)
    after[long_path], after[dreams_path] = memory, dreams
    for rel in (long_path, dreams_path):
        if after[rel] == (before[rel] or "") and before[rel] is not None:
            del after[rel]
            del before[rel]
        elif before[rel] is None and after[rel] == ((fusion.agent_memory_scaffold(agent) if rel == long_path
                                                     else fusion.AGENT_DREAMS_SCAFFOLD) if agent
                                                    else project.layout.scaffold_for(rel)):
            del after[rel]
            del before[rel]
    if cancel():
        raise RunCancelled()
    too_big = _over_limit(after)
    if too_big:
        return RunOutcome("refused", f"the dream would make {too_big}; compact it first "
                          f"(memdesk compact --file {too_big.split(' ', 1)[0]}). Nothing was written")
    scope = f"agent:{agent}" if agent else "project"
    summary = (f"Dream over {len(done)} daily note{'s' if len(done) != 1 else ''} ({', '.join(done)}) of "
               f"{'agent ' + agent if agent else 'the project'} with {provider.name}")
    progress(95, "Checking that every fact survives")
    context = {rel: text for rel, text in ((long_path, memory), (dreams_path, dreams)) if rel not in after}
    proposal = stage(project, "dream", provider.name, scope, before, after, ledger if is_offline else None,
                     summary, origin, moment, context)
    return RunOutcome("staged", f"Staged dream proposal {proposal.id}: {len(proposal.changes)} changes in "
                      f"{len(proposal.documents)} documents, {len(proposal.lost_facts)} facts would be lost",
                      proposal)


def run_compact(project: Project, path: str, provider: Provider, *, now: datetime | None = None,
                cancel: CancelCheck = never_cancelled, progress: ProgressCallback = no_progress,
                origin: str = "manual") -> RunOutcome:
    """Compact one document (Fusion's compaction prompt for a model; the offline rules otherwise)."""
    moment = now or datetime.now(UTC)
    rel = project.resolve_path(path)
    text = _read(project, rel)
    if text is None or not text.strip():
        return RunOutcome("nothing", f"{rel} does not exist or is empty; nothing to compact")
    progress(5, f"Compacting {rel.rsplit('/', 1)[-1]}")
    ledger: list[LedgerEntry] | None = None
    if isinstance(provider, OfflineProvider):
        if cancel():
            raise RunCancelled()
        result = offline.compact(text, rel)
        new_text, ledger = result.text, list(result.ledger)
    else:
        raw = _ask(provider, ProviderRequest(prompt=text, working_memory=text, project_root=project.root, now=moment,
                                             system_prompt=fusion.COMPACT_MEMORY_SYSTEM_PROMPT), cancel, progress)
        try:
            new_text = fusion.parse_compaction_reply(raw, text)
        except fusion.ReplyRefused as exc:
            return RunOutcome("refused", f"{provider.name}'s compaction of {rel} was refused: {exc}; nothing was written")
    if new_text == text:
        return RunOutcome("nothing", f"{rel}: nothing to compact (no duplicate, superseded or transient entry)")
    if cancel():
        raise RunCancelled()
    progress(90, "Checking that every fact survives")
    proposal = stage(project, "compact", provider.name, rel, {rel: text}, {rel: new_text}, ledger,
                     f"Compaction of {rel} with {provider.name}", origin, moment)
    return RunOutcome("staged", f"Staged compaction proposal {proposal.id}: {len(proposal.changes)} changes, "
                      f"{len(proposal.lost_facts)} facts would be lost", proposal)
