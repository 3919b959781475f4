"""DPoP (RFC 9449) against a server that checks every proof: bound tokens, a fresh proof per request,
the resource server's nonce, and the key kept beside the tokens in the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpkit import Client, FileTokenStore
from mcpkit.client.auth import OAuth

from ._servers import Protected, approve, run

pytestmark = pytest.mark.e2e


def test_tokens_are_bound_and_every_request_carries_a_fresh_proof() -> None:
    async def main() -> Protected:
        server = Protected(dpop=True, rs_nonce="n-1")
        async with server.running():
            auth = OAuth(interactive=approve)
            async with Client(server.mcp_url, protocol_version="2026-07-28", auth=auth) as client:
                for _ in range(3):
                    await client.list_tools()
        return server

    server = run(main())
    assert server.proof_errors == []
    assert len(server.bound) == 1  # one DPoP-bound token, from one token request
    assert len(set(server.jtis)) == len(server.jtis) >= 5  # the token request, then each MCP request


def test_a_stored_dpop_token_is_used_by_the_next_process(tmp_path: Path) -> None:
    async def main() -> Protected:
        server = Protected(dpop=True)
        async with server.running():
            for _ in range(2):  # two OAuth objects: a new process, as far as keys go
                auth = OAuth(interactive=approve, store=FileTokenStore(tmp_path / "oauth.json"))
                async with Client(server.mcp_url, protocol_version="2026-07-28", auth=auth) as client:
                    await client.list_tools()
        return server

    server = run(main())
    assert server.proof_errors == []
    assert len(server.authorizations) == 1
