"""An ASGI app driven in process: one HTTP request in, the messages it sends back collected.

For what a test reads of the app's own bookkeeping or code path; what crosses a real socket is
tested against real servers (``tests/e2e``).
"""

from __future__ import annotations

import asyncio
from typing import Any


async def asgi_request(
    app: Any,
    method: str,
    headers: list[tuple[bytes, bytes]],
    body: bytes = b"",
    **scope: Any,
) -> list[dict[str, Any]]:
    """Send *app* one request to ``/mcp`` (*scope* adds to or replaces the scope's keys) and return
    what it sent. The body comes whole in the first ``http.request``; after it the client stays
    connected: ``receive()`` waits and never reports a disconnect."""
    sent: list[dict[str, Any]] = []
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    request = {"type": "http", "method": method, "path": "/mcp", "query_string": b"", "headers": headers}
    await app({**request, **scope}, receive, send)
    return sent
