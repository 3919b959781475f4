"""HTTP, both sides: :mod:`.server` (the ASGI app of Streamable HTTP and HTTP+SSE) and :mod:`.client`.

Neither side imports the other, and this package imports neither until asked: a client does not pay
for the server's modules, and ``import mcpkit`` stays free of any HTTP stack.
``mcpkit.transports.http.StreamableHTTPApp`` is kept as a name for :class:`.server.app.StreamableHTTPApp`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server.app import DEFAULT_MAX_BODY, StreamableHTTPApp

__all__ = ["DEFAULT_MAX_BODY", "StreamableHTTPApp"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from .server import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
