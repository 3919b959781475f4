"""Refresh tokens: used when tokens expire or are rejected, and one refresh at a time however many
requests need it (a rotated refresh token works once: a second refresh with it would fail)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from mcpkit.client.auth import OAuth

from ._servers import Protected, approve, run

pytestmark = pytest.mark.e2e


async def _list(http: httpx.AsyncClient, server: Protected, request_id: int) -> int:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": {}}
    reply = await http.post(server.mcp_url, json=message, headers={"MCP-Protocol-Version": "2026-07-28"})
    return reply.status_code


def _grants(server: Protected) -> list[str]:
    return [seen.form()["grant_type"] for seen in server.token_requests]


@pytest.mark.parametrize("cause", ["expired", "rejected"])
def test_concurrent_requests_share_one_refresh(cause: str) -> None:
    async def main() -> Protected:
        server = Protected(refresh_delay=1.0, token_lifetime=3600 if cause == "rejected" else 1)
        async with server.running(), httpx.AsyncClient(auth=OAuth(interactive=approve)) as http:
            assert await _list(http, server, 0) == 200
            if cause == "expired":
                await asyncio.sleep(0.1)  # within the 30 s margin already: due for refresh
            else:
                server.expire_all()  # the server revoked them: every request meets a 401
            statuses = await asyncio.gather(*(_list(http, server, i) for i in range(1, 11)))
        assert statuses == [200] * 10
        return server

    server = run(main())
    assert _grants(server) == ["authorization_code", "refresh_token"]
    assert len(server.authorizations) == 1


def test_a_failed_refresh_falls_back_to_authorizing_again() -> None:
    async def main() -> Protected:
        server = Protected()
        async with server.running(), httpx.AsyncClient(auth=OAuth(interactive=approve)) as http:
            assert await _list(http, server, 0) == 200
            server.expire_all()
            server.refreshes.clear()  # the refresh token is no longer honoured either
            assert await _list(http, server, 1) == 200
        return server

    server = run(main())
    assert _grants(server) == ["authorization_code", "refresh_token", "authorization_code"]


def test_tokens_never_go_to_another_origin() -> None:
    async def main() -> list[str | None]:
        server, other = Protected(), Protected()
        async with (
            server.running(),
            other.running(),
            httpx.AsyncClient(auth=OAuth(interactive=approve)) as http,
        ):
            assert await _list(http, server, 0) == 200
            await http.get(f"{other.base}/elsewhere")
        return [s.headers.get("authorization") for s in other.router.seen]

    assert run(main()) == [None]
