"""``notifications/resources/updated`` for MCP clients that subscribed to a memory document.

A client subscribes to a document's resource (``resources/subscribe`` with ``memdesk://KEY/PATH``);
memdesk then watches that file and tells the client when it changes, whoever changed it (an MCP tool,
the HTTP API, the operator's editor, Fusion itself). Watching is a ``stat`` of each subscribed
document every :data:`POLL_SECONDS` on the server's event loop, started with the first subscription;
a write through memdesk's own tools notifies at once (:meth:`ResourceHub.check_now`).

Clients on the newer protocol (2026-07-28) do not subscribe: they open a ``subscriptions/listen`` stream
naming the URIs they follow. :class:`ListenHook` wraps the SDK's listen handler so the hub watches those
URIs for as long as the stream is open, and the hub publishes each change on the SDK's subscription bus,
which delivers it to the streams that asked for it. So an outside change (an agent's ``>>``, an editor's
save) reaches listeners as it reaches subscribers, over stdio and over HTTP, and a change through a tool
or the HTTP API reaches each of them once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import weakref
from collections.abc import Awaitable, Callable, Hashable, Iterable
from typing import Any

from core.server.refusals import Refusal

log = logging.getLogger(__name__)

POLL_SECONDS = 0.5
#: The most documents watched at once, over every client: each is ``stat``-ed every :data:`POLL_SECONDS` on the
#: event loop, and any agent id or date names a valid document, so a client could name any number of them.
MAX_WATCHED = 4096

Stamp = tuple[int, int, int] | None


class ResourceHub:
    """Who subscribed to which document URI, and the last state seen of each."""

    def __init__(self, locate: Callable[[str], str], publish: Callable[[str], Any] | None = None, *,
                 listing: Callable[[], Hashable] | None = None,
                 publish_list: Callable[[], Awaitable[Any]] | None = None) -> None:
        #: ``locate(uri)`` → the file's path; raises for a URI that is not a served document.
        self._locate = locate
        self._publish = publish
        #: ``listing()`` → a key that changes when a document appears or goes (:func:`documents_key`).
        self._listing, self._publish_list = listing, publish_list
        self._list_streams: set[object] = set()
        self._list_key: Hashable = None
        self._subs: dict[str, weakref.WeakSet[Any]] = {}
        self._listens: dict[str, set[object]] = {}  # URI -> the open listen streams that follow it
        self._stamps: dict[str, Stamp] = {}
        self._files: dict[str, str] = {}
        self._task: asyncio.Task[None] | None = None

    @staticmethod
    def _stamp(path: str) -> Stamp:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _watch(self, uri: str) -> bool:
        """Start watching ``uri`` (raises when it is not a served document); ``False`` when :data:`MAX_WATCHED`
        documents are watched already."""
        path = self._locate(uri)
        if uri not in self._files and len(self._files) >= MAX_WATCHED:
            self._forget_unfollowed()
            if len(self._files) >= MAX_WATCHED:
                log.warning("not watching %s: %d documents are watched already", uri, len(self._files))
                return False
        self._files[uri] = path
        self._stamps.setdefault(uri, self._stamp(path))
        return True

    def _forget(self, uri: str) -> None:
        """Stop watching ``uri`` once no session subscribes to it and no stream follows it."""
        if not self._subs.get(uri) and not self._listens.get(uri):
            self._subs.pop(uri, None)
            self._files.pop(uri, None)
            self._stamps.pop(uri, None)

    def _forget_unfollowed(self) -> None:
        for uri in list(self._files):  # a subscriber's session that went away leaves its URI unfollowed
            self._forget(uri)

    def subscribe(self, session: Any, uri: str) -> None:
        """Subscribe ``session`` to ``uri`` (raises when ``uri`` is not a served document, or when
        :data:`MAX_WATCHED` documents are watched already)."""
        if not self._watch(uri):
            raise Refusal("LIMIT", f"the server watches {MAX_WATCHED} documents already; "
                          "unsubscribe from some first")
        self._subs.setdefault(uri, weakref.WeakSet()).add(session)
        self._ensure_watcher()

    def unsubscribe(self, session: Any, uri: str) -> None:
        """Forget ``session``'s subscription to ``uri``."""
        subs = self._subs.get(uri)
        if subs is not None:
            subs.discard(session)
        self._forget(uri)

    def subscribers(self, uri: str) -> int:
        """How many live sessions subscribed to ``uri``."""
        return len(self._subs.get(uri, ()))

    def listen(self, stream: object, uri: str) -> bool:
        """Watch ``uri`` for an open ``subscriptions/listen`` stream; ``False`` when it names no served document
        (the SDK still honours it, as the spec asks: it never fires)."""
        try:
            if not self._watch(uri):
                return False
        except Exception:  # noqa: BLE001 - not a served document: nothing to watch
            return False
        self._listens.setdefault(uri, set()).add(stream)
        self._ensure_watcher()
        return True

    def unlisten(self, stream: object, uri: str) -> None:
        """The stream closed: stop watching ``uri`` for it."""
        streams = self._listens.get(uri)
        if streams is not None:
            streams.discard(stream)
            if not streams:
                del self._listens[uri]
        self._forget(uri)

    def listen_list(self, stream: object) -> None:
        """Tell ``stream`` when a document appears or goes (``resourcesListChanged``)."""
        if self._listing is None:
            return
        if not self._list_streams:
            self._list_key = self._listing()
        self._list_streams.add(stream)
        self._ensure_watcher()

    def unlisten_list(self, stream: object) -> None:
        """The stream closed."""
        self._list_streams.discard(stream)

    def listeners(self, uri: str) -> int:
        """How many open listen streams follow ``uri``."""
        return len(self._listens.get(uri, ()))

    def _ensure_watcher(self) -> None:
        if self._task is not None and not self._task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._task = loop.create_task(self._poll(), name="memdesk-resource-watch")

    async def _poll(self) -> None:
        while any(len(s) for s in self._subs.values()) or self._listens or self._list_streams:
            await asyncio.sleep(POLL_SECONDS)
            await self.check_now()

    async def check_now(self) -> None:
        """Notify the subscribers of every subscribed document whose file changed since last seen, and the
        streams that follow the list when a document appeared or went."""
        if self._list_streams and self._listing is not None and self._publish_list is not None:
            key = self._listing()
            if key != self._list_key:
                self._list_key = key
                try:
                    await self._publish_list()
                except Exception as exc:  # noqa: BLE001 - a listener's trouble never stops the others
                    log.debug("list change to listeners dropped: %s", exc)
        for uri in list(dict.fromkeys([*self._subs, *self._listens])):
            subs = self._subs.get(uri)
            if not subs and not self._listens.get(uri):
                self._forget(uri)
                continue
            stamp = self._stamp(self._files[uri])
            if stamp == self._stamps.get(uri):
                continue
            self._stamps[uri] = stamp
            await self._notify(uri, list(subs or ()))

    async def _notify(self, uri: str, sessions: list[Any]) -> None:
        for session in sessions:
            try:
                await session.send_resource_updated(uri)
            except Exception as exc:  # noqa: BLE001 - a closed session stops listening, the others go on
                log.debug("resource update to a closed session dropped: %s", exc)
                self._subs[uri].discard(session)
        if self._publish is not None and self._listens.get(uri):
            try:
                await self._publish(uri)
            except Exception as exc:  # noqa: BLE001 - a listener's trouble never stops the others
                log.debug("resource update to listeners dropped: %s", exc)


