"""A protected ``mcpkit run`` server against bearer tokens from a real (local) issuer: each bad token
refused with the right status, challenge and JSON-RPC body, in both eras (a 2026-07-28 request, and a
POST of a 2025-11-25 session opened with a good token); good ones served in both eras and over
HTTP+SSE; the metadata document; keys rotated and an issuer that is down at startup."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import httpx
import pytest
from joserfc import jwk, jwt

from mcpkit import Client, TextContent

from ..conftest import free_port
from ._serve import call, challenge, open_session, protected
from .issuer import TestIssuer, unsigned

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def url(issuer: TestIssuer) -> Iterator[str]:
    # Keys from the issuer's metadata (no --auth-jwks-uri); a short cooldown for the rotation test.
    with protected(issuer.url, "--auth-scope", "mcp", "--auth-jwks-cooldown", "0.2") as served:
        yield served


@pytest.fixture(scope="module")
def alices_session(url: str, issuer: TestIssuer) -> str:
    return open_session(url, f"Bearer {issuer.mint(url, subject='alice')}")


@pytest.fixture(params=["2026-07-28", "2025-11-25"])
def session(request: pytest.FixtureRequest, alices_session: str) -> str | None:
    """Each era: ``None`` for a 2026-07-28 request, else a 2025-11-25 session's id."""
    return None if request.param == "2026-07-28" else alices_session


def metadata_of(url: str) -> str:
    return url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")


def test_the_protected_resource_metadata(url: str, issuer: TestIssuer) -> None:
    for where in (metadata_of(url), url.replace("/mcp", "/.well-known/oauth-protected-resource")):
        answer = httpx.get(where, timeout=60)  # no token needed
        assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == "*"
        assert answer.json() == {
            "resource": url,
            "authorization_servers": [issuer.url],
            "bearer_methods_supported": ["header"],
            "scopes_supported": ["mcp"],
        }


def test_a_request_without_a_token_gets_401_and_the_challenge(url: str, session: str | None) -> None:
    answer = call(url, None, session=session)
    assert answer.status_code == 401
    assert challenge(answer) == {"scope": "mcp", "resource_metadata": metadata_of(url)}
    body = answer.json()
    assert body["id"] is None and body["error"]["code"] == -32600
    assert body["error"]["message"].startswith("Unauthorized")
    # Another scheme is no token at all.
    assert challenge(call(url, "Basic YTpi", session=session)) == {
        "scope": "mcp",
        "resource_metadata": metadata_of(url),
    }


#: Tokens the issuer signed whose header or claims a strict JSON reading refuses (each was served
#: before: ``NaN`` compares false with everything, so it never expired), and the description each gets.
STRICT_TOKENS: dict[str, tuple[Callable[[TestIssuer, str], str], str]] = {
    "exp-nan": (lambda i, aud: i.sign_text(i.claims_text(aud, exp="NaN")), "non-finite number (NaN)"),
    "exp-infinity": (lambda i, aud: i.sign_text(i.claims_text(aud, exp="Infinity")), "(Infinity)"),
    "exp-overflowing-to-infinity": (lambda i, aud: i.sign_text(i.claims_text(aud, exp="1e400")), "(1e400)"),
    "nbf-nan": (lambda i, aud: i.sign_text(i.claims_text(aud, nbf="NaN")), "(NaN)"),
    "nbf-minus-infinity": (lambda i, aud: i.sign_text(i.claims_text(aud, nbf="-Infinity")), "(-Infinity)"),
    "exp-too-large-for-a-float": (lambda i, aud: i.sign_text(i.claims_text(aud, exp="1" + "0" * 400)), "exp"),
    "aud-twice": (
        lambda i, aud: i.sign_text(
            i.claims_text(aud, '"aud": ' + json.dumps(aud), aud='"https://other.example/mcp"')
        ),
        "names 'aud' twice",
    ),
    "a-nested-member-twice": (
        lambda i, aud: i.sign_text(i.claims_text(aud, '"ext": {"role": "user", "role": "admin"}')),
        "names 'role' twice",
    ),
    "header-member-twice": (
        lambda i, aud: i.sign_text(i.claims_text(aud), '{"alg": "RS256", "kid": "rsa-1", "kid": "rsa-1"}'),
        "header names 'kid' twice",
    ),
    "header-nan": (
        lambda i, aud: i.sign_text(i.claims_text(aud), '{"alg": "RS256", "kid": "rsa-1", "x": NaN}'),
        "header holds a non-finite number (NaN)",
    ),
}


