"""Search over one project's memory: keeps the index in step with the files and answers queries.

Before a search the index is brought in step with the documents. The first check of a process
``stat``s every document; from the second search on an inotify watcher (:mod:`core.search.watch`)
says which files changed, so a search where nothing changed costs one non-blocking ``read`` however
many documents there are. A file whose size or modification time changed, or that changed too
recently for its timestamp to be trusted, is read and hashed, and re-indexed only when its content
hash differs from the one indexed. A keyword search never loads the embedding model: entries it
indexes get their vectors on the next semantic or hybrid search.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.errors import MemoryBackendError
from core.search import fusion
from core.search._numpy import numpy
from core.search.corpus import (
    MEMORY_FILE_PATH,
    FileState,
    candidate_files,
    read_file,
    searched_files,
    stat_file,
    stat_files,
)
from core.search.db import Database
from core.search.embeddings import Embedder
from core.search.fts import query_terms
from core.search.index import DocState, IndexedEntry, KeywordHit, SearchIndex
from core.search.snippet import Highlighter
from core.search.types import MemorySearchOptions, MemorySearchResult, make_result
from core.storage.fileio import content_hash, read_text
from core.storage.safepath import RACY_NS  # a file changed within it of its indexing is hashed again

log = logging.getLogger(__name__)

EXCERPT_CHARS = 240


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """The start of an entry's text on one line, cut at a word with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0] + "…"


def keyword_scores(hits: list[KeywordHit]) -> list[float]:
    """BM25 of each hit relative to the best (0..1), never rising down the list (all-words hits rank first)."""
    best = min((h.bm25 for h in hits), default=0.0)
    out: list[float] = []
    floor = 1.0
    for h in hits:
        floor = min(floor, h.bm25 / best if best < 0 and h.bm25 < 0 else 0.0)
        out.append(floor)
    return out


