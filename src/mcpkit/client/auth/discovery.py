"""Finding the authorization server: the 401's challenge, Protected Resource Metadata (RFC 9728) and
authorization server metadata (RFC 8414 and OpenID Connect Discovery), with the 2025-03-26 fallbacks.

Order, as the 2025-11-25 and 2026-07-28 revisions give it:

1. the ``resource_metadata`` URL of the ``WWW-Authenticate`` challenge, else the well-known URL with
   the MCP endpoint's path appended, then the root one;
2. for an issuer with a path, ``/.well-known/oauth-authorization-server/<path>``, then
   ``/.well-known/openid-configuration/<path>``, then ``<path>/.well-known/openid-configuration``;
   without a path, the first two at the root;
3. no Protected Resource Metadata at all is a 2025-03-26 server: its "authorization base URL" is the
   MCP URL without its path, whose metadata is tried the same way, and without metadata the default
   endpoints ``/authorize``, ``/token`` and ``/register`` are used.

A metadata document counts only if its ``issuer`` is the issuer the URL was built from ("If they
differ, the client MUST NOT use the metadata"), and Protected Resource Metadata only if its
``resource`` identifies the server the client is talking to.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import httpx

from .documents import fetch_document
from .errors import OAuthError

__all__ = [
    "AuthServer",
    "Challenge",
    "Context",
    "ProtectedResource",
    "as_metadata_urls",
    "discover",
    "fetch_as_metadata",
    "fetch_protected_resource",
    "parse_challenge",
    "prm_urls",
    "require_secure",
    "resource_allowed",
    "secure",
]

_PARAM: Final = re.compile(r'([A-Za-z0-9_.-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]+)')
_SCHEME: Final = re.compile(r"(?:^|,)\s*([A-Za-z][A-Za-z0-9_.-]*)(?=\s+[A-Za-z0-9_.-]+\s*=|\s*$|\s*,)")


@dataclass(frozen=True, slots=True)
class Challenge:
    """What a ``WWW-Authenticate`` header says (RFC 6750 section 3, RFC 9728 section 5.1)."""

    scheme: str = ""
    error: str | None = None
    scope: str | None = None
    resource_metadata: str | None = None
    error_description: str | None = None

    @property
    def scopes(self) -> list[str]:
        return self.scope.split() if self.scope else []


def parse_challenge(headers: httpx.Headers) -> Challenge:
    """The challenge of a 401 or 403; parameters of every challenge in the header(s) count, the first
    occurrence of each winning (a server that offers ``Bearer`` and ``DPoP`` says the same in both)."""
    values = headers.get_list("www-authenticate")
    if not values:
        return Challenge()
    text = ", ".join(values)
    scheme_match = _SCHEME.search(text)
    params: dict[str, str] = {}
    for name, raw in _PARAM.findall(text):
        value = raw[1:-1].replace('\\"', '"').replace("\\\\", "\\") if raw.startswith('"') else raw
        params.setdefault(name.lower(), value)
    return Challenge(
        scheme=scheme_match.group(1) if scheme_match else "",
        error=params.get("error"),
        scope=params.get("scope"),
        resource_metadata=params.get("resource_metadata"),
        error_description=params.get("error_description"),
    )


@dataclass(frozen=True, slots=True)
class ProtectedResource:
    """Protected Resource Metadata: who protects the server, and with which scopes."""

    resource: str
    authorization_servers: list[str]
    scopes_supported: list[str] | None = None
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AuthServer:
    """An authorization server's metadata, validated; ``discovered`` is false for the 2025-03-26
    default endpoints (nothing was published, so there is no issuer to check ``iss`` against)."""

    issuer: str
    authorization_endpoint: str | None
    token_endpoint: str
    registration_endpoint: str | None
    raw: dict[str, Any]
    discovered: bool = True

    def supports(self, key: str, value: str) -> bool:
        listed = self.raw.get(key)
        return isinstance(listed, list) and value in listed

    @property
    def scopes_supported(self) -> list[str] | None:
        scopes = self.raw.get("scopes_supported")
        return [s for s in scopes if isinstance(s, str)] if isinstance(scopes, list) else None

    @classmethod
    def defaults(cls, base: str) -> AuthServer:
        """2025-03-26, "Fallbacks for Servers without Metadata Discovery": the default paths."""
        return cls(
            issuer=base,
            authorization_endpoint=f"{base}/authorize",
            token_endpoint=f"{base}/token",
            registration_endpoint=f"{base}/register",
            raw={},
            discovered=False,
        )


def _split(url: str) -> tuple[str, str]:
    """(origin, path without its trailing slash) of *url*, query and fragment dropped."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")


