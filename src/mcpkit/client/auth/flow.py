"""The authorization code grant's pieces: PKCE (RFC 7636, S256 only), the authorization URL, the
checks on what comes back (``state``, and ``iss`` by RFC 9207 as the 2026-07-28 table says), and
dynamic client registration (RFC 7591)."""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx

from .credentials import ClientIdentity
from .discovery import AuthServer
from .documents import fetch_document
from .errors import OAuthError

__all__ = ["authorization_url", "check_response", "pkce_pair", "register", "registration_method"]

_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


def pkce_pair() -> tuple[str, str]:
    """(code verifier, S256 code challenge): 64 random URL-safe characters and their hash."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=")
    return verifier, challenge.decode()


def authorization_url(
    server: AuthServer,
    *,
    client_id: str,
    redirect_uri: str,
    code_challenge: str,
    state: str,
    scope: str | None,
    resource: str,
) -> str:
    assert server.authorization_endpoint is not None
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": code_challenge,
        "code_challenge_method": "S256",
        "state": state,
        "resource": resource,  # RFC 8707: "MUST be included in both authorization requests and token requests"
    }
    if scope:
        params["scope"] = scope
    separator = "&" if urlsplit(server.authorization_endpoint).query else "?"
    return server.authorization_endpoint + separator + urlencode(params)


def _response_params(answer: str) -> dict[str, list[str]]:
    """The parameters of the redirect (its query), or a bare code pasted by a user."""
    text = answer.strip()
    if "=" not in text:
        return {"code": [text]}
    query = urlsplit(text).query if "://" in text or text.startswith(("/", "?")) else text
    found: dict[str, list[str]] = {}
    for name, value in parse_qsl(query.lstrip("?"), keep_blank_values=True):
        found.setdefault(name, []).append(value)
    return found


def check_response(answer: str, *, state: str, server: AuthServer) -> str:
    """The authorization code in *answer*, once the response is found to be the one this client is
    waiting for from this authorization server.

    RFC 9207 as the 2026-07-28 revision applies it: a present ``iss`` is compared to the recorded
    issuer by simple string comparison, advertised or not; an absent one is refused only when the
    metadata advertised ``authorization_response_iss_parameter_supported``. Nothing of an error
    response is shown before that check passes.

    Raises:
        OAuthError: a mix-up (``iss``), a forged or stale response (``state``), or the server's error.
    """
    params = _response_params(answer)
    for name in ("code", "state", "iss", "error"):
        if len(params.get(name, [])) > 1:
            raise OAuthError(f"the authorization response repeats {name!r}", error="invalid_response")
    got = {name: values[0] for name, values in params.items()}
    if "iss" in got:
        if server.discovered and got["iss"] != server.issuer:
            raise OAuthError(
                f"the authorization response comes from issuer {got['iss']!r}, not {server.issuer!r}",
                error="iss_mismatch",
            )
    elif server.raw.get("authorization_response_iss_parameter_supported") is True:
        raise OAuthError(
            "the authorization server advertises the iss parameter but its response has none",
            error="iss_missing",
        )
    # No state at all is accepted only from a user who pasted the bare code.
    if got.get("state", state) != state or ("state" not in got and set(got) != {"code"}):
        raise OAuthError("the authorization response's state is not this request's", error="state_mismatch")
    if "error" in got:
        detail = got.get("error_description", "")
        raise OAuthError(f"authorization refused: {got['error']} {detail}".strip(), error=got["error"])
    code = got.get("code")
    if not code:
        raise OAuthError("the authorization response has no code", error="invalid_response")
    return code


def registration_method(server: AuthServer) -> str:
    """The token endpoint authentication method to register: a public client when the server
    allows it (a native client cannot keep a secret), else a secret it accepts."""
    supported = server.raw.get("token_endpoint_auth_methods_supported")
    if not isinstance(supported, list) or not supported or "none" in supported:
        return "none"
    for method in ("client_secret_basic", "client_secret_post"):
        if method in supported:
            return method
    return str(supported[0])


def application_type(redirect_uri: str) -> str:
    """ "native" for loopback and custom-scheme redirects (CLIs, desktop apps), else "web"."""
    parts = urlsplit(redirect_uri)
    if parts.scheme not in ("http", "https") or (parts.hostname or "") in _LOOPBACK:
        return "native"
    return "web"


def same_redirect(registered: str, wanted: str) -> bool:
    """Whether a registration for *registered* serves *wanted*: equal, or both loopback addresses that
    differ only in port (RFC 8252 section 7.3: the server allows any port there)."""
    if registered == wanted:
        return True
    a, b = urlsplit(registered), urlsplit(wanted)
    return (a.hostname or "") in _LOOPBACK and (a.scheme, a.hostname, a.path) == (
        b.scheme,
        b.hostname,
        b.path,
    )


async def register(
    http: httpx.AsyncClient,
    server: AuthServer,
    *,
    redirect_uri: str,
    client_name: str,
    app_type: str | None = None,
    extra: dict[str, Any] | None = None,
) -> ClientIdentity:
    """Dynamic client registration (RFC 7591) at *server*.

    Raises:
        OAuthError: no registration endpoint, or the server refused (an OIDC server may reject a
            redirect URI that does not fit the ``application_type``).
    """
    if server.registration_endpoint is None:
        raise OAuthError(f"{server.issuer} offers no dynamic client registration: give a client_id")
    method = registration_method(server)
    body: dict[str, Any] = {
        "client_name": client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],  # SEP-2207: say refresh tokens are wanted
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "application_type": app_type or application_type(redirect_uri),
        **(extra or {}),
    }
    try:
        reply = await fetch_document(
            http,
            "POST",
            server.registration_endpoint,
            what="client registration answer",
            json=body,
            headers={"Accept": "application/json"},
        )
    except OAuthError:
        raise
    except httpx.HTTPError as exc:
        raise OAuthError(f"client registration at {server.registration_endpoint} failed: {exc}") from exc
    answer = reply.json
    if reply.status_code not in (200, 201) or not isinstance(answer, dict) or "client_id" not in answer:
        detail = answer.get("error_description") or answer.get("error") if isinstance(answer, dict) else None
        raise OAuthError(
            f"client registration at {server.registration_endpoint} refused ({reply.status_code}): "
            f"{detail or reply.text[:200]}",
            error=answer.get("error") if isinstance(answer, dict) else None,
        )
    secret = answer.get("client_secret") if isinstance(answer.get("client_secret"), str) else None
    registered = answer.get("token_endpoint_auth_method")
    return ClientIdentity(
        client_id=str(answer["client_id"]),
        client_secret=secret,
        auth_method=registered if isinstance(registered, str) else (None if secret else "none"),
    )
