"""Upstream sessions of one server kept per caller: the pool, and the lease a call takes from it.

A handshake-era server's requests (``sampling/createMessage``, ``elicitation/create``,
``roots/list``) carry nothing that ties them to the call that caused them. So a caller that can be
asked gets upstream sessions of its own, never used by another *owner*, each serving one call at a
time, so that a question is always that call's (its *holder*'s: :func:`holder` says whose while the
host's callbacks run). Calls that cannot be asked share the server's one session (:mod:`.upstream`).
docs/host.md ("Upstream sessions") says when sessions are opened and closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from .._errors import MCPError
from ..client import Client
from .model import DEFAULT_IDLE_SECONDS, DEFAULT_MAX_SESSIONS

__all__ = ["Lease", "PooledSession", "SessionPool", "bind", "holder"]

logger = logging.getLogger("mcpkit.host")

_holder: contextvars.ContextVar[object | None] = contextvars.ContextVar("mcpkit_host_holder", default=None)


def holder() -> object | None:
    """The holder of the pooled session whose request or notification is being handled, if any."""
    return _holder.get()


@dataclass(eq=False)
class Lease:
    """What a call asks the pool for: a session of *owner*'s, on which *holder* is asked.

    Attributes:
        owner: who the session belongs to (a connection, compared by identity, or a caller's
            identity such as ``("subject", sub)``, compared by value); never handed to another owner.
        holder: who answers the session's questions during this call (the gateway's call scope).
        ends: set when the owner goes away; its sessions are closed then.
        keep: keep the session for the owner's next call (false: close it when the call ends).
    """

    owner: object
    holder: object = None
    ends: asyncio.Event | None = None
    keep: bool = True


@dataclass(eq=False)
class PooledSession:
    """One caller's upstream session."""

    owner: object
    holder: object = None
    client: Client | None = None
    busy: bool = True
    retire: bool = False  # close when the call using it ends
    used: float = field(default_factory=time.monotonic)
    timer: asyncio.TimerHandle | None = None
    watcher: asyncio.Task[None] | None = None


Opener = Callable[[PooledSession], Coroutine[Any, Any, Client]]


