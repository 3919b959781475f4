"""The HTTP app's start and stop: the ASGI lifespan, or the first request where none runs.

At start the app's session strategy starts (a fleet's node joins its shared state) and the server
enters its lifespan (:mod:`mcpkit.lifespan`); at shutdown the strategy stops and the lifespan is
exited. A server whose
lifespan fails to start fails the ASGI startup with its one-line message (uvicorn then exits);
mounted where no lifespan events come, the first request starts it and, if that fails, is answered
503 with the message (the next request tries again).
"""

from __future__ import annotations

import asyncio

from ...._errors import INTERNAL_ERROR
from ....kernel import Endpoint
from ._asgi import Receive, Send, error
from .seams import SessionStrategy

__all__ = ["Serving"]


class Serving:
    """Whether the app's server has started, and starting and stopping it."""

    __slots__ = ("_lock", "endpoint", "started", "strategy")

    def __init__(self, endpoint: Endpoint, strategy: SessionStrategy) -> None:
        self.endpoint = endpoint
        self.strategy = strategy
        self.started = False
        self._lock: asyncio.Lock | None = None

    async def _start(self) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if not self.started:
                await self.endpoint.start_serving()
                self.started = True

    async def lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self.strategy.start()  # a fleet not joined yet goes on trying; /readyz says so
                try:
                    await self._start()
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.strategy.stop()
                if self.started:
                    self.started = False
                    await self.endpoint.stop_serving()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def start_late(self, send: Send) -> None:
        """Start at a first request (no lifespan events came); on failure answer it 503."""
        try:
            await self._start()
        except Exception as exc:
            await error(send, 503, None, INTERNAL_ERROR, str(exc))
