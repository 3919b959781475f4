"""A small OAuth authorization server for tests: a real HTTP server on 127.0.0.1 (in a thread of the
test process) serving its metadata (RFC 8414), its key set and a token introspection endpoint
(RFC 7662), and minting tokens with joserfc.

It also plays the user's side: dynamic registration (RFC 7591) of public clients, an authorization
endpoint that approves at once (a 302 to the client's redirect URI with ``code``, ``state`` and
``iss``: the browser only has to follow it), and the ``authorization_code`` (PKCE S256 checked),
``refresh_token`` and ``client_credentials`` grants.

It holds an RSA and an EC key; :meth:`TestIssuer.rotate` adds a new key (and may retire the old
ones), as a real issuer rotates. :meth:`TestIssuer.mint` signs any claims with any header, so tests
can make every kind of bad token a server must refuse.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from joserfc import jwk, jwt
from joserfc.jws import JWSRegistry

from mcpkit.auth.dpop import token_hash

__all__ = ["TestIssuer", "dpop_proof", "new_dpop_key"]


class TestIssuer:
    __test__ = False  # not a test class, whatever its name

    def __init__(self, port: int = 0) -> None:
        self.rsa = jwk.RSAKey.generate_key(2048, parameters={"kid": "rsa-1", "use": "sig"})
        self.ec = jwk.ECKey.generate_key("P-256", parameters={"kid": "ec-1", "use": "sig"})
        self.published: list[jwk.Key] = [self.rsa, self.ec]
        #: Opaque tokens the introspection endpoint knows, and what it answers for each.
        self.opaque: dict[str, dict[str, Any]] = {}
        self.introspection_client = ("mcp-server", secrets.token_urlsafe(12))
        #: Clients the token endpoint knows (client_credentials grant, HTTP Basic), by id.
        self.clients: dict[str, str] = {"machine": secrets.token_urlsafe(12)}
        self.jwks_requests = 0
        #: The scope of each token the token endpoint issued, in order.
        self.issued: list[str] = []
        #: Registered public clients (client id -> redirect URIs); codes not yet redeemed; refresh tokens.
        self.registered: dict[str, list[str]] = {}
        self.codes: dict[str, dict[str, str]] = {}
        self.refresh_tokens: dict[str, dict[str, str]] = {}
        #: Authorization requests approved (each one a visit of the user's browser).
        self.authorizations = 0
        #: Who the user is at the authorization endpoint.
        self.user = "alice"
        self.introspections = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread: threading.Thread | None = None

    def __enter__(self) -> TestIssuer:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def jwks_uri(self) -> str:
        return f"{self.url}/jwks"

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "jwks_uri": self.jwks_uri,
            "introspection_endpoint": f"{self.url}/introspect",
            "token_endpoint": f"{self.url}/token",
            "authorization_endpoint": f"{self.url}/authorize",
            "registration_endpoint": f"{self.url}/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": True,
            "dpop_signing_alg_values_supported": ["ES256"],
        }

    def rotate(self, kty: str = "EC", *, retire: bool = False) -> jwk.Key:
        """Publish a new key (and, with *retire*, stop publishing the others); returns it."""
        kid = f"{kty.lower()}-{len(self.published) + 1}-{secrets.token_hex(2)}"
        key = self.new_key(kty, kid)
        self.published = [key] if retire else [*self.published, key]
        return key

    @staticmethod
    def new_key(kty: str, kid: str) -> jwk.Key:
        if kty == "RSA":
            return jwk.RSAKey.generate_key(2048, parameters={"kid": kid, "use": "sig"})
        return jwk.ECKey.generate_key("P-256", parameters={"kid": kid, "use": "sig"})

    def mint(
        self,
        audience: str | list[str],
        *,
        scope: str | None = "mcp",
        subject: str = "alice",
        lifetime: float = 300,
        key: jwk.Key | None = None,
        alg: str | None = None,
        header: dict[str, Any] | None = None,
        jkt: str | None = None,
        **claims: Any,
    ) -> str:
        """A signed access token; *claims* override or add (``iss=``, ``nbf=``, ``exp=None`` drops)."""
        key = key if key is not None else self.rsa
        alg = alg or ("RS256" if key.key_type == "RSA" else "ES256")
        now = int(time.time())
        body: dict[str, Any] = {
            "iss": self.url,
            "sub": subject,
            "aud": audience,
            "client_id": "test-client",
            "iat": now,
            "exp": now + lifetime,
            "jti": secrets.token_hex(8),
        }
        if scope is not None:
            body["scope"] = scope
        if jkt is not None:
            body["cnf"] = {"jkt": jkt}
        body.update(claims)
        body = {k: v for k, v in body.items() if v is not None}
        head = {"alg": alg, "typ": "at+jwt", "kid": key.kid, **(header or {})}
        return jwt.encode(head, body, key, algorithms=[alg])

    def sign_text(self, payload: str, header: str | None = None) -> str:
        """A token whose header and payload are *exactly* these JSON texts, signed with the RSA key:
        for what a JSON encoder will not write (``NaN``, a member named twice)."""
        if header is None:
            header = json.dumps({"alg": "RS256", "typ": "at+jwt", "kid": self.rsa.kid})
        signing_input = f"{_b64(header.encode())}.{_b64(payload.encode())}"
        signature = JWSRegistry.algorithms["RS256"].sign(signing_input.encode("ascii"), self.rsa)
        return f"{signing_input}.{_b64(signature)}"

    def claims_text(self, audience: str, *members: str, **raw: str) -> str:
        """The JSON text of good claims for *audience*: each of *raw* written as ``"name": text`` in
        place of the usual member, then each of *members* as it is (``'"aud": "..."'`` names aud twice)."""
        now = int(time.time())
        body = {"iss": self.url, "sub": "alice", "aud": audience, "client_id": "test-client",
                "iat": now, "exp": now + 300, "scope": "mcp"}  # fmt: skip
        written = [
            f"{json.dumps(name)}: {json.dumps(value)}" for name, value in body.items() if name not in raw
        ]
        written += [f"{json.dumps(name)}: {text}" for name, text in raw.items()]
        return "{" + ", ".join([*written, *members]) + "}"

    def opaque_token(self, answer: dict[str, Any]) -> str:
        token = secrets.token_urlsafe(24)
        self.opaque[token] = answer
        return token


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(claims: dict[str, Any]) -> str:
    """An ``alg: none`` token (which a server must refuse)."""

    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'at+jwt'})}.{part(claims)}."


def new_dpop_key() -> jwk.ECKey:
    return jwk.ECKey.generate_key("P-256")


def dpop_proof(
    key: jwk.Key,
    method: str,
    url: str,
    token: str | None = None,
    *,
    nonce: str | None = None,
    iat: float | None = None,
    jti: str | None = None,
    header_jwk: dict[str, Any] | None = None,
) -> str:
    """A DPoP proof for *method* and *url*, bound to *token* (``ath``)."""
    claims: dict[str, Any] = {
        "htm": method,
        "htu": url,
        "iat": int(iat if iat is not None else time.time()),
        "jti": jti or secrets.token_urlsafe(12),
    }
    if token is not None:
        claims["ath"] = token_hash(token)
    if nonce is not None:
        claims["nonce"] = nonce
    public = header_jwk if header_jwk is not None else key.as_dict(private=False)
    alg = "ES256" if key.key_type == "EC" else "RS256"
    return jwt.encode({"typ": "dpop+jwt", "alg": alg, "jwk": public}, claims, key, algorithms=[alg])


def _registered(redirect: str, registered: list[str]) -> bool:
    """RFC 8252 section 7.3: a loopback redirect URI matches whatever its port ("the authorization
    server MUST allow any port to be specified at the time of the request")."""

    def portless(uri: str) -> tuple[str, str | None, str]:
        parts = urlsplit(uri)
        return parts.scheme, parts.hostname, parts.path

    loopback = urlsplit(redirect).hostname in ("127.0.0.1", "localhost", "::1")
    return any(redirect == uri or (loopback and portless(redirect) == portless(uri)) for uri in registered)


def _handler(issuer: TestIssuer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet

        def _json(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/.well-known/oauth-authorization-server":
                self._json(200, issuer.metadata())
            elif self.path.startswith("/authorize?"):
                self._authorize()
            elif self.path == "/jwks":
                issuer.jwks_requests += 1
                self._json(200, {"keys": [k.as_dict(private=False) for k in issuer.published]})
            else:
                self._json(404, {"error": "not_found"})

        def _basic(self) -> tuple[str, str]:
            scheme, _, value = self.headers.get("authorization", "").partition(" ")
            if scheme.lower() != "basic":
                return "", ""
            user, _, password = base64.b64decode(value).decode().partition(":")
            return user, password

        def _authorize(self) -> None:
            """Approve at once: the user is always :attr:`TestIssuer.user`, and consents."""
            query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
            client, redirect = query.get("client_id", ""), query.get("redirect_uri", "")
            if (
                not _registered(redirect, issuer.registered.get(client, ()))
                or query.get("response_type") != "code"
            ):
                self._json(400, {"error": "invalid_request"})  # never redirect to an unknown URI
                return
            back: dict[str, str] = {"state": query.get("state", ""), "iss": issuer.url}
            if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
                back["error"] = "invalid_request"
            else:
                issuer.authorizations += 1
                code = secrets.token_urlsafe(16)
                issuer.codes[code] = {**query, "subject": issuer.user}
                back["code"] = code
            self.send_response(302)
            self.send_header("location", f"{redirect}?{urlencode(back)}")
            self.send_header("content-length", "0")
            self.end_headers()

        def _form(self) -> dict[str, str]:
            length = int(self.headers.get("content-length", "0"))
            return {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}

        def _register(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            asked = json.loads(self.rfile.read(length) or b"{}")
            client = f"public-{secrets.token_hex(4)}"
            issuer.registered[client] = list(asked.get("redirect_uris", []))
            self._json(201, {**asked, "client_id": client, "token_endpoint_auth_method": "none"})

        def do_POST(self) -> None:
            if self.path == "/token":
                self._token()
                return
            if self.path == "/register":
                self._register()
                return
            if self.path != "/introspect":
                self._json(404, {"error": "not_found"})
                return
            expected = base64.b64encode(":".join(issuer.introspection_client).encode()).decode()
            if self.headers.get("authorization") != f"Basic {expected}":
                self._json(401, {"error": "invalid_client"})
                return
            issuer.introspections += 1
            length = int(self.headers.get("content-length", "0"))
            form = parse_qs(self.rfile.read(length).decode())
            token = form.get("token", [""])[0]
            self._json(200, issuer.opaque.get(token, {"active": False}))

        def _token(self) -> None:
            """A JWT access token for the ``resource`` asked for, bound to the key of the request's
            DPoP proof when it has one (RFC 9449 §5): client_credentials (HTTP Basic), or a public
            client's authorization_code (PKCE) and refresh_token."""
            form = self._form()
            grant = form.get("grant_type")
            if grant in ("authorization_code", "refresh_token"):
                self._user_token(form)
                return
            client, secret = self._basic()
            if issuer.clients.get(client) != secret or not secret:
                self._json(401, {"error": "invalid_client"})
                return
            if grant != "client_credentials":
                self._json(400, {"error": "unsupported_grant_type"})
                return
            jkt = self._proof_key()
            scope = form.get("scope", "mcp")
            issuer.issued.append(scope)
            token = issuer.mint(
                form.get("resource", ""), scope=scope, subject=client, jkt=jkt, client_id=client
            )
            token_type = "DPoP" if jkt else "Bearer"
            self._json(
                200, {"access_token": token, "token_type": token_type, "expires_in": 300, "scope": scope}
            )

        def _proof_key(self) -> str | None:
            proof = self.headers.get("dpop")
            if proof is None:
                return None
            from joserfc import jws

            header = jws.extract_compact(proof.encode()).headers()
            key = jwk.import_key(header["jwk"])
            jws.deserialize_compact(proof, key, algorithms=[header["alg"]])  # raises if forged
            return key.thumbprint()

        def _user_token(self, form: dict[str, str]) -> None:
            if form.get("grant_type") == "refresh_token":
                grant = issuer.refresh_tokens.get(form.get("refresh_token", ""))
            else:
                grant = issuer.codes.pop(form.get("code", ""), None)  # one use only
                verifier = form.get("code_verifier", "").encode()
                challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=").decode()
                if grant is not None and (
                    grant["code_challenge"] != challenge or grant["redirect_uri"] != form.get("redirect_uri")
                ):
                    grant = None
            if grant is None or grant["client_id"] != form.get("client_id"):
                self._json(400, {"error": "invalid_grant"})
                return
            resource = form.get("resource") or grant.get("resource", "")
            scope = grant.get("scope", "")
            issuer.issued.append(scope)
            jkt = self._proof_key()
            token = issuer.mint(
                resource, scope=scope, subject=grant["subject"], jkt=jkt, client_id=grant["client_id"]
            )
            refresh = secrets.token_urlsafe(16)
            issuer.refresh_tokens[refresh] = grant
            self._json(200, {"access_token": token, "token_type": "DPoP" if jkt else "Bearer",
                             "expires_in": 300, "scope": scope, "refresh_token": refresh})  # fmt: skip

    return Handler
