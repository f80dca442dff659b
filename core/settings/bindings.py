"""Which team memory a project folder joins: bound only after the operator confirms it once (issue 19, item 3).

A project's settings may name a team connection (one of the user's, from ``connections.json``) and a
project key. Those settings are the project's, so untrusted: a cloned repository whose
``config.json`` names the user's ``team`` connection and another project's key would otherwise get
that project's memory mirrored into it, and its agents' appends would go there. So a binding counts
only once the operator has confirmed it for this folder; the confirmation is kept in the user's
config (``bindings.json`` beside ``connections.json``, never in a project), by the folder's real
path. Until then the project is opened read-only, with the reason (:func:`binding_reason`), and
nothing connects to the database.

Confirming is ``memdesk backend confirm``, the app's banner action, or an operator's own switch to the
backend in the app or with ``memdesk backend move``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.errors import SettingsError
from core.storage import fileio, statefiles
from core.storage.userdirs import user_config_dir

BINDINGS_FILE = "bindings.json"
CONFIRM_HINT = "memdesk backend confirm"


def bindings_path() -> Path:
    """The user's ``bindings.json``."""
    return user_config_dir() / BINDINGS_FILE


def team_of(config: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """``(connection, project key)`` when a backend config names one of the user's team connections, else ``None``."""
    if not isinstance(config, Mapping):
        return None
    connection = config.get("connection")
    if not isinstance(connection, str) or not connection:
        return None
    key = config.get("projectKey", config.get("project_key", ""))
    return connection, key if isinstance(key, str) else repr(key)


def _folder(root: str | os.PathLike[str]) -> str:
    return os.path.realpath(root)


def _load() -> dict[str, Any]:
    path = bindings_path()
    try:
        text = fileio.read_text(path, max_size=4 * fileio.MAX_FILE_SIZE)
    except Exception as exc:
        raise SettingsError(f"cannot read {path}: {exc}") from exc
    if text is None or not text.strip():
        return {"version": 1, "projects": {}}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                            "fix or remove it — memdesk will not overwrite it") from exc
    if not isinstance(data, dict) or not isinstance(data.get("projects"), dict):
        raise SettingsError(f'{path} must hold an object with a "projects" object')
    return data


def confirmed(root: str | os.PathLike[str]) -> tuple[str, str] | None:
    """The binding the operator confirmed for the folder ``root`` (``None``: none)."""
    entry = _load()["projects"].get(_folder(root))
    if not isinstance(entry, dict):
        return None
    connection, key = entry.get("connection"), entry.get("projectKey")
    if isinstance(connection, str) and isinstance(key, str):
        return connection, key
    return None


def confirm(root: str | os.PathLike[str], connection: str, project_key: str) -> Path:
    """Record that the operator binds the folder ``root`` to ``connection`` and ``project_key``; the file written."""
    if not isinstance(connection, str) or not connection or not isinstance(project_key, str):
        raise SettingsError("a binding needs a connection name and a project key")
    path = bindings_path()
    with statefiles.lock("bindings", directory=path.parent):  # read, change and write as one: others confirm too
        data = _load()
        data["version"] = 1
        data["projects"][_folder(root)] = {"connection": connection, "projectKey": project_key,
                                           "confirmedAt": datetime.now(UTC).isoformat(timespec="seconds")}
        text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
        statefiles.write("bindings", None, text, source="binding-confirm", directory=path.parent)
    os.chmod(path, 0o600)
    return path


def forget(root: str | os.PathLike[str]) -> bool:
    """Drop the folder's binding (after a move back to files); whether there was one."""
    path = bindings_path()
    with statefiles.lock("bindings", directory=path.parent):
        data = _load()
        if data["projects"].pop(_folder(root), None) is None:
            return False
        statefiles.write("bindings", None, json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n",
                         source="binding-forget", directory=path.parent)
    return True


def binding_reason(root: str | os.PathLike[str], backend_id: str, config: Mapping[str, Any] | None) -> str | None:
    """Why the project cannot use its configured team binding yet (``None``: not a team backend, or confirmed)."""
    team = team_of(config)
    if team is None:
        return None
    connection, key = team
    try:
        have = confirmed(root)
    except SettingsError as exc:
        return f"the project's team binding cannot be checked ({exc}); it is read-only until that is fixed"
    if have == team:
        return None
    told = (f' (you confirmed connection "{have[0]}" and project key "{have[1]}" for this folder)'
            if have is not None else "")
    return (f'this project\'s settings bind it to the team connection "{connection}" and project key "{key}" '
            f'(backend "{backend_id}"), which you have not confirmed for this folder{told}; it is read-only and '
            f"nothing is read from or written to the team's database until you confirm it ({CONFIRM_HINT}, "
            "or Confirm in the app)")
