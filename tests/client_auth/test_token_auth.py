"""How the client authenticates at the token endpoint, as the token endpoint sees it."""

from __future__ import annotations

import base64

import pytest
from joserfc import jwt
from joserfc.jwk import ECKey

from mcpkit import Client
from mcpkit.client.auth import ClientCredentials, OAuth

from ._servers import Protected, Seen, approve, run

pytestmark = pytest.mark.e2e


def _token_request(server: Protected, auth: OAuth) -> Seen:
    async def main() -> Seen:
        async with (
            server.running(),
            Client(server.mcp_url, protocol_version="2026-07-28", auth=auth) as client,
        ):
            await client.list_tools()
        return server.token_requests[-1]

    return run(main())


@pytest.mark.parametrize(
    ("methods", "secret", "expected"),
    [
        (["none"], None, "none"),
        (["client_secret_basic"], "s3cret", "client_secret_basic"),
        (["client_secret_post"], "s3cret", "client_secret_post"),
    ],
)
def test_the_registered_method_is_used(methods: list[str], secret: str | None, expected: str) -> None:
    seen = _token_request(
        Protected(auth_methods=methods, registered_secret=secret), OAuth(interactive=approve)
    )
    form, header = seen.form(), seen.headers.get("authorization")
    registration = "client-"  # the ids the test server hands out
    if expected == "none":
        assert form["client_id"].startswith(registration) and "client_secret" not in form and header is None
    elif expected == "client_secret_basic":
        client_id, _, password = base64.b64decode(header.removeprefix("Basic ")).decode().partition(":")
        assert client_id.startswith(registration) and password == "s3cret" and "client_secret" not in form
    else:
        assert form["client_secret"] == "s3cret" and header is None


def test_a_pre_registered_client_with_a_key_signs_a_client_assertion() -> None:
    key = ECKey.generate_key("P-256")
    pem = key.as_pem(private=True).decode()
    server = Protected(auth_methods=["private_key_jwt"])
    auth = OAuth(client_id="machine", private_key=pem, grant=ClientCredentials(), scope="jobs")
    seen = _token_request(server, auth)
    form = seen.form()
    assert form["grant_type"] == "client_credentials" and form["scope"] == "jobs"
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    claims = jwt.decode(form["client_assertion"], key).claims
    assert claims["iss"] == claims["sub"] == "machine"
    assert claims["aud"] == server.issuer
    assert claims["exp"] > claims["iat"]
    assert form["resource"] == server.mcp_url


def test_pre_registered_credentials_stay_with_their_issuer() -> None:
    server = Protected(auth_methods=["none"])
    auth = OAuth(client_id="for-another-server", issuer="https://other.example", interactive=approve)
    seen = _token_request(server, auth)
    assert seen.form()["client_id"] != "for-another-server"  # registered afresh instead
