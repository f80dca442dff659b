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

from typing import Any

from fastapi import Body, FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from core.errors import SettingsError
from core.server.access import FULL, ScopeError
from core.server.guard import ACCESS_KEY
from core.settings.fusion_global_keys import GLOBAL_KEY_TYPES, global_key_type, global_scope
from core.settings.fusion_keys import MEMDESK_SERVED_GLOBAL, fusion_key_type
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


def add_settings_routes(app: FastAPI, project_dep: Any) -> None:
    """Register ``GET/PUT /api/settings`` on ``app``; ``project_dep`` resolves the served project."""

    @app.get("/api/settings", tags=["settings"])
    async def get_settings(p: project_dep, request: Request) -> Any:  # type: ignore[valid-type]
        """The project's settings as Fusion's ``GET /api/settings`` answers them, and where they live; Fusion's
        global settings the project's store does not hold come from where ``PUT /api/settings/global`` keeps them."""
        try:
            read = await run_in_threadpool(read_settings, p.root)
        except SettingsError as exc:
            return _refusal(exc)
        return without_secrets(request, await _with_home_globals(request, p.root, read, settings_body(read)))

    @app.put("/api/settings", tags=["settings"])
    async def put_settings(p: project_dep, request: Request, patch: dict[str, Any] = Body(...)) -> Any:  # type: ignore[valid-type]  # noqa: B008
        """Change settings with a patch (``null`` deletes a key) where each lives; answers the merged settings."""
        changes = {k: v for k, v in patch.items() if k not in SERVER_KEYS and k != STORE_KEY and k != "projectId"}
        try:
            read = await run_in_threadpool(_update, p, changes)
        except SettingsError as exc:
            return _refusal(exc)
        return without_secrets(request, settings_body(read))


    @app.get("/api/settings/global", tags=["settings"])
    async def get_global_settings(p: project_dep, request: Request) -> Any:  # type: ignore[valid-type]
        """Fusion's dashboard's ``fetchGlobalSettings`` (``GET /api/settings/global``, no ``projectId``): the
        global settings memdesk serves, ``{experimentalFeatures}``, from the store ``PUT`` writes them to (the
        project named by ``?projectId=``, else the first served). Fusion's other global settings (theme,
        providers…) are the dashboard's own and are not kept by memdesk, so they are absent, as unset ones are
        in Fusion's answer."""
        try:
            read = await run_in_threadpool(read_settings, p.root)
        except SettingsError as exc:
            return _refusal(exc)
        return without_secrets(request, await _with_home_globals(request, p.root, read, global_body(read)))

    @app.put("/api/settings/global", tags=["settings"])
    async def put_global_settings(p: project_dep, patch: dict[str, Any] = Body(...)) -> Any:  # type: ignore[valid-type]  # noqa: B008
        """Fusion's dashboard's ``updateGlobalSettings``: Fusion's global settings (``experimentalFeatures``, the
        auto-reload switch, the theme, …), each checked by its type (:mod:`core.settings.fusion_global_keys`) and
        kept through the project's settings store, where ``GET /api/settings`` reads them (the project named by
        ``?projectId=``, else the first served; a running Fusion's own global settings); a project setting or an
        unknown key is refused, and then nothing is saved."""
        changes = {k: v for k, v in patch.items() if k not in SERVER_KEYS and k != STORE_KEY and k != "projectId"}
        for key in changes:
            if key not in MEMDESK_SERVED_GLOBAL and global_key_type(key) is None:
                where = ("a project setting: use PUT /api/settings" if fusion_key_type(key) is not None
                         else "not one of Fusion's global settings")
                shown = key if len(key) <= 80 else key[:80] + "…"
                return _refusal(SettingsError(f"{shown!r} is {where}; nothing was saved", field=key))
        try:
            read = await run_in_threadpool(_update_global, p, changes)
        except SettingsError as exc:
            return _refusal(exc)
        return settings_body(read)


async def _with_home_globals(request: Request, root: Any, read: SettingsRead, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with Fusion's global settings its project's store does not hold taken from the first served
    project's store, where ``PUT /api/settings/global`` without a ``projectId`` (as Fusion's dashboard sends it)
    keeps them: a global switch flipped in one project's view is the same in every served project's, as in
    Fusion. A key the project's own store holds is answered as it holds it; ``experimentalFeatures`` (memdesk's
    Memory-view switch, which ``PUT /api/settings`` also takes) stays each project's own."""
    served = getattr(request.app.state, "served", None)
    if served is None or not served.served or served.served[0].root == root:
        return body
    home_project = served.served[0]
    try:  # they are the first project's (secrets among them: daemonToken, API keys): only for a token that may read it
        request.scope.get("state", {}).get(ACCESS_KEY, FULL).check_project(home_project.key, home_project.root)
    except ScopeError:
        return body
    try:
        home = await run_in_threadpool(read_settings, home_project.root)
    except SettingsError:
        return body  # the other project's settings cannot be read: this project's are still answered
    for key, value in home.fusion_raw.items():
        if key in GLOBAL_KEY_TYPES and key not in MEMDESK_SERVED_GLOBAL and key not in read.fusion_raw:
            body[key] = value
    return body


def _update_global(project: Any, changes: dict[str, Any]) -> SettingsRead:
    with global_scope():  # Fusion's global keys taken by the settings checks, in this thread, for this change
        return _update(project, changes)


def _update(project: Any, changes: dict[str, Any]) -> SettingsRead:
    from core.store import ProjectStore

    ProjectStore(project.root, project=project).update_settings(changes)  # the schedule kept in step too
    return read_settings(project.root)