class SessionPool:
    """The caller sessions of one server, at most *max_sessions* open, each closed after
    *idle_seconds* unused. *open_session* connects a new :class:`~mcpkit.Client` for a session (its
    callbacks bound to the session's holder with :func:`bind`); *key* names the server in messages;
    *wait_seconds* is how long a call waits while the pool is full (the caller enforces it:
    :meth:`acquire` itself waits for ever)."""

    def __init__(
        self,
        key: str,
        open_session: Opener,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        wait_seconds: float = 120.0,
    ) -> None:
        self.key = key
        self.open_session = open_session
        self.max_sessions = max_sessions
        self.idle_seconds = idle_seconds
        self.wait_seconds = wait_seconds
        self.sessions: list[PooledSession] = []
        self._changed = asyncio.Event()
        self._owners: dict[int, tuple[object, asyncio.Task[None]]] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._closed = False
        #: What idle time is measured by (a test gives a fake clock's): a session unused for
        #: ``idle_seconds`` by it is closed at the next lease, as by the timer.
        self.clock: Callable[[], float] = time.monotonic

    def __len__(self) -> int:
        return len(self.sessions)

    def of(self, owner: object) -> list[PooledSession]:
        return [s for s in self.sessions if s.owner == owner]

    # -- leasing -----------------------------------------------------------------------------------

    async def acquire(self, lease: Lease) -> PooledSession:
        """A session of *lease*'s owner, free for this call: an idle one, else a new one (closing
        another owner's idle one when the pool is full). Waits (the caller bounds it) while the
        pool is full of sessions in use.

        Raises:
            MCPError: the pool is closed, or a new session could not connect.
        """
        while True:
            if self._closed:
                raise MCPError(f"server {self.key!r} is closing")
            now = self.clock()
            for stale in [s for s in self.sessions if not s.busy and now - s.used >= self.idle_seconds]:
                self._drop(stale, "idle")
            session = next((s for s in self.of(lease.owner) if not s.busy and not s.retire), None)
            if session is not None:
                self._lend(session, lease)
                return session
            if len(self.sessions) >= self.max_sessions:
                idle = sorted((s for s in self.sessions if not s.busy), key=lambda s: s.used)
                if idle:
                    self._drop(idle[0], "making room for another caller")
            if len(self.sessions) < self.max_sessions:
                return await self._open(lease)
            changed = self._changed
            await changed.wait()

    def release(self, session: PooledSession, *, dead: str | None = None, keep: bool = True) -> None:
        """The call is over: keep the session for its owner, or close it (*dead* says why it died)."""
        session.busy, session.holder, session.used = False, None, self.clock()
        if dead is not None:
            logger.warning("server %s: a caller's session died and is closed: %s", self.key, dead)
            self._drop(session, dead)
        elif not keep or session.retire or self._closed:
            self._drop(session, "its caller is gone" if session.retire else "not kept")
        elif session in self.sessions:
            loop = asyncio.get_running_loop()
            session.timer = loop.call_later(self.idle_seconds, self._drop, session, "idle")
        self._notify()

    def _lend(self, session: PooledSession, lease: Lease) -> None:
        if session.timer is not None:
            session.timer.cancel()
            session.timer = None
        session.busy, session.holder, session.used = True, lease.holder, self.clock()

    async def _open(self, lease: Lease) -> PooledSession:
        session = PooledSession(lease.owner, lease.holder, used=self.clock())
        self.sessions.append(session)  # counted from now, while it connects
        self._watch_owner(lease)
        try:
            # A fresh context: the session's reader task must not inherit the first call's context
            # variables (its questions are its holder's of the moment, see bind()).
            opening = asyncio.get_running_loop().create_task(
                self.open_session(session), context=contextvars.Context()
            )
            session.client = await opening
        except BaseException:
            if session in self.sessions:
                self.sessions.remove(session)
            self._notify()
            raise
        if session not in self.sessions:  # its owner went away while it connected
            self._close_client(session.client)
            raise MCPError(f"server {self.key!r}: the caller went away")
        session.watcher = asyncio.ensure_future(self._watch(session, session.client))
        return session

    # -- ending ------------------------------------------------------------------------------------

    async def _watch(self, session: PooledSession, client: Client) -> None:
        """A session whose connection ends (a stdio server exiting) leaves the pool at once."""
        with contextlib.suppress(MCPError):
            await client.wait_closed()
        if session in self.sessions:
            reason = client.exit_reason() or "the connection ended"
            logger.warning("server %s: a caller's session ended (%s); it is dropped", self.key, reason)
            self._drop(session, reason)

    def _watch_owner(self, lease: Lease) -> None:
        if lease.ends is None or id(lease.owner) in self._owners:
            return
        owner, ends = lease.owner, lease.ends

        async def watch() -> None:
            await ends.wait()
            self._owners.pop(id(owner), None)
            for session in self.of(owner):
                if session.busy:
                    session.retire = True
                else:
                    self._drop(session, "its caller is gone")

        self._owners[id(owner)] = (owner, asyncio.ensure_future(watch()))

    def _drop(self, session: PooledSession, why: str) -> None:
        if session not in self.sessions:
            return
        self.sessions.remove(session)
        logger.debug("server %s: closing a caller's session: %s", self.key, why)
        if session.timer is not None:
            session.timer.cancel()
        if session.watcher is not None and session.watcher is not asyncio.current_task():
            session.watcher.cancel()
        if session.client is not None:
            self._close_client(session.client)
        if not any(s.owner == session.owner for s in self.sessions):
            watched = self._owners.pop(id(session.owner), None)
            if watched is not None and watched[1] is not asyncio.current_task():
                watched[1].cancel()
        self._notify()

    def _close_client(self, client: Client) -> None:
        async def close() -> None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.aclose(), 10.0)

        task = asyncio.ensure_future(close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def aclose(self) -> None:
        """Close every session (those in use too: their calls fail) and wait for them to end."""
        self._closed = True
        for session in list(self.sessions):
            self._drop(session, "the host is closing")
        for _, task in self._owners.values():
            task.cancel()
        self._owners.clear()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)


def bind(session: PooledSession, options: dict[str, Any]) -> dict[str, Any]:
    """*options* (``Client`` keyword arguments) with the question callbacks and ``on_notification``
    run as the session's holder of the moment (see :func:`holder`)."""
    bound = dict(options)
    for name in ("sampling", "elicitation", "roots", "on_notification"):
        fn = bound.get(name)
        if callable(fn):
            bound[name] = _as_holder(session, fn)
    return bound


def _as_holder(session: PooledSession, fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    async def run(*args: Any) -> Any:
        token = _holder.set(session.holder)
        try:
            return await fn(*args)
        finally:
            _holder.reset(token)

    return run
