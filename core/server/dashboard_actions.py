"""Fusion's dashboard's Memory-view buttons on ``memdesk serve``: Compact, Dream Now, Extract Now, Install qmd.

Read from Runfusion/Fusion (never copied): the client ``packages/dashboard/app/api/memory.ts`` at
``c81144c7c37b4ec58f87e2771c2b599ed88c16cc`` (``compactMemory`` → ``POST /api/memory/compact`` with ``{path}`` or
``{}``, reading ``{path?, content}``; ``triggerMemoryDreams`` → ``POST /api/memory/dream`` reading ``{success,
summary?, dreamsWritten?, longTermUpdatesWritten?}``; ``triggerInsightExtraction`` → ``POST /api/memory/extract``
reading ``{success, summary, insightCount, pruned}``; ``installQmd`` → ``POST /api/memory/install-qmd`` reading
``{success, qmdAvailable, qmdInstallCommand}``), and the server's routes in
``packages/dashboard/src/routes/register-settings-memory-routes.ts`` at ``1dfb04f41482cb60aaef44db2e2c9236d9efe161``
(Fusion compacts the file and writes it back, dreams and writes, extracts and merges; ``install-qmd`` runs an
installer).

memdesk never rewrites memory unseen (design §10, docs/consolidation.md): each button starts memdesk's own run with
the operator's default provider (the rule-based ``offline`` one unless they chose a model: ``memdesk providers``),
its result is *staged as a proposal* and nothing in memory changes until it is reviewed (``memdesk proposals
show ID`` / ``apply`` / ``accept``, or the app's Consolidation and Insights tabs). The answers have the shapes the
dashboard reads, with ``success: true`` and a message (``summary``) saying the proposal waits for review and where;
``content`` of a compaction is the document as it still is on disk, so the editor (which shows ``content``) keeps
the operator's text. A run that cannot start (no provider configured, a seed-layout project asked to dream) or that
fails answers Fusion's error shape ``{error, details}`` in one line. Every button needs write scope (403 ``SCOPE``).
qmd is Fusion's search engine; memdesk does not use it and never installs a program from a web request, so
``install-qmd`` answers an error naming the command for the operator to run.

(No ``from __future__ import annotations``: FastAPI reads the routes' annotations.)
"""

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastapi import Body, FastAPI, Request
from fastapi.responses import JSONResponse

from core.server.models import QMD_INSTALL_COMMAND

#: Where an operator reviews what a button staged (said in every answer).
REVIEW_CONSOLIDATION = "memdesk proposals show {id} (apply with memdesk proposals apply {id}), or the memdesk app's " \
                       "Consolidation tab"
REVIEW_INSIGHTS = "memdesk proposals show {id} (accept with memdesk proposals accept {id} --all), or the memdesk " \
                  "app's Insights tab"


class ActionRefused(Exception):
    """A button's refusal: its status, one line, memdesk's code (answered in Fusion's error shape)."""

    def __init__(self, status: int, message: str, code: str) -> None:
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


def _refused(status: int, message: str, code: str) -> ActionRefused:
    return ActionRefused(status, message, code)


def _answer_refusal(request: Request, exc: Exception) -> JSONResponse:
    """Fusion's error shape (``{error, details}``, read by ``app/api/client/client.ts``), memdesk's ``code`` beside
    it, server paths taken out (:func:`core.server.refusals.scrub`)."""
    from core.server.refusals import bounded, scrub

    assert isinstance(exc, ActionRefused)
    served = getattr(request.app.state, "served", None)
    roots = [(s.key, s.root) for s in served.served] if served is not None else []
    message = bounded(" ".join(scrub(exc.message, roots).split()))
    return JSONResponse({"error": message, "code": exc.code, "details": {"code": exc.code, "backend": None}},
                        status_code=exc.status)


_RUN_LOCKS: dict[str, threading.Lock] = {}
_RUN_LOCKS_GUARD = threading.Lock()


def run_lock(root: Any) -> threading.Lock:
    """The lock one button's run holds for the project at ``root`` (two tabs' Dream Now would stage the same notes
    twice: the second is refused while the first runs)."""
    with _RUN_LOCKS_GUARD:
        return _RUN_LOCKS.setdefault(os.fspath(root), threading.Lock())


