"""A server built from an OpenAPI document does not follow the API's redirects: a 3xx answer is a
tool error naming it, and the place it points to is never asked (a redirect could otherwise send the
configured headers, an API key, to another host). Against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from mcpkit import Client
from mcpkit.compose.openapi import from_openapi

SPEC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "moving", "version": "1"},
    "paths": {"/moved": {"get": {"operationId": "moved", "responses": {"200": {"description": "ok"}}}}},
}


@pytest.fixture
def api() -> Iterator[tuple[str, list[str]]]:
    """An API whose /moved redirects to /elsewhere; yields its URL and the paths it was asked."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            if self.path == "/moved":
                self.send_response(302)
                self.send_header("Location", "/elsewhere")
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                body = b'{"reached": true}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", asked
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_redirect_is_a_tool_error_and_is_not_followed(api: tuple[str, list[str]]) -> None:
    url, asked = api
    server = from_openapi(SPEC, base_url=url, headers={"X-Api-Key": "configured"})

    async def main() -> Any:
        async with Client(server) as client:
            return await client.call_tool("moved", {})

    result = asyncio.run(asyncio.wait_for(main(), 60))
    assert result.is_error
    assert result.content[0].text.startswith("GET /moved answered HTTP 302")
    assert asked == ["/moved"]
