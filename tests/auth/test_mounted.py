"""A protected app mounted under a prefix (Starlette's ``Mount``, uvicorn's ``--root-path``) checks
a DPoP proof's ``htu`` against the URL the client used, prefix included, once (not twice)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from mcpkit.auth import DPoPPolicy, ResourceServerAuth

from ..conftest import free_port
from .issuer import TestIssuer, dpop_proof, new_dpop_key
from .protected_server import server

pytestmark = pytest.mark.e2e


def serve(app: Any, port: int, check: Callable[[], Awaitable[None]], **config: Any) -> None:
    import uvicorn

    async def main() -> None:
        web = uvicorn.Server(uvicorn.Config(app, port=port, log_level="error", lifespan="off", **config))
        serving = asyncio.ensure_future(web.serve())
        while not web.started:  # noqa: ASYNC110 (uvicorn offers no event for it)
            await asyncio.sleep(0.01)
        try:
            await check()
        finally:
            web.should_exit = True
            await serving

    asyncio.run(main())


def protected_app(issuer: TestIssuer, audience: str) -> Any:
    auth = ResourceServerAuth(
        issuer=issuer.url, audience=audience, jwks_uri=issuer.jwks_uri, dpop=DPoPPolicy()
    )
    return server.http_app(auth=auth)


async def dpop_call(target: str, public: str, issuer: TestIssuer, audience: str) -> httpx.Response:
    """A 2026-07-28 whoami POSTed to *target*, its proof naming *public* as ``htu``."""
    key = new_dpop_key()
    token = issuer.mint(audience, jkt=key.thumbprint(), subject="mounted")
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "whoami", "arguments": {}, "_meta": meta},
    }
    headers = {"Authorization": f"DPoP {token}", "DPoP": dpop_proof(key, "POST", public, token),
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "whoami",
               "Accept": "application/json, text/event-stream"}  # fmt: skip
    async with httpx.AsyncClient(timeout=60) as http:
        return await http.post(target, json=body, headers=headers)


def test_under_a_starlette_mount(issuer: TestIssuer) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    port = free_port()
    url = f"http://127.0.0.1:{port}/api/mcp"
    app = Starlette(routes=[Mount("/api", app=protected_app(issuer, url))])

    async def check() -> None:
        answer = await dpop_call(url, url, issuer, url)
        assert answer.status_code == 200, answer.text
        assert answer.json()["result"]["content"][0]["text"].startswith("mounted via")
        for wrong in (f"http://127.0.0.1:{port}/mcp", f"http://127.0.0.1:{port}/api/api/mcp"):
            refused = await dpop_call(url, wrong, issuer, url)
            assert refused.status_code == 401 and "invalid_dpop_proof" in refused.headers["www-authenticate"]

    serve(app, port, check)


def test_behind_a_proxy_that_strips_the_prefix(issuer: TestIssuer) -> None:
    """``uvicorn --root-path /api``: the proxy forwards ``/api/mcp`` as ``/mcp``; the client's proof
    names the public URL, with the prefix."""
    port = free_port()
    public = f"http://127.0.0.1:{port}/api/mcp"

    async def check() -> None:
        answer = await dpop_call(f"http://127.0.0.1:{port}/mcp", public, issuer, public)
        assert answer.status_code == 200, answer.text

    serve(protected_app(issuer, public), port, check, root_path="/api")
