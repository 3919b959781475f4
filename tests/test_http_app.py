"""The Streamable HTTP ASGI app driven in process (no socket): bookkeeping that must stay bounded.

What crosses the wire is tested against a real server in ``tests/e2e/test_http.py``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcpkit import Server
from mcpkit.transports.http import StreamableHTTPApp


def make_app() -> StreamableHTTPApp:
    server = Server("bounded")

    @server.tool
    async def echo(text: str) -> str:
        return text

    app: StreamableHTTPApp = server.http_app()
    return app


async def post(app: StreamableHTTPApp, message: dict[str, Any], **headers: str) -> list[dict[str, Any]]:
    body = json.dumps(message).encode()
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "query_string": b"",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
            *((k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()),
        ],
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(event: dict[str, Any]) -> None:
        sent.append(event)

    await app(scope, receive, send)
    return sent


def test_json_answers_leave_no_stream_behind_in_a_session() -> None:
    """Each POST answered with JSON once kept a resumable-stream record for ever (a leak that also
    made every request slower than the last)."""

    async def main() -> None:
        app = make_app()
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        started = await post(app, init)
        session_id = dict(started[0]["headers"])[b"mcp-session-id"].decode()
        call = {
            "jsonrpc": "2.0",
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}},
        }
        for request_id in range(1, 201):
            answer = await post(app, {**call, "id": request_id}, mcp_session_id=session_id)
            assert answer[0]["status"] == 200 and json.loads(answer[1]["body"])["id"] == request_id
            assert dict(answer[0]["headers"])[b"content-length"] == str(len(answer[1]["body"])).encode()
        assert app.sessions[session_id].streams == {}

    asyncio.run(main())
