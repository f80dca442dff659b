"""``.fusion/config.json`` as the settings store of a project with no Fusion store (kind ``config-json``).

Read in both shapes (flat ``{...settings}`` or Fusion's ``{"nextId": N, "settings": {...}}``) and written
back in the shape found, every other key kept. A malformed file is reported and never overwritten. A
``config.json`` memdesk creates is readable by everyone who reads the project (``0644`` less the umask),
as Fusion's own copy is; an existing one keeps its mode.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.errors import MemoryBackendError, SettingsError
from core.settings.store.base import SettingsStore, StoreInfo, apply_patch
from core.storage import fileio, statefiles

CONFIG_PATH = ".fusion/config.json"
#: A config.json memdesk creates gets 0666 less the umask, as Node's ``writeFile`` creates Fusion's
#: (``core.storage.statefiles.REGISTRY["fusion-config"]``).


class ConfigFile:
    """The raw ``config.json`` of a project: its settings dict and the shape to write back."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.path = self.root / CONFIG_PATH
        self.document: dict[str, Any] = {}
        self.nested = False
        self.text: str = ""
        self._load()

    def _load(self) -> None:
        try:
            text = fileio.read_in_root(self.root, CONFIG_PATH)
        except MemoryBackendError as exc:
            raise SettingsError(f"cannot read {CONFIG_PATH}: {exc}", field=None) from exc
        if text is None or not text.strip():
            self.text = text or ""
            return
        self.text = text
        try:
            doc = json.loads(text)
        except RecursionError as exc:
            raise SettingsError(f"{CONFIG_PATH} is nested too deeply to read; fix or remove it — memdesk will "
                                "not overwrite it") from exc
        except json.JSONDecodeError as exc:
            raise SettingsError(
                f"{CONFIG_PATH} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                "fix or remove it — memdesk will not overwrite it",
            ) from exc
        if not isinstance(doc, dict):
            raise SettingsError(f"{CONFIG_PATH} must hold a JSON object, not {type(doc).__name__}")
        self.document = doc
        if isinstance(doc.get("settings"), dict) and ("nextId" in doc or len(doc) <= 2):
            self.nested = True
        elif "settings" in doc and "nextId" in doc:
            raise SettingsError(f'{CONFIG_PATH}: "settings" must be a JSON object')

    @property
    def exists(self) -> bool:
        return bool(self.text)

    @property
    def settings(self) -> dict[str, Any]:
        """The settings mapping (the nested ``settings`` object, or the whole flat document)."""
        if self.nested:
            return self.document["settings"]
        return self.document

    def save(self, settings: dict[str, Any], source: str = "settings") -> None:
        """Write ``settings`` back in the shape found, atomically, keeping every other key (and history)."""
        doc = dict(self.document)
        if self.nested:
            doc["settings"] = settings
        else:
            doc = settings
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        try:
            statefiles.write("fusion-config", self.root, text, expected_hash=fileio.content_hash(self.text),
                             source=source)
        except MemoryBackendError as exc:
            raise SettingsError(f"cannot save {CONFIG_PATH}: {exc}") from exc
        self.text = text
        self.document = doc


class ConfigJsonStore(SettingsStore):
    """Settings in ``.fusion/config.json`` (no Fusion store found)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.info = StoreInfo("config-json", f"`{CONFIG_PATH}` (no Fusion store found)", path=CONFIG_PATH)

    def read(self) -> dict[str, Any]:
        return dict(ConfigFile(self.root).settings)

    def patch(self, changes: Mapping[str, Any]) -> dict[str, Any]:
        with statefiles.lock("fusion-config", self.root):  # read, change, write as one among memdesk's writers
            cfg = ConfigFile(self.root)
            new = apply_patch(cfg.settings, changes)
            if new != cfg.settings or not cfg.exists and new:
                cfg.save(new)
        return dict(new)

    def stamp(self) -> str | None:
        return file_stamp(self.root / CONFIG_PATH)


def file_stamp(path: Path) -> str:
    """Size and change time of ``path`` (``"absent"`` when there is none): a poller's change token."""
    try:
        st = os.stat(path)
    except OSError:
        return "absent"
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
