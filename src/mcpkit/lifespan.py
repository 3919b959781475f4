"""A server's lifespan: what it opens once before serving and closes when it stops.

::

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[Database]:
        db = await Database.connect("notes.db")
        try:
            yield db          # ctx.lifespan in every handler
        finally:
            await db.close()

    server = Server("notes", lifespan=lifespan)

The context manager is entered once, before the first request is handled, and exited when the
server stops serving: a stdio server when its client goes away, an HTTP app at the ASGI lifespan's
shutdown, an in-process ``Client(server)`` when it closes. Several of those at once (two in-process
clients, say) share one entry: it is counted, and exited when the last one stops. A server's mounted
servers (:meth:`~mcpkit.Server.mount`) start and stop with it, after and before it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

__all__ = ["LifespanFn", "Running", "StartupError"]

#: ``fn(server)`` returning an async context manager; what it yields is ``ctx.lifespan``.
LifespanFn = Callable[[Any], contextlib.AbstractAsyncContextManager[Any]]


class StartupError(RuntimeError):
    """A server's lifespan raised on entry: the server does not start. ``str()`` is one line."""


class Running:
    """Whether a server is serving, counted, with its lifespan (and its mounted servers') entered."""

    __slots__ = ("_lock", "_stack", "_users", "children", "fn", "server", "value")

    def __init__(self, fn: LifespanFn | None, server: Any) -> None:
        self.fn = fn
        self.server = server
        #: What the lifespan yielded while it runs (``ctx.lifespan``), else ``None``.
        self.value: Any = None
        #: The mounted servers' own, entered after this one's and exited before it.
        self.children: list[Running] = []
        self._users = 0
        self._stack: contextlib.AsyncExitStack | None = None
        self._lock: asyncio.Lock | None = None

    async def enter(self) -> None:
        """One more user of the server: the first enters the lifespan. Raises :class:`StartupError`."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            self._users += 1
            if self._users > 1:
                return
            stack = contextlib.AsyncExitStack()
            try:
                if self.fn is not None:
                    self.value = await stack.enter_async_context(self.fn(self.server))
                for child in self.children:
                    await child.enter()
                    stack.push_async_callback(child.exit)
            except BaseException as exc:
                self._users = 0
                self.value = None
                await stack.aclose()
                if isinstance(exc, (StartupError, asyncio.CancelledError)) or not isinstance(exc, Exception):
                    raise
                detail = str(exc).splitlines()[0] if str(exc) else ""
                raise StartupError(
                    f"server {self.server.info.name!r} failed to start: its lifespan raised {type(exc).__name__}"
                    + (f": {detail}" if detail else "")
                ) from exc
            self._stack = stack

    async def exit(self) -> None:
        """One user fewer: the last exits the lifespan (mounted servers' first)."""
        if self._lock is None:
            return
        async with self._lock:
            if self._users == 0:
                return
            self._users -= 1
            if self._users or self._stack is None:
                return
            stack, self._stack = self._stack, None
            try:
                await stack.aclose()
            finally:
                self.value = None

    @property
    def serving(self) -> bool:
        return self._users > 0
