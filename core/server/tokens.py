"""Per-user API tokens for ``memdesk serve``: created, listed and revoked by name, stored only as hashes.

They live in ``tokens.json`` beside the user's ``config.json`` (``$MEMDESK_CONFIG_DIR`` or the
platform's user config folder), never in a project, so a project cannot grant itself access. The
file holds each token's name, creation time, a short prefix to recognise it by, and the SHA-256 of
the token: a token is 256 random bits, so a fast hash is as safe as a slow one and keeps every
request cheap. The raw token is shown once, when it is created.
"""

from __future__ import annotations

import builtins
import hashlib
import hmac
import json
import re
import secrets
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from core.errors import MemoryBackendError, SettingsError
from core.server.access import LEVELS, Access, check_glob
from core.settings.user_config import user_config_dir
from core.storage import fileio, statefiles

__all__ = ["TOKEN_PREFIX", "TokenInfo", "TokenStore", "tokens_path"]

TOKEN_PREFIX = "mdk_"
TOKENS_FILE = "tokens.json"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")


def tokens_path() -> Path:
    """The user's ``tokens.json``."""
    return user_config_dir() / TOKENS_FILE


def _digest(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class TokenInfo:
    """One stored token, without its secret: name, creation time, the first characters, the hash, and its
    scope (:mod:`core.server.access`; a token stored without one has the full scope, ``legacy``)."""

    name: str
    created_at: str
    prefix: str
    digest: str
    scope: str = "write"
    projects: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    legacy: bool = False

    @property
    def access(self) -> Access:
        """What this token lets its holder do."""
        return Access(self.name, self.scope, self.projects, self.paths, self.legacy)

    def to_json(self) -> dict[str, object]:
        """The camelCase JSON shown by ``memdesk tokens list --json`` (the hash is left out)."""
        return {"name": self.name, "createdAt": self.created_at, "prefix": self.prefix, "scope": self.scope,
                "projects": list(self.projects), "paths": list(self.paths), "fullScope": self.legacy,
                "access": self.access.describe()}


class TokenStore:
    """The tokens file of one user. Reads are cached until the file changes, so a revoke takes effect
    on a running server at its next request."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or tokens_path()
        self._cache: tuple[tuple[int, int, int] | None, tuple[TokenInfo, ...]] | None = None

    # -- reading ---------------------------------------------------------------------------------
    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        # Every save is an atomic rename, so the inode alone tells a new file from the cached one.
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def list(self) -> list[TokenInfo]:
        """Every stored token, oldest first; a broken file raises :class:`SettingsError`."""
        stamp = self._stamp()
        if self._cache is not None and self._cache[0] == stamp:
            return list(self._cache[1])
        tokens = self._load() if stamp is not None else ()
        self._cache = (stamp, tokens)
        return list(tokens)

    def _load(self) -> tuple[TokenInfo, ...]:
        try:
            text = fileio.read_text(self.path)
        except MemoryBackendError as exc:
            raise SettingsError(f"cannot read {self.path}: {exc}") from exc
        if not text or not text.strip():
            return ()
        try:
            data = json.loads(text)
            rows = data["tokens"]
            return tuple(_row(r) for r in rows)
        except (ValueError, KeyError, TypeError) as exc:
            raise SettingsError(f"{self.path} is not a memdesk tokens file ({exc}); fix or remove it — "
                                "memdesk will not overwrite it") from exc

    def verify(self, token: str | None) -> str | None:
        """Return the name of the stored token equal to ``token``, or ``None``."""
        info = self.lookup(token)
        return info.name if info is not None else None

    def lookup(self, token: str | None) -> TokenInfo | None:
        """The stored token equal to ``token`` (with its scope), or ``None``."""
        if not token or not token.startswith(TOKEN_PREFIX):
            return None
        digest = _digest(token)
        found = None
        for info in self.list():
            # compare_digest on every row: the time taken does not tell which rows came close.
            if hmac.compare_digest(info.digest, digest):
                found = info
        return found

    # -- changing --------------------------------------------------------------------------------
    def _lock(self) -> AbstractContextManager[None]:
        return statefiles.lock("tokens", directory=self.path.parent)

    def _save(self, tokens: builtins.list[TokenInfo]) -> None:
        rows = [_to_row(t) for t in tokens]
        text = json.dumps({"tokens": rows}, indent=2) + "\n"
        # A new file is created 0600 (mkstemp); an existing one keeps the mode the user gave it.
        statefiles.write("tokens", None, text, source="tokens", directory=self.path.parent)
        self._cache = None

    def create(self, name: str, *, now: datetime | None = None, scope: str = "write",
               projects: tuple[str, ...] | builtins.list[str] = (), paths: tuple[str, ...] | builtins.list[str] = ()) -> str:
        """Create a token called ``name`` with ``scope`` on ``projects`` and ``paths`` (empty: all) and return
        it (the only time it is ever shown)."""
        if scope not in LEVELS:
            raise SettingsError(f"scope {scope!r} is not one of {', '.join(LEVELS)}", field="scope")
        try:
            globs = tuple(check_glob(g) for g in paths)
        except ValueError as exc:
            raise SettingsError(str(exc), field="path") from exc
        keys = tuple(_project_ref(p) for p in projects)
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise SettingsError(f"token name {name!r} must be 1-64 letters, digits, '.', '_', '@' or '-', "
                                "starting with a letter or digit", field="name")
        with self._lock():
            tokens = self.list()
            if any(t.name == name for t in tokens):
                raise SettingsError(f"a token named {name!r} exists already; revoke it first or pick another name",
                                    field="name")
            token = TOKEN_PREFIX + secrets.token_urlsafe(32)
            created = (now or datetime.now(UTC)).isoformat(timespec="seconds").replace("+00:00", "Z")
            tokens.append(TokenInfo(name, created, token[: len(TOKEN_PREFIX) + 4], _digest(token), scope, keys, globs))
            self._save(tokens)
        return token

    def revoke(self, name: str) -> None:
        """Remove the token called ``name``; an unknown name raises :class:`SettingsError`."""
        with self._lock():
            tokens = self.list()
            kept = [t for t in tokens if t.name != name]
            if len(kept) == len(tokens):
                known = ", ".join(t.name for t in tokens) or "none"
                raise SettingsError(f"no token named {name!r} (tokens: {known})", field="name")
            self._save(kept)


def _row(r: dict[str, object]) -> TokenInfo:
    """A stored row; one without ``scope`` (made before scopes) keeps the full scope and says so."""
    base = (str(r["name"]), str(r["createdAt"]), str(r["prefix"]), str(r["hash"]))
    if "scope" not in r:
        return TokenInfo(*base, legacy=True)
    scope = str(r["scope"])
    if scope not in LEVELS:
        raise ValueError(f"token {base[0]!r} has an unknown scope {scope!r}")
    projects, paths = r.get("projects", []), r.get("paths", [])
    if not isinstance(projects, list) or not isinstance(paths, list):
        raise ValueError(f"token {base[0]!r}: projects and paths must be lists")
    return TokenInfo(*base, scope, tuple(str(p) for p in projects), tuple(check_glob(str(g)) for g in paths))


def _to_row(t: TokenInfo) -> dict[str, object]:
    row: dict[str, object] = {"name": t.name, "createdAt": t.created_at, "prefix": t.prefix, "hash": t.digest}
    if not t.legacy:  # a legacy token stays as it was: full scope, said so
        row.update(scope=t.scope, projects=list(t.projects), paths=list(t.paths))
    return row


def _project_ref(value: str) -> str:
    """A ``--project`` as stored: an existing folder as its real path, anything else as the key it names."""
    v = value.strip()
    if not v:
        raise SettingsError("an empty --project names no project", field="project")
    p = Path(v).expanduser()
    if ("/" in v or v in (".", "~")) and p.is_dir():
        return str(p.resolve())
    if "/" in v:
        raise SettingsError(f"--project {value!r} is not a folder (give a served project's key or its folder)",
                            field="project")
    return v
