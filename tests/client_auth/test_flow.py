"""The authorization code flow: PKCE, the response checks, and the whole flow under a real Client."""

from __future__ import annotations

import asyncio
import base64
import hashlib

import pytest

from mcpkit import Client, MCPError
from mcpkit.client.auth import MemoryTokenStore, OAuth, OAuthError
from mcpkit.client.auth.discovery import AuthServer
from mcpkit.client.auth.flow import check_response, pkce_pair

from ._servers import Protected, approve, run

pytestmark = pytest.mark.e2e

ISSUER = "https://as.example"


def _server(advertised: bool | None) -> AuthServer:
    raw = {} if advertised is None else {"authorization_response_iss_parameter_supported": advertised}
    return AuthServer(ISSUER, f"{ISSUER}/authorize", f"{ISSUER}/token", None, raw)


def test_pkce_uses_s256_over_a_fresh_verifier() -> None:
    verifier, challenge = pkce_pair()
    assert 43 <= len(verifier) <= 128
    digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert challenge == digest
    assert pkce_pair()[0] != verifier


@pytest.mark.parametrize(
    ("advertised", "iss", "accepted"),
    [
        (True, ISSUER, True),
        (True, None, False),  # advertised but absent: reject
        (None, None, True),  # neither: proceed
        (None, "https://evil.example", False),  # present though not advertised: compared anyway
        (True, ISSUER + "/", False),  # no normalization before comparing
        (False, ISSUER, True),
    ],
)
def test_iss_is_checked_as_the_2026_table_says(
    advertised: bool | None, iss: str | None, accepted: bool
) -> None:
    redirect = "http://127.0.0.1:1/callback?code=c&state=s" + (f"&iss={iss}" if iss else "")
    if accepted:
        assert check_response(redirect, state="s", server=_server(advertised)) == "c"
    else:
        with pytest.raises(OAuthError, match="iss"):
            check_response(redirect, state="s", server=_server(advertised))


def test_a_foreign_state_or_an_error_is_refused_and_a_bare_code_accepted() -> None:
    with pytest.raises(OAuthError, match="state"):
        check_response("http://x/cb?code=c&state=other", state="s", server=_server(None))
    with pytest.raises(OAuthError, match="access_denied"):
        check_response("http://x/cb?error=access_denied&state=s", state="s", server=_server(None))
    assert check_response("pasted-code", state="s", server=_server(None)) == "pasted-code"


def test_a_client_connects_through_the_whole_flow_and_sends_the_resource() -> None:
    async def main() -> Protected:
        server = Protected(challenge_scope="mcp:read")
        async with server.running():
            auth = OAuth(interactive=approve)
            async with Client(server.mcp_url, protocol_version="2026-07-28", auth=auth) as client:
                assert await client.list_tools() == []
            return server

    server = run(main())
    [authorization] = server.authorizations
    assert authorization["resource"] == server.mcp_url
    assert authorization["scope"] == "mcp:read"
    assert authorization["code_challenge_method"] == "S256"
    [token_request] = server.token_requests
    assert token_request.form()["resource"] == server.mcp_url
    registration = next(s for s in server.router.seen if s.path == "/register").json()
    assert registration["application_type"] == "native"
    assert "refresh_token" in registration["grant_types"]


def test_insufficient_scope_steps_up_to_the_union_of_scopes() -> None:
    async def main() -> Protected:
        server = Protected(challenge_scope="mcp:read", required_scope="mcp:write")
        async with server.running():
            auth = OAuth(interactive=approve)
            async with Client(server.mcp_url, protocol_version="2026-07-28", auth=auth) as client:
                await client.list_tools()
            return server

    server = run(main())
    assert [a.get("scope") for a in server.authorizations] == ["mcp:read", "mcp:read mcp:write"]


def test_step_ups_are_limited() -> None:
    async def main() -> Protected:
        server = Protected(challenge_scope="mcp:read", required_scope="never-granted")
        async with server.running():
            auth = OAuth(interactive=approve, max_step_ups=2)

            async def never(url: str) -> str:  # the AS grants less than asked: the 403 stays
                return await approve(url.replace("never-granted", "other"))

            auth.interactive = never
            async with Client(server.mcp_url, protocol_version="2026-07-28", auth=auth) as client:
                with pytest.raises(Exception, match="403"):
                    await client.list_tools()
            return server

    assert len(run(main()).authorizations) == 3  # the first, then two step-ups, then give up


def test_registration_and_tokens_are_reused_from_the_store() -> None:
    async def main() -> Protected:
        server = Protected()
        store = MemoryTokenStore()
        async with server.running():
            for _ in range(2):
                auth = OAuth(interactive=approve, store=store)
                async with Client(server.mcp_url, protocol_version="2026-07-28", auth=auth) as client:
                    await client.list_tools()
            return server

    server = run(main())
    assert len(server.authorizations) == 1  # the second client found valid tokens
    assert server.router.paths("POST").count("/register") == 1


@pytest.mark.parametrize("version", ["2026-07-28", None])
def test_a_refused_authorization_is_the_error_connecting_raises(version: str | None) -> None:
    async def main() -> Protected:
        server = Protected(metadata_issuer="https://attacker.example")
        async with server.running():
            auth = OAuth(interactive=approve)
            with pytest.raises(OAuthError, match="attacker") as caught:  # the reason, not "no revision"
                async with Client(server.mcp_url, protocol_version=version, auth=auth):
                    pass
            assert caught.value.error == "issuer_mismatch"
            return server

    server = run(main())
    assert server.router.paths("POST") == ["/mcp"]  # the ping that met the 401: no probe, no second try


def test_a_refusal_met_by_a_request_names_its_cause() -> None:
    async def main() -> None:
        server = Protected()
        async with server.running():
            auth = OAuth(interactive=approve)
            async with Client(server.mcp_url, protocol_version="2026-07-28", auth=auth) as client:
                server.expire_all()
                server.refreshes.clear()
                server.metadata_issuer = "https://attacker.example"
                with pytest.raises(MCPError, match=r"OAuthError: .*attacker"):
                    await client.list_tools()

    run(main())


def test_a_client_metadata_document_names_its_own_https_url() -> None:
    from mcpkit.client.auth import client_metadata_document

    jwks = {"keys": [{"kty": "EC", "crv": "P-256", "x": "x", "y": "y"}]}
    document = client_metadata_document("https://app.example/oauth/client.json", jwks=jwks)
    assert document["client_id"] == "https://app.example/oauth/client.json"
    assert document["token_endpoint_auth_method"] == "private_key_jwt" and document["jwks"] == jwks
    for bad in ("http://app.example/client.json", "https://app.example/"):
        with pytest.raises(ValueError, match="https with a path"):
            client_metadata_document(bad)


def test_a_slow_user_is_waited_for_longer_than_the_era_probe() -> None:
    async def slow(url: str) -> str:
        # In the browser, reading the consent page: longer than the probe's and the request's
        # timeouts, which must not count it (they are generous, for what must not fire does not
        # on a busy machine).
        await asyncio.sleep(10.0)
        return await approve(url)

    async def main() -> str:
        server = Protected()
        async with server.running():
            auth = OAuth(interactive=slow)
            async with Client(server.mcp_url, auth=auth, probe_timeout=5, timeout=8) as client:
                await client.list_tools()
                return client.protocol_version

    assert run(main(), 60) == "2026-07-28"  # the probe ran after the authorization, and was answered
