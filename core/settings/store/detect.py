"""Which store holds a project's settings, in Fusion's order of preference (design §3b, issue 18).

1. Fusion runs for the project: its settings API (a connection the operator gave, or the daemon
   Fusion's own global settings name), so Fusion validates, records and reacts.
2. Seed-era Fusion, not running: ``.fusion/fusion.db``'s ``config`` row.
3. Current Fusion known for the project but not running: the last values read, read-only.
4. No Fusion store: ``.fusion/config.json``.
"""

from __future__ import annotations

from pathlib import Path

from core.errors import SettingsError
from core.settings.store.base import SettingsStore
from core.settings.store.config_json import ConfigJsonStore
from core.settings.store.connections import FusionConnection, env_token, fusion_daemon, saved_connection
from core.settings.store.fusion_api import (
    FusionApiClient,
    FusionApiError,
    FusionApiStore,
    FusionReadonlyStore,
    recall,
)
from core.settings.store.fusion_db import DB_PATH, FusionDbStore

NOT_THIS_PROJECT = "does not run this project"


def detect_store(root: Path | str) -> SettingsStore:
    """The settings store of ``root`` (never raises for Fusion being away: that is a read-only store)."""
    root_p = Path(root)
    try:
        saved = saved_connection(root_p)
    except SettingsError:
        saved = None
    candidate = saved or fusion_daemon()
    reason = None
    if candidate is not None:
        if candidate.token is None and env_token():
            candidate = FusionConnection(candidate.url, env_token(), candidate.project_id, candidate.source)
        store, reason = probe(root_p, candidate)
        if store is not None:
            return store
        if reason and reason.endswith(NOT_THIS_PROJECT):
            saved, candidate, reason = None, None, None  # that Fusion runs other projects, not this one
    if (root_p / DB_PATH).is_file():
        return FusionDbStore(root_p)
    if saved is not None or (candidate is not None and reason and recall(root_p) is not None):
        return FusionReadonlyStore(root_p, candidate.url if candidate else None, reason or "Fusion is not running")
    return ConfigJsonStore(root_p)


def probe(root: Path, conn: FusionConnection) -> tuple[SettingsStore | None, str | None]:
    """A :class:`FusionApiStore` when ``conn`` answers for ``root``; else ``None`` and why not."""
    client = FusionApiClient(conn)
    if conn.project_id is None:
        try:
            projects = client.list_projects()
        except FusionApiError as exc:
            return None, str(exc)
        except SettingsError:
            projects = []  # a Fusion without the projects route serves one project
        if projects:
            real = str(root.resolve())
            match = next((p for p in projects if isinstance(p.get("path"), str)
                          and _same_path(p["path"], real)), None)
            if match is None:
                return None, f"Fusion at {conn.url} {NOT_THIS_PROJECT}"
            conn = FusionConnection(conn.url, conn.token, str(match.get("id")), conn.source)
            client = FusionApiClient(conn)
    try:
        first = client.get_settings()
    except SettingsError as exc:
        return None, str(exc)
    store = FusionApiStore(root, conn, first)
    from core.settings.store.fusion_api import remember

    remember(root, conn.url, first)
    return store, None


def _same_path(a: str, b: str) -> bool:
    try:
        return str(Path(a).resolve()) == b
    except OSError:
        return False