@contextmanager
def _one_run(project: Any) -> Iterator[None]:
    lock = run_lock(project.root)
    if not lock.acquire(blocking=False):
        raise _refused(409, "a compaction, dream or extraction started from the dashboard is still running for this "
                       "project; nothing was started: try again when it ends", "CONFLICT")
    try:
        yield
    finally:
        lock.release()


def _provider() -> Any:
    """The operator's default provider; a refusal saying what to configure when there is none."""
    from core.providers import ProviderError, resolve_provider

    try:
        return resolve_provider(None)
    except ProviderError as exc:
        raise _refused(503, f"no provider to run this with: {exc.message}; configure one with `memdesk providers "
                       "set NAME ...` and `memdesk providers default NAME` (offline needs no model); nothing was "
                       "written", "PROVIDER_NOT_CONFIGURED") from exc


def _run_failed(exc: Exception) -> Exception:
    """A provider's failure during a run as a refusal; any other error as it is."""
    from core.providers import ProviderError

    if isinstance(exc, ProviderError):
        return _refused(400 if exc.kind == "config" else 503, f"{exc.message}; nothing was staged or written",
                        "PROVIDER_ERROR")
    return exc


def _dream_all(p: Any, provider: Any, agents: list[str], run_dream: Any) -> dict[str, Any]:
    """Dream over the project's notes, then each agent's; the answer Fusion's ``triggerMemoryDreams`` reads."""
    staged: list[str] = []
    nothing: list[str] = []
    failed: list[str] = []
    for agent in [None, *agents]:
        try:
            outcome = run_dream(p, provider, agent=agent)
        except Exception as exc:
            if not staged:
                raise _run_failed(exc) from exc
            failed.append(f"{agent or 'project'}: {getattr(exc, 'message', exc)}")
            continue
        if outcome.proposal is not None:
            staged.append(outcome.proposal.id)
        elif outcome.ok:
            nothing.append(outcome.message)
        elif not staged and agent is None:
            raise _refused(400 if outcome.status == "refused" else 500, outcome.message, "RUN_REFUSED")
        else:
            failed.append(f"{agent or 'project'}: {outcome.message}")
    if staged:
        summary = (f"Staged {len(staged)} dream proposal{'s' if len(staged) != 1 else ''} ({', '.join(staged)}); "
                   f"nothing was written: {'they wait' if len(staged) != 1 else 'it waits'} for review: "
                   + REVIEW_CONSOLIDATION.format(id=staged[0]))
    else:
        summary = nothing[0] if nothing else "nothing to dream over"
    if failed:
        summary += "; not staged: " + "; ".join(failed)
    return {"success": True, "summary": summary, "dreamsWritten": False, "longTermUpdatesWritten": False,
            "status": "staged" if staged else "nothing", "proposalIds": staged}


def _daily_notes(p: Any) -> dict[str | None, list[str]]:
    """The daily notes of the project (key ``None``) and of each agent: what a dream may mark processed."""
    notes: dict[str | None, list[str]] = {}
    for doc in p.documents():
        if doc.layer == "daily":
            notes.setdefault(doc.agent, []).append(doc.path)
    return notes


