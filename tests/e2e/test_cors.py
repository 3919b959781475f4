"""CORS over real HTTP: the preflight and exposed headers on the wire, and a page in Debian's chromium
that calls an mcpkit server on another origin (port), which works only when that origin is named."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from .._chromium import chromium_page
from ..conftest import free_port, http_server, mcpkit_run

pytestmark = pytest.mark.e2e

PAGE_ORIGIN_PORT = free_port()
PAGE_ORIGIN = f"http://127.0.0.1:{PAGE_ORIGIN_PORT}"


@contextmanager
def mcp_server(*flags: str) -> Iterator[str]:
    port = free_port()
    command = mcpkit_run("weather.py", "--transport", "http", "--port", str(port), *flags)
    yield from http_server(command, port, 15)


def test_no_cors_by_default_the_preflight_is_refused() -> None:
    with mcp_server() as url:
        answer = httpx.options(
            url, headers={"Origin": PAGE_ORIGIN, "Access-Control-Request-Method": "POST"}, timeout=60
        )
        assert answer.status_code == 405 and "access-control-allow-origin" not in answer.headers


def test_preflight_and_answers_carry_the_cors_headers() -> None:
    with mcp_server("--cors-origin", PAGE_ORIGIN) as url:
        preflight = httpx.options(
            url,
            headers={
                "Origin": PAGE_ORIGIN,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type, mcp-protocol-version, mcp-session-id, "
                "mcp-method, mcp-name, mcp-param-region, authorization",
            },
            timeout=60,
        )
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-origin"] == PAGE_ORIGIN
        assert "POST" in preflight.headers["access-control-allow-methods"]
        assert "mcp-param-region" in preflight.headers["access-control-allow-headers"]
        refused = httpx.options(
            url,
            headers={
                "Origin": PAGE_ORIGIN,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "x-something-else",
            },
            timeout=60,
        )
        assert refused.status_code == 403
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "page", "version": "1"}}}  # fmt: skip
        answer = httpx.post(
            url,
            json=init,
            headers={"Origin": PAGE_ORIGIN, "Accept": "application/json, text/event-stream"},
            timeout=60,
        )
        assert answer.status_code == 200
        assert answer.headers["access-control-allow-origin"] == PAGE_ORIGIN
        assert "Mcp-Session-Id" in answer.headers["access-control-expose-headers"]
        assert answer.headers["vary"] == "Origin"
        # Another origin is still refused outright (the Origin check is not relaxed for it).
        other = httpx.post(url, json=init, headers={"Origin": "https://evil.example"}, timeout=60)
        assert other.status_code == 403 and "access-control-allow-origin" not in other.headers


PAGE = """<!doctype html><title>cors</title><script>
async function run(url) {
  const headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"};
  const init = await fetch(url, {method: "POST", headers, body: JSON.stringify({jsonrpc: "2.0", id: 1,
    method: "initialize", params: {protocolVersion: "2025-11-25", capabilities: {},
    clientInfo: {name: "page", version: "1"}}})});
  const session = init.headers.get("Mcp-Session-Id");
  const more = {...headers, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"};
  await fetch(url, {method: "POST", headers: more,
    body: JSON.stringify({jsonrpc: "2.0", method: "notifications/initialized"})});
  const call = await fetch(url, {method: "POST", headers: more, body: JSON.stringify({jsonrpc: "2.0", id: 2,
    method: "tools/call", params: {name: "get_weather", arguments: {location: "Lima"}}})});
  const text = await call.text();
  await fetch(url, {method: "DELETE", headers: {"Mcp-Session-Id": session}});
  return {session: !!session, text};
}
</script>"""


@contextmanager
def page_origin(folder: Path) -> Iterator[str]:
    (folder / "index.html").write_text(PAGE)
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(folder))  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", PAGE_ORIGIN_PORT), handler)
    httpd.RequestHandlerClass.log_message = lambda *a: None  # type: ignore[method-assign]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"{PAGE_ORIGIN}/index.html"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("named", [True, False], ids=["origin-named", "origin-not-named"])
def test_a_browser_page_on_another_origin_calls_the_server_only_when_allowed(
    tmp_path: Path, named: bool
) -> None:
    flags = ("--cors-origin", PAGE_ORIGIN) if named else ()
    with mcp_server(*flags) as url, page_origin(tmp_path) as page_url, chromium_page() as page:
        page.goto(page_url)
        outcome: Any
        try:
            outcome = page.evaluate("url => run(url)", url)
        except Exception as exc:  # the browser's "Failed to fetch", surfaced by Playwright
            outcome = str(exc)
        if named:
            assert outcome["session"] is True, outcome
            assert "Lima" in outcome["text"], outcome
        else:
            assert isinstance(outcome, str) and "Failed to fetch" in outcome, outcome
