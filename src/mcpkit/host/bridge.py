"""Relaying what an upstream server asks (sampling, elicitation, roots) to the caller it is for.

An upstream request reaches the host's :class:`~mcpkit.Client` callbacks, and must go to the caller
whose call caused it:

- a 2026-07-28 upstream asks inside the answer to our ``tools/call`` (``input_required``), and the
  client answers it in the task that made the call: a context variable names that caller; such
  calls share the server's one upstream session;
- a handshake-era upstream sends a request of its own, which the client reads in its reader task,
  unrelated on the wire to any call. So a call to such a server from a caller that can be asked
  runs on an upstream session of that caller's own, from the server's pool
  (:mod:`.pool`), one call at a time per session: the session's holder is the call, and
  its questions go there. Calls from callers that cannot be asked share the server's one session;
  a request that arrives there (or on a pooled session between calls) has no caller and is refused
  (``roots/list`` gets the config's roots), so one caller's question never reaches another.

The relay uses the caller's :class:`~mcpkit.Context`: ``ctx.sample``, ``ctx.elicit``,
``ctx.list_roots``. A handshake-era caller gets a request. A 2026-07-28 caller's question gets a
key of its own (:data:`PARK_PREFIX`): its handler answers ``input_required`` while the upstream call
waits, parked (:class:`Parked`), and the retry that carries the answer resumes it (:meth:`Bridge.resume`),
so the upstream tool runs once. A question that cannot take a key (URL elicitation) ends the call
instead, and the retry runs it again (mcpkit's replay rule).
"""

from __future__ import annotations

import asyncio
import contextvars
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec

from .._errors import MethodNotFound
from .._mrtr import InputRequired
from ..context import Context
from .pool import holder

__all__ = ["PARK_PREFIX", "Bridge", "CallScope", "Parked"]

T = TypeVar("T")

#: The key prefix of questions whose call waits, parked, for the caller's retry.
PARK_PREFIX = "gateway-"


class CallScope:
    """One caller's call in flight: its context, and where a question it must answer first goes.

    Compared by identity (a pool's owner of a session for the call alone).
    """

    __slots__ = ("_needs", "call", "can_be_asked", "ctx")

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        caps = ctx.scope.client_capabilities
        #: Whether the caller declared something the upstream may ask of it (the same caller in
        #: every round, so worked out once).
        self.can_be_asked = any(isinstance(caps.get(k), dict) for k in ("sampling", "elicitation", "roots"))
        #: The host's call for this caller, when it runs in a task of its own (see the forwarder).
        self.call: asyncio.Future[Any] | None = None
        self._needs: asyncio.Future[InputRequired] | None = None

    @property
    def needs(self) -> asyncio.Future[InputRequired]:
        """Set to the question the caller must answer before the call can go on (made when asked
        for: most calls never need one)."""
        if self._needs is None:
            self._needs = asyncio.get_running_loop().create_future()
        return self._needs

    def renew(self, ctx: Context) -> None:
        """Go on in the caller's next round (a 2026-07-28 retry): its context, a fresh question slot."""
        self.ctx = ctx
        self._needs = None


_current: contextvars.ContextVar[CallScope | None] = contextvars.ContextVar(
    "mcpkit_gateway_call", default=None
)


@dataclass
class Parked:
    """A call waiting, upstream request open, for a 2026-07-28 caller to retry with the answer."""

    scope: CallScope
    answer: asyncio.Future[Any]
    expiry: asyncio.TimerHandle
    question: Any  # the inputRequests entry
    sent: bool  # whether the caller has been asked it yet

    def cancel(self) -> None:
        self.expiry.cancel()
        if self.scope.call is not None:
            self.scope.call.cancel()


