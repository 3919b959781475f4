"""Small real HTTP servers on 127.0.0.1 for the authorizing client's tests: a bare HTTP/1.1 router
(:class:`Router`), and on it a protected MCP endpoint with its authorization server
(:class:`Protected`) whose behaviour each test adjusts through plain attributes."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import secrets
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit


@dataclass
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lowercase names
    body: bytes

    def form(self) -> dict[str, str]:
        return dict(parse_qsl(self.body.decode()))

    def json(self) -> Any:
        return json.loads(self.body)


Reply = tuple[int, dict[str, str], bytes]
Handler = Callable[[Seen], Awaitable[Reply]]


def as_json(status: int, body: Any, headers: dict[str, str] | None = None) -> Reply:
    return status, {"Content-Type": "application/json", **(headers or {})}, json.dumps(body).encode()


class Router:
    """An HTTP/1.1 server answering ``(method, path)`` with its handler (404 otherwise), one request
    per connection; every request is kept in :attr:`seen`."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], Handler] = {}
        self.seen: list[Seen] = []
        self.url = ""

    def route(self, method: str, path: str) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            self.routes[(method, path)] = handler
            return handler

        return register

    def paths(self, method: str = "GET") -> list[str]:
        return [s.path for s in self.seen if s.method == method]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await reader.readline()).decode()
            if not line:
                return
            method, target, _ = line.split(" ", 2)
            headers: dict[str, str] = {}
            while (raw := await reader.readline()) not in (b"\r\n", b"\n", b""):
                name, _, value = raw.decode().partition(":")
                headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            parts = urlsplit(target)
            seen = Seen(method, parts.path, dict(parse_qsl(parts.query)), headers, body)
            self.seen.append(seen)
            handler = self.routes.get((method, parts.path))
            status, reply_headers, content = (
                await handler(seen) if handler else (404, {"Content-Type": "text/plain"}, b"not found")
            )
            head = f"HTTP/1.1 {status} X\r\nContent-Length: {len(content)}\r\nConnection: close\r\n"
            head += "".join(f"{k}: {v}\r\n" for k, v in reply_headers.items())
            writer.write(head.encode() + b"\r\n" + content)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    @contextlib.asynccontextmanager
    async def running(self, port: int = 0) -> AsyncIterator[str]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", port)
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        try:
            yield self.url
        finally:
            server.close()
            await server.wait_closed()


DISCOVERED = {
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "protected", "version": "1"}},
}


