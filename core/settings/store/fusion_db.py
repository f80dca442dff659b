"""Seed-era Fusion's own settings store: ``.fusion/fusion.db``, table ``config``, row ``id = 1`` (kind ``fusion-db``).

What Fusion does, as read in its code (Runfusion/Fusion ``packages/core/src/store.ts``, ``readConfig`` /
``readConfigFast`` / ``writeConfig`` / ``updateSettings``, and ``packages/core/src/db.ts``,
``bumpLastModified``; the fixture ``fusion-seed-db`` was made with its schema at commit ``4579e38bd``):

- ``readConfig``: ``SELECT * FROM config WHERE id = 1``; ``settings`` is a JSON text column parsed with
  ``fromJson`` (empty, ``null`` or invalid JSON read as no settings).
- ``updateSettings``: under its config lock, read the row, delete the keys the patch sets to ``null``,
  merge the rest over the stored settings, ``writeConfig``.
- ``writeConfig``: ``INSERT OR REPLACE INTO config (id, nextId, nextWorkflowStepId, settings,
  workflowSteps, updatedAt)`` with ``updatedAt = new Date().toISOString()`` and ``settings`` as
  ``JSON.stringify`` (compact); then ``bumpLastModified()``: ``__meta.lastModified`` set to
  ``max(Date.now(), current + 1)`` (epoch ms, strictly increasing, so pollers notice); then, best
  effort, ``config.json`` rewritten as ``JSON.stringify({nextId, settings}, null, 2)`` (no final newline)
  through ``config.json.tmp`` and a rename.

memdesk does the same in one SQLite transaction (``BEGIN IMMEDIATE``; a busy database is retried within
a bound, then named in one line; nothing is half-written), but with ``UPDATE … SET settings, updatedAt``:
``nextId``, ``nextWorkflowStepId``, ``workflowSteps`` and every key it did not change stay as they were.
Then it refreshes the ``config.json`` copy exactly as Fusion writes it, keeping the file's mode (a new
one gets Node's ``0666`` less the umask). A database that cannot be read, or a row that cannot, makes
the store read-only with the reason.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.errors import MemoryBackendError, SettingsError
from core.settings.store.base import SettingsStore, StoreInfo, StoreReadOnlyError, apply_patch
from core.settings.store.config_json import CONFIG_PATH
from core.storage import fileio, statefiles

DB_PATH = ".fusion/fusion.db"
#: Fusion opens its database with ``busy_timeout`` 5000; memdesk waits no longer than that in all.
BUSY_BOUND_S = 5.0
_ATTEMPT_TIMEOUT_S = 0.25


def js_stringify(value: Any, indent: int | None = None) -> str:
    """``JSON.stringify(value, null, indent)`` as Node writes it: no ASCII escaping, ``", "``-free compact
    form, integral floats without ``.0`` (JavaScript has one number type)."""
    return json.dumps(_js_numbers(value), ensure_ascii=False, indent=indent,
                      separators=(",", ":") if indent is None else (",", ": "))


def _js_numbers(value: Any) -> Any:
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
            return int(value)
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _js_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_js_numbers(v) for v in value]
    return value


def from_json(text: Any) -> Any:
    """Fusion's ``fromJson``: ``None`` for null/empty/invalid, else the parsed value."""
    if text is None or text == "":
        return None
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError, TypeError):
        return None
    return parsed


