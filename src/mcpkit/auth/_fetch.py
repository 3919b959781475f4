"""Reading JSON documents from an authorization server: its metadata (RFC 8414 / OpenID Connect
Discovery) and its keys. httpx is imported here only, when a verifier first needs the network."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    import httpx

__all__ = ["MAX_DOCUMENT", "FetchError", "discover", "get_json", "metadata_urls", "new_client"]

#: A metadata document or key set larger than this is refused (a misbehaving or hostile endpoint
#: must not make the server buffer without bound).
MAX_DOCUMENT: Final = 1024 * 1024


class FetchError(Exception):
    """A document could not be fetched or is not what it should be."""


def new_client(timeout: float) -> httpx.AsyncClient:
    import httpx

    # No redirects: the URLs come from configuration or from the issuer's own metadata.
    return httpx.AsyncClient(timeout=timeout, follow_redirects=False, headers={"accept": "application/json"})


async def get_json(client: httpx.AsyncClient, url: str) -> dict[str, Any]:
    """GET *url* and return its JSON object (at most :data:`MAX_DOCUMENT` bytes)."""
    import httpx

    try:
        async with client.stream("GET", url) as response:
            if response.status_code != 200:
                raise FetchError(f"{url} answered {response.status_code}")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_DOCUMENT:
                    raise FetchError(f"{url} sent more than {MAX_DOCUMENT} bytes")
    except httpx.HTTPError as exc:
        raise FetchError(f"{url}: {type(exc).__name__}: {exc}") from None
    try:
        document = json.loads(body)
    except ValueError:
        raise FetchError(f"{url} did not send JSON") from None
    if not isinstance(document, dict):
        raise FetchError(f"{url} did not send a JSON object")
    return document


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in the order the MCP spec gives (RFC 8414 path insertion,
    then OpenID Connect Discovery inserted and appended)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(p: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, p, "", ""))

    if not path:
        return [at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")]
    return [
        at(f"/.well-known/oauth-authorization-server{path}"),
        at(f"/.well-known/openid-configuration{path}"),
        at(f"{path}/.well-known/openid-configuration"),
    ]


async def discover(client: httpx.AsyncClient, issuer: str) -> dict[str, Any]:
    """The issuer's metadata; its ``issuer`` must be *issuer* exactly (RFC 8414 §3.3), or a
    document served there could name another issuer's keys."""
    failures: list[str] = []
    for url in metadata_urls(issuer):
        try:
            document = await get_json(client, url)
        except FetchError as exc:
            failures.append(str(exc))
            continue
        if document.get("issuer") != issuer:
            raise FetchError(f"{url} names issuer {document.get('issuer')!r}, not {issuer!r}")
        return document
    raise FetchError("no authorization server metadata: " + "; ".join(failures))