def origin_of(url: str) -> str:
    return _split(url)[0]


def secure(url: str) -> bool:
    """HTTPS, or plain HTTP to this machine: "All authorization server endpoints MUST be served over
    HTTPS", and a loopback address never leaves the host."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return True
    host = (parts.hostname or "").lower()
    if parts.scheme != "http":
        return False
    if host == "localhost":
        return True
    try:  # an address, not a name that starts like one (127.0.0.1.example.com)
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def prm_urls(server_url: str) -> list[str]:
    """The well-known Protected Resource Metadata URLs to try, path-suffixed first."""
    origin, path = _split(server_url)
    root = f"{origin}/.well-known/oauth-protected-resource"
    return [f"{root}{path}", root] if path else [root]


def as_metadata_urls(issuer: str) -> list[str]:
    """The metadata URLs of an issuer, in the order the spec gives."""
    origin, path = _split(issuer)
    if not path:
        return [
            f"{origin}/.well-known/oauth-authorization-server",
            f"{origin}/.well-known/openid-configuration",
        ]
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


def canonical_resource(server_url: str) -> str:
    """The canonical URI of an MCP server (RFC 8707): no fragment, no query, lowercase scheme and host,
    no trailing slash unless the path is only one."""
    parts = urlsplit(server_url)
    path = parts.path.rstrip("/") if parts.path not in ("", "/") else ""
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, "", ""))


def resource_allowed(published: str, server_url: str) -> bool:
    """Whether Protected Resource Metadata naming *published* may speak for *server_url*: the same
    origin, and a path that is the server's own or a parent of it at a segment boundary (the root
    document of ``https://h/mcp`` names ``https://h``)."""
    if urlsplit(published).fragment:
        return False
    theirs, ours = canonical_resource(published), canonical_resource(server_url)
    if origin_of(theirs) != origin_of(ours):
        return False
    their_path, our_path = _split(theirs)[1], _split(ours)[1]
    return our_path == their_path or our_path.startswith(their_path + "/")


async def _get_json(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], what: str
) -> dict[str, Any] | None:
    """The JSON object at *url*, or ``None`` if there is none (a failure, another status, not an
    object). Raises :class:`OAuthError` for one larger than
    :data:`~.documents.MAX_DOCUMENT_BYTES`."""
    try:
        reply = await fetch_document(
            http, "GET", url, what=what, headers={"Accept": "application/json", **headers}
        )
    except OAuthError:
        raise
    except httpx.HTTPError:
        return None
    if reply.status_code != 200:
        return None
    return reply.json if isinstance(reply.json, dict) else None


def require_secure(url: str, what: str) -> None:
    """Refuse *url* unless :func:`secure`: tokens, codes and the metadata that names where they go
    must not cross the network in clear."""
    if not secure(url):
        raise OAuthError(
            f"{what} {url} is not HTTPS: it must be (plain HTTP only to this machine)",
            error="insecure_endpoint",
        )


def _version_header(version: str | None) -> dict[str, str]:
    # 2025-03-26: "clients SHOULD include the header MCP-Protocol-Version" in metadata discovery.
    return {"MCP-Protocol-Version": version} if version else {}


async def fetch_protected_resource(
    http: httpx.AsyncClient, server_url: str, challenge: Challenge, version: str | None
) -> ProtectedResource | None:
    """The server's Protected Resource Metadata, or ``None`` if it publishes none (a 2025-03-26
    server).

    Raises:
        OAuthError: the document names another resource than this server.
    """
    candidates = [challenge.resource_metadata] if challenge.resource_metadata else []
    candidates += [url for url in prm_urls(server_url) if url not in candidates]
    for url in candidates:
        body = await _get_json(http, url, _version_header(version), "protected resource metadata")
        if body is None:
            continue
        resource, servers = body.get("resource"), body.get("authorization_servers")
        if not isinstance(resource, str) or not isinstance(servers, list) or not servers:
            continue
        if not resource_allowed(resource, server_url):
            raise OAuthError(
                f"the protected resource metadata at {url} is for {resource!r}, not for {server_url}",
                error="resource_mismatch",
            )
        scopes = body.get("scopes_supported")
        return ProtectedResource(
            resource=resource,
            authorization_servers=[s for s in servers if isinstance(s, str)],
            scopes_supported=[s for s in scopes if isinstance(s, str)] if isinstance(scopes, list) else None,
            raw=body,
        )
    return None