class ListenHook:
    """``subscriptions/listen``: the SDK's handler (``inner``), with the stream's resource URIs watched by the hub
    while it is open."""

    def __init__(self, inner: Callable[[Any, Any], Awaitable[Any]], hub: ResourceHub,
                 allowed: Callable[[Any, str], bool] | None = None) -> None:
        self.inner, self.hub = inner, hub
        #: ``allowed(ctx, uri)``: whether the caller's scope lets it follow ``uri`` (others are left out of the
        #: stream: the SDK's acknowledgement names only those it keeps, and their changes never reach it).
        self.allowed = allowed or (lambda _ctx, _uri: True)

    async def __call__(self, ctx: Any, params: Any) -> Any:
        stream = object()
        uris = list(dict.fromkeys(params.notifications.resource_subscriptions or ()))
        kept = [u for u in uris if self.allowed(ctx, u)]
        if kept != uris:
            notifications = params.notifications.model_copy(update={"resource_subscriptions": kept})
            params = params.model_copy(update={"notifications": notifications})
            uris = kept
        watched = [u for u in uris if self.hub.listen(stream, u)]
        if params.notifications.resources_list_changed:
            self.hub.listen_list(stream)
        try:
            return await self.inner(ctx, params)
        finally:
            for uri in watched:
                self.hub.unlisten(stream, uri)
            self.hub.unlisten_list(stream)


#: The folders that hold memory documents (design §2a), and the agents' folders under the last one.
_DOC_FOLDERS = ("", ".fusion", ".fusion/memory")
_AGENTS = ".fusion/agent-memory"


def documents_key(roots: Iterable[os.PathLike[str] | str]) -> tuple[str, ...]:
    """The markdown files in the projects' memory folders (one ``scandir`` each): what changes when a
    document appears or goes, and not when one is written (a write changes a folder's time, not its names)."""
    names: list[str] = []

    def scan(folder: str) -> list[os.DirEntry[str]]:
        try:
            with os.scandir(folder) as it:
                return list(it)
        except OSError:
            return []

    for root in roots:
        base = os.fspath(root)
        for rel in _DOC_FOLDERS:
            names += [f"{base}/{rel}/{e.name}" for e in scan(os.path.join(base, rel)) if e.name.endswith(".md")]
        for agent in scan(os.path.join(base, _AGENTS)):
            if agent.is_dir(follow_symlinks=False):
                names += [f"{base}/{_AGENTS}/{agent.name}/{e.name}" for e in scan(agent.path) if e.name.endswith(".md")]
    return tuple(sorted(names))
