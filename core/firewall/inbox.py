"""The inbox: held writes waiting for a person, one queue per project in memdesk's state.

``.fusion/memdesk/inbox.json`` holds ``{"version": 1, "items": [...], "mac": HEX}``. The ``mac`` is
an HMAC-SHA256 of the items with a key kept in the user's config (``firewall.key``, mode 0600), so a
file that was damaged or edited outside memdesk is refused in one line and nothing in it is applied.
A held write whose flags include a secret is never stored in clear: its text is sealed with Fernet
(``cryptography``; AES-128-CBC + HMAC-SHA256) under the same key, beside a redacted copy for display.
Other held text (injection, near-duplicates) is kept as written so a reviewer can read it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.errors import MemoryBackendError
from core.firewall.rules import Finding
from core.storage import fileio, statefiles

INBOX_FILE = f"{fileio.MEMDESK_DIR}/inbox.json"
KEY_FILE = "firewall.key"
MAX_INBOX_BYTES = 32 * 1_048_576
REDACTED = "[REDACTED:{rule}]"
#: Accepted and rejected items kept for the record (the oldest go first); pending ones are never dropped.
KEEP_RESOLVED = 200


class InboxError(ValueError):
    """An inbox that cannot be used (damaged, tampered with) or an action that cannot be taken."""


class InboxConflict(InboxError):
    """The held item's document changed since and the two conflict: a conflict (CLI exit 1), not bad input."""


def _user_key(config_dir: Path) -> bytes:
    """The user's 32-byte firewall key, created (mode 0600) on first use."""
    path = config_dir / KEY_FILE
    try:
        raw = statefiles.read("firewall-key", directory=config_dir)
        if raw is None:
            key = secrets.token_bytes(32)
            # Created only when absent, under its lock: a key another process made first is read instead.
            statefiles.write("firewall-key", None, base64.urlsafe_b64encode(key) + b"\n", source="firewall-key",
                             directory=config_dir, exclusive=True)
            return key
    except MemoryBackendError as exc:
        if exc.code != "CONFLICT":
            raise InboxError(str(exc)) from exc
        raw = statefiles.read("firewall-key", directory=config_dir) or ""
    try:
        key = base64.urlsafe_b64decode(raw.strip())
    except ValueError:
        key = b""
    if len(key) != 32:
        raise InboxError(f"{path} is not a firewall key (32 bytes, base64); move it aside to make a new one "
                         "(held secrets sealed with the old key can then no longer be read)")
    return key


