"""Named database connections: the user's, never the project's.

A project's ``memoryBackendConfig`` names a connection (``{"connection": "team", ...}``); the DSN it
stands for lives in ``connections.json`` in the user's config folder (``$MEMDESK_CONFIG_DIR`` or the
platform's), written atomically with mode 0600. A DSN's password is never printed: every message and
listing goes through :func:`redact_dsn` or :func:`scrub`.
"""

from __future__ import annotations

import json
import os
import re
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import SettingsError
from core.settings.user_config import read_json_object, user_config_dir
from core.storage import statefiles

CONNECTIONS_FILE = "connections.json"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
MASK = "****"
CONNECT_TIMEOUT_S = 5


@dataclass(frozen=True)
class Connection:
    """One named connection. ``dsn`` holds the password: show :attr:`redacted`, never ``dsn``."""

    name: str
    dsn: str

    @property
    def redacted(self) -> str:
        """The DSN with its password masked."""
        return redact_dsn(self.dsn)

    def __repr__(self) -> str:  # a stray log line must not print the password either
        return f"Connection({self.name!r}, {self.redacted!r})"


def connections_path() -> Path:
    """The user's ``connections.json``."""
    return user_config_dir() / CONNECTIONS_FILE


def parse_dsn(dsn: str) -> dict[str, str]:
    """Parse a libpq DSN (URL or ``key=value``); a bad one raises :class:`SettingsError` (no DSN text in it)."""
    from psycopg.conninfo import conninfo_to_dict

    if not isinstance(dsn, str) or not dsn.strip():
        raise SettingsError("the DSN is empty", field="dsn")
    try:
        parsed = conninfo_to_dict(dsn)
    except Exception as exc:  # libpq's message may quote the DSN, password included: not shown
        raise SettingsError("the DSN is not a PostgreSQL connection string; use "
                            "postgresql://USER@HOST:PORT/DB or key=value pairs such as 'host=H dbname=D'",
                            field="dsn") from exc
    return {k: str(v) for k, v in parsed.items() if v is not None}


def redact_dsn(dsn: str) -> str:
    """The DSN as ``key=value`` pairs with the password replaced by ``****`` (never raises)."""
    from psycopg.conninfo import make_conninfo

    try:
        parts = parse_dsn(dsn)
    except SettingsError:
        return "(unparseable DSN)"
    if "password" in parts:
        parts["password"] = MASK
    return make_conninfo("", **parts)


def scrub(text: str, dsn: str | None) -> str:
    """``text`` with the DSN's password (plain and URL-encoded) masked, for error messages."""
    from urllib.parse import quote

    if not dsn:
        return text
    try:
        password = parse_dsn(dsn).get("password")
    except SettingsError:
        return text.replace(dsn, "(DSN)")
    if password:
        import re

        # As a token only: a short password ("p") must not mask the letter inside "port" or "accepting".
        for form in sorted({password, quote(password, safe=""), quote(password)}, key=len, reverse=True):
            text = re.sub(rf"(?<!\w){re.escape(form)}(?!\w)", MASK, text)
    return text


def _load_raw() -> dict[str, Any]:
    path = connections_path()
    shape = 'an object with a "connections" object'
    data = read_json_object(path, shape)
    if data is None:
        return {"connections": {}}
    if not isinstance(data.get("connections"), dict):
        raise SettingsError(f"{path} must hold {shape}")
    return data


def _locked() -> AbstractContextManager[None]:
    """The connections file's lock: a change reads, changes and writes it as one (others change it too)."""
    return statefiles.lock("connections", directory=connections_path().parent)


def _save_raw(data: dict[str, Any]) -> Path:
    path = connections_path()
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    statefiles.write("connections", None, text, source="connections", directory=path.parent)
    os.chmod(path, 0o600)  # it holds passwords
    return path


def list_connections() -> list[Connection]:
    """Every stored connection, by name."""
    conns = _load_raw()["connections"]
    out = []
    for name in sorted(conns):
        entry = conns[name]
        if isinstance(entry, dict) and isinstance(entry.get("dsn"), str):
            out.append(Connection(name, entry["dsn"]))
    return out


def get_connection(name: str) -> Connection:
    """The connection ``name``; an unknown name raises :class:`SettingsError` saying how to add it."""
    for conn in list_connections():
        if conn.name == name:
            return conn
    raise SettingsError(f"no connection named {name!r} in {connections_path()}; add it with "
                        f"'memdesk connections set {name} --dsn DSN'", field="connection")


def check_name(name: str) -> str:
    """Return ``name`` when it is a valid connection name, else raise :class:`SettingsError`."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise SettingsError(f"connection name {name!r} must be 1-64 letters, digits, '.', '_' or '-'",
                            field="name")
    return name


def set_connection(name: str, dsn: str) -> Connection:
    """Add or replace the connection ``name`` (the DSN is validated first; nothing is saved when it is bad)."""
    check_name(name)
    parse_dsn(dsn)
    with _locked():
        data = _load_raw()
        data["connections"][name] = {"dsn": dsn}
        _save_raw(data)
    return Connection(name, dsn)


def remove_connection(name: str) -> None:
    """Remove the connection ``name``; unknown names raise :class:`SettingsError`."""
    with _locked():
        data = _load_raw()
        if name not in data["connections"]:
            raise SettingsError(f"no connection named {name!r}", field="name")
        del data["connections"][name]
        _save_raw(data)


@dataclass(frozen=True)
class ConnectionTest:
    """What :func:`test_connection` found: whether the server answered, and a one-line message."""

    ok: bool
    message: str
    server_version: str | None = None
    schema_version: int | None = None


def test_connection(name: str) -> ConnectionTest:
    """Connect to ``name``'s server and report the server and memdesk schema versions (password masked)."""
    import psycopg

    conn_cfg = get_connection(name)
    try:
        with psycopg.connect(conn_cfg.dsn, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True) as conn:
            server = str(conn.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]
            row = conn.execute("SELECT to_regclass('memdesk_schema_version') IS NOT NULL").fetchone()
            schema = None
            if row and row[0]:
                schema = conn.execute("SELECT max(version) FROM memdesk_schema_version").fetchone()[0]  # type: ignore[index]
    except psycopg.Error as exc:
        return ConnectionTest(False, f"{name}: cannot connect to {conn_cfg.redacted}: "
                                     f"{scrub(one_line(str(exc)), conn_cfg.dsn)}")
    what = f"memdesk schema version {schema}" if schema else "no memdesk tables yet"
    return ConnectionTest(True, f"{name}: connected to PostgreSQL {server} ({what})", server, schema)


test_connection.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


def one_line(text: str) -> str:
    """Collapse libpq's multi-line messages into one line."""
    return " ".join(text.split())
