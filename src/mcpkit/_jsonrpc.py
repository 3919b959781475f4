"""JSON-RPC 2.0 messages: the four events, and the codec between them and bytes.

What one side sends, the other receives as an equal object: ``decode(encode(event)) == [event]``.
The codec checks only the envelope (``jsonrpc``, ``id``, ``method``, ``params`` shapes). What a
method's params mean is the business of the layers above.

MCP narrows JSON-RPC in two ways that are enforced here: a request id is a string or an integer,
never ``null`` (nor a float or a boolean), and ``params`` is an object when present.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from ._errors import INVALID_REQUEST, PARSE_ERROR, RemoteProtocolError

__all__ = [
    "ErrorResponse",
    "Event",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "decode",
    "decode_response",
    "encode",
    "encode_batch",
    "parse",
]

RequestId: TypeAlias = int | str


class Request(msgspec.Struct, frozen=True, kw_only=True):
    """A call that expects exactly one response with the same ``id``."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    method: str
    params: dict[str, Any] | UnsetType = UNSET


class Notification(msgspec.Struct, frozen=True, kw_only=True):
    """A one-way message; the receiver must not answer it."""

    jsonrpc: Literal["2.0"] = "2.0"
    method: str
    params: dict[str, Any] | UnsetType = UNSET


class Response(msgspec.Struct, frozen=True, kw_only=True):
    """A successful answer to the request with the same ``id``."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    result: Any


class ErrorResponse(msgspec.Struct, frozen=True, kw_only=True):
    """A failed answer. ``id`` is ``None`` only when the request's id could not be read."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId | None
    error: dict[str, Any]

    @property
    def code(self) -> int:
        code = self.error.get("code")
        return code if isinstance(code, int) else 0


Event: TypeAlias = Request | Notification | Response | ErrorResponse


class _ResultOnly(Response, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A :class:`Response` with nothing else beside it (no ``error``, no ``method``)."""


_response_decoder: Final = msgspec.json.Decoder(_ResultOnly)


def decode_response(data: bytes) -> Response | None:
    """*data* as a successful response, decoded and checked in one pass, if it is exactly that;
    ``None`` for anything else (:func:`decode` tells what it is, or what is wrong with it)."""
    try:
        return _response_decoder.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):  # ValidationError is a DecodeError
        return None


_encoder: Final = msgspec.json.Encoder()
_decoder: Final = msgspec.json.Decoder()


def encode(event: Event) -> bytes:
    """Serialize one message to compact JSON with no newline in it (stdio framing relies on that)."""
    return _encoder.encode(event)


def encode_batch(events: list[Response | ErrorResponse]) -> bytes:
    """Serialize the answers to a batch as one JSON array."""
    return _encoder.encode(events)


def _is_id(value: object) -> bool:
    # bool is an int subclass, and true/false are not valid ids.
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def _readable_id(obj: dict[str, Any]) -> RequestId | None:
    value = obj.get("id")
    return value if _is_id(value) else None


def parse(obj: object) -> Event:
    """Turn one decoded JSON value into an event, or raise ``RemoteProtocolError`` (-32600).

    The error carries the request id when one could be read, so the answer can be addressed.
    """
    if not isinstance(obj, dict):
        raise RemoteProtocolError("a JSON-RPC message must be a JSON object", INVALID_REQUEST)
    if obj.get("jsonrpc") != "2.0":
        raise RemoteProtocolError('"jsonrpc" must be exactly "2.0"', INVALID_REQUEST, _readable_id(obj))
    method = obj.get("method", UNSET)
    if method is not UNSET:  # a request or a notification: _parse_call's work, inline (every request)
        rid = obj.get("id", UNSET)
        if not isinstance(method, str):
            raise RemoteProtocolError('"method" must be a string', INVALID_REQUEST, _readable_id(obj))
        params = obj.get("params", UNSET)
        if params is not UNSET and not isinstance(params, dict):
            # JSON-RPC allows by-position params; MCP always uses an object.
            raise RemoteProtocolError('"params" must be an object', INVALID_REQUEST, _readable_id(obj))
        if rid is UNSET:
            return Notification(method=method, params=params)
        if type(rid) is not int and type(rid) is not str and not _is_id(rid):  # _is_id's usual cases first
            # "Unlike base JSON-RPC, the ID MUST NOT be null." (basic/index, every revision)
            raise RemoteProtocolError(
                "a request id must be a string or an integer, not null", INVALID_REQUEST
            )
        return Request(id=rid, method=method, params=params)
    if "result" in obj:
        if "error" in obj:
            raise RemoteProtocolError("a response has either a result or an error", INVALID_REQUEST)
        if not _is_id(obj.get("id")):
            raise RemoteProtocolError("a response id must be a string or an integer", INVALID_REQUEST)
        return Response(id=obj["id"], result=obj["result"])
    if "error" in obj:
        error = obj["error"]
        rid = obj.get("id")
        if not isinstance(error, dict) or not isinstance(error.get("code"), int):
            raise RemoteProtocolError("an error response needs an error object with an integer code")
        if rid is not None and not _is_id(rid):
            raise RemoteProtocolError("an error response id must be a string, an integer or null")
        return ErrorResponse(id=rid, error=error)
    raise RemoteProtocolError("not a request, notification or response", INVALID_REQUEST, _readable_id(obj))


def decode(data: bytes | str) -> Event | list[Event | RemoteProtocolError]:
    """Decode one JSON text: an event, or for a JSON array (a batch) a list of events.

    A batch keeps going past a bad member: that member is returned as its ``RemoteProtocolError`` in
    place, so the caller can answer it and still serve the others, as JSON-RPC requires.

    Raises:
        RemoteProtocolError: -32700 for text that is not JSON, -32600 for a message that is not
            JSON-RPC (or an empty batch).
    """
    try:
        obj = _decoder.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise RemoteProtocolError(f"Parse error: {exc}", PARSE_ERROR) from None
    except RecursionError:
        # Hostile nesting ([[[[...]]]]) must cost the sender an error, not us the process.
        raise RemoteProtocolError("Parse error: the JSON is nested too deeply", PARSE_ERROR) from None
    if isinstance(obj, list):
        if not obj:
            raise RemoteProtocolError("an empty batch is not a valid request", INVALID_REQUEST)
        members: list[Event | RemoteProtocolError] = []
        for item in obj:
            try:
                members.append(parse(item))
            except RemoteProtocolError as exc:
                members.append(exc)
        return members
    return parse(obj)
