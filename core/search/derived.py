"""memdesk's derived keyword index over a project's documents, for backends that cannot search.

The index lives in the user's cache folder (``platformdirs.user_cache_dir("memdesk")``, or the folder
named by ``MEMDESK_CACHE_DIR``), keyed by the project's real path, never inside the project: a search
is a read-only command and must not create anything there. It is derived data, rebuilt on demand.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from core.backends.base import MemorySearchOptions, MemorySearchResult

CACHE_DIR_ENV = "MEMDESK_CACHE_DIR"
_services: dict[tuple[int, str], object] = {}
_lock = threading.Lock()


def cache_dir() -> Path:
    """The folder holding derived indexes."""
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("memdesk"))


def index_path(root: Path | str) -> Path:
    """The derived index database of the project at ``root``."""
    real = str(Path(root).resolve())
    return cache_dir() / "index" / f"{hashlib.sha256(real.encode()).hexdigest()[:24]}.db"


def _service(root: Path):  # type: ignore[no-untyped-def]
    from core.search.db import Database
    from core.search.service import SearchService

    key = (os.getpid(), str(root.resolve()))
    with _lock:
        svc = _services.get(key)
        if svc is None:
            db = Database(index_path(root), "derived")
            svc = SearchService(root.resolve(), db, embedder=None,
                                keyword_only_reason="memdesk's derived index searches by keyword only")
            _services[key] = svc
    return svc


def derived_search(root: Path | str, query: str, options: MemorySearchOptions | None = None
                   ) -> list[MemorySearchResult]:
    """Keyword search over every document of the project, through the derived index."""
    svc = _service(Path(root))
    svc.refresh()
    opts = options or MemorySearchOptions()
    if opts.mode != "keyword":
        opts = MemorySearchOptions(limit=opts.limit, offset=opts.offset, mode="keyword")
    return svc.search(query, opts)
