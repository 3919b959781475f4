"""CORS for browser clients: the preflight, and the headers that let a page read the answers.

Off unless origins are named (``http_app(cors_origins=[...])``, ``mcpkit run --cors-origin``): an
MCP endpoint on localhost that any web page may call is the DNS-rebinding hole the spec's Origin
check exists to close. A named origin is also an allowed ``Origin`` (the check still refuses every
other one with 403); ``"*"`` allows any origin, for public servers that authenticate each request.

The answer echoes the one origin asked about (never ``*`` itself, so credentials keep working) and
says ``Vary: Origin`` so caches keep answers per origin. ``Access-Control-Expose-Headers`` names
what a client script must read: ``Mcp-Session-Id`` above all (without it a browser client cannot
keep a handshake-era session), and ``WWW-Authenticate`` and ``DPoP-Nonce`` for authorization (a
browser client may send ``Authorization`` and ``DPoP``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ._asgi import Message, Send

__all__ = ["CorsPolicy"]

_METHODS: Final = b"GET, POST, DELETE, OPTIONS"
#: The request headers a client may send (besides the CORS-safelisted ones).
_ALLOWED_HEADERS: Final = frozenset(
    {
        "accept",
        "authorization",
        "content-type",
        "dpop",
        "last-event-id",
        "mcp-method",
        "mcp-name",
        "mcp-protocol-version",
        "mcp-session-id",
    }
)
_EXPOSED: Final = b"Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, DPoP-Nonce, Retry-After"
_MAX_AGE: Final = b"600"


class CorsPolicy:
    """Which origins may call the endpoint from a browser, and the headers that say so."""

    def __init__(self, origins: Iterable[str]) -> None:
        self.origins = frozenset(o.rstrip("/") for o in origins)
        self.any = "*" in self.origins

    def allows(self, origin: str) -> bool:
        return self.any or origin in self.origins

    def preflight_headers(self, origin: str, requested: str) -> list[tuple[bytes, bytes]] | None:
        """The headers of a 204 answer to a preflight asking for the *requested* headers, or
        ``None`` if one of them is not allowed (the browser then refuses the real request)."""
        asked = [h.strip().lower() for h in requested.split(",") if h.strip()]
        if any(h not in _ALLOWED_HEADERS and not h.startswith("mcp-param-") for h in asked):
            return None
        return [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-allow-methods", _METHODS),
            (b"access-control-allow-headers", ", ".join(asked).encode("latin-1")),
            (b"access-control-allow-credentials", b"true"),
            (b"access-control-max-age", _MAX_AGE),
            (b"vary", b"Origin"),
        ]

    def wrap(self, send: Send, origin: str) -> Send:
        """*send*, adding the CORS headers to the response's start."""
        extra = [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-allow-credentials", b"true"),
            (b"access-control-expose-headers", _EXPOSED),
            (b"vary", b"Origin"),
        ]

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *extra]
            await send(message)

        return send_with_cors
