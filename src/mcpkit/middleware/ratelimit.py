"""RateLimit: a token bucket per caller, and per method or per tool if asked.

``RateLimit("10/s")`` lets each caller make bursts of 10 requests and 10 a second after that
(``"100/m"``, ``"5/10s"``, ``"1000/h"``: :class:`mcpkit._ratelimit.Rate`). Who a caller is, is the
*key* function's answer for the request; the default, :func:`caller_of`, is:

1. the connection, where the request came on one that lasts: a stdio connection, an in-process
   ``Client(server)``, a handshake-era HTTP session (its ``Mcp-Session-Id``);
2. else the verified token's subject (``ctx.auth.subject``), on a protected HTTP server: a
   2026-07-28 HTTP request has no connection beyond itself;
3. else nobody in particular: such requests share one bucket.

*per* says what else splits the buckets: ``"caller"`` (one bucket per caller for every request
this middleware sees), ``"method"`` (per caller and method), ``"tool"`` (per caller and tool
name for ``tools/call``, prompt name for ``prompts/get``, URI for ``resources/read``; per method
otherwise). *tools* limits only the calls of those tools (other requests pass).

Over the limit, a ``tools/call`` gets a tool error naming the limit (the model reads it and can
wait), any other request the JSON-RPC error -32000 (the implementation-defined server error, as the
HTTP transport's own per-address limit answers) with ``data: {"retryAfter": seconds, "limit":
spec}``. The tool does not run.

Buckets of a connection go with it (weak keys); other keys are at most *max_keys*, past which the
oldest tenth is forgotten (a forgotten caller starts with a full bucket).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Collection, Hashable
from typing import Any, Literal

from .._errors import SERVER_BUSY, RPCError, ToolError
from .._middleware import Call, CallNext
from .._ratelimit import Rate
from ..context import Context
from ..session import Peer
from .timing import subject_of

__all__ = ["RateLimit", "caller_of"]

#: The bucket key of requests nobody in particular made (no connection, no verified subject).
SHARED: tuple[str] = ("shared",)
# Keys that take no weak references, known without trying.
_VALUES: frozenset[type] = frozenset({str, tuple, int, bytes, frozenset, type(None)})


def caller_of(call: Call) -> Hashable:
    """Who made *call*, for rate limits: its lasting connection, else its verified subject, else
    :data:`SHARED` (see the module's docstring)."""
    return caller_of_context(call.context)


def caller_of_context(ctx: Context) -> Hashable:
    """:func:`caller_of` a request's :class:`~mcpkit.Context`."""
    # A Peer is a connection that carries many requests (stdio, in-process, a handshake-era HTTP
    # session); a 2026-07-28 HTTP request answers through its own response, and its connection
    # object lives as long as the request: a bucket keyed by it would never fill.
    if isinstance(ctx.peer, Peer) and ctx.connection is not None:
        return ctx.connection
    if ctx.auth is not None and ctx.auth.subject is not None:
        return ("subject", ctx.auth.subject)
    return SHARED


class RateLimit:
    """Refuse requests over *rate* per caller (see the module's docstring).

    Args:
        rate: ``"N/s"``, ``"N/m"``, ``"N/h"`` or ``"N/10s"``-like.
        key: who made a request: a function of the :class:`~mcpkit.server.Call` returning anything
            hashable (an object that takes weak references keeps its buckets as long as it lives).
        per: ``"caller"``, ``"method"`` or ``"tool"``.
        tools: limit only the calls of these tools; ``None``: every request this middleware sees.
        clock: monotonic seconds (``time.monotonic``); tests give their own.
        max_keys: how many callers that are not connections are remembered at most.

    Raises:
        ValueError: an invalid *rate* or *per*.

    Example::

        >>> from mcpkit import Server
        >>> from mcpkit.middleware import RateLimit
        >>> server = Server("demo")
        >>> server.add_middleware(RateLimit("5/s", per="tool"), methods=["tools/call"])
    """

    __slots__ = ("_by_object", "_by_value", "clock", "key", "max_keys", "per", "rate", "tools")

    def __init__(
        self,
        rate: str,
        *,
        key: Callable[[Call], Hashable] = caller_of,
        per: Literal["caller", "method", "tool"] = "caller",
        tools: Collection[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 100_000,
    ) -> None:
        if per not in ("caller", "method", "tool"):
            raise ValueError(f"RateLimit: per must be 'caller', 'method' or 'tool', not {per!r}")
        self.rate = Rate(rate)
        self.key = key
        self.per = per
        self.tools = frozenset(tools) if tools is not None else None
        self.clock = clock
        self.max_keys = max_keys
        # caller → (what within the caller → bucket); a bucket is [tokens, last time] (Rate's).
        self._by_object: weakref.WeakKeyDictionary[Any, dict[Hashable, list[float]]]
        self._by_object = weakref.WeakKeyDictionary()
        self._by_value: dict[Hashable, dict[Hashable, list[float]]] = {}

    def take(self, caller: Hashable, within: Hashable = None) -> float:
        """Spend one token of the bucket of (*caller*, *within*): 0.0 if there was one, else the
        seconds until there is. *within* splits a caller's buckets (a tool's name)."""
        now = self.clock()
        buckets = self._buckets_of(caller)
        bucket = buckets.get(within)
        if bucket is None:
            bucket = buckets[within] = self.rate.new_bucket(now)
        return self.rate.take(bucket, now)

    def _buckets_of(self, caller: Hashable) -> dict[Hashable, list[float]]:
        weak = type(caller) not in _VALUES
        if weak:
            try:
                found = self._by_object.get(caller)
            except TypeError:  # an object that takes no weak references: kept by value
                weak = False
        if not weak:
            found = self._by_value.get(caller)
        if found is not None:
            return found
        found = {}
        if weak:
            self._by_object[caller] = found
        else:
            if len(self._by_value) >= self.max_keys:
                for old in list(self._by_value)[: max(1, self.max_keys // 10)]:
                    del self._by_value[old]
            self._by_value[caller] = found
        return found

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        name = subject_of(call)
        if self.tools is not None and (call.method != "tools/call" or name not in self.tools):
            return await call_next(call)
        within: Hashable = None
        if self.per == "method":
            within = call.method
        elif self.per == "tool":
            within = (call.method, name)
        wait = self.take(self.key(call), within)
        if wait:
            if call.method == "tools/call":
                raise ToolError(
                    f"Rate limit exceeded for tool {name} ({self.rate.spec}); try again in {wait:.1f} s"
                )
            raise RPCError(
                SERVER_BUSY,
                f"Rate limit exceeded for {call.method} ({self.rate.spec}); try again in {wait:.1f} s",
                {"retryAfter": round(wait, 3), "limit": self.rate.spec},
            )
        return await call_next(call)
