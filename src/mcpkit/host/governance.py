"""The governance of one tool call: the policy's decision, consent, rate limits, and the audit line.

:func:`governed` runs a call under a :class:`~mcpkit.host.Policy` and writes its audit line; the
host's own calls (:meth:`mcpkit.host.Host.call_tool`) and the gateway's ``tools/call`` middleware
(:mod:`mcpkit.gateway.governance`) both go through it, so the rules and the log read the same
whoever calls. :func:`admit` turns a ``deny`` into a refusal and an ``ask`` into a question to the
``ask`` callback (the user, at a terminal or through the protocol); every refusal is a tool error
result that says why, so the model reads it, and is written to the audit log.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._errors import MCPError
from .._mrtr import InputRequired
from ..types import CallToolResult, TextContent

if TYPE_CHECKING:
    from .audit import AuditLog
    from .policy import Policy

__all__ = [
    "INPUT_ROUND",
    "AskCallback",
    "ConsentRequest",
    "RootsCallback",
    "ServerRequestCallback",
    "admit",
    "governed",
    "note_failure",
    "refusal_result",
]

#: The message a call is cancelled with when it ends for an ``input_required`` round (audit outcome).
INPUT_ROUND = "input-required"

#: Why the upstream call failed, when the forwarder answered a tool error for it (a server down, a
#: timeout): :func:`governed` writes ``error`` with it in the audit line, as for the host's calls.
failure: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "mcpkit_call_failure", default=None
)


def note_failure(error: str) -> None:
    """Tell the governing middleware (if any) that the call failed with *error*, though the caller
    gets it as a tool error result."""
    noted = failure.get()
    if noted is not None:
        noted.append(error)


@dataclass(frozen=True)
class ConsentRequest:
    """A call the policy wants a person to confirm."""

    server: str
    tool: str  # the server's own name
    name: str  # the host's name
    arguments: dict[str, Any]
    annotations: dict[str, Any]
    rule: str  # which rule said "ask" ("rule 3", "default")


#: ``async fn(request) -> bool | None``: whether the user allows the call; None when nobody could be
#: asked (no terminal, a caller without elicitation) or the question was dismissed without a choice
#: (elicitation's ``cancel``), which is refused as such, not as the user's no.
AskCallback = Callable[[ConsentRequest], Awaitable[bool | None]]
#: ``async fn(server key, params) -> result`` answering a server's sampling or elicitation request.
ServerRequestCallback = Callable[[str, dict[str, Any]], Awaitable[Any]]
#: ``async fn(server key) -> roots`` (dicts with ``uri`` and ``name``).
RootsCallback = Callable[[str], Awaitable[list[dict[str, Any]]]]


def refusal_result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)], is_error=True)


async def admit(
    decision: str, request: ConsentRequest, asker: AskCallback | None, written: Callable[[str, str], None]
) -> tuple[str, CallToolResult | None]:
    """``(decision for the audit log, refusal or None)`` for a ``deny`` or ``ask`` decision.

    An ``InputRequired`` raised by *asker* (a 2026-07-28 caller asked through a round) passes
    through, and nothing is written yet: the call is decided on the retry.
    """
    name = request.name
    if decision == "deny":
        written("deny", "refused")
        return "deny", refusal_result(f"The call to {name} was denied by the host's policy ({request.rule}).")
    if asker is None:
        written("ask:unavailable", "refused")
        return "ask:unavailable", refusal_result(
            f"The call to {name} needs the user's consent, and there is no one to ask."
        )
    allowed = await asker(request)
    if allowed is None:
        # Nobody said no: nobody was asked. Said so, so that neither the model nor the user takes
        # it for a refusal a person gave.
        written("ask:unavailable", "refused")
        return "ask:unavailable", refusal_result(
            f"The call to {name} was not run: it needs the user's consent, and nobody could be asked"
            " (the caller cannot be asked: no terminal to ask at, or no elicitation, not declared or"
            " not in its protocol revision), or the question was dismissed unanswered."
        )
    if not allowed:
        written("ask:no", "refused")
        return "ask:no", refusal_result(f"The user did not allow the call to {name}.")
    return "ask:yes", None


async def governed(
    policy: Policy,
    audit: AuditLog,
    request: ConsentRequest,
    caller: str,
    asker: AskCallback | None,
    run: Callable[[], Awaitable[Any]],
    *,
    limited: bool = True,
    pending: Callable[[InputRequired], bool] = lambda need: False,
) -> Any:
    """Decide, ask, limit and run one call of *request*'s tool, and write its audit line.

    *request* carries the server, the tool's names, its arguments and annotations; its ``rule``
    is filled in here from the policy. A refusal (denied, not confirmed, rate limited) is returned
    as a tool error result, and *run* is not called. What *run* returns is the call's answer (an
    object with ``is_error``, or a task's creation result). Without *limited* the rate limits are
    not charged (a later round of a call already charged). An ``InputRequired`` that *pending*
    says the call goes on after (a question parked until the caller's retry) is passed on and
    nothing is written yet: the line is the one of the round that ends the call.
    """
    decision: str
    decision, rule = policy.decide(request.server, request.tool, request.annotations)
    record: dict[str, Any] = {
        "caller": caller,
        "server": request.server,
        "tool": request.tool,
        "name": request.name,
        "arguments": request.arguments,
        "rule": rule,
    }
    started = time.monotonic()

    def written(decided: str, outcome: str, error: str | None = None) -> None:
        line = {**record, "decision": decided, "outcome": outcome}
        line["duration_ms"] = round((time.monotonic() - started) * 1000, 1)
        if error is not None:
            line["error"] = error
        audit.record(line)

    if decision in ("deny", "ask"):
        asked = ConsentRequest(
            request.server, request.tool, request.name, request.arguments, request.annotations, rule
        )
        decision, refusal = await admit(decision, asked, asker, written)
        if refusal is not None:
            return refusal
    if limited:
        wait, limit = policy.take(request.server, request.tool)
        if limit is not None:
            written("rate-limited", "refused", f"limit {limit}")
            return refusal_result(f"Rate limit {limit} reached for {request.name}; retry in {wait:.1f} s.")
    noted: list[str] = []  # a failure told by note_failure: an error, though answered as a tool error
    token = failure.set(noted)
    try:
        result = await run()
    except InputRequired as need:
        if not pending(need):
            written(decision, "input-required")
        raise
    except asyncio.CancelledError as exc:
        # A gateway ends a call whose caller must answer a question first with this message.
        written(decision, "input-required" if exc.args == (INPUT_ROUND,) else "cancelled")
        raise
    except MCPError as exc:
        written(decision, "error", str(exc) or None)
        raise
    finally:
        failure.reset(token)
    if noted:
        written(decision, "error", noted[0])
    else:
        written(decision, "tool-error" if getattr(result, "is_error", None) else "ok")
    return result
