"""Fusion's own settings API, when Fusion runs for the project (kind ``fusion-api``), and its read-only
shadow when it does not (kind ``fusion-readonly``).

Routes, shapes and errors as read in Fusion's dashboard (Runfusion/Fusion
``packages/dashboard/src/routes/register-settings-memory-routes.ts``, "Settings CRUD"):

- ``GET /api/settings`` answers the merged settings object (defaults, global, project) plus the
  server-computed ``prAuthAvailable``, ``trackingAuthAvailable``, ``trackingAuthReason``.
- ``PUT /api/settings`` takes a patch (``null`` deletes a key: ``updateSettings`` in
  ``packages/core/src/task-store/settings-ops.ts``), validates it, records a configuration revision,
  runs its side effects, and answers the merged settings. A global-only key is refused with 400
  ``Cannot update global settings via this endpoint. Use PUT /settings/global instead. …``; those go to
  ``PUT /api/settings/global``. Errors are ``{"error": message}`` with the status.

memdesk reads, then sends only the keys the operator changed. Every failure (unreachable, refused
token, a rejection, an answer that is not a settings object) is one line; memdesk never writes a copy
Fusion would ignore. The last settings read are kept in the user's config folder, so a current Fusion
that is not running can still be shown, read-only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from core.errors import MemoryBackendError, SettingsError
from core.settings.fusion_global_keys import GLOBAL_KEY_TYPES
from core.settings.store.base import SettingsStore, StoreInfo, StoreReadOnlyError
from core.settings.store.connections import FusionConnection
from core.storage import statefiles, userdirs

log = logging.getLogger(__name__)

#: Keys Fusion's GET adds that are not settings (stripped before a PUT, as Fusion's route does).
SERVER_KEYS = ("githubTokenConfigured", "prAuthAvailable", "trackingAuthAvailable", "trackingAuthReason")
#: Memory settings Fusion keeps in its global (user) scope: changed through ``PUT /api/settings/global``.
#: With them, every global setting Fusion's dashboard saves there (core.settings.fusion_global_keys).
GLOBAL_KEYS = frozenset({"agentMemoryInclusionMode",
                         "experimentalFeatures"}) | frozenset(GLOBAL_KEY_TYPES)
TIMEOUT_S = 3.0
CONNECT_TIMEOUT_S = 0.5


class FusionApiError(SettingsError):
    """Fusion's API could not be used (unreachable, refused, nonsense); the message is one line."""


_clients: dict[str, Any] = {}
_clients_lock = threading.Lock()


def _client(url: str) -> Any:
    """One ``httpx.Client`` per Fusion URL, shared (a watcher asks every second; a new client each time
    costs more than the request)."""
    import httpx  # here: only a project with a running Fusion pays for it

    key = url.split("://", 1)[0] + "://" + urlsplit(url).netloc
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = httpx.Client(
                timeout=httpx.Timeout(TIMEOUT_S, connect=CONNECT_TIMEOUT_S), follow_redirects=False,
                trust_env=False, verify=url.startswith("https://"))
        return client


class FusionApiClient:
    """A small client of Fusion's settings routes (``httpx``: typed timeouts, no redirects)."""

    def __init__(self, conn: FusionConnection) -> None:
        self.conn = conn

    def _request(self, method: str, route: str, body: Mapping[str, Any] | None = None) -> Any:
        import httpx

        headers = {"Accept": "application/json"}
        if self.conn.token:
            headers["Authorization"] = f"Bearer {self.conn.token}"
        params = {"projectId": self.conn.project_id} if self.conn.project_id else None
        where = f"Fusion at {self.conn.url}"
        try:
            resp = _client(self.conn.url).request(method, self.conn.url + route, params=params, headers=headers,
                                                  json=dict(body) if body is not None else None)
        except httpx.TimeoutException as exc:
            raise FusionApiError(f"{where} did not answer {method} {route} in time ({type(exc).__name__})") from exc
        except httpx.HTTPError as exc:
            raise FusionApiError(f"{where} is unreachable ({_one_line(exc)})") from exc
        try:
            data = resp.json()
        except ValueError:
            data = None
        message = _message_of(data) or _one_line(resp.text[:200]) or resp.reason_phrase
        if resp.status_code in (401, 403):
            raise FusionApiError(f"{where} refused memdesk's token (HTTP {resp.status_code}: {message}); "
                                 "give the daemon token with `memdesk fusion connect --url URL --token TOKEN`")
        if 400 <= resp.status_code < 500:
            raise SettingsError(f"Fusion refused the change: {message}", reason=message)
        if resp.status_code >= 300:
            raise FusionApiError(f"{where} answered HTTP {resp.status_code} to {method} {route}: {message}")
        return data

    def get_settings(self) -> dict[str, Any]:
        data = self._request("GET", "/api/settings")
        return _settings_object(data, self.conn.url)

    def put_settings(self, patch: Mapping[str, Any], *, scope: str = "project") -> dict[str, Any]:
        route = "/api/settings/global" if scope == "global" else "/api/settings"
        data = self._request("PUT", route, patch)
        return _settings_object(data, self.conn.url)

    def list_projects(self) -> list[dict[str, Any]]:
        data = self._request("GET", "/api/projects")
        items = data.get("projects") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise FusionApiError(f"Fusion at {self.conn.url} answered GET /api/projects with "
                                 f"{type(data).__name__}, not a list of projects")
        return [p for p in items if isinstance(p, dict)]


