"""Relaying what an upstream server asks (sampling, elicitation, roots) to the caller it is for.

The gateway keeps one upstream session per server, shared by its callers. An upstream request
reaches the host's :class:`~mcpkit.Client` callbacks, and must go to the caller whose call caused it:

- a 2026-07-28 upstream asks inside the answer to our ``tools/call`` (``input_required``), and the
  client answers it in the task that made the call: a context variable names that caller;
- a handshake-era upstream sends a request of its own, which the client reads in its reader task,
  unrelated on the wire to any call. To know the caller without guessing, a call to such a server
  from a caller that can be asked holds the server exclusively (:class:`Turns`); calls from callers
  that cannot be asked share it and never hold it. A request that arrives with no holder is refused
  (``roots/list`` gets the config's roots), so one caller's question never reaches another.

The relay uses the caller's :class:`~mcpkit.Context`: ``ctx.sample``, ``ctx.elicit``,
``ctx.list_roots``. A handshake-era caller gets a request; a 2026-07-28 caller's handler raises
``InputRequired``, so the gateway ends the upstream call and answers ``input_required``; on the retry
the call runs again and the same question finds its answer (mcpkit's replay rule: the upstream tool
runs once per round, as a tool of mcpkit's own would).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .._errors import MethodNotFound
from .._mrtr import InputRequired
from ..context import Context
from ..host import Unavailable

__all__ = ["Bridge", "CallScope", "Turns"]


@dataclass
class CallScope:
    """One caller's call in flight: its context, and where a question it must answer first goes."""

    ctx: Context
    needs: asyncio.Future[InputRequired] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    @property
    def can_be_asked(self) -> bool:
        caps = self.ctx.scope.client_capabilities
        return any(isinstance(caps.get(k), dict) for k in ("sampling", "elicitation", "roots"))


_current: contextvars.ContextVar[CallScope | None] = contextvars.ContextVar(
    "mcpkit_gateway_call", default=None
)


class Turns:
    """A shared/exclusive lock per upstream server: exclusive holders are the callers that can be asked."""

    def __init__(self) -> None:
        self._condition = asyncio.Condition()
        self._shared = 0
        self.holder: CallScope | None = None
        #: Every call in flight on the server, holder or not (log lines go to a sole one).
        self.active: list[CallScope] = []

    @contextlib.asynccontextmanager
    async def turn(
        self, scope: CallScope, exclusive: bool, timeout: float | None = None
    ) -> AsyncIterator[None]:
        """Hold the server (shared or alone) for the body; wait for it at most *timeout* seconds.

        Raises:
            Unavailable: the server stayed held longer than *timeout* (a caller slow to answer).
        """
        try:
            async with asyncio.timeout(timeout), self._condition:
                if exclusive:
                    await self._condition.wait_for(lambda: self.holder is None and self._shared == 0)
                    self.holder = scope
                else:
                    await self._condition.wait_for(lambda: self.holder is None)
                    self._shared += 1
        except TimeoutError:
            raise Unavailable(
                f"the server is busy answering another caller's call (waited {timeout} s)"
            ) from None
        self.active.append(scope)
        try:
            yield
        finally:
            self.active.remove(scope)
            async with self._condition:
                if exclusive:
                    self.holder = None
                else:
                    self._shared -= 1
                self._condition.notify_all()


class Bridge:
    """The gateway's side of the host's callbacks: finds the caller and asks it."""

    def __init__(self, roots: list[str]) -> None:
        self.turns: dict[str, Turns] = {}
        self.roots = roots

    def _turns(self, server: str) -> Turns:
        return self.turns.setdefault(server, Turns())

    @contextlib.contextmanager
    def calling(self, scope: CallScope) -> Any:
        token = _current.set(scope)
        try:
            yield scope
        finally:
            _current.reset(token)

    def guard(self, scope: CallScope, handshake_upstream: bool, timeout: float | None = None) -> Any:
        """What the host enters around the upstream call (see the module docstring)."""

        def enter(server: str) -> contextlib.AbstractAsyncContextManager[None]:
            exclusive = handshake_upstream and scope.can_be_asked
            return self._turns(server).turn(scope, exclusive, timeout)

        return enter

    def caller_of(self, server: str) -> CallScope | None:
        scope = _current.get()
        if scope is not None:
            return scope
        turns = self.turns.get(server)
        return turns.holder if turns is not None else None

    def log_target(self, server: str) -> CallScope | None:
        """Whose call a log line of *server* belongs to: the caller of the call, when that is known
        (as for questions), else the one call in flight on the server; none when several are."""
        scope = self.caller_of(server)
        if scope is not None:
            return scope
        turns = self.turns.get(server)
        return turns.active[0] if turns is not None and len(turns.active) == 1 else None

    async def _relay(self, server: str, kind: str, params: dict[str, Any]) -> Any:
        scope = self.caller_of(server)
        if scope is None:
            if kind == "roots":
                return {"roots": [{"uri": uri, "name": uri.rsplit("/", 1)[-1] or uri} for uri in self.roots]}
            raise MethodNotFound(
                f"no caller of the gateway to relay {kind} to (no call of {server!r} in flight)"
            )
        ctx = scope.ctx
        try:
            if kind == "sampling":
                answer: Any = await ctx.sample(
                    params.get("messages") or [],
                    max_tokens=int(params.get("maxTokens") or 1000),
                    system_prompt=params.get("systemPrompt"),
                    temperature=params.get("temperature"),
                    tools=params.get("tools"),
                    tool_choice=params.get("toolChoice"),
                    model_preferences=params.get("modelPreferences"),
                )
            elif kind == "elicitation" and params.get("mode") == "url":
                answer = await ctx.elicit_url(str(params.get("message", "")), str(params.get("url", "")))
            elif kind == "elicitation":
                answer = await ctx.elicit(str(params.get("message", "")), params.get("requestedSchema"))
            else:
                return {"roots": [msgspec.to_builtins(root) for root in await ctx.list_roots()]}
        except InputRequired as need:
            # A 2026-07-28 caller: its handler must end this round (see the module docstring).
            if not scope.needs.done():
                scope.needs.set_result(need)
            raise MethodNotFound(f"the caller answers {kind} in a later round") from None
        return msgspec.to_builtins(answer)

    async def sampling(self, server: str, params: dict[str, Any]) -> Any:
        return await self._relay(server, "sampling", params)

    async def elicitation(self, server: str, params: dict[str, Any]) -> Any:
        return await self._relay(server, "elicitation", params)

    async def list_roots(self, server: str) -> list[dict[str, Any]]:
        answer = await self._relay(server, "roots", {})
        return list(answer.get("roots", []))
