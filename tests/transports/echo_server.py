"""An mcpkit echo server over HTTP, or HTTPS given a certificate: ``python echo_server.py PORT [CERT KEY]``."""

from __future__ import annotations

import sys

import uvicorn

from mcpkit import Server

server = Server("echo", "1.0.0")


@server.tool
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    port = int(sys.argv[1])
    tls = {"ssl_certfile": sys.argv[2], "ssl_keyfile": sys.argv[3]} if len(sys.argv) > 3 else {}
    uvicorn.run(server.http_app(), host="127.0.0.1", port=port, log_level="warning", **tls)  # type: ignore[arg-type]
