"""A URL target that wants authorization, in the page: custom headers and a bearer token, and OAuth
sign-in through mcpkit's client flow with the inspector itself as the redirect target.

The server is the authorizing client's test server (``tests/client_auth/_servers.Protected``): a
2026-07-28 MCP endpoint that wants a token, and the authorization server that issues them (its
authorization page approves at once and redirects back), on a real port of 127.0.0.1."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..client_auth._servers import Protected
from .conftest import Inspector, dominant_colour, keep_screenshot, open_inspector, start_dev, stop, wait_ready

pytestmark = pytest.mark.e2e


@pytest.fixture
def protected() -> Iterator[Protected]:
    """The server in a thread of its own. The browser keeps idle connections to it (pre-connects,
    keep-alive), which are closed before its loop is, so that no socket is left to the collector."""
    server = Protected()
    loop = asyncio.new_event_loop()
    up = threading.Event()
    stopping = asyncio.Event()

    async def serve() -> None:
        async with server.running():
            up.set()
            await stopping.wait()
        left = asyncio.all_tasks() - {asyncio.current_task()}
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    assert up.wait(30), "the test server did not start"
    try:
        yield server
    finally:
        loop.call_soon_threadsafe(stopping.set)
        thread.join(30)
        loop.close()


@pytest.fixture
def inspector() -> Iterator[Inspector]:
    started = start_dev()
    try:
        yield started
    finally:
        stop(started)


def _aim(page: Any, url: str) -> None:
    page.select_option("#target-kind", "url")
    page.fill("#target-value", url)
    page.click("#settings summary")


def test_headers_and_a_bearer_token_reach_the_server(
    page: Any, inspector: Inspector, protected: Protected
) -> None:
    protected.tokens["s3cret"] = ""
    open_inspector(page, inspector, connected=False)
    _aim(page, protected.mcp_url)
    assert page.locator("#opt-args").is_hidden()  # a command's settings are not a URL's
    page.click("#connect")
    page.wait_for_selector('#status[data-state="failed"]')
    assert page.inner_text("#status") == (
        f"failed: the server at {protected.mcp_url} answered 401 Unauthorized: "
        "add a bearer token or a header, or sign in with OAuth"
    )

    page.fill("#opt-headers", "X-Tenant: acme\n")
    page.fill("#opt-bearer", "s3cret")
    page.click("#connect")
    wait_ready(page, "2026-07-28")
    assert page.inner_text("#status") == "protected 1 · 2026-07-28"
    sent = [seen for seen in protected.router.seen if seen.path == "/mcp"][-1]
    assert sent.headers["authorization"] == "Bearer s3cret"
    assert sent.headers["x-tenant"] == "acme"

    # The host config entry keeps the header but never the token.
    page.click("#tabs [data-tab=server]")
    page.click("#copy-entry")
    entry = page.locator("#host-entry")
    entry.wait_for()
    assert '"Authorization": "Bearer <token>"' in entry.inner_text()
    assert '"X-Tenant": "acme"' in entry.inner_text()
    assert "s3cret" not in page.inner_text("body")


def test_oauth_sign_in_comes_back_to_the_inspector(
    page: Any, inspector: Inspector, protected: Protected, tmp_path: Path
) -> None:
    open_inspector(page, inspector, connected=False)
    _aim(page, protected.mcp_url)
    page.check("#opt-oauth")
    page.click("#connect")

    link = page.locator("#signin-link")
    link.wait_for()
    banner = page.locator("#signin").screenshot()
    keep_screenshot(page.screenshot(), "signin.png", tmp_path)
    colour, share = dominant_colour(banner)
    assert colour == (0xFF, 0xF4, 0xD6) and share > 0.5  # the sign-in banner is shown
    with page.context.expect_page() as opened:
        link.click()
    authorization = opened.value
    authorization.wait_for_load_state()
    # The authorization server approved and sent the browser back to the inspector's callback.
    assert authorization.url.startswith(f"http://127.0.0.1:{inspector.port}/oauth/callback?")
    assert "Signed in" in authorization.inner_text("#signin")
    authorization.close()

    wait_ready(page, "2026-07-28")
    assert page.inner_text("#status") == "protected 1 · 2026-07-28"
    assert page.locator("#signin").is_hidden()
    [asked] = protected.authorizations
    assert asked["redirect_uri"] == f"http://127.0.0.1:{inspector.port}/oauth/callback"
    assert asked["code_challenge_method"] == "S256"
    sent = [seen for seen in protected.router.seen if seen.path == "/mcp"][-1]
    assert sent.headers["authorization"].startswith("Bearer ")
    assert sent.headers["authorization"].removeprefix("Bearer ") in protected.tokens

    # Connecting again uses the tokens this page already has: nobody is sent to sign in twice.
    page.click("#connect")
    wait_ready(page, "2026-07-28")
    assert len(protected.authorizations) == 1


def test_a_callback_nobody_waits_for_is_refused(inspector: Inspector) -> None:
    import httpx

    reply = httpx.get(f"http://127.0.0.1:{inspector.port}/oauth/callback?code=x&state=forged", timeout=30)
    assert reply.status_code == 400
    assert "No sign-in is waiting" in reply.text
