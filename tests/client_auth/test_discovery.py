"""Discovery: what the client asks for, in which order, and what it refuses; against real servers."""

from __future__ import annotations

import httpx
import pytest

from mcpkit.client.auth import OAuth, OAuthError
from mcpkit.client.auth.discovery import (
    as_metadata_urls,
    parse_challenge,
    prm_urls,
    require_secure,
    resource_allowed,
)

from ._servers import Protected, approve, run

pytestmark = pytest.mark.e2e


def test_challenge_parameters_are_read_from_either_scheme() -> None:
    header = 'Bearer error="insufficient_scope", scope="a b", resource_metadata="https://h/.well-known/x"'
    challenge = parse_challenge(httpx.Headers({"WWW-Authenticate": header}))
    assert (challenge.scheme, challenge.error, challenge.scopes) == (
        "Bearer",
        "insufficient_scope",
        ["a", "b"],
    )
    assert challenge.resource_metadata == "https://h/.well-known/x"
    dpop = parse_challenge(httpx.Headers({"WWW-Authenticate": 'DPoP error="use_dpop_nonce"'}))
    assert (dpop.scheme, dpop.error, dpop.scope) == ("DPoP", "use_dpop_nonce", None)
    assert parse_challenge(httpx.Headers()).scheme == ""


def test_well_known_urls_in_the_spec_order() -> None:
    assert prm_urls("https://h/public/mcp") == [
        "https://h/.well-known/oauth-protected-resource/public/mcp",
        "https://h/.well-known/oauth-protected-resource",
    ]
    assert prm_urls("https://h") == ["https://h/.well-known/oauth-protected-resource"]
    assert as_metadata_urls("https://as/tenant1") == [
        "https://as/.well-known/oauth-authorization-server/tenant1",
        "https://as/.well-known/openid-configuration/tenant1",
        "https://as/tenant1/.well-known/openid-configuration",
    ]
    assert as_metadata_urls("https://as/") == [
        "https://as/.well-known/oauth-authorization-server",
        "https://as/.well-known/openid-configuration",
    ]


def test_metadata_speaks_only_for_its_own_server_or_a_parent() -> None:
    assert resource_allowed("https://h/mcp", "https://h/mcp")
    assert resource_allowed("https://H", "https://h/mcp")  # the root document names the origin
    assert not resource_allowed("https://h/mc", "https://h/mcp")  # not a segment boundary
    assert not resource_allowed("https://evil.example/mcp", "https://h/mcp")
    assert not resource_allowed("https://h/mcp#x", "https://h/mcp")


async def _list_tools(server: Protected, auth: OAuth) -> httpx.Response:
    async with httpx.AsyncClient(auth=auth) as http:
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        return await http.post(server.mcp_url, json=request, headers={"MCP-Protocol-Version": "2026-07-28"})


def test_without_a_challenge_url_the_path_suffixed_document_comes_before_the_root() -> None:
    async def main() -> list[str]:
        server = Protected(prm_in_challenge=False, prm_at="/.well-known/oauth-protected-resource")
        async with server.running():
            reply = await _list_tools(server, OAuth(interactive=approve))
            assert reply.status_code == 200
            return server.router.paths()

    asked = run(main())
    assert asked[:2] == ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]


def test_an_issuer_with_a_path_is_tried_with_openid_configuration_appended_last() -> None:
    async def main() -> list[str]:
        server = Protected(as_path="/tenant1", metadata_at="/tenant1/.well-known/openid-configuration")
        async with server.running():
            assert (await _list_tools(server, OAuth(interactive=approve))).status_code == 200
            return server.router.paths()

    asked = run(main())
    assert asked[1:4] == [
        "/.well-known/oauth-authorization-server/tenant1",
        "/.well-known/openid-configuration/tenant1",
        "/tenant1/.well-known/openid-configuration",
    ]
    assert "/.well-known/oauth-authorization-server" not in asked  # never the root for a path issuer


def test_metadata_naming_another_issuer_is_not_used() -> None:
    async def main() -> Protected:
        server = Protected()
        async with server.running():
            server.metadata_issuer = "https://attacker.example"
            with pytest.raises(OAuthError, match="names issuer 'https://attacker") as caught:
                await _list_tools(server, OAuth(interactive=approve))
            assert caught.value.error == "issuer_mismatch"
            return server

    server = run(main())
    assert server.router.paths("POST") == ["/mcp"]  # no registration, no token request


def test_a_server_without_s256_pkce_is_refused() -> None:
    async def main() -> Protected:
        server = Protected(metadata_extra={"code_challenge_methods_supported": ["plain"]})
        async with server.running():
            with pytest.raises(OAuthError, match="PKCE"):
                await _list_tools(server, OAuth(interactive=approve))
            return server

    assert run(main()).authorizations == []


def test_plain_http_endpoints_are_refused_off_this_machine() -> None:
    async def main() -> None:
        server = Protected(metadata_extra={"token_endpoint": "http://as.example/token"})
        async with server.running():
            with pytest.raises(OAuthError, match="not HTTPS") as caught:
                await _list_tools(server, OAuth(interactive=approve))
            assert caught.value.error == "insecure_endpoint"

    run(main())


def test_an_issuer_over_plain_http_off_this_machine_is_refused_before_anything_is_fetched(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The resource names ``http://as.example``. The test's server is also an HTTP proxy that every
    request for a host other than this machine goes through, so fetching that issuer's metadata in
    clear would succeed (and the flow with it): the client must not ask at all."""

    async def main() -> Protected:
        server = Protected(issuer_override="http://as.example")
        async with server.running():
            monkeypatch.setenv("HTTP_PROXY", server.base)
            monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
            with pytest.raises(
                OAuthError, match=r"authorization server http://as\.example is not HTTPS"
            ) as caught:
                await _list_tools(server, OAuth(interactive=approve))
            assert caught.value.error == "insecure_endpoint"
            return server

    server = run(main())
    assert server.router.paths() == ["/.well-known/oauth-protected-resource/mcp"]  # no metadata asked for
    assert server.router.paths("POST") == ["/mcp"]


def test_plain_http_issuers_on_this_machine_are_allowed() -> None:
    for url in ("http://127.0.0.1:9/as", "http://localhost:9", "http://[::1]:9", "https://as.example"):
        require_secure(url, "the authorization server")
    for url in ("http://as.example", "http://10.0.0.1", "http://127.0.0.1.example.com", "ftp://127.0.0.1"):
        with pytest.raises(OAuthError, match="is not HTTPS"):
            require_secure(url, "the authorization server")
