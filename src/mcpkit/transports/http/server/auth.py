"""The HTTP side of a protected server: the gate every MCP request passes, and the metadata document.

:class:`AuthGate` runs before an MCP request is read (both eras' POSTs, GET and DELETE, HTTP+SSE's
two paths; never for the metadata document or a CORS preflight). It answers, itself:

* 401 with ``WWW-Authenticate: Bearer resource_metadata="...", scope="..."`` (and a ``DPoP``
  challenge naming ``algs`` when DPoP tokens are accepted) for a request without a token; the same
  with ``error="invalid_token"`` and a description for a token the verifier refuses;
* 401 ``DPoP error="invalid_dpop_proof"`` / ``"use_dpop_nonce"`` (with ``DPoP-Nonce``) for a
  proof that does not bind the request to the token;
* 403 ``error="insufficient_scope"`` naming every scope needed, when the token lacks one;
* 400 ``invalid_request`` for two ``Authorization`` headers, or a token in the query string
  (RFC 6750 §2.3 allows it; the MCP spec does not);
* 503 with ``Retry-After`` when the token cannot be checked (the issuer's keys or introspection
  endpoint unreachable): the token may be fine, and a 401 would send the client to re-authorize.

Each carries a JSON-RPC error body (``id: null``: the body has not been read; -32600 for a refusal,
-32000 for 503) whose ``data.error`` is the OAuth error code. A request that passes gets its
:class:`~mcpkit.auth.AuthInfo`, which the app sets as :data:`~mcpkit.auth.current_auth` for the
handler and uses to bind handshake-era sessions to their subject.

:class:`ProtectedResourceMetadata` serves RFC 9728's document at ``/.well-known/oauth-protected-resource``
followed by the MCP endpoint's path, and at the bare well-known path (the two places the MCP spec
tells clients to look), to any origin: it is public by design.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Sequence
from typing import Any, Final, Protocol, runtime_checkable
from urllib.parse import urlsplit, urlunsplit

from .... import _jsonrpc as jsonrpc
from ...._errors import INVALID_REQUEST, SERVER_BUSY
from ....auth import (
    AuthError,
    AuthInfo,
    AuthUnavailable,
    DPoPError,
    InsufficientScope,
    ResourceServerAuth,
    TokenVerifier,
)
from ....auth.config import build_dpop, build_verifier
from ._asgi import Message, Scope, Send, error, plain, send_json

__all__ = [
    "WELL_KNOWN",
    "AuthGate",
    "ProtectedResourceMetadata",
    "ScopedEndpoint",
    "metadata_url",
    "owner_of",
]

WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"


def metadata_url(resource: str) -> str:
    """Where RFC 9728 §3.1 puts the metadata of *resource*: the well-known path inserted between
    its host and its path."""
    parts = urlsplit(resource)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, WELL_KNOWN + path, "", ""))


class ProtectedResourceMetadata:
    """The metadata document, answered at its two paths."""

    def __init__(self, config: ResourceServerAuth) -> None:
        self.body = json.dumps(config.metadata()).encode()
        suffix = urlsplit(config.audience).path.rstrip("/")
        self.paths = frozenset({WELL_KNOWN, WELL_KNOWN + suffix})

    async def serve(self, method: str, send: Send) -> None:
        if method not in ("GET", "HEAD"):
            await plain(send, 405, b"GET the metadata")
            return
        headers = [(b"access-control-allow-origin", b"*"), (b"cache-control", b"max-age=3600")]
        await send_json(send, 200, self.body if method == "GET" else b"", headers)


@runtime_checkable
class ScopedEndpoint(Protocol):
    """A server that can say which scopes a request needs beyond the server-wide ones (per-tool
    scopes): a protected app refuses it with 403 ``insufficient_scope`` before it is handled."""

    def required_scopes(self, method: str, params: dict[str, Any]) -> Sequence[str]: ...


class AuthGate:
    """Admits a request or answers it (see the module docstring)."""

    def __init__(self, config: ResourceServerAuth, verifier: TokenVerifier | None = None) -> None:
        self.config = config
        self.verifier = verifier if verifier is not None else build_verifier(config)
        self.dpop = build_dpop(config)
        settings = config.dpop_settings
        self.dpop_required = settings is not None and settings.required
        self.required_scopes = tuple(config.required_scopes)
        self.metadata = metadata_url(config.audience)
        audience = urlsplit(config.audience)
        self._public_origin = (audience.scheme, audience.netloc)

    async def admit(self, scope: Scope, headers: dict[str, str], send: Send) -> tuple[AuthInfo, Send] | None:
        """The caller's identity and the *send* to answer with, or ``None`` once refused."""
        try:
            info, nonce = await self._check(scope, headers)
        except AuthError as exc:
            await self.refuse(send, exc)
            return None
        except AuthUnavailable as exc:
            retry = str(max(1, math.ceil(exc.retry_after))).encode()
            await error(
                send, 503, None, SERVER_BUSY, f"Service unavailable: {exc}", [(b"retry-after", retry)]
            )
            return None
        if nonce is not None:
            send = _with_header(send, (b"dpop-nonce", nonce.encode()))
        return info, send

    async def _check(self, scope: Scope, headers: dict[str, str]) -> tuple[AuthInfo, str | None]:
        raw = [v for k, v in scope["headers"] if k.lower() == b"authorization"]
        if len(raw) > 1:
            raise AuthError("more than one Authorization header", error="invalid_request")
        query = scope.get("query_string", b"").split(b"&")
        if any(part.split(b"=", 1)[0] == b"access_token" for part in query):
            raise AuthError("tokens are accepted in the Authorization header only", error="invalid_request")
        scheme, _, token = headers.get("authorization", "").partition(" ")
        scheme, token = scheme.lower(), token.strip(" ")
        if scheme not in ("bearer", "dpop") or (scheme == "dpop" and self.dpop is None):
            raise _Missing("no access token")
        if not token or any(c.isspace() for c in token):
            raise AuthError("the Authorization header is malformed")
        if scheme == "bearer" and self.dpop_required:
            raise AuthError("this server accepts DPoP-bound tokens only (Authorization: DPoP)")
        info = await self.verifier.verify(token)
        nonce: str | None = None
        if scheme == "bearer":
            if info.jkt is not None:
                # RFC 9449 §7.1: a DPoP-bound token must come with its proof, never as a bearer token.
                raise AuthError("this token is bound to a DPoP key: send it with Authorization: DPoP")
        else:
            assert self.dpop is not None
            proofs = [v for k, v in scope["headers"] if k.lower() == b"dpop"]
            if len(proofs) != 1:
                raise DPoPError("exactly one DPoP header is required")
            self.dpop.check(
                proofs[0].decode("latin-1"), scope["method"], self._urls(scope, headers), token, info.jkt
            )
            nonce = self.dpop.nonces.current() if self.dpop.nonces is not None else None
        if self.config.scope_implies:
            info = dataclasses.replace(info, scopes=self.config.expand_scopes(info.scopes))
        missing = [s for s in self.required_scopes if s not in info.scopes]
        if missing:
            raise InsufficientScope(self.required_scopes)
        return info, nonce

    def _urls(self, scope: Scope, headers: dict[str, str]) -> list[str]:
        """The URLs a DPoP proof's ``htu`` may name: the one this request was sent to as the server
        sees it, and the same path under the canonical URI's origin (behind a proxy the client
        speaks to the public name, which only the configuration knows).

        Mounted under a prefix, the ASGI ``path`` already carries ``root_path`` (the ASGI spec;
        Starlette's ``Mount``, uvicorn's ``--root-path``); only an older server leaves it out."""
        root, path = scope.get("root_path", ""), scope["path"]
        if root and not path.startswith(root):
            path = root + path
        here = f"{scope.get('scheme', 'http')}://{headers.get('host', '')}{path}"
        return [here, urlunsplit((*self._public_origin, path, "", ""))]

    async def refuse_scopes(self, server: object, message: Any, auth: AuthInfo, send: Send) -> bool:
        """403 ``insufficient_scope`` (and ``True``) if a request in *message* (a decoded POST body)
        needs scopes *auth* lacks, as *server* says (per-tool scopes). Every scope the message
        needs is named at once, with the server-wide ones: the spec asks for one challenge."""
        if not isinstance(server, ScopedEndpoint):
            return False
        batch = isinstance(message, list)
        requests = [m for m in (message if batch else [message]) if isinstance(m, jsonrpc.Request)]
        needed: list[str] = []
        for request in requests:
            params = request.params if isinstance(request.params, dict) else {}
            needed += [s for s in server.required_scopes(request.method, params) if s not in needed]
        if not needed or auth.has_scopes(needed):
            return False
        every = [*self.required_scopes, *(s for s in needed if s not in self.required_scopes)]
        await self.refuse(send, InsufficientScope(every), None if batch else requests[0].id)
        return True

    def challenges(self, exc: AuthError | None = None, scopes: Iterable[str] | None = None) -> list[bytes]:
        """``WWW-Authenticate`` values: Bearer (unless DPoP is required) and DPoP (when accepted)."""
        needed = " ".join(scopes if scopes is not None else self.required_scopes)
        params: list[tuple[str, str]] = []
        if exc is not None and not isinstance(exc, _Missing):
            params.append(("error", exc.error))
            params.append(("error_description", exc.description))
        if needed:
            params.append(("scope", needed))
        params.append(("resource_metadata", self.metadata))
        values: list[bytes] = []
        dpop_error = isinstance(exc, DPoPError)
        if not self.dpop_required and not dpop_error:
            values.append(_challenge("Bearer", params))
        if self.dpop is not None:
            dpop_params = params if dpop_error or self.dpop_required else _no_error(params)
            values.append(_challenge("DPoP", [*dpop_params, ("algs", " ".join(self.dpop.algorithms))]))
        return values

    async def refuse(
        self, send: Send, exc: AuthError, request_id: Any = None, scopes: Iterable[str] | None = None
    ) -> None:
        """Answer *exc*: its status, the challenges, a JSON-RPC error body."""
        if isinstance(exc, InsufficientScope):
            scopes = exc.scopes
        headers = [(b"www-authenticate", value) for value in self.challenges(exc, scopes)]
        nonce = exc.nonce if isinstance(exc, DPoPError) else None
        if nonce:
            headers.append((b"dpop-nonce", nonce.encode()))
        status = 400 if exc.error == "invalid_request" else exc.status
        label = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden"}[status]
        data = {"error": exc.error, "error_description": exc.description}
        await error(send, status, request_id, INVALID_REQUEST, f"{label}: {exc.description}", headers, data)


def owner_of(info: AuthInfo | None) -> str | None:
    """Whom a handshake-era session belongs to: the token's issuer and subject (its client, for a
    token that names no subject); ``None`` on an unprotected endpoint."""
    if info is None:
        return None
    who = f"sub:{info.subject}" if info.subject is not None else f"client:{info.client_id}"
    return f"{info.issuer} {who}"


class _Missing(AuthError):
    """No credentials at all: RFC 6750 §3.1 says the challenge then carries no error code."""


def _no_error(params: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in params if k not in ("error", "error_description")]


def _challenge(scheme: str, params: list[tuple[str, str]]) -> bytes:
    quoted = ", ".join(f'{k}="{_quote(v)}"' for k, v in params)
    return f"{scheme} {quoted}".encode("latin-1", "replace")


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _with_header(send: Send, header: tuple[bytes, bytes]) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", ()), header]
        await send(message)

    return sending
