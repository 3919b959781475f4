"""Claims: one node of a fleet at a time holds a thing, and a claim whose holder died is taken at once.

A session's ``GET`` stream is held by one node (:mod:`mcpkit.fleet.sessions`); the claim is
a key naming the holder's node id, with an expiry its holder keeps pushing back. When the holder is
killed, its clients reconnect within a second, to another node: that node must not answer 409
("this session already has a GET stream") until the claim's expiry, nor even until the dead node's
heartbeat (``node:<id>``, written every second, lapsing 3 s after the last) has lapsed.

So each node also makes itself **present**: it listens on a channel of its own, ``node:<id>``.
A listener is a connection to the store, and the operating system closes a killed process's
connections as it reaps it: the count of that channel's listeners drops to zero then, before any
client can have noticed the death. A holder is **gone** when its heartbeat lapsed (a machine that
vanished closes nothing) or nothing listens on its channel (a process that was killed); a claim
whose holder is gone is taken over, with a compare-and-set against the holder that was judged
gone (:meth:`~.state.SharedState.swap`): of two nodes racing to take it, one wins, and the other
finds the winner, alive, and refuses.

A node whose connection to the store dropped for a moment also listens nowhere until its client
reconnects, and may lose its claims meanwhile: :func:`refresh` tells it so, and it lets go. Only
claims use presence: a task's or a request's take-over, which cannot be undone, waits for the
heartbeat to lapse.
"""

from __future__ import annotations

from typing import Final

from .node import alive
from .state import SharedState

__all__ = ["claim", "gone", "present", "refresh", "release"]

#: Attempts at a claim whose holder changes under us before giving up (each change means another
#: node took it, and that one is alive).
_ATTEMPTS: Final = 3


def _presence(node_id: str) -> str:
    return f"node:{node_id}"


def _ignore(_: bytes) -> None:
    """Nothing is ever published on a presence channel: listening is the point."""


async def present(state: SharedState, node_id: str) -> None:
    """Make the node *node_id* (this process) present: listen on its channel from now on."""
    await state.subscribe(_presence(node_id), _ignore)


async def gone(state: SharedState, node_id: str) -> bool:
    """Whether the node *node_id* is dead: its heartbeat lapsed, or it listens on no channel."""
    return not await alive(state, node_id) or await state.subscribers(_presence(node_id)) == 0


async def claim(state: SharedState, key: str, me: bytes, ttl: float) -> bytes | None:
    """Make *me* the holder of *key* for *ttl* seconds, unless a live node holds it: ``None`` when
    *me* holds it now, else the node id holding it."""
    holder: bytes | None = None
    for _ in range(_ATTEMPTS):
        holder = await state.get(key)
        if holder is not None and holder != me and not await gone(state, holder.decode()):
            return holder
        if await state.swap(key, holder, me, ttl):
            return None
    return holder if holder is not None else b""


async def refresh(state: SharedState, key: str, me: bytes, ttl: float) -> bool:
    """Push back the expiry of *me*'s claim on *key*; ``False`` if it is no longer *me*'s."""
    return await state.swap(key, me, me, ttl)


async def release(state: SharedState, key: str, me: bytes) -> None:
    """Let go of *key* if *me* holds it (a claim another node took over stays its)."""
    await state.swap(key, me, None)
