"""The ceiling: a hand-written minimal MCP server (uvloop, orjson), no framework.

It knows exactly what the benchmark sends: ``initialize``, ``notifications/initialized``, ``ping``,
``tools/list`` and ``tools/call`` of ``echo`` and ``add``, in the handshake era or with the 2026-07-28
per-request ``_meta``. Nothing is validated beyond what is needed to answer. It shows what the
interpreter, the event loop and the JSON codec cost on their own.

``python raw_server.py`` serves stdio; ``python raw_server.py --http PORT`` serves a raw ASGI app on
uvicorn (uvloop, httptools) at ``/mcp``, with handshake-era sessions (``Mcp-Session-Id``).
"""

from __future__ import annotations

import asyncio
import secrets
import sys
from typing import Any

import orjson

MODERN = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO = {"name": "bench-raw", "version": "1.0.0"}
TOOLS = [
    {
        "name": "echo",
        "description": "Return the text unchanged.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
]


def handle(message: dict[str, Any]) -> dict[str, Any] | None:
    """The answer to one message (``None`` for a notification)."""
    rid = message.get("id")
    if rid is None:
        return None
    method = message.get("method")
    params = message.get("params") or {}
    modern = META_VERSION in (params.get("_meta") or {})
    if method == "tools/call":
        arguments = params.get("arguments") or {}
        name = params.get("name")
        if name == "echo":
            text = str(arguments.get("text"))
        elif name == "add":
            text = str(arguments.get("a") + arguments.get("b"))
        else:
            return {
                "jsonrpc": "2.0",
                "id": rid,
                "error": {"code": -32602, "message": f"Unknown tool: {name}"},
            }
        result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": SERVER_INFO}
    elif method == "server/discover":
        result = {"supportedVersions": [MODERN, "2025-11-25"], "capabilities": {"tools": {}}}
    elif method == "ping":
        result = {}
    else:
        return {
            "jsonrpc": "2.0",
            "id": rid,
            "error": {"code": -32601, "message": f"Method not found: {method}"},
        }
    if modern:
        result["resultType"] = "complete"
        result["_meta"] = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


# -- stdio ---------------------------------------------------------------------------------------


class _StdinProtocol(asyncio.Protocol):
    def __init__(self, out: asyncio.WriteTransport, done: asyncio.Future[None]) -> None:
        self.out = out
        self.done = done
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        lines = (self.buffer + data).split(b"\n")
        self.buffer = lines.pop()
        answers = []
        for line in lines:
            if line.strip():
                answer = handle(orjson.loads(line))
                if answer is not None:
                    answers.append(orjson.dumps(answer))
        if answers:
            answers.append(b"")
            self.out.write(b"\n".join(answers))

    def eof_received(self) -> None:
        if not self.done.done():
            self.done.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


async def serve_stdio() -> None:
    loop = asyncio.get_running_loop()
    out, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout.buffer)
    done: asyncio.Future[None] = loop.create_future()
    await loop.connect_read_pipe(lambda: _StdinProtocol(out, done), sys.stdin.buffer)
    await done


# -- HTTP ----------------------------------------------------------------------------------------

_sessions: dict[bytes, float] = {}
_JSON = [(b"content-type", b"application/json")]


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["method"] == "DELETE":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body"):
            break
    message = orjson.loads(body)
    headers = _JSON
    if message.get("method") == "initialize":
        session = secrets.token_hex(16).encode()
        _sessions[session] = 0.0
        headers = [*_JSON, (b"mcp-session-id", session)]
    answer = handle(message)
    if answer is None:
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": orjson.dumps(answer)})


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        import uvicorn

        uvicorn.run(
            app, host="127.0.0.1", port=int(sys.argv[2]), loop="uvloop", http="httptools", log_level="warning"
        )
    else:
        import uvloop

        uvloop.run(serve_stdio())