BAD_TOKENS: dict[str, Callable[[TestIssuer, str], str]] = {
    "malformed": lambda i, aud: "not-a-jwt",
    "garbage-segments": lambda i, aud: "a.b.c",
    "expired": lambda i, aud: i.mint(aud, exp=int(time.time()) - 120),
    "not-yet-valid": lambda i, aud: i.mint(aud, nbf=int(time.time()) + 600),
    "issued-in-the-future": lambda i, aud: i.mint(aud, iat=int(time.time()) + 600),
    "no-exp": lambda i, aud: i.mint(aud, exp=None),
    "wrong-issuer": lambda i, aud: i.mint(aud, iss="http://127.0.0.1:1/other"),
    "wrong-audience": lambda i, aud: i.mint("http://127.0.0.1:1/mcp"),
    "wrong-audience-list": lambda i, aud: i.mint(["https://a.example", aud + "/other"]),
    "alg-none": lambda i, aud: unsigned({"iss": i.url, "aud": aud, "sub": "x", "exp": time.time() + 60}),
    "hmac-with-the-public-key": lambda i, aud: jwt.encode(
        {"alg": "HS256", "kid": "rsa-1"},
        {"iss": i.url, "aud": aud, "sub": "x", "exp": int(time.time()) + 60, "scope": "mcp"},
        jwk.OctKey.import_key(json.dumps(i.rsa.as_dict(private=False)).encode()),
        algorithms=["HS256"],
    ),
    "signed-by-another-key-with-a-known-kid": lambda i, aud: i.mint(
        aud, key=TestIssuer.new_key("RSA", "rsa-1")
    ),
    "unknown-kid": lambda i, aud: i.mint(aud, key=TestIssuer.new_key("EC", "never-published")),
    "a-dpop-proof-as-token": lambda i, aud: i.mint(aud, header={"typ": "dpop+jwt"}),
    # Signed, but holding what JSON has no number for, or a member named twice (see STRICT_TOKENS).
    **{f"strict-{case}": make for case, (make, _) in STRICT_TOKENS.items()},
}


@pytest.mark.parametrize("case", sorted(BAD_TOKENS))
def test_a_bad_token_gets_401_invalid_token(
    url: str, issuer: TestIssuer, case: str, session: str | None
) -> None:
    answer = call(url, f"Bearer {BAD_TOKENS[case](issuer, url)}", session=session)
    assert answer.status_code == 401, answer.text
    params = challenge(answer)
    assert params["error"] == "invalid_token" and params["error_description"]
    assert params["resource_metadata"] == metadata_of(url) and params["scope"] == "mcp"
    assert answer.json()["error"]["data"]["error"] == "invalid_token"


@pytest.mark.parametrize("case", sorted(STRICT_TOKENS))
def test_a_signed_token_with_non_finite_numbers_or_a_member_named_twice_says_so(
    url: str, issuer: TestIssuer, case: str
) -> None:
    make, description = STRICT_TOKENS[case]
    answer = call(url, f"Bearer {make(issuer, url)}")
    assert answer.status_code == 401, answer.text
    assert challenge(answer)["error"] == "invalid_token"
    assert description in challenge(answer)["error_description"]


def test_a_token_written_by_hand_and_signed_is_served(url: str, issuer: TestIssuer) -> None:
    """The control of the strict cases: the same raw signing, without the flaw, is accepted."""
    answer = call(url, f"Bearer {issuer.sign_text(issuer.claims_text(url))}")
    assert answer.json()["result"]["content"][0]["text"] == "alice via test-client with mcp"


def test_an_under_scoped_token_gets_403_insufficient_scope(
    url: str, issuer: TestIssuer, session: str | None
) -> None:
    answer = call(url, f"Bearer {issuer.mint(url, scope='other')}", session=session)
    assert answer.status_code == 403
    params = challenge(answer)
    assert params["error"] == "insufficient_scope" and params["scope"] == "mcp"
    assert params["resource_metadata"] == metadata_of(url)
    # And the same session (or a stateless request) goes on with a good token.
    good = call(url, f"Bearer {issuer.mint(url, subject='alice')}", session=session)
    assert good.json()["result"]["content"][0]["text"] == "alice via test-client with mcp"


def test_two_authorization_headers_or_a_token_in_the_query_get_400(url: str, issuer: TestIssuer) -> None:
    token = issuer.mint(url)
    answer = httpx.post(
        url,
        content=b"{}",
        headers=[
            ("content-type", "application/json"),
            ("authorization", f"Bearer {token}"),
            ("authorization", "Bearer other"),
        ],
        timeout=60,
    )
    assert answer.status_code == 400 and challenge(answer)["error"] == "invalid_request"
    assert call(url + "?access_token=" + token, f"Bearer {token}").status_code == 400


