"""Telling clients about changes: list changes and resource updates, to this process's listeners
and, in a fleet, to every process's."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Final

import msgspec

from ._connection import ServerConnection
from ._mrtr import StateSealer
from .listeners import Listener

if TYPE_CHECKING:
    from .fleet import SharedState
    from .tasks import TaskRunner

__all__ = ["Announcing"]

logger = logging.getLogger("mcpkit.server")

#: The fleet channel that carries list changes and resource updates to every process.
_CHANGES: Final = "changes"


class Announcing:
    """Part of :class:`~mcpkit.LowLevelServer`: who listens for changes, and telling them."""

    listeners: set[Listener]
    shared: SharedState | None
    loop: asyncio.AbstractEventLoop | None
    _own_state_key: bool
    _session_listeners: dict[ServerConnection, Listener]
    if TYPE_CHECKING:  # the LowLevelServer's own (documented there)
        state_sealer: StateSealer

    # -- telling clients about changes -------------------------------------------------------------

    #: The list kinds this server announces changes of; servers with changing lists extend it.
    list_changed_kinds: frozenset[str] = frozenset()

    async def notify_list_changed(self, kind: str) -> None:
        """Send ``notifications/<kind>/list_changed`` to everyone who asked (kind: tools, prompts,
        resources), in every process of a fleet. Waits for no listener: each has a queue and a
        writer of its own."""
        for parent in getattr(self, "_mounted_in", ()):  # servers that mount this one list it too
            parent._child_changed(kind, self)
        await self._announce_list_changed(kind)

    async def _announce_list_changed(self, kind: str) -> None:
        if self.shared is not None and await self._published(msgspec.json.encode([kind, None])):
            return
        self._tell_list_changed(kind)

    async def notify_resource_updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` to the subscribers of *uri*, in every process
        of a fleet (waiting for none)."""
        for parent in getattr(self, "_mounted_in", ()):
            await parent.notify_resource_updated(parent._exposed_uri(self, uri))
        if self.shared is not None and await self._published(msgspec.json.encode([None, uri])):
            return
        self._tell_resource_updated(uri)

    async def _published(self, change: bytes) -> bool:
        """Announce *change* to the fleet; ``False`` if its shared state cannot be reached now.
        Then only this process's listeners hear of it: the change was made (a tool that made it
        has done its work, and failing it would invite a second run), and a list change is worth
        telling whoever can be told."""
        from .fleet.state import StateUnavailable

        assert self.shared is not None
        try:
            await self.shared.publish(_CHANGES, change)
        except StateUnavailable as exc:
            logger.warning("a change was announced to this process only: %s", exc.detail)
            return False
        return True

    def _tell_list_changed(self, kind: str) -> None:
        for listener in list(self.listeners):
            if kind in listener.kinds:
                listener.offer(f"notifications/{kind}/list_changed", {})

    def _tell_resource_updated(self, uri: str) -> None:
        for listener in list(self.listeners):
            if uri in listener.uris:
                listener.offer("notifications/resources/updated", {"uri": uri})

    # -- in a fleet --------------------------------------------------------------------------------

    #: Runs tools started as tasks (the friendly :class:`~mcpkit.Server` has one).
    tasks: TaskRunner | None = None

    async def join_fleet(self, state: SharedState, node: str | None = None) -> None:
        """Serve as one process of a fleet sharing *state*: the ``requestState`` key is the
        fleet's (unless ``state_key=`` was given), changes announced anywhere reach this process's
        listeners, and tasks are shared. The HTTP app calls this at startup (``http_app(redis=)``),
        naming its *node* (whose heartbeat tells the others that its tasks still run)."""
        if self.shared is state:
            return
        if not self._own_state_key:
            secret = await state.shared_secret("request-state-key")
            self.state_sealer = StateSealer(secret, self.state_sealer.ttl)
        await state.subscribe(_CHANGES, self._heard_change)
        if self.tasks is not None:
            await self.tasks.share(state, node)
        self.loop = asyncio.get_running_loop()
        self.shared = state

    def _heard_change(self, data: bytes) -> None:
        try:
            kind, uri = msgspec.json.decode(data)
        except (ValueError, TypeError):
            logger.warning("ignoring a malformed change message from the fleet")
            return
        if isinstance(kind, str):
            self._tell_list_changed(kind)
        elif isinstance(uri, str):
            self._tell_resource_updated(uri)

    async def close_subscriptions(self) -> None:
        """End every ``subscriptions/listen`` stream gracefully (e.g. before shutting down); the
        low-level server keeps none."""

    def session_listener(self, conn: ServerConnection) -> Listener | None:
        """The listener of *conn*'s handshake-era session, once it is initialized."""
        return self._session_listeners.get(conn)

    def add_listener(self, listener: Listener) -> None:
        """Tell *listener* about changes from now on (until :meth:`remove_listener`)."""
        # Listeners are added on the serving loop: remember it, so that changes made in worker
        # threads (sync tools) can be announced there.
        self.loop = asyncio.get_running_loop()
        self.listeners.add(listener)

    def remove_listener(self, listener: Listener) -> None:
        self.listeners.discard(listener)
