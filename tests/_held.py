"""mcpkit's uvicorn protocol over a connection the test holds instead of a socket: what the protocol
writes is kept, and the test decides when data comes and when the connection is lost (the wire
cannot order those at will)."""

from __future__ import annotations

import asyncio
from typing import Any


class HeldTransport(asyncio.Transport):
    """A connection the test holds: what is written is kept in ``written``; closing only marks it."""

    def __init__(self) -> None:
        super().__init__()
        self.closed = False
        self.written: list[bytes] = []

    def write(self, data: Any) -> None:
        self.written.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(name, default)

    def pause_reading(self) -> None: ...

    def resume_reading(self) -> None: ...


def held_protocol(app: Any, transport: asyncio.Transport, max_header_bytes: int = 1024) -> Any:
    """mcpkit's bounded uvicorn protocol serving *app*, connected to *transport* (call it in the
    running loop)."""
    from uvicorn.config import Config
    from uvicorn.server import ServerState

    from mcpkit.transports.http.server._uvicorn import bounded_protocol

    config = Config(
        app,
        http=bounded_protocol(max_header_bytes, 10.0),
        lifespan="off",
        proxy_headers=False,
        access_log=False,
    )
    config.load()
    protocol: Any = config.http_protocol_class(  # type: ignore[call-arg]
        config=config, server_state=ServerState(), app_state={}, _loop=asyncio.get_running_loop()
    )
    protocol.connection_made(transport)
    return protocol