class Bridge:
    """The gateway's side of the host's callbacks: finds the caller and asks it.

    Args:
        roots: what ``roots/list`` gets when no caller is there to ask.
        park_seconds: how long a call waits for a 2026-07-28 caller's retry before it is cancelled.
    """

    def __init__(self, roots: list[str], park_seconds: float = 300.0) -> None:
        #: Calls in flight on each server's shared session (a log line of a sole one goes to it).
        self.active: dict[str, list[CallScope]] = {}
        self.roots = roots
        self.park_seconds = park_seconds
        self.parked: dict[str, Parked] = {}

    def resume(self, ctx: Context) -> CallScope | None:
        """The parked call a 2026-07-28 retry answers (its answers handed over), if there is one here.

        A retry carries every answer of the request so far; those whose keys name questions still
        parked are the new ones. Questions the call asked meanwhile, never sent, go to the caller at
        once in the next round. (A retry that reaches another gateway process finds nothing, and the
        call starts again there, asking again: the replay rule.)
        """
        resumed: CallScope | None = None
        for key, value in ctx.answers.items():
            parked = self.parked.pop(key, None) if key.startswith(PARK_PREFIX) else None
            if parked is None:
                continue
            parked.expiry.cancel()
            if resumed is None:
                resumed = parked.scope
                resumed.renew(ctx)
            if not parked.answer.done():
                parked.answer.set_result(value)
        if resumed is not None:
            unsent = {
                key: parked.question
                for key, parked in self.parked.items()
                if parked.scope is resumed and not parked.sent
            }
            if unsent:
                for key in unsent:
                    self.parked[key].sent = True
                resumed.needs.set_result(InputRequired(unsent))
        return resumed

    async def _park(self, scope: CallScope, need: InputRequired) -> Any:
        """Send *need* to the caller (its handler answers ``input_required``) and wait for the
        retry that answers it; the upstream call stays open meanwhile. A question asked while
        another is on its way to the caller waits for the next round (see :meth:`resume`)."""
        ((key, question),) = need.requests.items()
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Any] = loop.create_future()
        call = scope.call

        def expire() -> None:
            if self.parked.pop(key, None) is not None and call is not None:
                call.cancel()  # the caller never came back

        sent = not scope.needs.done()
        self.parked[key] = Parked(scope, answer, loop.call_later(self.park_seconds, expire), question, sent)
        if sent:
            scope.needs.set_result(need)
        return await answer

    async def relaying(self, scope: CallScope, server: str, call: Awaitable[T], shared: bool) -> T:
        """Await *call*, an upstream call made for *scope*: the questions it causes go to that
        caller (the context variable :meth:`caller_of` reads), and, on the server's *shared*
        session, it is counted active there (a log line of a sole call goes to it)."""
        token = _current.set(scope)
        calls = self.active.setdefault(server, []) if shared else None
        if calls is not None:
            calls.append(scope)
        try:
            return await call
        finally:
            if calls is not None:
                calls.remove(scope)
            _current.reset(token)

    def caller_of(self, server: str) -> CallScope | None:
        """Whose call a question or log line of *server* belongs to: the holder of the pooled session
        it came on, else the call whose task is asking (2026-07-28 upstreams); else nobody."""
        held = holder()
        if isinstance(held, CallScope):
            return held
        return _current.get()

    def log_target(self, server: str) -> CallScope | None:
        """Whose call a log line of *server* belongs to: the caller of the call, when that is known
        (as for questions), else the one call in flight on the shared session; none when several are."""
        scope = self.caller_of(server)
        if scope is not None:
            return scope
        calls = self.active.get(server)
        return calls[0] if calls is not None and len(calls) == 1 else None

    async def _relay(self, server: str, kind: str, params: dict[str, Any]) -> Any:
        scope = self.caller_of(server)
        if scope is None:
            if kind == "roots":
                return {"roots": [{"uri": uri, "name": uri.rsplit("/", 1)[-1] or uri} for uri in self.roots]}
            raise MethodNotFound(
                f"no caller of the gateway to relay {kind} to (no call of {server!r} in flight)"
            )
        ctx = scope.ctx
        # A 2026-07-28 caller's question gets a key of its own, so that its retry finds this call.
        key = f"{PARK_PREFIX}{uuid.uuid4().hex}" if ctx.scope.stateless and scope.call is not None else None
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
                    key=key,
                )
            elif kind == "elicitation" and params.get("mode") == "url":
                answer = await ctx.elicit_url(str(params.get("message", "")), str(params.get("url", "")))
            elif kind == "elicitation":
                answer = await ctx.elicit(
                    str(params.get("message", "")), params.get("requestedSchema"), key=key
                )
            else:
                return {"roots": [msgspec.to_builtins(root) for root in await ctx.list_roots(key=key)]}
        except InputRequired as need:
            if key is not None and key in need.requests:
                return await self._park(scope, need)
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