def test_good_tokens_are_served_in_both_eras(url: str, issuer: TestIssuer) -> None:
    token = issuer.mint(url, scope="mcp extra", subject="alice")
    assert call(url, f"Bearer {token}").json()["result"]["content"][0]["text"].startswith("alice")
    assert call(url, f"Bearer {issuer.mint(url, key=issuer.ec, scp=['mcp'], scope=None)}").status_code == 200

    async def both() -> None:
        for version in ("2026-07-28", "2025-11-25"):
            headers = {"Authorization": f"Bearer {token}"}
            async with Client(url, protocol_version=version, headers=headers) as client:
                content = (await client.call_tool("whoami", {})).content[0]
                assert isinstance(content, TextContent)
                assert content.text == "alice via test-client with extra mcp", version

    import asyncio

    asyncio.run(both())


def test_a_session_belongs_to_the_subject_that_opened_it(url: str, issuer: TestIssuer) -> None:
    alice, bob = issuer.mint(url, subject="alice"), issuer.mint(url, subject="bob")
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    opened = httpx.post(url, json=init, headers={"Authorization": f"Bearer {alice}",
                                                 "Accept": "application/json, text/event-stream"}, timeout=60)  # fmt: skip
    session = opened.headers["mcp-session-id"]
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}

    def post(token: str) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}", "Mcp-Session-Id": session,
                   "MCP-Protocol-Version": "2025-11-25", "Accept": "application/json, text/event-stream"}  # fmt: skip
        return httpx.post(url, json=ping, headers=headers, timeout=60)

    assert post(bob).status_code == 404  # as if the session did not exist
    # The token may change between POSTs of one session (a refreshed token of the same subject).
    assert post(issuer.mint(url, subject="alice", key=issuer.ec)).status_code == 200
    assert post(alice).json() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    gone = httpx.delete(
        url, headers={"Authorization": f"Bearer {bob}", "Mcp-Session-Id": session}, timeout=60
    )
    assert gone.status_code == 404 and post(alice).status_code == 200


def test_http_sse_is_protected_too(url: str, issuer: TestIssuer) -> None:
    sse = url.replace("/mcp", "/sse")
    assert httpx.get(sse, timeout=60).status_code == 401
    token = issuer.mint(url)
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(timeout=60) as http, http.stream("GET", sse, headers=headers) as stream:
        assert stream.status_code == 200
        lines = stream.iter_lines()
        endpoint = next(line for line in lines if line.startswith("data: "))[6:]
        target = url.replace("/mcp", endpoint)
        assert http.post(target, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}).status_code == 401
        other = {"Authorization": f"Bearer {issuer.mint(url, subject='mallory')}"}
        assert (
            http.post(target, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=other).status_code
            == 404
        )
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
        assert http.post(target, json=init, headers=headers).status_code == 202
        answer = json.loads(next(line for line in lines if line.startswith("data: "))[6:])
        assert answer["id"] == 1 and answer["result"]["protocolVersion"] == "2024-11-05"
        http.post(target, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        call_ = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "whoami", "arguments": {}},
        }
        assert http.post(target, json=call_, headers=headers).status_code == 202
        answer = json.loads(next(line for line in lines if line.startswith("data: "))[6:])
        assert answer["result"]["content"][0]["text"] == "alice via test-client with mcp"


def test_an_unknown_kid_is_refused_then_accepted_once_the_issuer_publishes_it(
    url: str, issuer: TestIssuer
) -> None:
    key = TestIssuer.new_key("EC", "rotated-in")
    token = issuer.mint(url, key=key)
    assert call(url, f"Bearer {token}").status_code == 401
    issuer.published = [*issuer.published, key]  # the issuer rotates its keys
    deadline = time.monotonic() + 60
    while (status := call(url, f"Bearer {token}").status_code) == 401 and time.monotonic() < deadline:
        time.sleep(0.1)  # the refetch is rate-limited (--auth-jwks-cooldown 0.2)
    assert status == 200


def test_an_issuer_down_at_startup_gets_503_then_the_server_recovers() -> None:
    port = free_port()
    issuer_url = f"http://127.0.0.1:{port}"
    with protected(issuer_url, "--auth-jwks-uri", f"{issuer_url}/jwks") as url:
        refused = call(url, "Bearer a.b.c")  # malformed: refused without needing the keys
        assert refused.status_code == 401
        # A token the server cannot check while the keys are unreachable.
        token = jwt.encode(
            {"alg": "RS256", "kid": "rsa-1"}, {"iss": issuer_url}, TestIssuer.new_key("RSA", "rsa-1")
        )
        down = call(url, f"Bearer {token}")
        assert down.status_code == 503 and int(down.headers["retry-after"]) >= 1
        assert down.json()["error"]["code"] == -32000
        with TestIssuer(port) as issuer:
            good = issuer.mint(url)
            deadline = time.monotonic() + 60
            while (status := call(url, f"Bearer {good}").status_code) == 503 and time.monotonic() < deadline:
                time.sleep(0.2)  # the server retries with backoff
            assert status == 200
