"""Acting on held writes: accept (as held, redacted, or edited), reject. Surfaces call these.

Accepting sends the text through the write pipeline again, as the operator's write (source
``inbox-accept``, the original writer kept as the author), so the screen sees it again (it warns
where it held) and the lock, history and size limit apply. A held replacement carries the hash of
the document it was written against: if the document moved on since, the accept is a ``CONFLICT``
and nothing is overwritten (the item stays pending).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.firewall.inbox import Inbox, InboxError, Item, redact
from core.firewall.rules import Finding


@dataclass(frozen=True)
class Accepted:
    """What an accept did: the item, the pipeline's status and flags, the document written."""

    item: Item
    status: str
    path: str
    flags: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"id": self.item.id, "status": self.status, "path": self.path, "flags": list(self.flags),
                "resolution": self.item.data.get("resolution")}


def _findings(item: Item) -> list[Finding]:
    return [Finding(f["rule"], f["kind"], int(f["line"]), (int(f["span"][0]), int(f["span"][1])), f.get("message", ""))
            for f in item.data.get("flags") or []]


def text_for_accept(inbox: Inbox, item: Item, *, redacted: bool = False, edited: str | None = None) -> str:
    """The text an accept writes: as held, with its secrets replaced, or as the operator edited it."""
    if edited is not None:
        if not edited.strip():
            raise InboxError("the edited text is empty; reject the item instead")
        return edited
    text = inbox.text_of(item)
    return redact(text, _findings(item)) if redacted else text


def accept(project: Any, inbox: Inbox, item_id: str, *, redacted: bool = False, edited: str | None = None) -> Accepted:
    """Write a held item through the pipeline again and mark it accepted."""
    item = inbox.get(item_id)
    if item.status != "pending":
        raise InboxError(f"inbox item {item_id} is already {item.status}")
    text = text_for_accept(inbox, item, redacted=redacted, edited=edited)
    from core.pipeline import Writer

    held_by = item.data.get("writer") or {}
    author = f"{held_by.get('kind')}:{held_by.get('name')}" if held_by.get("name") else held_by.get("kind")
    operator = Writer("operator")
    path = str(item.data["path"])
    if item.data.get("op") == "append":
        outcome = project.append(text, path=path, source="inbox-accept", author=author, writer=operator, force=True)
    else:
        outcome = project.write(path, text, expected_hash=item.data.get("baseHash"), source="inbox-accept",
                                author=author, writer=operator)
    status = getattr(outcome, "status", "written")
    flags = tuple(getattr(outcome, "flags", ()) or ())
    how = "edited" if edited is not None else "redacted" if redacted else "as held"
    done = inbox.resolve(item_id, "accepted", f"accepted {how}: {status}")
    return Accepted(done, status, path, flags)


def reject(inbox: Inbox, item_id: str) -> Item:
    """Mark a held item rejected; its sealed text is dropped."""
    return inbox.resolve(item_id, "rejected", "rejected")
