"""memdesk's own per-project settings, in memdesk's own state: ``.fusion/memdesk/settings.json``.

Settings Fusion does not define (the memdesk backend and its config, history retention, the load
budget's readers) live here, never in Fusion's store (design §3b). Earlier versions wrote them into
``.fusion/config.json``; :func:`move_legacy_keys` moves them out once, keeping the old ``config.json``
in history, and until it has run they are read from there as a fallback.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from core.errors import MemoryBackendError, SettingsError
from core.settings.store.base import apply_patch
from core.settings.store.config_json import ConfigFile
from core.storage import fileio, statefiles

OWN_PATH = ".fusion/memdesk/settings.json"


def read_own(root: Path | str) -> dict[str, Any]:
    """The own settings object (``{}`` when there is none). A damaged file raises :class:`SettingsError`."""
    try:
        text = fileio.read_in_root(Path(root), OWN_PATH)
    except MemoryBackendError as exc:
        raise SettingsError(f"cannot read {OWN_PATH}: {exc}") from exc
    if text is None or not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise SettingsError(f"{OWN_PATH} is not valid JSON ({exc}); fix or remove it — memdesk will not "
                            "overwrite it") from exc
    if not isinstance(doc, dict):
        raise SettingsError(f"{OWN_PATH} must hold a JSON object, not {type(doc).__name__}")
    return doc


def patch_own(root: Path | str, changes: Mapping[str, Any]) -> dict[str, Any]:
    """Apply ``changes`` (``None`` deletes) to the own settings file and return the new object."""
    root_p = Path(root)
    with statefiles.lock("settings", root_p):  # read, change, write as one: the app and the CLI set keys at once
        return _patch_locked(root_p, changes)


def _patch_locked(root_p: Path, changes: Mapping[str, Any]) -> dict[str, Any]:
    try:
        before_text = fileio.read_in_root(root_p, OWN_PATH) or ""
    except MemoryBackendError as exc:
        raise SettingsError(f"cannot read {OWN_PATH}: {exc}") from exc
    current = read_own(root_p)
    new = apply_patch(current, changes)
    if new == current and before_text:
        return new
    if not new and not before_text:
        return new
    text = json.dumps(new, indent=2, ensure_ascii=False) + "\n"
    try:
        statefiles.write("settings", root_p, text, source="settings", expected_hash=fileio.content_hash(before_text))
    except MemoryBackendError as exc:
        raise SettingsError(f"cannot save {OWN_PATH}: {exc}") from exc
    return new


def legacy_own_values(root: Path | str, keys: Iterable[str]) -> dict[str, Any]:
    """The memdesk-only keys an earlier memdesk left in ``config.json`` (``{}`` when none, or unreadable)."""
    try:
        settings = ConfigFile(root).settings
    except SettingsError:
        return {}
    return {k: settings[k] for k in keys if k in settings}


def move_legacy_keys(root: Path | str, keys: Iterable[str]) -> list[str]:
    """Move memdesk-only ``keys`` out of ``config.json`` into the own settings file, once.

    A key already in the own file keeps the own value. ``config.json`` is rewritten without them
    through the history (its previous version is kept). Returns the keys moved.
    """
    keys = list(keys)
    try:
        cfg = ConfigFile(root)
    except SettingsError:
        return []
    found = {k: cfg.settings[k] for k in keys if k in cfg.settings}
    if not found:
        return []
    own = read_own(root)
    patch_own(root, {k: v for k, v in found.items() if k not in own})
    cfg.save({k: v for k, v in cfg.settings.items() if k not in found}, source="settings-move")
    return sorted(found)
