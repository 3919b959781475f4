"""Who the client is at an authorization server, in the order the spec gives: pre-registered
credentials, a Client ID Metadata Document, a registration made earlier with that same server (from
the store), a new dynamic registration. Registrations are kept per issuer and never presented to
another server ("Authorization Server Binding")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from .credentials import ClientIdentity
from .discovery import AuthServer, same_issuer
from .flow import register, same_redirect
from .store import TokenStore

__all__ = ["client_metadata_document", "metadata_document", "preregistered", "registered"]


def client_metadata_document(
    url: str,
    *,
    client_name: str = "mcpkit",
    redirect_uris: Sequence[str] = ("http://127.0.0.1/callback", "http://localhost/callback"),
    jwks: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The JSON to serve at *url* for ``OAuth(client_metadata_url=url)``: a Client ID Metadata
    Document whose ``client_id`` is its own URL (which must be HTTPS, with a path). With *jwks* (the
    public keys of ``private_key``) the client authenticates with ``private_key_jwt``; without, it is
    a public client. Loopback redirect URIs match any port (RFC 8252)."""
    parts = urlsplit(url)
    if parts.scheme != "https" or parts.path in ("", "/"):
        raise ValueError(f"a client id metadata document URL must be https with a path, not {url!r}")
    document: dict[str, Any] = {
        "client_id": url,
        "client_name": client_name,
        "redirect_uris": list(redirect_uris),
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "private_key_jwt" if jwks else "none",
    }
    if jwks:
        document["jwks"] = jwks
    return {**document, **extra}


def preregistered(
    server: AuthServer,
    client_id: str | None,
    client_secret: str | None,
    private_key: str | None,
    signing_alg: str,
    issuer: str | None,
) -> ClientIdentity | None:
    """The given credentials, unless they are bound to another issuer than *server*'s."""
    if client_id is None or (issuer is not None and not same_issuer(server.issuer, issuer)):
        return None
    return ClientIdentity(client_id, client_secret, None, private_key, signing_alg)


def metadata_document(
    server: AuthServer, url: str | None, private_key: str | None, signing_alg: str
) -> ClientIdentity | None:
    """The client id metadata document URL as the client id, where the server supports it."""
    if not url or server.raw.get("client_id_metadata_document_supported") is not True:
        return None
    return ClientIdentity(url, None, "private_key_jwt" if private_key else "none", private_key, signing_alg)


async def registered(
    http: httpx.AsyncClient, store: TokenStore, server: AuthServer, redirect_uri: str | None, client_name: str
) -> ClientIdentity | None:
    """A registration with *server*: the stored one (if it serves *redirect_uri*), else a new one
    (kept for next time); with no *redirect_uri* (a refresh) only a stored one."""
    key = f"client {server.issuer}"
    stored = await store.get(key)
    if stored and isinstance(stored.get("client_id"), str):
        uris = stored.get("redirect_uris", [])
        if redirect_uri is None or any(same_redirect(uri, redirect_uri) for uri in uris):
            return ClientIdentity(stored["client_id"], stored.get("client_secret"), stored.get("auth_method"))
    if redirect_uri is None:
        return None
    identity = await register(http, server, redirect_uri=redirect_uri, client_name=client_name)
    await store.set(key, {**identity.to_json(), "redirect_uris": [redirect_uri], "issuer": server.issuer})
    return identity