class Sealer:
    """Seals held secrets (Fernet) and signs the inbox (HMAC) with the user's key."""

    def __init__(self, config_dir: Path) -> None:
        self._key = _user_key(config_dir)
        self._mac_key = hashlib.sha256(b"memdesk inbox mac\0" + self._key).digest()

    def seal(self, text: str) -> str:
        from cryptography.fernet import Fernet

        return Fernet(base64.urlsafe_b64encode(self._key)).encrypt(text.encode("utf-8")).decode("ascii")

    def open(self, token: str) -> str:
        from cryptography.fernet import Fernet, InvalidToken

        try:
            return Fernet(base64.urlsafe_b64encode(self._key)).decrypt(token.encode("ascii")).decode("utf-8")
        except (InvalidToken, ValueError) as exc:
            raise InboxError("the held text cannot be unsealed with your firewall key (sealed by another "
                             "user, or the key changed)") from exc

    def mac(self, items: list[dict[str, Any]]) -> str:
        body = json.dumps(items, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        return hmac.new(self._mac_key, body, hashlib.sha256).hexdigest()


def redact(text: str, findings: list[Finding] | tuple[Finding, ...]) -> str:
    """``text`` with every secret's span replaced by ``[REDACTED:rule]``."""
    spans = sorted({(f.span, f.rule) for f in findings if f.kind == "secret"}, reverse=True)
    for (start, end), rule in spans:
        if 0 <= start < end <= len(text):
            text = text[:start] + REDACTED.format(rule=rule) + text[end:]
    return text


@dataclass(frozen=True)
class Item:
    """One held write as stored."""

    data: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def status(self) -> str:
        return str(self.data["status"])

    @property
    def sealed(self) -> bool:
        return self.data.get("sealed") is not None

    def api_view(self) -> dict[str, Any]:
        """What agents see over HTTP and MCP: that a write waits and why, never the held text itself
        (a held injection must not reach another agent; a held secret not even redacted)."""
        flags = [{k: f.get(k) for k in ("rule", "kind", "line", "span")} for f in self.data.get("flags") or []]
        keys = ("id", "created", "status", "path", "op", "source", "writer", "resolution")
        return {**{k: self.data.get(k) for k in keys}, "flags": flags}

    def summary(self) -> dict[str, Any]:
        """What the list views show: never the clear text of a sealed item."""
        keys = ("id", "created", "status", "path", "op", "source", "writer", "flags", "reason", "resolution")
        out = {k: self.data.get(k) for k in keys}
        out["preview"] = (self.data.get("redacted") or "")[:200]
        out["sealed"] = self.sealed
        return out


class Inbox:
    """A project's inbox file, read and written whole under its lock."""

    def __init__(self, root: Path | str, config_dir: Path, *, now: Callable[[], datetime] | None = None) -> None:
        self.root = Path(root)
        self.sealer = Sealer(config_dir)
        self._now = now or (lambda: datetime.now(UTC))

    # -- reading -------------------------------------------------------------------------------------
    def _read(self) -> list[dict[str, Any]]:
        try:
            raw = fileio.read_text(fileio.resolve_in_root(self.root, INBOX_FILE), max_size=MAX_INBOX_BYTES)
        except MemoryBackendError as exc:
            raise InboxError(f"{INBOX_FILE}: {exc}") from exc
        if raw is None:
            return []
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InboxError(f"{INBOX_FILE} is damaged (not JSON: line {exc.lineno}, column {exc.colno}); nothing "
                             "in it was applied; move it aside to start a new inbox") from exc
        if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("items"), list) \
                or not isinstance(data.get("mac"), str):
            raise InboxError(f"{INBOX_FILE} is damaged (not a memdesk inbox); nothing in it was applied; move it "
                             "aside to start a new inbox")
        if not hmac.compare_digest(data["mac"], self.sealer.mac(data["items"])):
            raise InboxError(f"{INBOX_FILE} was changed outside memdesk (its signature does not match your "
                             "firewall key); nothing in it was applied; move it aside to start a new inbox")
        for item in data["items"]:
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                raise InboxError(f"{INBOX_FILE} holds an item without an id; nothing in it was applied")
        return data["items"]

    def _write(self, items: list[dict[str, Any]]) -> None:
        resolved = [i for i in items if i.get("status") != "pending"]
        if len(resolved) > KEEP_RESOLVED:  # every pending item stays; only the latest resolved ones are kept
            dropped = {id(i) for i in resolved[:-KEEP_RESOLVED]}
            items = [i for i in items if id(i) not in dropped]
        body = {"version": 1, "items": items, "mac": self.sealer.mac(items)}
        statefiles.write("inbox", self.root, json.dumps(body, indent=1, ensure_ascii=False) + "\n", source="inbox")

    def _locked(self) -> Any:
        return statefiles.lock("inbox", self.root)

    def items(self, *, status: str | None = "pending") -> list[Item]:
        """The held items (pending ones by default; ``status=None`` for all)."""
        return [Item(i) for i in self._read() if status is None or i.get("status") == status]

    def get(self, item_id: str) -> Item:
        """One item by id, or :class:`InboxError` naming it."""
        for item in self._read():
            if item["id"] == item_id:
                return Item(item)
        raise InboxError(f"no inbox item {item_id!r} (memdesk inbox list shows them)")

    def text_of(self, item: Item) -> str:
        """The held text in clear (unsealed with the user's key)."""
        return self.sealer.open(item.data["sealed"]) if item.sealed else str(item.data.get("text") or "")

    # -- changing ------------------------------------------------------------------------------------
    def hold(self, *, path: str, op: str, text: str, writer: dict[str, Any], source: str,
             findings: tuple[Finding, ...], reason: str | None, base_hash: str | None,
             base: str | None = None) -> str:
        """Add a held write; return its id. A write with a secret is sealed, never stored in clear."""
        has_secret = any(f.kind == "secret" for f in findings)
        item_id = f"{self._now():%Y%m%d}-{secrets.token_hex(4)}"
        item = {
            "id": item_id, "created": self._now().isoformat(timespec="seconds"), "status": "pending",
            "path": path, "op": op, "source": source, "writer": writer, "reason": reason,
            "flags": [f.to_json() for f in findings], "baseHash": base_hash,
            "text": None if has_secret else text, "sealed": self.sealer.seal(text) if has_secret else None,
            "redacted": redact(text, findings) if has_secret else text, "resolution": None,
            # a held replacement keeps the document it was written against, to merge if the document moves on
            "base": base if op == "replace" else None,
        }
        with self._locked():
            items = self._read()
            items.append(item)
            self._write(items)
        return item_id

    def resolve(self, item_id: str, status: str, resolution: str) -> Item:
        """Mark an item accepted or rejected; a sealed text is dropped once resolved."""
        with self._locked():
            items = self._read()
            for item in items:
                if item["id"] == item_id:
                    if item["status"] != "pending":
                        raise InboxError(f"inbox item {item_id} is already {item['status']}")
                    item.update(status=status, resolution=resolution, sealed=None, base=None,
                                text=None if item.get("sealed") else item.get("text"))
                    self._write(items)
                    return Item(item)
        raise InboxError(f"no inbox item {item_id!r} (memdesk inbox list shows them)")
