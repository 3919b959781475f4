"""Tokens are never passed through (the MCP spec forbids it: a token is for its audience only).

A handler of a protected server sees the caller as ``ctx.auth`` (claims, never the token), so it
has nothing to forward; and the gateway, protected itself, reaches its upstream servers with the
headers of its own configuration only: the caller's ``Authorization`` never leaves it."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from typing import Any

import pytest

from mcpkit import Client, Server, TextContent
from mcpkit.auth import ResourceServerAuth

from ..conftest import free_port
from ._serve import call, open_session, protected
from .issuer import TestIssuer

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def url(issuer: TestIssuer) -> Iterator[str]:
    with protected(issuer.url, "--auth-scope", "mcp") as served:
        yield served


def pieces(token: str) -> list[str]:
    """The token, and each of its three parts (the signature alone would let nobody forge, but the
    header and payload together with it are the token)."""
    return [token, *token.split(".")]


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_a_handler_sees_claims_never_the_token(url: str, issuer: TestIssuer, era: str) -> None:
    token = issuer.mint(url, subject="alice")
    session = None if era == "2026-07-28" else open_session(url, f"Bearer {token}")
    seen = call(url, f"Bearer {token}", tool="peek", session=session).json()["result"]["content"][0]["text"]
    assert "'sub': 'alice'" in seen  # the claims are there...
    for piece in pieces(token):
        assert piece not in seen  # ...the token is not, whole or in part


def test_the_gateway_never_forwards_the_callers_token(issuer: TestIssuer) -> None:
    """A gateway protected with ``auth=`` in front of an upstream that records every request's
    headers: the caller's token reaches the gateway, and no upstream request carries it."""
    import uvicorn

    from mcpkit.gateway import Gateway
    from mcpkit.host.config import parse_config

    upstream = Server("upstream", "1.0.0")

    @upstream.tool
    def echo(text: str) -> str:
        return text

    recorded: list[dict[str, str]] = []
    inner = upstream.http_app()

    async def recording(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            recorded.append({k.decode().lower(): v.decode("latin-1") for k, v in scope["headers"]})
        await inner(scope, receive, send)

    up_port, gw_port = free_port(), free_port()
    gw_url = f"http://127.0.0.1:{gw_port}/mcp"
    token = issuer.mint(gw_url, subject="alice")
    servers = {"up": {"type": "http", "url": f"http://127.0.0.1:{up_port}/mcp"}}
    config = parse_config({"mcpServers": servers, "mcpkit": {"policy": {"default": "allow"}}})

    async def start(app: Any, port: int) -> tuple[uvicorn.Server, asyncio.Future[None]]:
        config = uvicorn.Config(
            app, port=port, log_level="error", lifespan="off", timeout_graceful_shutdown=2
        )
        web = uvicorn.Server(config)
        serving = asyncio.ensure_future(web.serve())
        while not web.started:  # noqa: ASYNC110 (uvicorn offers no event for it)
            await asyncio.sleep(0.01)
        return web, serving

    async def stop(web: uvicorn.Server, serving: asyncio.Future[None]) -> None:
        web.should_exit = True
        await serving

    async def main() -> list[str]:
        async with asyncio.timeout(120):
            return await steps()

    async def steps() -> list[str]:
        texts = []
        up = await start(recording, up_port)
        try:
            async with Gateway(config) as gateway:
                auth = ResourceServerAuth(issuer=issuer.url, audience=gw_url, jwks_uri=issuer.jwks_uri)
                gw = await start(gateway.server.http_app(auth=auth), gw_port)
                try:
                    for version in ("2026-07-28", "2025-11-25"):
                        headers = {"Authorization": f"Bearer {token}"}
                        async with Client(gw_url, protocol_version=version, headers=headers) as client:
                            content = (await client.call_tool("up__echo", {"text": version})).content[0]
                            assert isinstance(content, TextContent)
                            texts.append(content.text)
                finally:
                    await stop(*gw)
        finally:  # after the gateway closed its upstream connections
            await stop(*up)
        return texts

    assert asyncio.run(main()) == ["2026-07-28", "2025-11-25"]
    assert recorded  # the upstream was reached
    encoded = base64.b64encode(token.encode()).decode()
    for headers in recorded:
        assert "authorization" not in headers
        for value in headers.values():
            assert all(piece not in value for piece in [*pieces(token), encoded])
