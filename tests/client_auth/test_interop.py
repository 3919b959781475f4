"""Both halves together: mcpkit's OAuth client against an mcpkit server protected by
``--auth-issuer``/``--auth-audience`` (a real ``mcpkit run`` process), with an authorization server
that issues signed JWT access tokens, in both protocol eras."""

from __future__ import annotations

import sys

import pytest
from joserfc.jwk import ECKey

from mcpkit import Client, TextContent
from mcpkit.client.auth import OAuth

from ..conftest import EXAMPLES, free_port, http_server
from ._servers import Protected, approve, run

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("version", [None, "2025-11-25"])
def test_the_client_reaches_an_mcpkit_resource_server(version: str | None) -> None:
    issuer = Protected(signing_key=ECKey.generate_key("P-256", parameters={"kid": "k1"}))
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    command = [sys.executable, "-m", "mcpkit", "run", str(EXAMPLES / "weather.py"), "--transport", "http",
               "--port", str(port)]  # fmt: skip

    async def main() -> str:
        async with Client(url, protocol_version=version, auth=OAuth(interactive=approve)) as client:
            result = await client.call_tool("get_weather", {"location": "Paris"})
            block = result.content[0]
            assert isinstance(block, TextContent)
            return block.text

    with issuer.in_thread():
        flags = ["--auth-issuer", issuer.issuer, "--auth-audience", url]
        for _ in http_server([*command, *flags], port, 20.0):
            assert "Paris" in run(main())
    [authorization] = issuer.authorizations
    assert authorization["resource"] == url  # the server's metadata names itself
