"""Reading the authorization side's JSON documents, bounded: Protected Resource Metadata,
authorization server metadata, token and registration answers.

Each is read as it arrives and refused once past :data:`MAX_DOCUMENT_BYTES` (one with a larger
``Content-Length`` before a byte of it is read), so a hostile or broken server cannot make the
client buffer a 300 MB "metadata document" before anything in it is checked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

import httpx

from ..._errors import TransportError
from ...transports.http.client._bounded import ACCEPT_ENCODING, MessageTooLarge, read_body
from .errors import OAuthError

__all__ = ["MAX_DOCUMENT_BYTES", "Document", "fetch_document"]

#: The largest metadata document, token or registration answer read (the server's JWKS bound too).
MAX_DOCUMENT_BYTES: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Document:
    """An answer read whole: its status, headers, raw body, and the body as JSON (``None`` if it
    is not JSON)."""

    status_code: int
    headers: httpx.Headers
    body: bytes
    json: Any

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


async def fetch_document(
    http: httpx.AsyncClient, method: str, url: str, *, what: str, **request: Any
) -> Document:
    """*method* *url* (with httpx's *request* arguments), its answer read to at most
    :data:`MAX_DOCUMENT_BYTES`.

    Raises:
        OAuthError: the answer is larger (``error="document_too_large"``), naming *what* it was, or
            undecodable.
        httpx.HTTPError: the request failed.
    """
    headers = {"Accept-Encoding": ACCEPT_ENCODING, **request.pop("headers", {})}
    try:
        async with http.stream(method, url, headers=headers, **request) as reply:
            body = await read_body(reply, MAX_DOCUMENT_BYTES, f"the {what} at {url}")
    except MessageTooLarge as exc:
        raise OAuthError(str(exc), error="document_too_large") from exc
    except TransportError as exc:  # a body it cannot decode within the bound
        raise OAuthError(f"the {what} at {url}: {exc}") from exc
    try:
        document = json.loads(body)
    except ValueError:
        document = None
    return Document(reply.status_code, reply.headers, body, document)
