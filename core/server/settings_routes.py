"""``memdesk serve``'s ``GET/PUT /api/settings`` in Fusion's shapes, from the project's settings store.

Fusion's dashboard (Runfusion/Fusion ``packages/dashboard/src/routes/register-settings-memory-routes.ts``)
answers ``GET /api/settings`` with the merged settings object plus server-computed keys, and takes a
patch on ``PUT /api/settings`` (``null`` deletes a key), answering the merged settings; errors are
``{"error": message}``. memdesk answers the same shapes from the same store its app and CLI use
(:mod:`core.settings.store`): Fusion's keys from the store (unknown ones included), memdesk's own from
its state, and the store named under the server-computed key ``settingsStore``.

A setting refused is 400 with ``details.field``; a store that cannot take changes now (Fusion stopped,
a damaged database) is 409; Fusion's API unreachable or refusing memdesk is 503.

(No ``from __future__ import annotations`` here: FastAPI reads the route parameters' annotations, and
the project dependency is a value given at registration.)
"""

from collections.abc import Callable
from typing import Any

from fastapi import Body, FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from core.errors import SettingsError
from core.server.access import FULL
from core.server.guard import ACCESS_KEY
from core.settings.fusion_global_keys import GLOBAL_KEY_TYPES, global_key_type, global_scope
from core.settings.fusion_home import check_home_globals, read_home_globals, update_home_globals
from core.settings.fusion_keys import MEMDESK_SERVED_GLOBAL, check_fusion_value, fusion_key_type
from core.settings.model import FUSION_KEYS, OWN_KEYS, ProjectSettings, SettingsRead, read_settings
from core.settings.store.base import StoreReadOnlyError
from core.settings.store.fusion_api import SERVER_KEYS, FusionApiError

STORE_KEY = "settingsStore"


def settings_body(read: SettingsRead) -> dict[str, Any]:
    """The merged settings object as Fusion's GET answers it, with the store named."""
    defaults = ProjectSettings().model_dump(by_alias=True, exclude_none=True)
    known = read.settings.model_dump(by_alias=True, exclude_none=True)
    body = {**{k: v for k, v in defaults.items() if k in FUSION_KEYS}, **read.fusion_raw}
    body.update({k: v for k, v in known.items() if k in FUSION_KEYS or k in OWN_KEYS})
    body["experimentalFeatures"] = with_memory_view(body.get("experimentalFeatures"))
    body[STORE_KEY] = read.store.to_json()
    return body


def global_body(read: SettingsRead) -> dict[str, Any]:
    """The global settings memdesk serves (:data:`MEMDESK_SERVED_GLOBAL` and those saved with ``PUT
    /api/settings/global``, :mod:`core.settings.fusion_global_keys`), as ``GET /api/settings`` answers them."""
    body = settings_body(read)
    return {key: value for key, value in body.items() if key in MEMDESK_SERVED_GLOBAL or key in GLOBAL_KEY_TYPES}


#: Settings that hold a secret (or a URL or object carrying one): answered only to a token that may change them.
_SECRET_KEYS = frozenset({"webhookUrl", "secretsEnv", "customProviders", "remoteAccess", "notificationProviders"})
_SECRET_ENDINGS = ("Token", "ApiKey", "Password", "Secret")


def is_secret(key: str) -> bool:
    """Whether Fusion's setting ``key`` holds a secret (``daemonToken``, ``githubAuthToken``, ``stashApiKey``…)."""
    return key in _SECRET_KEYS or key.endswith(_SECRET_ENDINGS)


