"""One process alone: the :class:`~.seams.SessionStrategy` that does the plain thing.

A session lives in the process that opened it, and nowhere else: it is found in the table or not at
all, nothing is shared before a request runs, a GET stream may open whenever none is open here, and
a stream whose writer stopped has no one else to take it over. The process is ready from the start
until it drains.

>>> import asyncio
>>> local = LocalStrategy()
>>> asyncio.run(local.readiness())
(200, b'ok')
>>> asyncio.run(local.drain())
>>> asyncio.run(local.readiness())
(503, b'not ready: shutting down')
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from .... import _jsonrpc as jsonrpc
from .seams import Handler, Member

if TYPE_CHECKING:
    from .sessions import HTTPSession, SessionTable

__all__ = ["LocalStrategy"]

logger = logging.getLogger("mcpkit.http")


class LocalStrategy:
    """Sessions served by this process alone (what an app is given when nothing else is)."""

    __slots__ = ("draining", "on_drain")

    def __init__(self) -> None:
        #: Run when shutdown begins, to end long-lived streams (the server's listen streams).
        self.on_drain: list[Callable[[], Awaitable[None]]] = []
        self.draining = False

    def bind(self, table: SessionTable) -> None:
        return None

    def guard(self, handler: Handler) -> Handler:
        return handler

    async def start(self) -> None:
        return None

    async def drain(self) -> None:
        self.draining = True
        for hook in self.on_drain:
            try:
                await hook()
            except Exception:  # one hook failing must not keep the others from ending their streams
                logger.exception("a drain hook failed")

    async def stop(self) -> None:
        return None

    async def readiness(self) -> tuple[int, bytes]:
        return (503, b"not ready: shutting down") if self.draining else (200, b"ok")

    async def open(self, session: HTTPSession, init: jsonrpc.Request | None) -> None:
        return None

    async def find(self, session_id: str) -> HTTPSession | None:
        return None  # a session is in the table of the process that opened it, or nowhere

    def touch(self, session: HTTPSession) -> None:
        return None

    async def end(self, session: HTTPSession) -> None:
        return None

    def ended(self, session: HTTPSession) -> None:
        return None

    async def replicate(self, session: HTTPSession, request: jsonrpc.Request) -> None:
        return None

    def running(self, stream_id: str, request: jsonrpc.Event | list[Member]) -> None:
        return None

    async def take_in(self, session: HTTPSession, members: list[Member]) -> list[Member]:
        return members

    async def hold(self, session: HTTPSession) -> bool:
        return True  # the app has checked that none is open here, and here is everywhere

    async def release(self, session: HTTPSession) -> None:
        return None

    async def take_over(self, session: HTTPSession, stream_id: str) -> None:
        return None  # its writer is this process, which is alive

    async def held_elsewhere(self, session_id: str, owner: str | None) -> bool:
        return False

    async def forward(self, session_id: str, messages: list[bytes]) -> None:
        return None
