"""Where memdesk finds a running Fusion for a project, and the credentials to talk to it.

Read from Fusion's code (Runfusion/Fusion): the dashboard's API requires ``Authorization: Bearer
<daemon token>`` when a daemon token is set (``packages/dashboard/src/__tests__/auth-middleware-
integration.test.ts``: 401 ``{"error": "Unauthorized", "message": "Valid bearer token required"}``,
``/api/health`` exempt); the token, host and port live in Fusion's global settings (``daemonToken``,
``daemonHost`` ``"127.0.0.1"``, ``daemonPort`` ``4040`` in ``packages/core/src/config/settings-schema.ts``,
kept in ``~/.fusion/settings.json``); a request names its project with ``?projectId=``
(``packages/dashboard/src/routes/context.ts``, ``getProjectIdFromRequest``), the ids listed by
``GET /api/projects`` with each project's ``path``.

So memdesk looks, in order: a connection the operator gave for this project (``memdesk fusion connect
--url --token``, kept in the user config file ``fusion.json``, never in the project), then Fusion's own
global settings when they name a daemon port or token. It never guesses a port and never scans.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from core.errors import MemoryBackendError, SettingsError
from core.frozen import Record
from core.storage import fileio, statefiles, userdirs

CONNECTIONS_FILE = "fusion.json"
#: Fusion's home (its global ``settings.json``); ``MEMDESK_FUSION_HOME`` points elsewhere (tests, odd setups).
FUSION_HOME_ENV = "MEMDESK_FUSION_HOME"


class FusionConnection(Record):
    """How to reach one running Fusion: its base URL, its token and (when known) this project's id."""

    __slots__ = _fields = ("url", "token", "project_id", "source")
    url: str
    token: str | None
    project_id: str | None
    source: str  # "user config" | "Fusion's settings"

    def __init__(self, url: str, token: str | None, project_id: str | None = None,
                 source: str = "user config") -> None:
        self._set(url=url, token=token, project_id=project_id, source=source)


def connections_path() -> Path:
    return userdirs.user_config_dir() / CONNECTIONS_FILE


def _read_json(path: Path) -> dict[str, Any]:
    try:
        text = fileio.read_text(path)
    except MemoryBackendError as exc:
        raise SettingsError(f"cannot read {path}: {exc}") from exc
    if not text or not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise SettingsError(f"{path} is not valid JSON ({exc}); fix or remove it") from exc
    if not isinstance(doc, dict):
        raise SettingsError(f"{path} must hold a JSON object")
    return doc


def check_url(url: str) -> str:
    """``url`` without a trailing slash when it is an ``http(s)://host[:port]`` base URL, else :class:`SettingsError`."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SettingsError(f"{url!r} is not an http(s) URL of a running Fusion (e.g. http://127.0.0.1:4040)",
                            field="url")
    if parts.query or parts.fragment:
        raise SettingsError(f"{url!r}: give Fusion's base URL, without a query", field="url")
    return url.strip().rstrip("/")


def saved_connection(root: Path) -> FusionConnection | None:
    """The connection the operator gave for ``root`` (or for every project), if any."""
    doc = _read_json(connections_path())
    projects: dict[str, Any] = doc["projects"] if isinstance(doc.get("projects"), dict) else {}
    entry = projects.get(str(Path(root).resolve())) or doc.get("default")
    if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
        return None
    token = entry.get("token") if isinstance(entry.get("token"), str) else None
    project_id = entry.get("projectId") if isinstance(entry.get("projectId"), str) else None
    return FusionConnection(entry["url"].rstrip("/"), token, project_id, "user config")


def save_connection(root: Path | None, url: str, token: str | None, project_id: str | None = None) -> Path:
    """Keep ``url``/``token`` for ``root`` (``None``: every project) in the user config; returns the file."""
    url = check_url(url)
    path = connections_path()
    entry: dict[str, Any] = {"url": url}
    if token:
        entry["token"] = token
    if project_id:
        entry["projectId"] = project_id
    with statefiles.lock("fusion-connections", directory=path.parent):  # read, change, write as one
        doc = _read_json(path)
        if root is None:
            doc["default"] = entry
        else:
            projects: dict[str, Any] = doc["projects"] if isinstance(doc.get("projects"), dict) else {}
            projects[str(Path(root).resolve())] = entry
            doc["projects"] = projects
        statefiles.write("fusion-connections", None, json.dumps(doc, indent=2) + "\n", source="fusion-connect",
                         directory=path.parent)  # a new file: 0600
    return path


def forget_connection(root: Path | None) -> bool:
    """Drop the saved connection of ``root`` (``None``: the default one); whether there was one."""
    path = connections_path()
    with statefiles.lock("fusion-connections", directory=path.parent):
        doc = _read_json(path)
        if root is None:
            found = doc.pop("default", None) is not None
        else:
            projects = doc["projects"] if isinstance(doc.get("projects"), dict) else {}
            found = projects.pop(str(Path(root).resolve()), None) is not None
        if found:
            statefiles.write("fusion-connections", None, json.dumps(doc, indent=2) + "\n", source="fusion-forget",
                             directory=path.parent)
    return found


def fusion_home() -> Path:
    return Path(os.environ.get(FUSION_HOME_ENV) or Path.home() / ".fusion")


def fusion_daemon() -> FusionConnection | None:
    """The daemon Fusion's own global settings name (only when they set a daemon port or token)."""
    try:
        doc = _read_json(fusion_home() / "settings.json")
    except SettingsError:
        return None
    token = doc.get("daemonToken") if isinstance(doc.get("daemonToken"), str) and doc.get("daemonToken") else None
    port = doc.get("daemonPort")
    if token is None and not isinstance(port, int):
        return None
    host: str = doc["daemonHost"] if isinstance(doc.get("daemonHost"), str) and doc.get("daemonHost") else "127.0.0.1"
    port = port if isinstance(port, int) and 0 < port < 65536 else 4040  # Fusion's default daemonPort
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return FusionConnection(f"http://{host}:{port}", token, None, "Fusion's settings")


def env_token() -> str | None:
    """``FUSION_DAEMON_TOKEN``, which Fusion's server also takes as its token."""
    return os.environ.get("FUSION_DAEMON_TOKEN") or None
