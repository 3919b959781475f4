"""The few ASGI moves every part of the HTTP transport makes: read a body, answer, stream events."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any, Final

from .... import _jsonrpc as jsonrpc
from ...._errors import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
)

__all__ = [
    "ON_DISCONNECT",
    "SSE_HEADERS",
    "STATUS_OF_CODE",
    "BodyRefused",
    "Message",
    "Receive",
    "Scope",
    "Send",
    "client_of",
    "end_body",
    "error",
    "event",
    "is_json",
    "on_disconnect",
    "path_of",
    "plain",
    "read_body",
    "request_headers",
    "send_body",
    "send_json",
    "wait_disconnect",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: The HTTP status of a JSON-RPC error where the transport gives errors statuses of their own
#: (2026-07-28 requests, and failures before a request reaches a session).
STATUS_OF_CODE: Final = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
    INTERNAL_ERROR: 500,
}
_JSON: Final = [(b"content-type", b"application/json")]
SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),  # "servers SHOULD include the X-Accel-Buffering: no header"
]


async def event(send: Send, data: bytes, event_id: str | None = None) -> None:
    """One SSE ``message`` event carrying *data* (one JSON-RPC message)."""
    head = b"event: message\n" if event_id is None else f"id: {event_id}\nevent: message\n".encode()
    await send_body(send, head + b"data: " + data + b"\n\n")


async def send_body(send: Send, body: bytes) -> None:
    await send({"type": "http.response.body", "body": body, "more_body": True})


async def end_body(send: Send) -> None:
    """End a streamed response (quietly: the client may be gone already)."""
    with contextlib.suppress(Exception):  # a closed connection, whatever the server calls it
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def wait_disconnect(receive: Receive) -> None:
    """Until the client goes away (call only once the body has been read)."""
    while (await receive())["type"] != "http.disconnect":
        pass


#: The ASGI scope extension by which a server that owns the connection (ours: :mod:`._uvicorn`)
#: offers to call back when the client goes away, so that nobody has to wait for it: the scope's
#: ``extensions`` then hold ``{ON_DISCONNECT: {"register": register}}``, and ``register(callback)``
#: has ``callback()`` called once, from the event loop, if the connection is lost before the
#: response ends (at once if it is lost already). One callback per request; a later one replaces it.
ON_DISCONNECT: Final = "mcpkit.on_disconnect"


def on_disconnect(scope: Scope) -> Callable[[Callable[[], None]], None] | None:
    """The server's ``register`` of :data:`ON_DISCONNECT`, or None when it offers none (then
    :func:`wait_disconnect` is the way to know).

    >>> on_disconnect({"extensions": {ON_DISCONNECT: {"register": print}}}) is print
    True
    >>> on_disconnect({}), on_disconnect({"extensions": None})
    (None, None)
    """
    extensions = scope.get("extensions")
    hook = extensions.get(ON_DISCONNECT) if extensions else None
    register: Callable[[Callable[[], None]], None] | None = hook.get("register") if hook else None
    return register


class BodyRefused(Exception):
    """A request body that is not read to its end: too large (413) or too slow (408)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def read_body(receive: Receive, limit: int, timeout: float) -> bytes:
    """The whole request body (empty if the client went away).

    Raises:
        BodyRefused: it is larger than *limit* bytes (413), or its rest did not arrive within
            *timeout* seconds (408).
    """
    message = await receive()  # usually the whole body: no timer on this path
    if message["type"] == "http.disconnect":
        return b""
    body: bytes = message.get("body", b"")
    if len(body) > limit:
        raise BodyRefused(413, f"Request body larger than {limit} bytes")
    if not message.get("more_body", False):
        return body
    # The rest comes in pieces: it must all come within the deadline (a slow-body client holds a
    # connection and a task for as long as it likes otherwise).
    chunks, size = [body], len(body)
    try:
        async with asyncio.timeout(timeout):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return b""
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise BodyRefused(413, f"Request body larger than {limit} bytes")
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)
    except TimeoutError:
        raise BodyRefused(408, f"Request body not received within {timeout:g} s") from None


#: Decoded header fields by their raw pair: a client sends the same Host, Content-Type, Accept and
#: MCP-Protocol-Version on every request. Bounded in entries and in the size of each.
_HEADER_CACHE: dict[tuple[bytes, bytes], tuple[str, str]] = {}
_HEADER_CACHE_ENTRIES: Final = 256
_HEADER_CACHE_FIELD_BYTES: Final = 256


def _decode_field(field: tuple[bytes, bytes]) -> tuple[str, str]:
    name, value = field
    # Field values exclude surrounding whitespace (RFC 9110 §5.5).
    decoded = name.decode("latin-1").lower(), value.decode("latin-1").strip(" \t")
    if len(name) + len(value) <= _HEADER_CACHE_FIELD_BYTES:
        if len(_HEADER_CACHE) >= _HEADER_CACHE_ENTRIES:
            _HEADER_CACHE.clear()  # whatever is sent now gets cached anew
        _HEADER_CACHE[field] = decoded
    return decoded


def request_headers(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """An ASGI scope's headers by lowercase name (the last of repeated ones), values stripped."""
    cache = _HEADER_CACHE
    try:
        # Every field seen before, as on nearly every request: no Python step per field.
        return dict(map(cache.__getitem__, raw))
    except (KeyError, TypeError):
        pass
    try:
        return dict([cache.get(field) or _decode_field(field) for field in raw])
    except TypeError:  # a server giving each field as a list (unhashable): decoded one by one
        return {k.decode("latin-1").lower(): v.decode("latin-1").strip(" \t") for k, v in raw}


def is_json(content_type: str | None) -> bool:
    """Whether a Content-Type says JSON (``application/json``, parameters allowed)."""
    if content_type is None:
        return False
    if content_type == "application/json":  # what nearly every client sends
        return True
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


async def plain(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def send_json(
    send: Send, status: int, body: bytes, extra_headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    # With a Content-Length the server needs no chunked framing (nor its closing chunk).
    headers = [*_JSON, (b"content-length", b"%d" % len(body)), *extra_headers]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def error(
    send: Send,
    status: int,
    request_id: jsonrpc.RequestId | None,
    code: int,
    message: str,
    extra_headers: Iterable[tuple[bytes, bytes]] = (),
    data: Any = None,
) -> None:
    """A JSON-RPC error answered by the transport itself (before any session or handler)."""
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    await send_json(
        send, status, jsonrpc.encode(jsonrpc.ErrorResponse(id=request_id, error=body)), extra_headers
    )


async def lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def path_of(scope: Scope) -> str:
    """The request's path inside this app: mounted under a prefix (Starlette's ``Mount``, uvicorn's
    ``--root-path``), the ASGI path still carries the prefix, which ``root_path`` names.

    >>> path_of({"path": "/api/mcp", "root_path": "/api"})
    '/mcp'
    """
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


def client_of(scope: Scope) -> str:
    """The address a request came from (empty when the server does not say).

    >>> client_of({"client": ("127.0.0.1", 50000)}), client_of({})
    ('127.0.0.1', '')
    """
    client = scope.get("client")
    return str(client[0]) if client else ""
