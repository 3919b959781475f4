"""Lifecycle state machines, one table per era.

A missing key is a protocol error: the tables are the whole truth about what may happen when, and
the docs' diagrams are drawn from them (``python -m mcpkit._state`` prints them as Mermaid).

Handshake era (2024-11-05 .. 2025-11-25), https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle:

    "The initialization phase MUST be the first interaction between client and server."
    "After successful initialization, the client MUST send an initialized notification to indicate
    it is ready to begin normal operations."

Stateless era (2026-07-28) has no connection lifecycle at all; its only state lives inside one request
that needs more input from the client (multi round-trip requests, basic/patterns/mrtr):

    "Clients respond with inputResponses on a retry of the original request providing the requested
    information."
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = ["HANDSHAKE", "MRTR", "Input", "Role", "State", "mermaid", "transition"]


class Role(enum.Enum):
    CLIENT = "client"
    SERVER = "server"


class State(enum.Enum):
    IDLE = "idle"  # nothing said yet
    INITIALIZING = "initializing"  # initialize sent / received, no answer yet
    INITIALIZED = "initialized"  # initialize answered, initialized notification not yet seen
    READY = "ready"  # normal operation
    # Per-request states of the stateless era.
    SENT = "sent"
    INPUT_REQUIRED = "input_required"
    DONE = "done"


class Input(enum.Enum):
    INITIALIZE = "initialize"  # the initialize request
    INITIALIZE_OK = "initialize_ok"  # its successful result
    INITIALIZE_FAILED = "initialize_failed"  # its error response
    INITIALIZED = "initialized"  # notifications/initialized
    REQUEST = "request"  # any other request
    # Stateless era, per request.
    RESULT_COMPLETE = "result_complete"
    RESULT_INPUT_REQUIRED = "result_input_required"
    ERROR = "error"
    RETRY = "retry"


S, In = State, Input
# (role, state, input) -> next state. Both roles walk the same path: the client on what it sends,
# the server on what it receives; each side moves when the message passes through it.
HANDSHAKE: Final[dict[tuple[Role, State, Input], State]] = {
    (role, state, inp): nxt
    for role in Role
    for (state, inp), nxt in {
        (S.IDLE, In.INITIALIZE): S.INITIALIZING,
        (S.INITIALIZING, In.INITIALIZE_OK): S.INITIALIZED,
        (S.INITIALIZING, In.INITIALIZE_FAILED): S.IDLE,
        (S.INITIALIZED, In.INITIALIZED): S.READY,
        # Requests other than initialize: a client may ping before initialize, and servers in the
        # wild answer requests sent before `initialized` arrives, so INITIALIZED admits them too.
        (S.IDLE, In.REQUEST): S.IDLE,
        (S.INITIALIZED, In.REQUEST): S.INITIALIZED,
        (S.READY, In.REQUEST): S.READY,
    }.items()
}

# One stateless-era request, as the client sees it.
MRTR: Final[dict[tuple[State, Input], State]] = {
    (S.SENT, In.RESULT_COMPLETE): S.DONE,
    (S.SENT, In.ERROR): S.DONE,
    (S.SENT, In.RESULT_INPUT_REQUIRED): S.INPUT_REQUIRED,
    (S.INPUT_REQUIRED, In.RETRY): S.SENT,
}


def transition(role: Role, state: State, inp: Input) -> State | None:
    """The next handshake state, or ``None`` when the table forbids *inp* in *state*."""
    return HANDSHAKE.get((role, state, inp))


def mermaid() -> str:
    """Both tables as Mermaid state diagrams, for the docs."""
    lines = ["```mermaid", "stateDiagram-v2", "    %% handshake era (both roles)"]
    for (role, state, inp), nxt in HANDSHAKE.items():
        if role is Role.SERVER and (state is not nxt or inp is not In.REQUEST):
            lines.append(f"    {state.value} --> {nxt.value}: {inp.value}")
    lines += ["```", "", "```mermaid", "stateDiagram-v2", "    %% one stateless-era request (client)"]
    lines += [f"    {state.value} --> {nxt.value}: {inp.value}" for (state, inp), nxt in MRTR.items()]
    lines.append("```")
    return "\n".join(lines)


if __name__ == "__main__":
    print(mermaid())
