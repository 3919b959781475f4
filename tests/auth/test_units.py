"""The pieces without a network: nonce rotation, the replay cache, key-set backoff and cooldown,
the configuration's refusals, and that importing mcpkit loads none of it."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.auth import AuthUnavailable, DPoPError, DPoPPolicy, InvalidToken, ResourceServerAuth
from mcpkit.auth.dpop import DPoPVerifier, NonceSource, normalize_url
from mcpkit.auth.jwks import RemoteKeys
from mcpkit.transports.http.server.auth import metadata_url

from ..conftest import free_port
from .issuer import TestIssuer, dpop_proof, new_dpop_key


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_nonces_rotate_and_the_previous_one_has_a_grace_period() -> None:
    clock = Clock()
    nonces = NonceSource(rotate_every=300, grace=60, clock=clock)
    first = nonces.current()
    assert nonces.accepts(first) and not nonces.accepts("guess")
    clock.now += 300
    second = nonces.current()
    assert second != first and nonces.accepts(second) and nonces.accepts(first)
    clock.now += 61
    assert not nonces.accepts(first) and nonces.accepts(second)
    clock.now += 1000  # several periods without a request: nothing old survives
    assert not nonces.accepts(second) and nonces.accepts(nonces.current())


def test_the_replay_cache_is_bounded_and_forgets_old_proofs() -> None:
    clock = Clock()
    clock.now = time.time()
    verifier = DPoPVerifier(window=60, max_proofs=2, clock=clock)
    key = new_dpop_key()
    url = "https://mcp.example/mcp"

    def check(jti: str) -> None:
        proof = dpop_proof(key, "POST", url, "tok", jti=jti, iat=clock.now)
        verifier.check(proof, "POST", [url], "tok", key.thumbprint())

    check("a")
    check("b")
    with pytest.raises(DPoPError, match="too many"):
        check("c")  # full of proofs still young enough to replay: refuse rather than forget
    clock.now += 121
    check("c")  # the old ones expired
    with pytest.raises(DPoPError, match="used before"):
        check("c")


def test_urls_are_normalized_for_htu() -> None:
    assert normalize_url("HTTPS://MCP.Example:443/mcp?x=1#f") == "https://mcp.example/mcp"
    assert normalize_url("http://[::1]:8000/mcp") == "http://[::1]:8000/mcp"
    assert normalize_url("http://a/mcp") != normalize_url("http://a/mcp/")


def test_the_key_set_backs_off_and_a_refetch_for_an_unknown_kid_is_rate_limited() -> None:
    async def scenario() -> None:
        port = free_port()
        clock = Clock()
        keys = RemoteKeys(
            f"http://127.0.0.1:{port}", f"http://127.0.0.1:{port}/jwks", cooldown=30, clock=clock
        )
        with pytest.raises(AuthUnavailable):
            await keys.candidates("rsa-1", "RSA")
        with pytest.raises(AuthUnavailable) as backing_off:  # no second try during the backoff
            await keys.candidates("rsa-1", "RSA")
        assert 0 < backing_off.value.retry_after <= 0.5
        with TestIssuer(port) as issuer:
            clock.now += 0.5
            assert [k.kid for k in await keys.candidates("rsa-1", "RSA")] == ["rsa-1"]
            assert await keys.candidates("rsa-1", "EC") == []  # an RSA key never checks an EC signature
            fetched = issuer.jwks_requests
            for _ in range(5):
                assert await keys.candidates("unknown", "EC") == []
            assert issuer.jwks_requests == fetched  # within the cooldown: no refetch
            key = issuer.rotate("EC")
            clock.now += 30
            assert [k.kid for k in await keys.candidates(key.kid, "EC")] == [key.kid]
            assert issuer.jwks_requests == fetched + 1
        await keys.aclose()

    asyncio.run(scenario())


def test_the_configuration_refuses_none_hmac_and_relative_urls() -> None:
    for algorithms in (["none"], ["HS256"], ["RS256", "HS512"], []):
        with pytest.raises(ValueError, match="never 'none' nor HMAC"):
            ResourceServerAuth(
                issuer="https://as.example", audience="https://mcp.example/mcp", algorithms=algorithms
            )
    with pytest.raises(ValueError, match="never 'none' nor HMAC"):
        ResourceServerAuth(
            issuer="https://as.example",
            audience="https://mcp.example/mcp",
            dpop=DPoPPolicy(algorithms=["HS256"]),
        )
    with pytest.raises(ValueError, match="absolute"):
        ResourceServerAuth(issuer="https://as.example", audience="/mcp")
    assert metadata_url("https://mcp.example/public/mcp") == (
        "https://mcp.example/.well-known/oauth-protected-resource/public/mcp"
    )


def test_importing_mcpkit_loads_no_jose_crypto_or_http_client() -> None:
    code = (
        "import sys, mcpkit, mcpkit.cli, mcpkit.auth;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('joserfc', 'cryptography', 'httpx')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_verified_identity_does_not_hold_the_token() -> None:
    from dataclasses import fields

    from mcpkit.auth.tokens import info_from

    info = info_from({"sub": "alice", "scope": "a b", "cnf": {"jkt": "x"}}, None)
    assert info.subject == "alice" and info.scopes == {"a", "b"} and info.jkt == "x"
    assert [f.name for f in fields(info)] == [
        "subject", "client_id", "scopes", "claims", "issuer", "expires_at", "jkt",
    ]  # fmt: skip
    with pytest.raises(TypeError):
        info.claims["sub"] = "mallory"  # type: ignore[index]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--transport", "http", "--auth-issuer", "https://as.example"], "needs --auth-audience"),
        (["--auth-issuer", "https://as.example", "--auth-audience", "https://a/mcp"], "--transport http"),
        (["--transport", "http", "--auth-scope", "x"], "need --auth-issuer"),
        (
            ["--transport", "http", "--auth-issuer", "as.example", "--auth-audience", "https://a/mcp"],
            "absolute",
        ),
    ],
)
def test_mcpkit_run_refuses_incomplete_auth_options(flags: list[str], message: str) -> None:
    server = str(Path(__file__).with_name("protected_server.py"))
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "run", server, *flags], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and message in done.stderr  # a usage error


_SEGMENT = st.text(
    alphabet='ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/.{}":', max_size=40
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=80), st.lists(_SEGMENT, min_size=1, max_size=5).map(".".join)))
def test_any_text_as_a_token_or_proof_is_refused_with_an_auth_error(text: str) -> None:
    """Whatever arrives in the headers, the answer is a 401, never a crash (a 500)."""
    from mcpkit.auth.tokens import decode_segments

    try:
        header, claims, _ = decode_segments(text)
    except InvalidToken:
        pass
    else:  # what does decode is two JSON objects, which the verifier then checks
        assert isinstance(header, dict) and isinstance(claims, dict)
    verifier = DPoPVerifier()
    with pytest.raises(DPoPError):
        verifier.check(text, "POST", ["http://127.0.0.1/mcp"], "tok", "jkt")


def test_crafted_json_in_the_segments_is_refused_not_crashed() -> None:
    import base64
    import json

    from mcpkit.auth.tokens import decode_segments

    def seg(value: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    verifier = DPoPVerifier()
    for header in ([], "x", {"alg": 5}, {"alg": "ES256", "typ": "dpop+jwt", "jwk": "x"},
                   {"alg": "ES256", "typ": "dpop+jwt", "jwk": {"kty": "EC"}},
                   {"alg": "ES256", "typ": "dpop+jwt", "jwk": {"kty": "oct", "k": "AA"}}):  # fmt: skip
        for claims in ([], 1, {"htm": ["POST"]}, {"iat": "now"}):
            token = f"{seg(header)}.{seg(claims)}.{seg('sig')}"
            with pytest.raises(DPoPError):
                verifier.check(token, "POST", ["http://127.0.0.1/mcp"], "tok", "jkt")
            if not isinstance(header, dict) or not isinstance(claims, dict):
                with pytest.raises(InvalidToken):
                    decode_segments(token)


def test_scope_hierarchies_count_in_the_checks() -> None:
    """ "Servers MUST account for scope hierarchies": a broader scope grants the narrower ones."""
    import httpx

    from mcpkit import Server
    from mcpkit.auth import AuthInfo

    class Tokens:
        async def verify(self, token: str) -> AuthInfo:
            return AuthInfo(subject="ann", scopes=frozenset(token.split("+")))

    auth = ResourceServerAuth(
        issuer="https://as.example",
        audience="http://127.0.0.1:8000/mcp",
        required_scopes=["notes:read"],
        scope_implies={"notes:admin": ["notes:write"], "notes:write": ["notes:read"]},
        verifier=Tokens(),
    )
    assert auth.expand_scopes({"notes:admin"}) == {"notes:admin", "notes:write", "notes:read"}
    app = Server("s", "1").http_app(auth=auth)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}

    async def status(token: str) -> int:
        headers = {
            "Authorization": f"Bearer {token}",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/list",
        }
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
            return (await http.post("/mcp", json=body, headers=headers)).status_code

    assert asyncio.run(status("notes:admin")) == 200
    assert asyncio.run(status("notes:write+other")) == 200
    assert asyncio.run(status("other")) == 403


def test_auth_info_behaves_as_the_frozen_dataclass_it_is_written_as() -> None:
    """AuthInfo's methods are written out (generating them cost every server's start-up): it must
    behave as ``@dataclass(frozen=True, slots=True)`` with the same fields does."""
    import copy
    import dataclasses
    import pickle
    from collections.abc import Mapping
    from types import MappingProxyType
    from typing import Any

    from mcpkit.auth import AuthInfo

    empty: Mapping[str, Any] = MappingProxyType({})

    @dataclasses.dataclass(frozen=True, slots=True)
    class Reference:
        subject: str | None
        client_id: str | None = None
        scopes: frozenset[str] = frozenset()
        claims: Mapping[str, Any] = dataclasses.field(default_factory=lambda: empty, repr=False)
        issuer: str | None = None
        expires_at: float | None = None
        jkt: str | None = None

    fields = [(f.name, f.default, f.repr) for f in dataclasses.fields(AuthInfo)]
    assert fields == [(f.name, f.default, f.repr) for f in dataclasses.fields(Reference)]
    assert AuthInfo.__match_args__ == Reference.__match_args__
    values = {
        "client_id": "c",
        "scopes": frozenset({"a"}),
        "issuer": "https://as",
        "expires_at": 5.0,
        "jkt": "k",
    }
    info, reference = AuthInfo("ann", **values), Reference("ann", **values)
    assert repr(info).startswith("AuthInfo(")
    assert repr(info).partition("(")[2] == repr(reference).partition("(")[2]
    assert repr(AuthInfo(None)).partition("(")[2] == repr(Reference(None)).partition("(")[2]
    assert AuthInfo(None).claims is empty or dict(AuthInfo(None).claims) == {}
    assert info == AuthInfo("ann", **values) and info != AuthInfo("bob", **values)
    assert info.__eq__(reference) is NotImplemented
    for unhashable in (info, reference):  # claims are part of the hash, and a mapping has none
        with pytest.raises(TypeError):
            hash(unhashable)
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.subject = "eve"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del info.scopes  # type: ignore[misc]
    with pytest.raises(AttributeError):
        info.token = "t"  # type: ignore[attr-defined]  # slots: nowhere to keep a token
    changed = dataclasses.replace(info, scopes=frozenset({"b"}))
    assert changed.scopes == {"b"} and changed.subject == "ann" and info.scopes == {"a"}
    plain = AuthInfo(
        "ann", claims={"sub": "ann"}, **values
    )  # a mapping proxy can be neither copied nor pickled
    assert dataclasses.asdict(plain)["claims"] == {"sub": "ann"} and dataclasses.is_dataclass(plain)
    for twin in (pickle.loads(pickle.dumps(plain)), copy.copy(plain), copy.deepcopy(plain)):
        assert twin == plain and twin is not plain
