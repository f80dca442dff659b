"""One token for "the settings of this project may have changed": config.json, memdesk's own file and
Fusion's ``__meta.lastModified`` (seed-era Fusion bumps it after every write so that pollers notice)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from core.settings.store.config_json import file_stamp
from core.settings.store.fusion_db import DB_PATH
from core.settings.store.own import OWN_PATH


def local_stamp(root: Path) -> str:
    """Cheap to take (two ``stat`` calls and, with a Fusion database, one indexed read)."""
    parts = [file_stamp(root / OWN_PATH)]
    db = root / DB_PATH
    if db.is_file():
        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.2)
            try:
                row = conn.execute("SELECT value FROM __meta WHERE key = 'lastModified'").fetchone()
            finally:
                conn.close()
            parts.append(f"db:{row[0] if row else 0}")
        except sqlite3.Error:
            parts.append(f"db:{file_stamp(db)}")
    return "|".join(parts)
