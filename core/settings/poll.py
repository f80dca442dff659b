"""Noticing a settings change made elsewhere (Fusion's dashboard or CLI, another memdesk, a hand edit).

:func:`poll_settings` is what a watcher runs off the GUI thread, a few times a second: it detects the
store again (Fusion started or stopped), takes the store's cheap change token (seed-era Fusion bumps
``__meta.lastModified`` after every write so that pollers notice; a file's size and time; Fusion's
answer), and reads the settings again only when the token moved.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.errors import SettingsError
from core.settings.model import SettingsRead, read_settings
from core.settings.store import detect_store
from core.settings.store.config_json import CONFIG_PATH, file_stamp
from core.settings.store.own import OWN_PATH


@dataclass(frozen=True)
class Poll:
    """One look: the token, and what was read when it moved (``read`` or ``error``; both ``None`` if not)."""

    stamp: str
    read: SettingsRead | None = None
    error: SettingsError | None = None


def poll_settings(root: Path | str, previous: str | None) -> Poll:
    """Look at the project's settings; read them when anything moved since ``previous``."""
    root_p = Path(root)
    store = detect_store(root_p)
    parts = [store.info.kind, store.info.read_only or "", store.stamp() or "?", file_stamp(root_p / OWN_PATH),
             file_stamp(root_p / CONFIG_PATH)]
    stamp = "|".join(parts)
    if stamp == previous:
        return Poll(stamp)
    try:
        return Poll(stamp, read=read_settings(root_p, store))
    except SettingsError as exc:
        return Poll(stamp, error=exc)