def without_secrets(request: Request, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` without the secrets the request's token may not change: a project's need a write token limited to
    no path, Fusion's global ones (with Fusion running: its daemon's token) one limited to no project either."""
    who = request.scope.get("state", {}).get(ACCESS_KEY, FULL)
    may_project = who.scope == "write" and not who.paths
    may_global = may_project and not who.projects
    if may_global:
        return body
    return {k: v for k, v in body.items()
            if not is_secret(k) or (may_project and global_key_type(k) is None)}


def with_memory_view(features: Any) -> dict[str, Any]:
    """Fusion's ``experimentalFeatures`` with ``memoryView`` on unless the settings turn it off.

    Fusion's dashboard shows its Memory view only when ``experimentalFeatures.memoryView`` is true
    (Runfusion/Fusion ``packages/dashboard/app/hooks/useAppSettings.ts`` at a1cac3a6:
    ``setMemoryEnabled(features.memoryView === true)``); memory is what memdesk serves, so the view is on by
    default. A ``memoryView`` the settings hold (``false`` included) is answered as it is."""
    out = dict(features) if isinstance(features, dict) else {}
    out.setdefault("memoryView", True)
    return out


def _refusal(exc: SettingsError) -> JSONResponse:
    if isinstance(exc, StoreReadOnlyError):
        status = 409
    elif isinstance(exc, FusionApiError):
        status = 503
    else:
        status = 400
    body: dict[str, Any] = {"error": str(exc), "code": "INVALID_CONFIG",
                            "details": {"code": "INVALID_CONFIG", "backend": None, "field": exc.field}}
    return JSONResponse(body, status_code=status)


def _changes(patch: dict[str, Any]) -> dict[str, Any]:
    """A PUT's patch less what the server computes or the dashboard adds (its ``projectId``)."""
    return {k: v for k, v in patch.items() if k not in SERVER_KEYS and k != STORE_KEY and k != "projectId"}


async def _answer_read(p: Any, request: Request, shape: Callable[[SettingsRead], dict[str, Any]]) -> Any:
    """The project's settings read off the event loop, in ``shape`` (Fusion's project or global answer), with
    Fusion's global settings its store lacks added, and the secrets this token may not change left out."""
    try:
        read = await run_in_threadpool(read_settings, p.root)
    except SettingsError as exc:
        return _refusal(exc)
    return without_secrets(request, await run_in_threadpool(_with_home_globals, read, shape(read)))


def add_settings_routes(app: FastAPI, project_dep: Any) -> None:
    """Register ``GET/PUT /api/settings`` on ``app``; ``project_dep`` resolves the served project."""

    @app.get("/api/settings", tags=["settings"])
    async def get_settings(p: project_dep, request: Request) -> Any:  # type: ignore[valid-type]
        """The project's settings as Fusion's ``GET /api/settings`` answers them, and where they live; Fusion's
        global settings the project's store does not hold come from where ``PUT /api/settings/global`` keeps them."""
        return await _answer_read(p, request, settings_body)

    @app.put("/api/settings", tags=["settings"])
    async def put_settings(p: project_dep, request: Request, patch: dict[str, Any] = Body(...)) -> Any:  # type: ignore[valid-type]  # noqa: B008
        """Change settings with a patch (``null`` deletes a key) where each lives; answers the merged settings."""
        changes = _changes(patch)
        try:
            read = await run_in_threadpool(_update, p, changes)
        except SettingsError as exc:
            return _refusal(exc)
        return without_secrets(request, settings_body(read))

    @app.get("/api/settings/global", tags=["settings"])
    async def get_global_settings(p: project_dep, request: Request) -> Any:  # type: ignore[valid-type]
        """Fusion's dashboard's ``fetchGlobalSettings`` (``GET /api/settings/global``, no ``projectId``): the
        global settings memdesk serves, ``{experimentalFeatures}`` from the project's store (the project named by
        ``?projectId=``, else the first served), and Fusion's other global settings from where Fusion reads them
        (a running Fusion's answer, else ``~/.fusion/settings.json``: :mod:`core.settings.fusion_home`)."""
        return await _answer_read(p, request, global_body)

    @app.put("/api/settings/global", tags=["settings"])
    async def put_global_settings(p: project_dep, request: Request, patch: dict[str, Any] = Body(...)) -> Any:  # type: ignore[valid-type]  # noqa: B008
        """Fusion's dashboard's ``updateGlobalSettings``: Fusion's global settings (``experimentalFeatures``, the
        auto-reload switch, the theme, …), each checked by its type (:mod:`core.settings.fusion_global_keys`) and
        changed where Fusion reads them: a running Fusion's own ``PUT /api/settings/global``; with Fusion not
        running, ``~/.fusion/settings.json`` (:mod:`core.settings.fusion_home`), never the project's store, but
        ``experimentalFeatures`` (the Memory view's switch), which stays the project's (``?projectId=``, else the
        first served). A project setting or an unknown key is refused, and then nothing is saved."""
        changes = _changes(patch)
        for key in changes:
            if key not in MEMDESK_SERVED_GLOBAL and global_key_type(key) is None:
                where = ("a project setting: use PUT /api/settings" if fusion_key_type(key) is not None
                         else "not one of Fusion's global settings")
                shown = key if len(key) <= 80 else key[:80] + "…"
                return _refusal(SettingsError(f"{shown!r} is {where}; nothing was saved", field=key))
        try:
            read = await run_in_threadpool(_put_global, p, changes)
        except SettingsError as exc:
            return _refusal(exc)
        return without_secrets(request, await run_in_threadpool(_with_home_globals, read, settings_body(read)))


def _with_home_globals(read: SettingsRead, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with Fusion's global settings from ``~/.fusion/settings.json`` (where Fusion reads them and ``PUT
    /api/settings/global`` writes them with Fusion not running), those the project's store does not hold: a key a
    previous memdesk wrote into the project's store is answered as it holds it (never migrated). A running
    Fusion's answer has its global settings already. ``experimentalFeatures`` stays each project's own."""
    if read.store.kind == "fusion-api":
        return body
    # A stopped Fusion's last answer (fusion-readonly) held its globals as read from this same file then: the file
    # is newer. A key another store holds was written there by an earlier memdesk, and is answered as it holds it.
    newer = read.store.kind == "fusion-readonly"
    for key, value in read_home_globals().items():
        if key in GLOBAL_KEY_TYPES and key not in MEMDESK_SERVED_GLOBAL and (newer or key not in read.fusion_raw):
            body[key] = value
    return body


def _put_global(project: Any, changes: dict[str, Any]) -> SettingsRead:
    """Check every change, then make it where Fusion reads it (:meth:`put_global_settings`)."""
    with global_scope():
        for key, value in changes.items():
            check_fusion_value(key, value)
    read = read_settings(project.root)
    if read.store.kind == "fusion-api":  # Fusion runs: its own global route, which writes its own file
        return _update_global(project, changes)
    home = {k: v for k, v in changes.items() if k not in MEMDESK_SERVED_GLOBAL}
    own = {k: v for k, v in changes.items() if k in MEMDESK_SERVED_GLOBAL}
    if home:
        check_home_globals()  # an invalid file refused before anything is saved
    if own:
        read = _update_global(project, own)
    if home:
        update_home_globals(home)
    return read


def _update_global(project: Any, changes: dict[str, Any]) -> SettingsRead:
    with global_scope():  # Fusion's global keys taken by the settings checks, in this thread, for this change
        return _update(project, changes)


def _update(project: Any, changes: dict[str, Any]) -> SettingsRead:
    from core.store import ProjectStore

    ProjectStore(project.root, project=project).update_settings(changes)  # the schedule kept in step too
    return read_settings(project.root)