@dataclass
class Protected:
    """A 2026-07-28 MCP endpoint at ``/mcp`` that wants a token, and the authorization server that
    issues them, on one router. Attributes set what each side publishes and accepts."""

    router: Router = field(default_factory=Router)
    as_path: str = ""  # the issuer's path ("/tenant1": the issuer has a path component)
    prm_in_challenge: bool = True
    prm_at: str = "/.well-known/oauth-protected-resource/mcp"
    resource_path: str = "/mcp"  # the resource the metadata names
    metadata_at: str = "/.well-known/oauth-authorization-server"  # where the AS metadata is served
    metadata_extra: dict[str, Any] = field(default_factory=dict)
    issuer_override: str | None = None
    metadata_issuer: str | None = None  # what the metadata document claims (a poisoned one: not its own)
    auth_methods: list[str] = field(default_factory=lambda: ["none"])
    challenge_scope: str | None = None
    required_scope: str | None = None  # tools/list needs it (403 insufficient_scope otherwise)
    token_lifetime: int = 3600
    issue_refresh: bool = True
    refresh_delay: float = 0.0
    registered_secret: str | None = None
    tokens: dict[str, str] = field(default_factory=dict)  # access token -> scope
    refreshes: dict[str, str] = field(default_factory=dict)  # refresh token -> scope
    token_requests: list[Seen] = field(default_factory=list)
    authorizations: list[dict[str, str]] = field(default_factory=list)
    codes: dict[str, tuple[str, str]] = field(default_factory=dict)  # code -> (PKCE challenge, scope)
    dpop: bool = False  # advertise DPoP, bind tokens to the proof's key, demand proofs at /mcp
    rs_nonce: str | None = None  # the nonce /mcp demands in proofs (use_dpop_nonce until it has it)
    bound: dict[str, str] = field(default_factory=dict)  # access token -> key thumbprint
    signing_key: Any = None  # a joserfc key: issue signed JWT access tokens, keys at /jwks
    audience: str = ""
    jtis: list[str] = field(default_factory=list)
    proof_errors: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return self.router.url

    @property
    def issuer(self) -> str:
        return self.issuer_override or f"{self.base}{self.as_path}"

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/mcp"

    @contextlib.contextmanager
    def in_thread(self) -> Iterator[Protected]:
        """Serve from a thread of its own (for a server process that must reach it while the test's
        own loop is not yet running)."""
        loop = asyncio.new_event_loop()
        up, down = threading.Event(), asyncio.Event()

        async def serve() -> None:
            async with self.running():
                up.set()
                await down.wait()

        thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
        thread.start()
        up.wait(10)
        try:
            yield self
        finally:
            loop.call_soon_threadsafe(down.set)
            thread.join(10)
            loop.close()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Protected]:
        r = self.router
        r.route("POST", "/mcp")(self._mcp)
        r.route("GET", self.prm_at)(self._prm)
        r.route("GET", self.metadata_at)(self._metadata)
        r.route("POST", f"{self.as_path}/register")(self._register)
        r.route("GET", f"{self.as_path}/authorize")(self._authorize)
        r.route("POST", f"{self.as_path}/token")(self._token)
        r.route("GET", "/jwks")(self._jwks)
        async with r.running():
            yield self

    def _challenge(self, status: int, error: str, scope: str | None) -> Reply:
        params = [f'error="{error}"']
        if scope:
            params.append(f'scope="{scope}"')
        if self.prm_in_challenge:
            params.append(f'resource_metadata="{self.base}{self.prm_at}"')
        return as_json(status, {"error": error}, {"WWW-Authenticate": "Bearer " + ", ".join(params)})

    def _check_proof(self, seen: Seen, url: str, token: str | None) -> dict[str, Any] | None:
        """The claims of the request's DPoP proof if it is well formed for *url* (and *token*)."""
        from joserfc import jws, jwt
        from joserfc.jwk import ECKey

        proof = seen.headers.get("dpop", "")
        try:
            header = jws.extract_compact(proof.encode()).protected
            key = ECKey.import_key(header["jwk"])
            claims = jwt.decode(proof, key).claims
        except Exception as exc:
            self.proof_errors.append(f"unreadable proof: {exc}")
            return None
        digest = base64.urlsafe_b64encode(hashlib.sha256((token or "").encode()).digest()).rstrip(b"=")
        problems = [
            header.get("typ") != "dpop+jwt" and "typ",
            claims.get("htm") != seen.method and "htm",
            claims.get("htu") != url and "htu",
            abs(claims.get("iat", 0) - time.time()) > 60 and "iat",
            claims.get("jti") in self.jtis and "jti reused",
            token is not None and claims.get("ath") != digest.decode() and "ath",
            token is not None and self.bound.get(token) != key.thumbprint() and "key",
        ]
        self.jtis.append(claims.get("jti", ""))
        if any(problems):
            self.proof_errors.extend(p for p in problems if p)
            return None
        return {**claims, "jkt": key.thumbprint()}

    async def _mcp(self, seen: Seen) -> Reply:
        message = seen.json()
        scheme, _, token = seen.headers.get("authorization", "").partition(" ")
        if self.dpop and token in self.tokens:
            claims = self._check_proof(seen, self.mcp_url, token)
            if scheme != "DPoP" or claims is None:
                return self._challenge(401, "invalid_token", None)
            if self.rs_nonce and claims.get("nonce") != self.rs_nonce:
                headers = {"WWW-Authenticate": 'DPoP error="use_dpop_nonce"', "DPoP-Nonce": self.rs_nonce}
                return as_json(401, {"error": "use_dpop_nonce"}, headers)
        if token not in self.tokens:
            return self._challenge(401, "invalid_token", self.challenge_scope)
        if (
            message["method"] == "tools/list"
            and self.required_scope
            and self.required_scope not in self.tokens[token].split()
        ):
            return self._challenge(403, "insufficient_scope", self.required_scope)
        result = DISCOVERED if message["method"] == "server/discover" else {"tools": []}
        return as_json(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})

    async def _prm(self, seen: Seen) -> Reply:
        return as_json(
            200, {"resource": self.base + self.resource_path, "authorization_servers": [self.issuer]}
        )

    async def _metadata(self, seen: Seen) -> Reply:
        prefix = f"{self.base}{self.as_path}"
        return as_json(
            200,
            {
                "issuer": self.metadata_issuer or self.issuer,
                "authorization_endpoint": f"{prefix}/authorize",
                "token_endpoint": f"{prefix}/token",
                "registration_endpoint": f"{prefix}/register",
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": self.auth_methods,
                "authorization_response_iss_parameter_supported": True,
                **({"dpop_signing_alg_values_supported": ["ES256"]} if self.dpop else {}),
                **({"jwks_uri": f"{self.base}/jwks"} if self.signing_key is not None else {}),
                **self.metadata_extra,
            },
        )

    async def _register(self, seen: Seen) -> Reply:
        body = seen.json()
        answer = {"client_id": f"client-{len(self.router.paths('POST'))}", **body}
        if self.registered_secret is not None:
            answer["client_secret"] = self.registered_secret
        return as_json(201, answer)

    async def _authorize(self, seen: Seen) -> Reply:
        self.authorizations.append(seen.query)
        code = secrets.token_urlsafe(8)
        self.codes[code] = (seen.query.get("code_challenge", ""), seen.query.get("scope", ""))
        params = {"code": code, "state": seen.query.get("state", ""), "iss": self.issuer}
        return 302, {"Location": f"{seen.query['redirect_uri']}?{urlencode(params)}"}, b""

    def _issue(self, scope: str, jkt: str | None = None) -> Reply:
        access = self._mint(scope) if self.signing_key is not None else secrets.token_urlsafe(12)
        self.tokens[access] = scope
        token_type = "Bearer"
        if jkt is not None:
            self.bound[access], token_type = jkt, "DPoP"
        body: dict[str, Any] = {
            "access_token": access,
            "token_type": token_type,
            "expires_in": self.token_lifetime,
        }
        if scope:
            body["scope"] = scope
        if self.issue_refresh:
            refresh = secrets.token_urlsafe(12)
            self.refreshes[refresh] = scope
            body["refresh_token"] = refresh
        return as_json(200, body)

    async def _token(self, seen: Seen) -> Reply:
        self.token_requests.append(seen)
        form = seen.form()
        grant = form.get("grant_type")
        self.audience = form.get("resource", self.mcp_url)
        jkt = None
        if self.dpop:
            claims = self._check_proof(seen, f"{self.base}{self.as_path}/token", None)
            if claims is None:
                return as_json(400, {"error": "invalid_dpop_proof"})
            jkt = claims["jkt"]
        if grant == "authorization_code":
            verifier = form.get("code_verifier", "")
            challenge, scope = self.codes.pop(form.get("code", ""), ("", ""))
            digest = (
                base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            )
            if not challenge or digest != challenge:
                return as_json(400, {"error": "invalid_grant"})
            return self._issue(scope, jkt)
        if grant == "refresh_token":
            await asyncio.sleep(self.refresh_delay)  # long enough for every waiting request to pile up
            scope = self.refreshes.pop(form.get("refresh_token", ""), None)  # single use: rotated
            if scope is None:
                return as_json(400, {"error": "invalid_grant"})
            return self._issue(scope, jkt)
        if grant == "client_credentials":
            return self._issue(form.get("scope", ""))
        return as_json(400, {"error": "unsupported_grant_type"})

    def _mint(self, scope: str) -> str:
        """An RFC 9068 access token for the resource the token request named."""
        from joserfc import jwt

        now = int(time.time())
        claims = {"iss": self.issuer, "sub": "alice", "aud": self.audience, "client_id": "c", "iat": now}
        claims |= {"exp": now + self.token_lifetime, "jti": secrets.token_hex(8), "scope": scope}
        header = {"alg": "ES256", "typ": "at+jwt", "kid": self.signing_key.kid}
        return jwt.encode(header, claims, self.signing_key)

    async def _jwks(self, seen: Seen) -> Reply:
        return as_json(200, {"keys": [self.signing_key.as_dict(private=False)]})

    def expire_all(self) -> None:
        """Every access token stops working at once (the refresh tokens still do)."""
        self.tokens.clear()


async def approve(url: str) -> str:
    """The browser step against :class:`Protected`: its /authorize redirects at once."""
    import httpx

    async with httpx.AsyncClient() as http:
        reply = await http.get(url)
    location: str = reply.headers["location"]
    return location


def run(coro: Awaitable[Any], timeout: float = 60.0) -> Any:
    async def bounded() -> Any:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())
