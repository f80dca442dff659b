"""memdesk's derived keyword index over a project's documents, for backends that cannot search.

The ``file`` and ``readonly`` backends (and ``qmd``, whose search Fusion leaves to memdesk) keep no
index of their own; :func:`derived_search` searches every memory document of the project through
this one, without giving the backend the ``search`` capability. The index lives in the user's cache
folder (``platformdirs.user_cache_dir("memdesk")``, or the folder named by ``MEMDESK_CACHE_DIR``),
keyed by the project's real path, never inside the project: a search is a read-only command and must
not create anything there. It is derived data, rebuilt on demand.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from core.search.types import MemorySearchOptions, MemorySearchResult

if TYPE_CHECKING:
    from core.search.service import SearchService

CACHE_DIR_ENV = "MEMDESK_CACHE_DIR"
#: The mode a derived search runs in, and how surfaces name it.
DERIVED_MODE: Literal["keyword"] = "keyword"
DERIVED_NOTE = "keyword search by memdesk's own index"


def derived_note(backend_id: str, mode: str) -> str | None:
    """What to tell the operator when a ``mode`` search ran on the derived index (``None``: as asked)."""
    if mode == DERIVED_MODE and backend_id == "qmd":
        return None
    why = "" if backend_id == "qmd" else f' (the "{backend_id}" backend cannot search)'
    return DERIVED_NOTE + why
_services: dict[tuple[int, str], SearchService] = {}
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


def service(root: Path | str) -> SearchService:
    """The derived index of the project at ``root`` (one per process and project, kept open)."""
    from core.search.db import Database
    from core.search.service import SearchService

    real = Path(root).resolve()
    key = (os.getpid(), str(real))
    with _lock:
        svc = _services.get(key)
        if svc is None:
            db = Database(index_path(real), "derived")
            svc = SearchService(real, db, embedder=None,
                                keyword_only_reason="memdesk's derived index searches by keyword only")
            _services[key] = svc
    return svc


def derived_search(root: Path | str, query: str, options: MemorySearchOptions | None = None
                   ) -> list[MemorySearchResult]:
    """Keyword search over every document of the project, through the derived index.

    A semantic or hybrid request runs as keyword (say so with :data:`DERIVED_NOTE`).
    """
    opts = options or MemorySearchOptions()
    if opts.mode != DERIVED_MODE:
        opts = MemorySearchOptions(limit=opts.limit, offset=opts.offset, mode=DERIVED_MODE)
    return service(root).search(query, opts)


def close_all() -> None:
    """Close every derived index this process opened (tests, shutdown)."""
    with _lock:
        services = list(_services.values())
        _services.clear()
    for svc in services:
        svc.close()
