"""The one contract every transport keeps: move whole messages, nothing more.

A transport hands over complete JSON-RPC texts (one line of stdio, one HTTP body, one SSE event) as
``bytes`` and takes them the same way. Framing, processes and sockets stay behind it; the session
above never sees them.
"""

from __future__ import annotations

from typing import Final, Protocol

__all__ = ["OVERSIZE", "Transport"]

#: What a transport hands up in place of a message that was too large and was skipped. Never valid
#: JSON, so it cannot be mistaken for a message; the session answers it with -32600.
OVERSIZE: Final = b"\x00oversize"


class Transport(Protocol):
    """A bidirectional stream of whole messages."""

    async def receive(self) -> bytes:
        """The next message. Raises ``EOFError`` once the peer has closed its side."""
        ...

    async def send(self, message: bytes) -> None:
        """Send one message (without framing). Raises ``ConnectionClosed`` if the peer is gone."""
        ...

    async def aclose(self) -> None:
        """Close our side. Idempotent."""
        ...