def same_issuer(published: Any, expected: str) -> bool:
    """RFC 8414 section 3.3: the metadata's ``issuer`` is the one the URL was built from. A trailing
    ``/`` on the expected one is forgiven (``https://as/`` and ``https://as`` build the same URLs);
    anything else must be identical."""
    return isinstance(published, str) and published in (expected, expected.rstrip("/"))


#: The URLs an authorization server's metadata gives that the client may send to or be sent to:
#: each must be HTTPS, as the issuer itself must ("All authorization server endpoints MUST be served
#: over HTTPS").
_ENDPOINTS: Final = (
    "token_endpoint",
    "authorization_endpoint",
    "registration_endpoint",
    "jwks_uri",
    "revocation_endpoint",
    "introspection_endpoint",
    "userinfo_endpoint",
    "device_authorization_endpoint",
    "pushed_authorization_request_endpoint",
    "end_session_endpoint",
)


async def fetch_as_metadata(http: httpx.AsyncClient, issuer: str, version: str | None) -> AuthServer | None:
    """The validated metadata of *issuer*, or ``None`` if none of its well-known URLs serves any.

    Raises:
        OAuthError: *issuer* or an endpoint its document gives is not HTTPS (off loopback); a
            document was found whose ``issuer`` is another's (a mix-up or a poisoned document), or
            that lacks the token endpoint, or is larger than :data:`~.documents.MAX_DOCUMENT_BYTES`.
    """
    # The issuer too, not only the endpoints its metadata gives: a document fetched in clear could
    # name any endpoints it likes (the issuer check of RFC 8414 section 3.3 would pass).
    require_secure(issuer, "the authorization server")
    for url in as_metadata_urls(issuer):
        body = await _get_json(http, url, _version_header(version), "authorization server metadata")
        if body is None:
            continue
        if not same_issuer(body.get("issuer"), issuer):
            raise OAuthError(
                f"the authorization server metadata at {url} names issuer {body.get('issuer')!r}, "
                f"not {issuer!r}: refusing to use it",
                error="issuer_mismatch",
            )
        token_endpoint = body.get("token_endpoint")
        if not isinstance(token_endpoint, str):
            raise OAuthError(f"the authorization server metadata at {url} has no token_endpoint")
        authorize, register = body.get("authorization_endpoint"), body.get("registration_endpoint")
        for name in _ENDPOINTS:
            if isinstance(body.get(name), str):
                require_secure(body[name], f"the {name}")
        return AuthServer(
            issuer=body["issuer"],
            authorization_endpoint=authorize if isinstance(authorize, str) else None,
            token_endpoint=token_endpoint,
            registration_endpoint=register if isinstance(register, str) else None,
            raw=body,
        )
    return None


@dataclass(frozen=True, slots=True)
class Context:
    """What discovery found for one MCP server: its resource identifier (the ``resource`` parameter
    to send), its authorization server, and its Protected Resource Metadata if it publishes any."""

    resource: str
    server: AuthServer
    prm: ProtectedResource | None


async def discover(
    http: httpx.AsyncClient, server_url: str, challenge: Challenge, version: str | None, issuer: str | None
) -> Context:
    """The whole discovery for *server_url*, preferring the authorization server *issuer* if the
    resource lists it (else its first).

    Raises:
        OAuthError: metadata that speaks for another resource or issuer, or none where it must be.
    """
    prm = await fetch_protected_resource(http, server_url, challenge, version)
    if prm is None:  # 2025-03-26: the authorization base URL is the MCP URL without its path
        base = origin_of(server_url)
        server = await fetch_as_metadata(http, base, version) or AuthServer.defaults(base)
        return Context(server_url, server, None)
    servers = prm.authorization_servers
    chosen = next((s for s in servers if issuer and same_issuer(s, issuer)), servers[0])
    found = await fetch_as_metadata(http, chosen, version)
    if found is None:
        raise OAuthError(f"the authorization server {chosen} publishes no metadata")
    return Context(prm.resource, found, prm)