class SearchService:
    """The search side of a backend: one :class:`SearchIndex` plus the project's searched files.

    ``working`` returns the working memory's text when it is not a file (the sqlite backend keeps it
    in its database and syncs it itself); otherwise ``.fusion/memory.md`` is read like the others.
    """

    def __init__(self, root: Path, db: Database, *, tokenizer: str = "porter", embedder: Embedder | None = None,
                 working: Callable[[], str] | None = None, keyword_only_reason: str | None = None) -> None:
        self.root = root
        self.db = db
        self.index = SearchIndex(db, tokenizer)
        self.embedder = embedder
        self.working = working
        self._keyword_only_reason = keyword_only_reason
        self._vectors_checked = False
        self._checks = 0
        self._watcher: Any = None  # a core.search.watch.Watcher once a second search asks
        self._linked: set[str] = set()  # documents reached through a symlink: no event covers them

    # -- semantic availability ------------------------------------------------------------------
    def provider(self) -> Any:
        """The embedding provider, loading it on first use; ``None`` when search is keyword-only."""
        return self.embedder.get() if self.embedder is not None else None

    def keyword_only_reason(self) -> str | None:
        """Why semantic search is unavailable (``None`` when it is available)."""
        if self._keyword_only_reason:
            return self._keyword_only_reason
        if self.embedder is None:
            return "this backend searches by keyword only"
        return self.embedder.unavailable_reason()

    def note(self, mode: str = "hybrid") -> str | None:
        """The note shown with results: set when a semantic or hybrid search ran keyword-only."""
        reason = self.keyword_only_reason()
        if mode == "keyword" or reason is None:
            return None
        return f"keyword-only: {reason}"

    # -- keeping in step ------------------------------------------------------------------------
    def sync_text(self, path: str, text: str) -> None:
        """Index ``text`` as the content of ``path`` now (after a write through the backend)."""
        with self.db.lock:
            state = None if self.working is not None and path == MEMORY_FILE_PATH else stat_file(self.root, path)
            self.index.sync_document(path, text, content_hash(text), mtime_ns=state.mtime_ns if state else None,
                                     size=state.size if state else None, provider=self.provider)

    def refresh(self, *, vectors: bool = True) -> None:
        """Re-index every searched file that changed on disk and forget the ones that are gone.

        Holds the database lock throughout, so a search on a worker thread and a write on the GUI
        thread never interleave their checks and syncs; every sync of one refresh is one
        transaction, and the FTS index is optimized once at the end when anything changed.
        ``vectors=False`` (keyword searches) leaves missing vectors and never loads the model.
        """
        with self.db.lock:
            changed = self._changed_paths()
            provider = self.provider if vectors else None
            touched = False
            if changed == set():  # the watcher saw nothing: nothing to check
                if vectors and not self._vectors_checked:
                    self._fill_missing_vectors()
                return
            try:
                with self.db.transaction():
                    touched = self._check(changed, provider)
            finally:
                if touched:
                    self.db.after_commit(self.index.optimize)
            if vectors and not self._vectors_checked:
                self._fill_missing_vectors()

    def _changed_paths(self) -> set[str] | None:
        """The documents that may have changed since the last check (``None``: check all of them).

        The first check of a process looks at everything; the second starts the watcher (before its
        full check, so no change falls between them); after that only what the watcher saw.
        """
        self._checks += 1
        if self._watcher is not None:
            found = self._watcher.changes()
            if found is not None and self._watcher.complete:
                return found | self._linked
            return None
        if self._checks >= 2:
            from core.search import watch  # ctypes: only a process that searches twice needs it

            self._watcher = watch.open_watcher(self.root)
        return None

    def _check(self, paths: set[str] | None, provider: Callable[[], Any] | None) -> bool:
        include_working = self.working is None
        known = self.index.docs()
        if paths is None:
            candidates = candidate_files(self.root, include_working=include_working)
            gone = [p for p in known if p not in set(candidates)]
        else:
            candidates = [p for p in paths if (p in known and (include_working or p != MEMORY_FILE_PATH))
                          or self._is_candidate(p, include_working)]
            gone = []
        states = stat_files(self.root, candidates)
        if paths is None:
            self._linked = {p for p, st in states.items() if st is not None and st.linked}
        changed = False
        for path, st in states.items():
            if st is not None:
                changed |= self._refresh_file(path, known.get(path), st, provider)
            elif path in known:
                gone.append(path)
        for path in gone:
            if not (self.working is not None and path == MEMORY_FILE_PATH):
                changed |= self.index.remove_document(path, optimize=False) > 0
        return changed

    def _is_candidate(self, path: str, include_working: bool) -> bool:
        if path == MEMORY_FILE_PATH and not include_working:
            return False
        from core.search.corpus import is_document_path

        return is_document_path(self.root, path)

    def _refresh_file(self, path: str, doc: DocState | None, st: FileState,
                      provider: Callable[[], Any] | None = None) -> bool:
        """Bring one file's rows in step; return whether any row changed (the caller optimizes)."""
        if (doc is not None and doc.mtime_ns == st.mtime_ns and doc.size == st.size
                and st.mtime_ns + RACY_NS < doc.checked_ns):
            return False
        try:
            text = read_file(self.root, path) or ""
        except MemoryBackendError as exc:
            log.warning("not indexing %s: %s", path, exc)
            return False
        digest = content_hash(text)
        if doc is not None and doc.hash == digest:
            self.index.touch_document(path, st.mtime_ns, st.size)
            return False
        return self.index.sync_document(path, text, digest, mtime_ns=st.mtime_ns, size=st.size,
                                        provider=provider, optimize=False).changed

    def _fill_missing_vectors(self, progress: Callable[[int, int], None] | None = None) -> int:
        provider = self.provider()
        self._vectors_checked = True
        if provider is None:
            return 0
        missing = self.index.vectors.missing(provider.model_id)
        if not missing:
            return 0
        with self.db.transaction() as c:
            self.index.vectors.drop_other_models(c, provider.model_id)
            return self.index.vectors.ensure(c, provider, missing, progress)

    def documents(self) -> dict[str, str]:
        """The canonical text of every searched file (what a rebuild indexes)."""
        return self._documents()[0]

    def _documents(self) -> tuple[dict[str, str], dict[str, FileState | None]]:
        """Every searched file's text, with what ``stat`` said of the files (not of the working memory
        the backend keeps itself).

        A regular file that :func:`stat_files` found inside the root (its folders checked once each)
        is read directly; anything else (absent, a link, outside the root) goes through
        :func:`read_file`, which resolves it and names the problem. Resolving each of 2,000 files
        was a tenth of a rebuild.
        """
        paths = searched_files(self.root, include_working=True)
        working = self.working
        states = stat_files(self.root, [p for p in paths if not (working is not None and p == MEMORY_FILE_PATH)])
        prefix = os.path.realpath(self.root)
        docs: dict[str, str] = {}
        for path in paths:
            if working is not None and path == MEMORY_FILE_PATH:
                docs[path] = working()
                continue
            st = states.get(path)
            try:
                if st is not None and not st.linked:
                    text = read_text(Path(prefix, path))
                else:
                    text = read_file(self.root, path)
            except MemoryBackendError as exc:
                log.warning("not indexing %s: %s", path, exc)
                continue
            if text is not None:
                docs[path] = text
        return docs, states

    def rebuild(self, progress: Callable[[int, str], None] | None = None,
                cancelled: Callable[[], bool] | None = None) -> dict[str, int]:
        """Drop every derived row and index the canonical content again; return counts."""
        report = progress or (lambda _p, _m: None)
        docs, states = self._documents()
        # One transaction for the whole rebuild (a cancel leaves the old index as it was).
        rows = []
        for path, text in docs.items():
            st = states.get(path)
            rows.append((path, text, content_hash(text), st.mtime_ns if st else None, st.size if st else None))
        with self.db.transaction():
            self.index.clear()
            self.index.load_documents(rows, cancelled)
            report(50, f"indexed {len(docs)} documents")
            self.db.after_commit(self.index.optimize)
        vectors = self._fill_missing_vectors(lambda done, total: report(50 + int(50 * done / max(1, total)),
                                                                        f"embedded {done}/{total} entries"))
        report(100, "done")
        return {"files": len(docs), "entries": self.index.count(), "vectors": vectors}

    # -- searching ------------------------------------------------------------------------------
    def search(self, query: str, options: MemorySearchOptions | None = None) -> list[MemorySearchResult]:
        """Search every searched file; see :mod:`core.search.fusion` for the hybrid ranking."""
        opts = options or MemorySearchOptions()
        if opts.limit <= 0 or not query.strip():
            return []
        self.refresh(vectors=opts.mode != "keyword")
        provider = None if opts.mode == "keyword" else self.provider()
        if provider is None:
            return self._keyword(query, opts)
        if opts.mode == "semantic":
            return self._semantic(query, opts, provider)
        return self._hybrid(query, opts, provider)

    def _result(self, e: IndexedEntry, content: str, score: float, scores: dict[str, float],
                highlights: tuple[tuple[int, int], ...] = ()) -> MemorySearchResult:
        return make_result(content, round(min(1.0, max(0.0, score)), 6), e.section, e.line, e.path, scores, highlights)

    def _keyword(self, query: str, opts: MemorySearchOptions) -> list[MemorySearchResult]:
        terms = query_terms(query, self.index.tokenizer)
        marker = Highlighter(terms, self.index.tokenizer)  # its exact test reads what the snippets will
        exact = marker.exact if self.index.tokenizer == "porter" else None  # others match as typed
        hits, all_words = self.index.ranked(terms, opts.offset + opts.limit, exact)
        if not hits:
            return []
        snippet = marker.snippet
        out = []
        scores = keyword_scores(hits)  # in 0..1 already: no clamp
        for n in range(opts.offset, len(hits)):
            h, k = hits[n], scores[n]
            content, marks = snippet(h.text or "")  # ranked() reads every hit's text
            whole = 1.0 if n < all_words else 0.0
            out.append(make_result(content, round(k, 6), h.section, h.line, h.path,
                                   {"keyword": k, "fused": k, "bm25": h.bm25, "all_words": whole,
                                    "exact": 1.0 if h.exact or (exact is None and whole) else 0.0}, marks))
        return out

    def _query_vector(self, provider: Any, query: str) -> Any:
        return provider.embed([query])[0]

    def _semantic(self, query: str, opts: MemorySearchOptions, provider: Any) -> list[MemorySearchResult]:
        np = numpy()

        ids, mat, _pos = self.index.vectors.matrix(provider.model_id)
        want = opts.offset + opts.limit
        if len(ids) == 0:
            return []
        sims = mat @ self._query_vector(provider, query)
        top = np.argpartition(-sims, min(want, len(ids)) - 1)[:want] if len(ids) > want else np.arange(len(ids))
        top = top[np.argsort(-sims[top], kind="stable")][opts.offset:]
        rows = self.index.entries(int(ids[i]) for i in top)
        return [self._result(rows[int(ids[i])], excerpt(rows[int(ids[i])].text), float(sims[i]),
                             {"vector": max(0.0, float(sims[i])), "cosine": float(sims[i])}) for i in top]

    def _hybrid(self, query: str, opts: MemorySearchOptions, provider: Any) -> list[MemorySearchResult]:
        np = numpy()

        ids, mat, pos = self.index.vectors.matrix(provider.model_id)
        cosine: dict[int, float] = {}
        qv = self._query_vector(provider, query)
        if len(ids):
            sims = mat @ qv
            k = min(fusion.SEED_K, len(ids))
            for i in np.argpartition(-sims, k - 1)[:k]:
                cosine[int(ids[i])] = float(sims[i])
        terms = query_terms(query, self.index.tokenizer)
        ranked, _all = self.index.ranked(terms, fusion.SEED_K)
        hits = {h.id: h for h in ranked}
        kw_seed = dict(zip(hits, keyword_scores(ranked), strict=True))
        for cid in hits:
            if cid not in cosine and cid in pos:
                cosine[cid] = float(mat[pos[cid]] @ qv)
        candidates = list(cosine.keys() | hits.keys())
        if not candidates:
            return []
        kw = {c: kw_seed.get(c, 0.0) for c in candidates}
        vec = fusion.relative({c: cosine.get(c, 0.0) for c in candidates})
        fused = {c: fusion.fuse(vec[c], kw[c]) for c in candidates}
        rows = self.index.entries(candidates)
        order = sorted(candidates, key=lambda c: (-fused[c], c))
        order = fusion.drop_duplicates(order, {c: rows[c].text for c in order})
        dim = mat.shape[1] if len(ids) else 1
        vecs = np.stack([mat[pos[c]] if c in pos else np.zeros(dim, np.float32) for c in order])
        picked = fusion.mmr(order, fused, vecs, opts.offset + opts.limit)[opts.offset:]
        snippet = Highlighter(terms, self.index.tokenizer).snippet
        out = []
        for cid, mmr_score in picked:
            content, marks = snippet(rows[cid].text) if cid in hits else (excerpt(rows[cid].text), ())
            scores = {"keyword": kw[cid], "vector": vec[cid], "fused": fused[cid], "mmr": mmr_score,
                      "cosine": cosine.get(cid, 0.0)}
            if cid in hits:
                scores["bm25"] = hits[cid].bm25
            out.append(self._result(rows[cid], content, fused[cid], scores, marks))
        return out

    def close(self) -> None:
        """Stop watching and close the database."""
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None
        self.db.close()
