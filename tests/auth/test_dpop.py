"""DPoP-bound tokens (RFC 9449) against a protected ``mcpkit run`` server: the proof must bind this
request (method, URL, time, once only) to this token's key; a server nonce when configured."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from ._serve import call, challenge, open_session, protected
from .issuer import TestIssuer, dpop_proof, new_dpop_key

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def url(issuer: TestIssuer) -> Iterator[str]:
    with protected(issuer.url, "--auth-jwks-uri", issuer.jwks_uri, "--auth-dpop", "accepted") as served:
        yield served


@pytest.fixture(scope="module")
def nonce_url(issuer: TestIssuer) -> Iterator[str]:
    with protected(issuer.url, "--auth-dpop", "required", "--auth-dpop-nonce") as served:
        yield served


def dpop_call(url: str, token: str, proof: str, session: str | None = None) -> httpx.Response:
    return call(url, f"DPoP {token}", headers={"DPoP": proof}, session=session)


def test_the_metadata_and_the_challenge_name_dpop(url: str) -> None:
    document = httpx.get(url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"), timeout=60).json()
    assert document["dpop_bound_access_tokens_required"] is False
    assert "ES256" in document["dpop_signing_alg_values_supported"]
    missing = call(url, None)
    assert missing.status_code == 401 and "error" not in challenge(missing, "Bearer")
    assert "ES256" in challenge(missing, "DPoP")["algs"].split()


def test_a_good_proof_is_served_and_a_bearer_token_still_is(url: str, issuer: TestIssuer) -> None:
    key = new_dpop_key()
    token = issuer.mint(url, jkt=key.thumbprint(), subject="dora")
    answer = dpop_call(url, token, dpop_proof(key, "POST", url, token))
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["content"][0]["text"].startswith("dora")
    # The htu is compared normalized: host case and an explicit default port do not matter.
    assert (
        dpop_call(
            url, token, dpop_proof(key, "POST", url.replace("http://", "HTTP://") + "?q=1", token)
        ).status_code
        == 200
    )
    assert call(url, f"Bearer {issuer.mint(url)}").status_code == 200  # accepted, not required


def refused(answer: httpx.Response, error: str = "invalid_dpop_proof") -> None:
    assert answer.status_code == 401, answer.text
    params = challenge(answer, "DPoP")
    assert params["error"] == error and params["error_description"], params


def test_bad_proofs_are_refused(url: str, issuer: TestIssuer) -> None:
    key = new_dpop_key()
    token = issuer.mint(url, jkt=key.thumbprint())
    proof = dpop_proof(key, "POST", url, token)
    assert dpop_call(url, token, proof).status_code == 200
    refused(dpop_call(url, token, proof))  # replayed
    refused(dpop_call(url, token, dpop_proof(key, "GET", url, token)))  # htm
    refused(dpop_call(url, token, dpop_proof(key, "POST", url.replace("/mcp", "/other"), token)))  # htu
    refused(dpop_call(url, token, dpop_proof(key, "POST", url.replace("127.0.0.1", "localhost"), token)))
    refused(
        dpop_call(url, token, dpop_proof(key, "POST", url, issuer.mint(url, jkt=key.thumbprint())))
    )  # ath
    refused(dpop_call(url, token, dpop_proof(key, "POST", url, token, iat=time.time() - 600)))  # old
    refused(dpop_call(url, token, dpop_proof(key, "POST", url, token, iat=time.time() + 600)))  # future
    other = new_dpop_key()
    refused(dpop_call(url, token, dpop_proof(other, "POST", url, token)), "invalid_token")  # wrong key
    # A proof whose header carries the private key, or a key that did not sign it.
    refused(dpop_call(url, token, dpop_proof(key, "POST", url, token, header_jwk=key.as_dict(private=True))))
    refused(
        dpop_call(url, token, dpop_proof(key, "POST", url, token, header_jwk=other.as_dict(private=False)))
    )
    refused(dpop_call(url, token, "not-a-proof"))
    refused(call(url, f"DPoP {token}"))  # no proof at all
    # A token without cnf.jkt is not DPoP-bound; a bound one is refused as a bearer token.
    plain = issuer.mint(url)
    refused(dpop_call(url, plain, dpop_proof(key, "POST", url, plain)), "invalid_token")
    bearer = call(url, f"Bearer {token}")
    assert bearer.status_code == 401 and challenge(bearer, "Bearer")["error"] == "invalid_token"


def test_a_server_nonce_is_required_when_configured(nonce_url: str, issuer: TestIssuer) -> None:
    url = nonce_url
    key = new_dpop_key()
    token = issuer.mint(url, jkt=key.thumbprint())
    first = dpop_call(url, token, dpop_proof(key, "POST", url, token))
    refused(first, "use_dpop_nonce")
    nonce = first.headers["dpop-nonce"]
    assert "bearer" not in first.headers["www-authenticate"].lower()  # DPoP required: no Bearer challenge
    refused(dpop_call(url, token, dpop_proof(key, "POST", url, token, nonce="made-up")), "use_dpop_nonce")
    answer = dpop_call(url, token, dpop_proof(key, "POST", url, token, nonce=nonce))
    assert answer.status_code == 200 and answer.headers["dpop-nonce"] == nonce
    assert call(url, f"Bearer {issuer.mint(url)}").status_code == 401


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_replayed_and_wrong_key_proofs_are_refused_in_both_eras(
    url: str, issuer: TestIssuer, era: str
) -> None:
    """The refusals the issue names, for a 2026-07-28 request and for a POST of a 2025-11-25 session
    (opened by the same subject with a bearer token: DPoP is accepted, not required)."""
    session = None if era == "2026-07-28" else open_session(url, f"Bearer {issuer.mint(url, subject='dora')}")
    key = new_dpop_key()
    token = issuer.mint(url, jkt=key.thumbprint(), subject="dora")
    proof = dpop_proof(key, "POST", url, token)
    good = dpop_call(url, token, proof, session)
    assert good.status_code == 200 and good.json()["result"]["content"][0]["text"].startswith("dora"), (
        good.text
    )
    refused(dpop_call(url, token, proof, session))  # replayed
    wrong_key = dpop_call(url, token, dpop_proof(new_dpop_key(), "POST", url, token), session)
    refused(wrong_key, "invalid_token")  # a proof by another key than the token's cnf.jkt
    assert challenge(wrong_key, "DPoP")["resource_metadata"].endswith(
        "/.well-known/oauth-protected-resource/mcp"
    )
    assert dpop_call(url, token, dpop_proof(key, "POST", url, token), session).status_code == 200