def iso_now_ms() -> str:
    """``new Date().toISOString()``: UTC, milliseconds, ``Z``."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


class FusionDbStore(SettingsStore):
    """Settings in seed-era Fusion's ``.fusion/fusion.db`` ``config`` row."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.db_path = self.root / DB_PATH
        name = f"Fusion's database `{DB_PATH}`"
        reason = self._check()
        self.info = StoreInfo("fusion-db", name, path=DB_PATH,
                              read_only=f"{reason}; memdesk shows the values it could read and changes nothing"
                              if reason else None)

    # -- reading ---------------------------------------------------------------------------------
    def _connect(self, timeout: float = _ATTEMPT_TIMEOUT_S) -> sqlite3.Connection:
        target = fileio.resolve_in_root(self.root, DB_PATH)
        conn = sqlite3.connect(str(target), timeout=timeout, isolation_level=None)
        return conn

    def _check(self) -> str | None:
        try:
            self._read_row()
        except _Unreadable as exc:
            return str(exc)
        except SettingsError:
            return None  # busy now: readable later
        return None

    def _read_row(self) -> tuple[dict[str, Any], int]:
        """The settings object and ``__meta.lastModified`` (``_Unreadable`` when damaged)."""
        try:
            conn = self._connect(BUSY_BOUND_S)
        except (sqlite3.Error, OSError, ValueError) as exc:
            raise _Unreadable(f"{DB_PATH} cannot be opened ({exc})") from exc
        try:
            row = conn.execute("SELECT settings FROM config WHERE id = 1").fetchone()
            meta = conn.execute("SELECT value FROM __meta WHERE key = 'lastModified'").fetchone()
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise SettingsError(f"{DB_PATH} is busy (another process holds it); try again") from exc
            raise _Unreadable(f"{DB_PATH} cannot be read ({exc})") from exc
        except sqlite3.DatabaseError as exc:
            raise _Unreadable(f"{DB_PATH} is damaged ({exc})") from exc
        finally:
            conn.close()
        return _settings_of(row), _int(meta[0] if meta else 0)

    def read(self) -> dict[str, Any]:
        try:
            settings, _ = self._read_row()
        except _Unreadable as exc:
            raise SettingsError(f"{exc}; memdesk changes nothing there") from exc
        return settings

    def stamp(self) -> str | None:
        try:
            conn = self._connect()
            try:
                meta = conn.execute("SELECT value FROM __meta WHERE key = 'lastModified'").fetchone()
            finally:
                conn.close()
        except (sqlite3.Error, OSError, ValueError):
            return None
        return str(meta[0]) if meta else "0"

    # -- writing ---------------------------------------------------------------------------------
    def patch(self, changes: Mapping[str, Any]) -> dict[str, Any]:
        if self.info.read_only:
            return super().patch(changes)
        deadline = time.monotonic() + BUSY_BOUND_S
        while True:
            try:
                settings, next_id = self._patch_once(changes)
                break
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc):
                    raise SettingsError(f"cannot change {DB_PATH}: {exc}; nothing was changed") from exc
                if time.monotonic() >= deadline:
                    holder = lock_holder(self.db_path) or "another process (its name is not known)"
                    raise SettingsError(
                        f"{DB_PATH} is locked by {holder} and stayed locked for {BUSY_BOUND_S:g} s; nothing was "
                        "changed — try again", field=next(iter(changes), None),
                        reason="the database is locked") from exc
                time.sleep(0.05)
            except sqlite3.DatabaseError as exc:
                raise StoreReadOnlyError(f"{DB_PATH} is damaged ({exc}); nothing was changed",
                                         field=next(iter(changes), None), reason=str(exc)) from exc
        self._refresh_copy(next_id, settings)
        return dict(settings) if settings is not None else {}

    def _patch_once(self, changes: Mapping[str, Any]) -> tuple[dict[str, Any] | None, int]:
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute("SELECT nextId, settings FROM config WHERE id = 1").fetchone()
                if row is None:
                    raise _Unreadable(f"{DB_PATH} has no config row (id = 1); start Fusion once so it creates it")
                stored = from_json(row[1])
                if stored is not None and not isinstance(stored, dict):
                    raise _Unreadable(f"{DB_PATH}: config.settings is not a JSON object")
                new = apply_patch(stored or {}, changes)
                if stored is None or new != stored:
                    conn.execute("UPDATE config SET settings = ?, updatedAt = ? WHERE id = 1",
                                 (js_stringify(new), iso_now_ms()))
                    meta = conn.execute("SELECT value FROM __meta WHERE key = 'lastModified'").fetchone()
                    bumped = max(int(time.time() * 1000), _int(meta[0] if meta else 0) + 1)
                    conn.execute("UPDATE __meta SET value = ? WHERE key = 'lastModified'", (str(bumped),))
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return new, (row[0] or 1)
        except _Unreadable as exc:
            raise StoreReadOnlyError(f"{exc}; nothing was changed", field=next(iter(changes), None),
                                     reason=str(exc)) from exc
        finally:
            conn.close()

    def _refresh_copy(self, next_id: int, settings: dict[str, Any] | None) -> None:
        """Rewrite ``config.json`` the way Fusion's ``writeConfig`` does (``readConfigFast``'s ``{nextId, settings}``)."""
        doc: dict[str, Any] = {"nextId": next_id}
        if settings is not None:
            doc["settings"] = settings
        try:
            statefiles.write("fusion-config", self.root, js_stringify(doc, indent=2), source="settings")
        except (MemoryBackendError, OSError) as exc:
            # Fusion treats the copy as best effort too: its database is what it reads.
            raise SettingsError(f"the change is saved in {DB_PATH}, but its copy {CONFIG_PATH} could not be "
                                f"refreshed: {exc}") from exc


    def refresh_copy(self) -> None:
        """Rewrite ``config.json`` from the database row as Fusion would (after memdesk keys moved out of it)."""
        conn = self._connect(BUSY_BOUND_S)
        try:
            row = conn.execute("SELECT nextId, settings FROM config WHERE id = 1").fetchone()
        finally:
            conn.close()
        if row is not None:
            parsed = from_json(row[1])
            self._refresh_copy(row[0] or 1, parsed if isinstance(parsed, dict) else None)


class _Unreadable(Exception):
    """The database or its config row cannot be read: the store is read-only."""


def _settings_of(row: tuple[Any, ...] | None) -> dict[str, Any]:
    if row is None:
        raise _Unreadable(f"{DB_PATH} has no config row (id = 1)")
    parsed = from_json(row[0])
    if parsed is None:
        return {}
    if not isinstance(parsed, dict):
        raise _Unreadable(f"{DB_PATH}: config.settings holds {type(parsed).__name__}, not a JSON object")
    return parsed


def lock_holder(db_path: Path) -> str | None:
    """Who holds the write lock of a SQLite database, from ``/proc/locks`` (Linux): WAL mode's write lock
    is byte 120 of the ``-shm`` file, rollback mode's a lock on the database file. ``None`` when unknown."""
    targets: dict[int, str] = {}
    for suffix, kind in (("-shm", "wal"), ("", "db")):
        try:
            targets[os.stat(f"{db_path}{suffix}").st_ino] = kind
        except OSError:
            pass
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    for line in lines:
        parts: list[str] = line.replace("->", "").split()
        if len(parts) < 8 or parts[1] != "POSIX" or parts[3] != "WRITE":
            continue
        try:
            pid, inode, lock_start = int(parts[4]), int(parts[5].rsplit(":", 1)[1]), parts[6]
        except (ValueError, IndexError):
            continue
        held = targets.get(inode)
        if held is None or (held == "wal" and lock_start != "120"):
            continue
        if pid == os.getpid():
            return f"another connection of this memdesk process (pid {pid})"
        try:
            with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as fh:
                name = fh.read().strip()
        except OSError:
            name = "?"
        return f"process {pid} ({name})"
    return None


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text

