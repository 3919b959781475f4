"""The one contract every transport keeps: move whole messages, nothing more.

A transport hands over complete JSON-RPC texts (one line of stdio, one HTTP body, one SSE event) as
``bytes`` and takes them the same way. Framing, processes and sockets stay behind it; the session
above never sees them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Protocol, TypeAlias, runtime_checkable

from ._jsonrpc import RequestId

__all__ = ["OVERSIZE", "RoutedTransport", "SendRequestNowait", "Transport"]

#: What a transport hands up in place of a message that was too large and was skipped. Never valid
#: JSON, so it cannot be mistaken for a message; the session answers it with -32600.
OVERSIZE: Final = b"\x00oversize"


#: A transport may also offer, as shortcuts the session uses where they exist: ``send_nowait(message)
#: -> bool``, sending at once when that needs no waiting (``False``, having sent nothing, else), and
#: ``send_request_nowait(message, id, method, params) -> bool``, the same for a request whose parts
#: it is given too, so that a transport that reads them (HTTP's headers) need not decode them again.
SendRequestNowait: TypeAlias = Callable[[bytes, RequestId, str, "dict[str, Any] | None"], bool]


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


@runtime_checkable
class RoutedTransport(Transport, Protocol):
    """A transport with more than one way back to the peer (Streamable HTTP: a response stream per
    POST, and the session's GET stream), so it must know what each outgoing message belongs to.

    The session layer says so for every message it sends; a transport with one stream (stdio) does
    not implement this and never needs to know.
    """

    async def send_related(self, message: bytes, related: RequestId | None, final: bool) -> None:
        """Send *message*, which belongs to the incoming request *related* (its answer when *final*;
        a notification or request sent while handling it otherwise), or to none (``None``).
        A batch's answer names one of its members. An empty final message says the request ended
        without an answer (it was cancelled): end its stream, send nothing."""
        ...

    async def close_stream(self, related: RequestId) -> None:
        """End the stream carrying *related*'s messages without ending the request (SSE polling)."""
        ...
