"""What every settings store is: its kind, the one-line name the surfaces show, and read / patch / stamp.

A *store* is where the agent system reads a project's settings (design §3b): Fusion's settings API
(``fusion-api``), seed-era Fusion's ``.fusion/fusion.db`` (``fusion-db``), the last values read from a
current Fusion that is not running (``fusion-readonly``), or ``.fusion/config.json`` when there is no
Fusion store (``config-json``). memdesk's own settings never go to a store (:mod:`core.settings.store.own`).

A store holds Fusion's raw settings object: keys memdesk does not know are kept as they are, because a
write sends only a patch (``None`` deletes a key) and the store rewrites only those keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from core.errors import SettingsError

StoreKind = Literal["fusion-api", "fusion-db", "fusion-readonly", "config-json"]


@dataclass(frozen=True)
class StoreInfo:
    """Which store a project's settings live in, named for people and for programs."""

    kind: StoreKind
    name: str  # "Fusion's database `.fusion/fusion.db`", "Fusion, running, at http://127.0.0.1:4040" …
    path: str | None = None  # project-relative POSIX path (fusion-db, config-json)
    url: str | None = None  # Fusion's base URL (fusion-api; fusion-readonly when it came from one)
    read_only: str | None = None  # why it cannot be changed now, with what to do

    def to_json(self) -> dict[str, Any]:
        """The ``store`` object of ``memdesk settings get --json`` and ``GET /api/settings``."""
        out: dict[str, Any] = {"kind": self.kind, "name": self.plain_name}
        if self.path is not None:
            out["path"] = self.path
        if self.url is not None:
            out["url"] = self.url
        out["readOnly"] = self.read_only
        return out

    @property
    def plain_name(self) -> str:
        """The name without its markdown back-ticks (status bar, CLI)."""
        return self.name.replace("`", "")


class StoreReadOnlyError(SettingsError):
    """A change asked of a store that cannot take it now (Fusion not running, a damaged database)."""


class SettingsStore:
    """One project's settings store. Subclasses fill in :meth:`read`, :meth:`patch` and :meth:`stamp`."""

    info: StoreInfo

    def read(self) -> dict[str, Any]:
        """Fusion's raw settings object as the store holds it (a copy)."""
        raise NotImplementedError

    def patch(self, changes: Mapping[str, Any]) -> dict[str, Any]:
        """Apply ``changes`` (``None`` deletes the key), touching nothing else; return the new raw object.

        Raises :class:`SettingsError` (``field`` set when the store named the field it refused) and
        :class:`StoreReadOnlyError` when the store cannot be changed; nothing is half-written.
        """
        if self.info.read_only:
            raise StoreReadOnlyError(f"{self.info.plain_name} cannot be changed: {self.info.read_only}",
                                     field=next(iter(changes), None), reason=self.info.read_only)
        raise NotImplementedError

    def stamp(self) -> str | None:
        """A cheap token that changes whenever the stored settings may have changed (for pollers)."""
        raise NotImplementedError


def apply_patch(raw: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` with ``changes`` applied the way Fusion's ``updateSettings`` does: ``None`` deletes the key,
    anything else replaces it; every other key, and the order of the keys kept, as they were."""
    out = dict(raw)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out