def add_action_routes(app: FastAPI, project_dep: Any, allow: Any, access: Any) -> None:
    """Register ``POST /api/memory/compact``, ``/dream``, ``/extract`` and ``/install-qmd``."""
    app.add_exception_handler(ActionRefused, _answer_refusal)

    @app.post("/api/memory/compact", tags=["dashboard"])
    def post_compact(p: project_dep, request: Request,  # type: ignore[valid-type]
                     body: dict[str, Any] | None = Body(None)) -> Any:  # noqa: B008
        """Fusion's Compact: stage memdesk's compaction of ``path`` (default the long-term memory) as a proposal;
        answers ``{path, content}`` with the document as it still is, and the proposal waiting for review."""
        from core.consolidation import RunOutcome, run_compact
        raw = (body or {}).get("path")
        if raw is not None and not isinstance(raw, str):
            raise _refused(400, "path must be a string (a memory document, e.g. .fusion/memory/MEMORY.md)",
                           "INVALID_ARGUMENT")
        rel = p.resolve_path(raw.strip()) if isinstance(raw, str) and raw.strip() else p.memory_path
        allow(request, p, "write", rel)
        provider = _provider()
        try:
            with _one_run(p):
                outcome: RunOutcome = run_compact(p, rel, provider)
        except ActionRefused:
            raise
        except Exception as exc:
            raise _run_failed(exc) from exc
        if not outcome.ok:
            raise _refused(400 if outcome.status == "refused" else 500, outcome.message, "RUN_REFUSED")
        content = p.backend.read_document(rel) or ""
        message = outcome.message
        if outcome.proposal is not None:
            message = (f"{outcome.message}. Nothing was written: it waits for review: "
                       + REVIEW_CONSOLIDATION.format(id=outcome.proposal.id))
        return {"path": rel, "content": content, "success": True, "status": outcome.status,
                "proposalId": outcome.proposal.id if outcome.proposal else None,
                "lostFacts": len(outcome.proposal.lost_facts) if outcome.proposal else 0, "message": message}

    @app.post("/api/memory/dream", tags=["dashboard"])
    def post_dream(p: project_dep, request: Request) -> Any:  # type: ignore[valid-type]
        """Fusion's Dream Now: stage memdesk's dream over the project's daily notes and each agent's (those this
        token may write: MEMORY.md, DREAMS.md and every daily note, which an accepted dream marks processed) as
        proposals; nothing is written (``dreamsWritten: false``) until they are reviewed."""
        from core.consolidation import list_agents, run_dream
        from core.documents.layout import AGENT_DIR, LAYERED_DIR

        allow(request, p, "write", f"{LAYERED_DIR}/MEMORY.md")
        allow(request, p, "write", f"{LAYERED_DIR}/DREAMS.md")
        notes = _daily_notes(p)  # a dream's proposal replaces each note it dreamed over with the processed marker
        for rel in notes.get(None, []):
            allow(request, p, "write", rel)
        who = access(request)
        agents = [a for a in list_agents(p) if all(who.can("write", rel, p.root) for rel in
                                                   [f"{AGENT_DIR}/{a}/MEMORY.md", f"{AGENT_DIR}/{a}/DREAMS.md",
                                                    *notes.get(a, [])])]
        provider = _provider()
        with _one_run(p):
            return _dream_all(p, provider, agents, run_dream)

    @app.post("/api/memory/extract", tags=["dashboard"])
    def post_extract(p: project_dep, request: Request) -> Any:  # type: ignore[valid-type]
        """Fusion's Extract Now: memdesk's insight extraction, its insights (and any prune) staged as a proposal;
        the insights document is not changed until they are accepted. A prune rewrites the working memory once
        accepted, so the token must be allowed to write both documents."""
        from core.automation.extraction import run_extraction

        allow(request, p, "write", p.insights_path)
        allow(request, p, "write", p.memory_path)  # its proposal may prune the working memory (as Compact needs)
        provider = _provider()
        with _one_run(p):
            run = run_extraction(p.root, provider)
        if not run.ok:
            status = {"empty_memory": 400, "config": 400, "bad_reply": 502, "empty_reply": 502,
                      "internal": 500}.get(run.error_kind or "", 503)
            raise _refused(status, f"extraction {run.status}: {run.message}; nothing was written", "RUN_FAILED")
        count = 0
        summary = run.message
        if run.proposal_id:
            from core.proposals import load_proposal

            count = len(load_proposal(p.root, run.proposal_id).insights)
            summary = (f"{run.message}. Nothing was written to the insights: "
                       + REVIEW_INSIGHTS.format(id=run.proposal_id))
        return {"success": True, "summary": summary, "insightCount": count, "pruned": False,
                "proposalId": run.proposal_id}

    @app.post("/api/memory/install-qmd", tags=["dashboard"])
    def post_install_qmd(p: project_dep, request: Request) -> Any:  # type: ignore[valid-type]
        """Fusion's Install qmd: refused (memdesk installs no program from a web request), with the command."""
        allow(request, p, "read")
        message = (f"memdesk does not install programs from a web request, and does not use qmd (Fusion's search "
                   f"engine; memdesk searches with its own index on file, sqlite, hybrid or postgres): to install it "
                   f"for Fusion, run on the server's machine: {QMD_INSTALL_COMMAND}")
        body = {"error": message, "code": "UNSUPPORTED",
                "details": {"code": "UNSUPPORTED", "backend": None, "qmdAvailable": False,
                            "qmdInstallCommand": QMD_INSTALL_COMMAND}}
        return JSONResponse(body, status_code=501)
