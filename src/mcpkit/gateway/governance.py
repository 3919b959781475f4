"""The gateway's governance as ``tools/call`` middleware: policy, consent, rate limits and audit.

The rules are the host's (:func:`mcpkit.host.governance.governed`, the same decisions and audit
lines as ``mcpkit host``); what is the gateway's is who is asked and how:

- consent (a call the policy marks ``ask``) is put to the calling user with ``ctx.elicit``: a
  request to a handshake-era caller, an ``input_required`` round to a 2026-07-28 one (whose retry
  carries the answer under the same key, so the question is asked once);
- a 2026-07-28 call waiting, parked, for the caller's answer to an upstream question
  (:mod:`.bridge`) is one call over several rounds: its limits are charged on the first round, and
  its audit line is written by the round that ends it.

The middleware is added by :class:`~mcpkit.gateway.Gateway` to its server, outermost; a call of a
tool the gateway does not know (or whose server is down) passes through untouched, for the
handler to answer.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from .._errors import MethodNotFound, MissingClientCapability
from .._mrtr import InputRequired
from ..host import ConsentRequest, Host
from ..host.bridge import PARK_PREFIX
from ..host.governance import governed

if TYPE_CHECKING:
    from .._middleware import Call, CallNext
    from ..context import Context
    from ..server import Server

__all__ = ["Governance", "caller_of", "resolver"]

_CONSENT_SCHEMA: Final = {
    "type": "object",
    "properties": {"allow": {"type": "boolean", "title": "Allow this call", "default": False}},
    "required": ["allow"],
}


class Governance:
    """``tools/call`` middleware running each call of *link*'s host's tools under its config's
    policy (*link*: an object with a ``host``, such as the gateway)."""

    def __init__(self, link: Any, resolve: Callable[[str, Context], str | None] | None = None) -> None:
        # Read on each call: a proxy's host is made anew each time it starts serving.
        self.link = link
        #: The name to govern (the host routes a transformed tool to the tool it transforms), or
        #: None for a name the server refuses to this caller (hidden): such a call passes
        #: through, to be refused and not audited (as is a name renamed away: the host knows it not).
        self.resolve = resolve

    @property
    def host(self) -> Host:
        host: Host = self.link.host
        return host

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        name = call.params.get("name")
        arguments = call.params.get("arguments")
        if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
            return await call_next(call)  # the handler says what is wrong
        ctx = call.context
        try:
            routed, annotations = self._facts(name, ctx)
        except Exception:  # unknown, or its server is down: the handler answers that
            return await call_next(call)
        host = self.host
        # A retry that answers a parked question is the same call: already charged, decided again
        # (consent's answer, if any, is in the retry too).
        resumed = bool(ctx.answers) and any(key in host.bridge.parked for key in ctx.answers)
        request = ConsentRequest(routed.server, routed.name, name, arguments or {}, annotations, "")

        async def ask(asked: ConsentRequest) -> bool | None:
            return await _consent(asked, ctx)

        return await governed(
            host.config.policy,
            host.audit,
            request,
            caller_of(ctx),
            ask,
            functools.partial(call_next, call),
            limited=not resumed,
            pending=_parked,
        )

    def _facts(self, name: str, ctx: Context) -> tuple[Any, dict[str, Any]]:
        source = self.resolve(name, ctx) if self.resolve is not None else name
        if source is None:
            raise LookupError(name)
        return self.host.tool_facts(source)


def resolver(server: Server) -> Callable[[str, Context], str | None]:
    """The name to govern of a tool called on *server*: None for one it refuses to this caller
    (hidden), which passes through to be refused and is not audited."""

    def resolve(name: str, ctx: Context) -> str | None:
        if server._composed and server._is_hidden("tools", name, ctx):
            return None
        return name

    return resolve


def _parked(need: InputRequired) -> bool:
    """Whether the call goes on after this round: its question waits, parked, for the retry."""
    return any(key.startswith(PARK_PREFIX) for key in need.requests)


async def _consent(request: ConsentRequest, ctx: Context) -> bool | None:
    """Ask the calling user through the protocol; None when the caller cannot be asked."""
    arguments = json.dumps(request.arguments, ensure_ascii=False)
    if len(arguments) > 500:
        arguments = arguments[:497] + "..."
    message = f"Allow the tool {request.tool!r} of server {request.server!r} to run with {arguments}?"
    try:
        answer = await ctx.elicit(message, _CONSENT_SCHEMA, key=f"consent:{request.name}")
    except (MissingClientCapability, MethodNotFound):  # no capability, or a revision without it
        return None
    if answer.action == "cancel":  # no explicit choice (no terminal, a dismissed form): nobody said no
        return None
    return answer.action == "accept" and bool((answer.content or {}).get("allow"))


def caller_of(ctx: Context) -> str:
    """Who calls, for the audit log: the client's name and the request's revision."""
    info = ctx.client_info or {}
    return f"{info.get('name', 'unknown')} ({ctx.scope.version})"
