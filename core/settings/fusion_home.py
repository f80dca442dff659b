"""Fusion's global settings where Fusion reads them: ``~/.fusion/settings.json`` (design §3b).

Fusion keeps its global (user-wide) settings (theme, notifications, default models, API keys, its daemon's
token…) in one JSON object in ``settings.json`` of its home folder, ``defaultGlobalDir()`` = ``$HOME/.fusion``
(Runfusion/Fusion ``packages/core/src/config/global-settings.ts`` at 34e0e664d2013e8337f8367ab7bf4c18eb2fee00,
``GlobalSettingsStore``; its test ``packages/core/src/__tests__/global-settings.test.ts`` at 2f23d226).
With Fusion not running, ``PUT /api/settings/global`` changes them there, as ``updateSettings`` does:

* the patch is merged into the object the file holds, keys memdesk does not know kept as they are;
* ``null`` deletes a key (Fusion then answers its default);
* a file that is not a JSON object is refused and left byte for byte as it was (Fusion's ``readRawForUpdate``:
  "Refusing to update global settings…"), and a missing file and folder are created;
* the file is written as ``JSON.stringify(settings, null, 2)`` (two-space indent, no newline at the end),
  atomically, 0600 when new, under the file's lock and Fusion's own (``settings.json.lock``,
  :mod:`core.storage.fusion_lock`), through memdesk's state door
  (:mod:`core.storage.statefiles`, ``fusion-global``: a link out, a FIFO, a hard link, a device or a folder
  at its name refused in one line; one line in the user's state log, no values).

Fusion's own write fills in its defaults (``DEFAULT_GLOBAL_SETTINGS``) too; memdesk writes only the keys the file
and the patch hold, which Fusion reads the same way (``{...DEFAULT_GLOBAL_SETTINGS, ...parsed}``).
``MEMDESK_FUSION_HOME`` points at another folder (tests, odd setups). Nothing here is ever written in a project.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from core.errors import MemoryBackendError, SettingsError
from core.logs import get_logger
from core.storage import statefiles
from core.storage.fusion_lock import fusion_settings_lock

log = get_logger(__name__)

NAME = "fusion-global"
__all__ = ["read_home_globals", "settings_path", "update_home_globals"]


def settings_path() -> Path:
    """Where Fusion's global settings are: ``settings.json`` in Fusion's home folder."""
    return statefiles.fusion_home_dir() / "settings.json"


def _legacy_home() -> Path | None:
    """Fusion's older home folder (``~/.pi/fusion``, else ``~/.pi/kb``) when ``~/.fusion`` is not there yet: Fusion
    moves it to ``~/.fusion`` when it next starts (``resolveGlobalDirForHome``), and would not if memdesk had made
    ``~/.fusion`` first, leaving the settings there unread."""
    if os.environ.get(statefiles.FUSION_HOME_ENV):
        return None
    home = statefiles.fusion_home_dir()
    if os.path.lexists(home):
        return None
    for legacy in (home.parent / ".pi" / "fusion", home.parent / ".pi" / "kb"):
        if os.path.lexists(legacy):
            return legacy
    return None


def _refuse_legacy() -> None:
    legacy = _legacy_home()
    if legacy is not None:
        raise SettingsError(f"Fusion's global settings are still in {legacy}, which Fusion moves to "
                            f"{statefiles.fusion_home_dir()} when it next starts: start Fusion once, then try again; "
                            "nothing was saved", field=None, reason="legacy home")


def _parse(text: str | None) -> dict[str, Any]:
    """The file's object (``{}`` when absent); :class:`SettingsError` (one line) when it is not a JSON object."""
    if text is None:
        return {}
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise SettingsError(f"{settings_path()} is not valid JSON ({str(exc)[:120]}); fix or remove it; "
                            "nothing was saved", field=None, reason="invalid file") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{settings_path()} holds {type(data).__name__}, not a JSON object; fix or remove it; "
                            "nothing was saved", field=None, reason="invalid file")
    return data


def _read(directory: Path | None = None) -> dict[str, Any]:
    try:
        return _parse(statefiles.read(NAME, directory=directory))
    except MemoryBackendError as exc:  # a link out, a FIFO, a folder, not UTF-8, too big: one line, nothing written
        raise SettingsError(f"{str(exc).rstrip('. ')}; nothing was saved", field=None, reason="unreadable") from exc


def read_home_globals() -> dict[str, Any]:
    """Fusion's global settings as the file holds them (``{}`` when absent or unreadable, as Fusion's
    ``readRaw`` answers; the reason is logged); from Fusion's older home folder while Fusion has not moved it."""
    try:
        return _read(_legacy_home())
    except SettingsError as exc:
        log.warning("Fusion's global settings are not read: %s", exc)
        return {}


def check_home_globals() -> None:
    """Raise :class:`SettingsError` (one line) when the file cannot take a change now (invalid, a link out…)."""
    _refuse_legacy()
    _read()


def update_home_globals(changes: dict[str, Any], *, source: str = "serve:settings-global") -> dict[str, Any]:
    """Merge ``changes`` (``None`` deletes a key) into Fusion's global settings file; return what it holds after.

    The values are checked by the caller (:func:`core.settings.fusion_keys.check_fusion_value`). Read, merge and
    write under the file's lock and Fusion's; a file that is not a JSON object is refused and left as it was."""
    _refuse_legacy()
    try:
        with statefiles.lock(NAME), fusion_settings_lock(settings_path()):  # memdesk's lock, then Fusion's
            merged = _read()
            for key, value in changes.items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            try:  # NaN and Infinity are not JSON: Fusion could not read the file back
                text = json.dumps(merged, indent=2, ensure_ascii=False, allow_nan=False)
            except ValueError as exc:
                raise SettingsError(f"{exc}: not a JSON value; nothing was saved", field=None,
                                    reason="not a JSON value") from exc
            statefiles.write(NAME, None, text, source=source)
    except MemoryBackendError as exc:
        raise SettingsError(f"{str(exc).rstrip('. ')}", field=None, reason="not written") from exc
    return merged
