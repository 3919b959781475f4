"""Both halves of mcpkit together: its OAuth client (client_credentials, DPoP) against a protected
``mcpkit run`` server that requires DPoP and a server nonce, in both eras."""

from __future__ import annotations

import asyncio

import pytest

from mcpkit import Client, TextContent
from mcpkit.client.auth import ClientCredentials, OAuth

from ._serve import protected
from .issuer import TestIssuer

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_the_oauth_client_meets_a_server_that_requires_dpop_and_a_nonce(
    issuer: TestIssuer, version: str
) -> None:
    with protected(issuer.url, "--auth-scope", "mcp", "--auth-dpop", "required", "--auth-dpop-nonce") as url:

        async def main() -> str:
            auth = OAuth(client_id="machine", client_secret=issuer.clients["machine"], grant=ClientCredentials(),
                         scope="mcp", dpop=True)  # fmt: skip
            async with Client(url, protocol_version=version, auth=auth) as client:
                block = (await client.call_tool("whoami", {})).content[0]
                assert isinstance(block, TextContent)
                again = (await client.call_tool("whoami", {})).content[0]  # a fresh proof, the nonce kept
                assert isinstance(again, TextContent) and again.text == block.text
                return block.text

        assert asyncio.run(main()) == "machine via machine with mcp"
