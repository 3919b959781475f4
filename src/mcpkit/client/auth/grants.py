"""Tokens, and the grants that obtain them at the token endpoint.

Besides the authorization code grant (a user in a browser, :mod:`.flow`), a client can act without
one:

* :class:`ClientCredentials`: the client on its own behalf (OAuth 2.1 section 4.2), authenticated by a
  secret or a private-key JWT (the ``oauth-client-credentials`` extension);
* :class:`JWTBearer`: a JWT issued by someone the authorization server trusts, as the grant (RFC 7523
  section 2.1): a workload's identity token (workload identity federation);
* :class:`IdentityAssertion`: enterprise-managed authorization: the user's ID token is exchanged at
  their identity provider for an identity assertion JWT authorization grant (ID-JAG, by RFC 8693
  token exchange), which the MCP server's authorization server takes as a JWT bearer grant.

Errors of these grants are final: "surface errors ... without retrying or switching grant types".
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

import httpx

from .credentials import ClientIdentity, DPoPKey, apply_client_auth
from .discovery import AuthServer, origin_of
from .documents import Document, fetch_document
from .errors import OAuthError

__all__ = ["ClientCredentials", "Grant", "IdentityAssertion", "JWTBearer", "Tokens", "token_request"]

JWT_BEARER: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE: Final = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN: Final = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG: Final = "urn:ietf:params:oauth:token-type:id-jag"

#: A value given as is, or ``async fn(audience) -> value`` to mint it when needed.
Source = str | Callable[[str], Awaitable[str]]


async def _resolve(source: Source, audience: str) -> str:
    return source if isinstance(source, str) else await source(audience)


@dataclass(slots=True)
class Tokens:
    """What a token endpoint granted, and for whom."""

    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    expires_at: float | None = None
    scope: str | None = None
    issuer: str | None = None
    #: The DPoP key's thumbprint when the token is bound to it.
    dpop_jkt: str | None = None

    def expired(self, skew: float = 30.0) -> bool:
        return self.expires_at is not None and time.time() + skew >= self.expires_at

    @property
    def is_dpop(self) -> bool:
        return self.token_type.lower() == "dpop"

    def to_json(self) -> dict[str, Any]:
        return {
            "access_token": self.access_token,
            "token_type": self.token_type,
            "refresh_token": self.refresh_token,
            "expires_at": self.expires_at,
            "scope": self.scope,
            "issuer": self.issuer,
            "dpop_jkt": self.dpop_jkt,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Tokens | None:
        if not isinstance(data.get("access_token"), str):
            return None
        return cls(**{k: data.get(k) for k in cls.__slots__ if k in data})  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class ClientCredentials:
    """The client credentials grant: no user, the client's own credentials (give ``client_secret`` or
    ``private_key`` to :class:`~mcpkit.client.auth.OAuth`)."""


@dataclass(frozen=True, slots=True)
class JWTBearer:
    """The JWT bearer grant with *assertion* (a string, or ``async fn(audience) -> JWT`` where the
    audience is the authorization server's issuer)."""

    assertion: Source


@dataclass(frozen=True, slots=True)
class IdentityAssertion:
    """Enterprise-managed authorization: exchange *id_token* at the identity provider's
    *idp_token_endpoint* for an ID-JAG naming this MCP server, then present it to the server's
    authorization server as a JWT bearer grant (with the client's credentials there)."""

    id_token: Source
    idp_token_endpoint: str
    idp_client_id: str | None = None
    idp_client_secret: str | None = None
    extra: dict[str, str] = field(default_factory=dict)


Grant = ClientCredentials | JWTBearer | IdentityAssertion


async def token_request(
    http: httpx.AsyncClient,
    server: AuthServer,
    data: dict[str, str],
    *,
    identity: ClientIdentity | None,
    method: str,
    dpop: DPoPKey | None = None,
    nonces: dict[str, str] | None = None,
) -> Tokens:
    """POST *data* to the token endpoint, authenticated as *identity* by *method*, with a DPoP proof
    when *dpop* is given (retried once with the server's nonce on ``use_dpop_nonce``, RFC 9449
    section 8).

    Raises:
        OAuthError: the server refused, or answered something that is not a token response.
    """
    nonces = nonces if nonces is not None else {}
    where = origin_of(server.token_endpoint)
    reply: Document | None = None
    body: dict[str, Any] = {}
    for attempt in (1, 2):
        form, headers = dict(data), {"Accept": "application/json"}
        if identity is not None:  # a fresh client assertion per attempt: a jti is used once
            apply_client_auth(method, identity, form, headers, server.issuer)
        if dpop is not None:
            headers["DPoP"] = dpop.proof("POST", server.token_endpoint, nonce=nonces.get(where))
        try:
            reply = await fetch_document(
                http, "POST", server.token_endpoint, what="token endpoint answer", data=form, headers=headers
            )
        except OAuthError:
            raise
        except httpx.HTTPError as exc:
            raise OAuthError(f"token request to {server.token_endpoint} failed: {exc}") from exc
        nonce = reply.headers.get("dpop-nonce")
        if dpop is not None and nonce:
            nonces[where] = nonce
        body = reply.json if isinstance(reply.json, dict) else {}
        if (
            reply.status_code == 400
            and body.get("error") == "use_dpop_nonce"
            and dpop
            and nonce
            and attempt == 1
        ):
            continue
        break
    assert reply is not None
    if reply.status_code != 200 or not isinstance(body.get("access_token"), str):
        error = body.get("error") if isinstance(body.get("error"), str) else None
        detail = body.get("error_description") or reply.text[:200]
        raise OAuthError(
            f"the token endpoint {server.token_endpoint} refused ({reply.status_code} {error or ''}): {detail}",
            error=error,
        )
    expires_in = body.get("expires_in")
    token_type = body["token_type"] if isinstance(body.get("token_type"), str) else "Bearer"
    tokens = Tokens(
        access_token=body["access_token"],
        token_type=token_type,
        refresh_token=body.get("refresh_token") if isinstance(body.get("refresh_token"), str) else None,
        expires_at=time.time() + expires_in if isinstance(expires_in, (int, float)) else None,
        scope=body.get("scope") if isinstance(body.get("scope"), str) else data.get("scope"),
        issuer=server.issuer,
    )
    if dpop is not None and tokens.is_dpop:
        tokens.dpop_jkt = dpop.thumbprint
    return tokens


async def exchange_for_id_jag(
    http: httpx.AsyncClient, grant: IdentityAssertion, *, audience: str, resource: str, scope: str | None
) -> str:
    """RFC 8693 token exchange at the identity provider: the user's ID token for an ID-JAG whose
    audience is the MCP server's authorization server and whose resource is the MCP server.

    Raises:
        OAuthError: the identity provider refused.
    """
    form = {
        "grant_type": TOKEN_EXCHANGE,
        "subject_token": await _resolve(grant.id_token, audience),
        "subject_token_type": ID_TOKEN,
        "requested_token_type": ID_JAG,
        "audience": audience,
        "resource": resource,
        **grant.extra,
    }
    if scope:
        form["scope"] = scope
    idp = AuthServer(
        issuer=origin_of(grant.idp_token_endpoint),
        authorization_endpoint=None,
        token_endpoint=grant.idp_token_endpoint,
        registration_endpoint=None,
        raw={},
    )
    identity = ClientIdentity(grant.idp_client_id, grant.idp_client_secret) if grant.idp_client_id else None
    method = "client_secret_basic" if grant.idp_client_secret else "none"
    tokens = await token_request(http, idp, form, identity=identity, method=method)
    return tokens.access_token  # RFC 8693 returns the issued token in access_token


async def jwt_bearer_form(
    http: httpx.AsyncClient,
    grant: JWTBearer | IdentityAssertion,
    *,
    issuer: str,
    resource: str,
    scope: str | None,
) -> dict[str, str]:
    """The token request form of a JWT bearer grant (for :class:`IdentityAssertion`, after the
    exchange that yields its assertion)."""
    if isinstance(grant, IdentityAssertion):
        assertion = await exchange_for_id_jag(http, grant, audience=issuer, resource=resource, scope=scope)
    else:
        assertion = await _resolve(grant.assertion, issuer)
    form = {"grant_type": JWT_BEARER, "assertion": assertion, "resource": resource}
    if scope:
        form["scope"] = scope
    return form
