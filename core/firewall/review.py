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

from core.firewall.inbox import REDACTED, Inbox, InboxConflict, InboxError, Item, redact
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
    from core.storage.pipeline import Writer

    held_by = item.data.get("writer") or {}
    author = f"{held_by.get('kind')}:{held_by.get('name')}" if held_by.get("name") else held_by.get("kind")
    operator = Writer("operator")
    path = str(item.data["path"])
    if item.data.get("op") == "append":
        outcome = project.append(text, path=path, source="inbox-accept", author=author, writer=operator, force=True)
    else:
        text, expected = _onto_current(project, item, text)
        outcome = project.write(path, text, expected_hash=expected, source="inbox-accept", author=author,
                                writer=operator)
    status = getattr(outcome, "status", "written")
    flags = tuple(getattr(outcome, "flags", ()) or ())
    how = "edited" if edited is not None else "redacted" if redacted else "as held"
    done = inbox.resolve(item_id, "accepted", f"accepted {how}: {status}")
    return Accepted(done, status, path, flags)


def _pending(inbox: Inbox, item_id: str) -> Item:
    item = inbox.get(item_id)
    if item.status != "pending":
        raise InboxError(f"inbox item {item_id} is already {item.status}")
    return item


def _matched(project: Any, item: Item, text: str, kinds: tuple[str, ...]) -> tuple[str, Any]:
    """The document as it is now and the entry the held text duplicates or contradicts in it."""
    from core.firewall.rules import Deadline
    from core.firewall.similarity import EntryIndex, match_entry

    path = str(item.data["path"])
    current = project.read(path)
    found = match_entry(text, EntryIndex.build(current), Deadline(10.0))
    if found is None or found[0] not in kinds:
        raise InboxError(f"{path} holds no entry that this item {' or '.join(kinds)}s any more; accept or reject it")
    return current, found[2]


def merge(project: Any, inbox: Inbox, item_id: str, *, redacted: bool = False) -> Accepted:
    """Replace the near-duplicate entry by the held text, in place (one write, guarded by the document's hash)."""
    from core.storage.fileio import content_hash
    from core.storage.pipeline import Writer

    item = _pending(inbox, item_id)
    text = text_for_accept(inbox, item, redacted=redacted).strip()
    current, entry = _matched(project, item, text, ("near-duplicate",))
    old_first = current[entry.start:entry.end].lstrip()
    bullet = old_first[:2] if old_first[:2] in ("- ", "* ", "+ ") else ""
    if bullet and text[:2] in ("- ", "* ", "+ "):
        text = text[2:]
    indent = current[entry.start:entry.end][:len(current[entry.start:entry.end]) - len(old_first)]
    merged = current[:entry.start] + indent + bullet + text + current[entry.end:]
    outcome = project.write(str(item.data["path"]), merged, expected_hash=content_hash(current), source="inbox-merge",
                            author=_author(item), writer=Writer("operator"))
    done = inbox.resolve(item_id, "accepted", f"merged into the entry at line {entry.line}: {outcome.status}")
    return Accepted(done, outcome.status, str(item.data["path"]), tuple(outcome.flags or ()))


def supersede(project: Any, inbox: Inbox, item_id: str, *, redacted: bool = False) -> Accepted:
    """Mark the contradicted (or duplicated) entry ``[superseded DATE]``, then accept the held text."""
    from core.firewall.supersede import mark
    from core.storage.fileio import content_hash
    from core.storage.pipeline import Writer

    item = _pending(inbox, item_id)
    text = text_for_accept(inbox, item, redacted=redacted)
    current, entry = _matched(project, item, text, ("contradiction", "near-duplicate"))
    project.write(str(item.data["path"]), mark(current, entry), expected_hash=content_hash(current),
                  source="supersede", author=_author(item), writer=Writer("operator"))
    done = accept(project, inbox, item_id, redacted=redacted)
    return done


def _author(item: Item) -> str | None:
    held_by = item.data.get("writer") or {}
    return f"{held_by.get('kind')}:{held_by.get('name')}" if held_by.get("name") else held_by.get("kind")


def _onto_current(project: Any, item: Item, text: str) -> tuple[str, str | None]:
    """A held replacement as it applies now: as held if the document has not moved, else merged three-way
    with what changed meanwhile; a conflict raises (nothing is overwritten) and the item stays pending."""
    from core.documents.textmerge import appended_text, classify_change, merge3
    from core.storage.fileio import content_hash

    base_hash = item.data.get("baseHash")
    current = project.read(str(item.data["path"])) if project.exists(str(item.data["path"])) else None
    if current is None or base_hash is None or content_hash(current) == base_hash:
        return text, base_hash
    base = item.data.get("base")
    if not isinstance(base, str) or content_hash(base) != base_hash:
        raise InboxConflict(f"{item.data['path']} changed since inbox item {item.id} was held, and the text it was "
                         "written against is not kept; edit the item onto the current document, then accept")
    if classify_change(base, current) == "appended":  # agents appended meanwhile: keep the held text, then theirs
        return text + appended_text(base, current), content_hash(current)
    merged = merge3(base, text, current)
    if merged.conflicts:
        raise InboxConflict(f"{item.data['path']} changed since inbox item {item.id} was held and the two conflict in "
                         f"{merged.conflicts} place(s); nothing was written; edit the item, then accept")
    return merged.text, content_hash(current)


def reject(inbox: Inbox, item_id: str) -> Item:
    """Mark a held item rejected; its sealed text is dropped."""
    return inbox.resolve(item_id, "rejected", "rejected")


def display(text: str, flags: list[dict[str, Any]], *, reveal: bool = False,
            masked: str | None = None) -> tuple[str, list[tuple[int, int, str]]]:
    """The held text as a reviewer sees it, and the spans to highlight ``(start, end, kind)`` in it.

    Masked (the default), each secret shows as ``[REDACTED:rule]`` (``masked``: the stored redacted text,
    so a sealed item is never opened to be shown) and the other flags' spans move with the text before them.
    """
    found = _findings(Item({"flags": flags}))
    secrets = sorted((f for f in found if f.kind == "secret"), key=lambda f: f.span)
    if reveal or not secrets:
        return text, [(f.span[0], f.span[1], f.kind) for f in found if 0 <= f.span[0] < f.span[1] <= len(text)]
    shown = masked if masked is not None else redact(text, secrets)

    def moved(pos: int) -> int:
        return pos + sum(len(REDACTED.format(rule=s.rule)) - (s.span[1] - s.span[0]) for s in secrets
                         if s.span[1] <= pos)

    spans: list[tuple[int, int, str]] = []
    for f in found:
        start = moved(f.span[0])
        end = start + len(REDACTED.format(rule=f.rule)) if f.kind == "secret" else moved(f.span[1])
        if 0 <= start < end <= len(shown):
            spans.append((start, end, f.kind))
    return shown, spans
