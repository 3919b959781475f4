"""The exception tree.

::

    * MCPError                      base of everything mcpkit raises
      + ProtocolError               .code is the JSON-RPC code to answer with
        - LocalProtocolError        our own caller broke a rule (a bug on this side)
        - RemoteProtocolError       the peer broke a rule (answer it, keep serving)
      + RPCError                    a JSON-RPC error response: raised by handlers, received by clients
        - MethodNotFound            -32601
        - InvalidParams             -32602
        - InternalError             -32603
        - ResourceNotFound          resource missing (code depends on the revision)
        - HeaderMismatch            -32020 (2026-07-28)
        - MissingClientCapability   -32021 (2026-07-28)
        - UnsupportedProtocolVersion -32022 (2026-07-28)
      + TransportError              the channel broke (process died, socket closed); wraps the cause
        - ConnectionClosed          the peer went away while we waited
      + RequestTimeout              a request got no answer in time (a local condition, no wire code)
      + ToolError                   raise inside a tool to return ``isError: true`` with your message

Codes live on the classes (as h2 does) so that raising the right class is all a handler needs to do.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "SERVER_BUSY",
    "ConnectionClosed",
    "HeaderMismatch",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "LocalProtocolError",
    "MCPError",
    "MethodNotFound",
    "MissingClientCapability",
    "ProtocolError",
    "RPCError",
    "RemoteProtocolError",
    "RequestTimeout",
    "ResourceNotFound",
    "ToolError",
    "TransportError",
    "UnsupportedProtocolVersion",
]

# JSON-RPC 2.0 codes (https://www.jsonrpc.org/specification#error_object).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# MCP codes. -32002 is the only legacy-range code with a fixed meaning (resource not found, up to
# 2025-11-25); 2026-07-28 allocates -32020..-32099 and uses -32602 for a missing resource.
RESOURCE_NOT_FOUND_LEGACY = -32002
URL_ELICITATION_REQUIRED = -32042  # 2025-11-25 only
HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
#: JSON-RPC's implementation-defined server error: too many requests in flight, try again later.
SERVER_BUSY = -32000


class MCPError(Exception):
    """Base class of every exception mcpkit raises on purpose."""


class ProtocolError(MCPError):
    """A rule of JSON-RPC or MCP was broken. ``code`` is what to answer the peer with."""

    def __init__(
        self, message: str, code: int = INVALID_REQUEST, request_id: int | str | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.request_id = request_id


class LocalProtocolError(ProtocolError):
    """This side tried to do something the protocol forbids (a bug in the caller)."""


class RemoteProtocolError(ProtocolError):
    """The peer sent something the protocol forbids. Answer with ``code`` and keep serving."""


class RPCError(MCPError):
    """A JSON-RPC error: raise it from a handler to answer with it; clients receive it.

    Subclasses fix the code; ``RPCError(code, message, data)`` builds any other.
    """

    default_code: ClassVar[int] = INTERNAL_ERROR

    def __init__(self, code: int | None = None, message: str = "", data: Any = None) -> None:
        self.code = self.default_code if code is None else code
        self.message = message or type(self).__name__
        self.data = data
        super().__init__(self.message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r}, data={self.data!r})"

    def to_wire(self) -> dict[str, Any]:
        """The ``error`` member of a JSON-RPC error response."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_wire(cls, error: Any) -> RPCError:
        """Build the most specific subclass for a received ``error`` member."""
        if not isinstance(error, dict):
            return cls(INTERNAL_ERROR, f"malformed error object: {error!r}")
        code = error.get("code")
        message = error.get("message")
        if not isinstance(code, int) or isinstance(code, bool):
            code = INTERNAL_ERROR
        if not isinstance(message, str):
            message = str(message)
        subclass = _BY_CODE.get(code, cls)
        exc = subclass.__new__(subclass)
        RPCError.__init__(exc, code, message, error.get("data"))
        return exc


class _FixedCode(RPCError):
    def __init__(self, message: str = "", data: Any = None) -> None:
        super().__init__(None, message, data)


class InvalidRequest(_FixedCode):
    """-32600: the message is not a valid request."""

    default_code = INVALID_REQUEST


class MethodNotFound(_FixedCode):
    """-32601: no such method (or its capability was not negotiated)."""

    default_code = METHOD_NOT_FOUND


class InvalidParams(_FixedCode):
    """-32602: the params are wrong: missing, mistyped, or naming something that does not exist."""

    default_code = INVALID_PARAMS


class InternalError(_FixedCode):
    """-32603: the server failed while handling a valid request."""

    default_code = INTERNAL_ERROR


class ResourceNotFound(_FixedCode):
    """The resource does not exist. Sent as -32002 up to 2025-11-25 and as -32602 from 2026-07-28."""

    default_code = RESOURCE_NOT_FOUND_LEGACY


class HeaderMismatch(_FixedCode):
    """-32020: an HTTP header disagrees with the request body (2026-07-28)."""

    default_code = HEADER_MISMATCH


class MissingClientCapability(_FixedCode):
    """-32021: the request needs a client capability the client did not declare (2026-07-28).

    ``data`` is ``{"requiredCapabilities": {...}}``.
    """

    default_code = MISSING_CLIENT_CAPABILITY

    @classmethod
    def for_capabilities(cls, required: dict[str, Any]) -> MissingClientCapability:
        names = ", ".join(sorted(required))
        return cls(
            f"Server requires the {names} capability for this request", {"requiredCapabilities": required}
        )


class UnsupportedProtocolVersion(_FixedCode):
    """-32022: the requested protocol version is not supported.

    ``data`` is ``{"supported": [...], "requested": "..."}``.
    """

    default_code = UNSUPPORTED_PROTOCOL_VERSION

    @property
    def supported(self) -> list[str]:
        data = self.data if isinstance(self.data, dict) else {}
        versions = data.get("supported", [])
        return [v for v in versions if isinstance(v, str)] if isinstance(versions, list) else []


_BY_CODE: dict[int, type[RPCError]] = {
    INVALID_REQUEST: InvalidRequest,
    METHOD_NOT_FOUND: MethodNotFound,
    INVALID_PARAMS: InvalidParams,
    INTERNAL_ERROR: InternalError,
    RESOURCE_NOT_FOUND_LEGACY: ResourceNotFound,
    HEADER_MISMATCH: HeaderMismatch,
    MISSING_CLIENT_CAPABILITY: MissingClientCapability,
    UNSUPPORTED_PROTOCOL_VERSION: UnsupportedProtocolVersion,
}


class TransportError(MCPError):
    """The channel to the peer failed. The cause is chained (``raise ... from exc``)."""


class ConnectionClosed(TransportError):
    """The peer closed the connection (or its process exited) before answering."""


class RequestTimeout(MCPError):
    """No answer arrived in time. Local to this side: no JSON-RPC code is assigned to it."""


class ToolError(MCPError):
    """Raise inside a tool to end the call with ``isError: true`` and this message as its text."""
