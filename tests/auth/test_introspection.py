"""Opaque tokens checked by RFC 7662 introspection, over real HTTP to the local issuer."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator

import pytest

from ..conftest import free_port, http_server
from ._serve import SERVER, call, challenge
from .issuer import TestIssuer

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def url(issuer: TestIssuer) -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    client_id, secret = issuer.introspection_client
    command = [sys.executable, "-m", "mcpkit", "run", str(SERVER), "--transport", "http", "--port", str(port),
               "--auth-issuer", issuer.url, "--auth-audience", url, "--auth-scope", "mcp",
               "--auth-introspection-endpoint", f"{issuer.url}/introspect",
               "--auth-introspection-client-id", client_id]  # fmt: skip
    os.environ["MCPKIT_AUTH_INTROSPECTION_SECRET"] = secret  # the secret never goes on a command line
    try:
        yield from http_server(command, port, 15)
    finally:
        del os.environ["MCPKIT_AUTH_INTROSPECTION_SECRET"]


def answer(issuer: TestIssuer, url: str, **fields: object) -> dict[str, object]:
    return {"active": True, "iss": issuer.url, "aud": url, "sub": "olga", "client_id": "c",
            "scope": "mcp", "exp": int(time.time()) + 300, **fields}  # fmt: skip


def test_an_active_token_is_served_and_cached(url: str, issuer: TestIssuer) -> None:
    token = issuer.opaque_token(answer(issuer, url))
    before = issuer.introspections
    for _ in range(3):
        reply = call(url, f"Bearer {token}")
        assert reply.status_code == 200 and reply.json()["result"]["content"][0]["text"].startswith("olga")
    assert issuer.introspections == before + 1  # a positive answer is kept briefly


@pytest.mark.parametrize(
    ("fields", "status"),
    [
        ({"active": False}, 401),
        ({"aud": "https://elsewhere.example/mcp"}, 401),
        ({"aud": None}, 401),  # no audience: cannot be for this server
        ({"iss": "https://other-issuer.example"}, 401),
        ({"exp": int(time.time()) - 10}, 401),
        ({"scope": "other"}, 403),
    ],
)
def test_inactive_foreign_expired_and_under_scoped_tokens_are_refused(
    url: str, issuer: TestIssuer, fields: dict[str, object], status: int
) -> None:
    token = issuer.opaque_token({k: v for k, v in answer(issuer, url, **fields).items() if v is not None})
    reply = call(url, f"Bearer {token}")
    assert reply.status_code == status
    assert challenge(reply)["error"] == ("invalid_token" if status == 401 else "insufficient_scope")
    assert call(url, "Bearer unknown-to-the-issuer").status_code == 401
