"""The governance of one tool call before it is sent: the policy's decision, and consent.

:func:`admit` turns a ``deny`` into a refusal and an ``ask`` into a question to the ``ask`` callback
(the user, at a terminal or through the protocol); every refusal is a tool error result that says
why, so the model reads it, and is written to the audit log by the caller's *written*.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..types import CallToolResult, TextContent

__all__ = [
    "INPUT_ROUND",
    "AskCallback",
    "ConsentRequest",
    "Guard",
    "RootsCallback",
    "ServerRequestCallback",
    "admit",
    "refusal_result",
]

#: The message a call is cancelled with when it ends for an ``input_required`` round (audit outcome).
INPUT_ROUND = "input-required"


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
#: ``fn(server key) -> async context manager`` entered just around the call to the server.
Guard = Callable[[str], contextlib.AbstractAsyncContextManager[Any]]
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