class FusionApiStore(SettingsStore):
    """Settings through a running Fusion's API."""

    def __init__(self, root: Path | str, conn: FusionConnection, first: dict[str, Any] | None = None) -> None:
        self.root = Path(root)
        self.client = FusionApiClient(conn)
        self.info = StoreInfo("fusion-api", f"Fusion, running, at {conn.url}", url=conn.url)
        self._last = first

    def read(self) -> dict[str, Any]:
        if self._last is not None:
            values, self._last = self._last, None
            return values
        values = self.client.get_settings()
        remember(self.root, self.info.url or "", values)
        return values

    def patch(self, changes: Mapping[str, Any]) -> dict[str, Any]:
        project = {k: v for k, v in changes.items() if k not in GLOBAL_KEYS and k not in SERVER_KEYS}
        global_ = {k: v for k, v in changes.items() if k in GLOBAL_KEYS}
        values: dict[str, Any] | None = None
        for scope, part in (("project", project), ("global", global_)):
            if not part:
                continue
            try:
                values = self.client.put_settings(part, scope=scope)
            except FusionApiError:
                raise
            except SettingsError as exc:
                field = _field_in(exc.reason, part)
                raise SettingsError(str(exc), field=field, reason=exc.reason) from exc
        if values is None:
            values = self.client.get_settings()
        remember(self.root, self.info.url or "", values)
        return values

    def stamp(self) -> str | None:
        try:
            values = self._last if self._last is not None else self.client.get_settings()
        except SettingsError:
            return None
        return hashlib.sha256(json.dumps(values, sort_keys=True).encode("utf-8")).hexdigest()


class FusionReadonlyStore(SettingsStore):
    """The last settings read from a current Fusion that is not running now: shown, never changed."""

    def __init__(self, root: Path | str, url: str | None, reason: str) -> None:
        self.root = Path(root)
        cached = recall(self.root)
        self._values = cached[1] if cached else {}
        shown = url or (cached[0] if cached else None)
        when = "the last values read" if cached else "no values read yet (Fusion's defaults)"
        if "unreachable" in reason or "did not answer" in reason or not shown:
            name = f"Fusion, not running{f' (last seen at {shown})' if shown else ''}: {when}"
        else:
            name = f"Fusion at {shown}, not usable now: {when}"
        self.info = StoreInfo("fusion-readonly", name, url=shown,
                              read_only=f"{reason} — start Fusion to change its settings")

    def read(self) -> dict[str, Any]:
        return dict(self._values)

    def patch(self, changes: Mapping[str, Any]) -> dict[str, Any]:
        raise StoreReadOnlyError(f"{self.info.plain_name}; {self.info.read_only}",
                                 field=next(iter(changes), None), reason=self.info.read_only)

    def stamp(self) -> str | None:
        return "readonly"


# -- the last values read, in the user's config folder (never in the project) ------------------------
def _cache_path(root: Path) -> Path:
    digest = hashlib.sha256(str(root.resolve()).encode("utf-8")).hexdigest()[:32]
    return userdirs.user_config_dir() / "fusion-cache" / f"{digest}.json"


def remember(root: Path, url: str, values: Mapping[str, Any]) -> None:
    """Keep ``values`` as the last read (written only when they changed: a watcher reads every second)."""
    doc = {"root": str(root.resolve()), "url": url, "settings": dict(values)}
    data = json.dumps(doc).encode("utf-8")
    path = _cache_path(root)
    try:  # written only when it changed (the door compares under its lock, and changes nothing then)
        statefiles.write("fusion-cache", None, data, key=path.stem, source="fusion-read", directory=path.parent.parent)
    except (OSError, MemoryBackendError) as exc:
        log.debug("Fusion's settings were not cached: %s", exc)  # a cache: never worth failing a read for


def recall(root: Path) -> tuple[str | None, dict[str, Any]] | None:
    path = _cache_path(root)
    try:  # untrusted: capped, a regular file in the user's folder, valid UTF-8
        doc = json.loads(statefiles.read("fusion-cache", key=path.stem, directory=path.parent.parent) or "null")
    except (OSError, ValueError, RecursionError, MemoryBackendError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("settings"), dict):
        return None
    return (doc.get("url") if isinstance(doc.get("url"), str) else None), doc["settings"]


# -- helpers ------------------------------------------------------------------------------------------
def _settings_object(data: Any, url: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise FusionApiError(f"Fusion at {url} answered with {type(data).__name__ if data is not None else 'no JSON'}"
                             ", not a settings object")
    return {k: v for k, v in data.items() if k not in SERVER_KEYS}


def _message_of(data: Any) -> str | None:
    if isinstance(data, dict):
        for key in ("message", "error"):  # 401: {"error": "Unauthorized", "message": "Valid bearer token required"}
            if isinstance(data.get(key), str) and data[key].strip():
                return _one_line(data[key])
    return None


def _one_line(value: object) -> str:
    return " ".join(str(value).split())


def _field_in(message: str, patch: Mapping[str, Any]) -> str | None:
    for key in patch:
        if key in message:
            return key
    return next(iter(patch)) if len(patch) == 1 else None
