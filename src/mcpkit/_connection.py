"""The server side of one MCP conversation, with no I/O: bytes in, events and request scopes out.

A :class:`ServerConnection` decodes what arrives, keeps the handshake-era lifecycle, and decides for
every request which protocol revision it is spoken in (its :class:`Scope`). Both eras may share one
connection, as the 2026-07-28 versioning page allows ("A dual-era server MAY serve both eras
concurrently on the same endpoint or process"):

* a request whose ``_meta`` carries ``io.modelcontextprotocol/protocolVersion`` is served statelessly
  at that revision;
* anything else belongs to the handshake session of this connection, which ``initialize`` opens.

Transports own one connection each (a stdio process, an HTTP session); handlers see only scopes.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from . import _jsonrpc as jsonrpc
from ._errors import (
    INVALID_REQUEST,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    RemoteProtocolError,
    UnsupportedProtocolVersion,
)
from ._methods import ALLOWED_BEFORE_INITIALIZED
from ._state import Input, Role, State, transition
from ._versions import FEATURES, STATELESS_VERSIONS, SUPPORTED_VERSIONS, Era, has, negotiate_handshake_version

__all__ = [
    "LOG_LEVELS",
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_PROTOCOL_VERSION",
    "META_SERVER_INFO",
    "META_SUBSCRIPTION_ID",
    "Scope",
    "ServerConnection",
]

# RFC 5424 severities, least severe first (server/utilities/logging).
LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"

_EMPTY: Final[dict[str, Any]] = {}


class Scope(msgspec.Struct, frozen=True):
    """What one request is spoken in: its revision and what the client declared for it."""

    # A frozen msgspec Struct rather than a frozen dataclass: it is made in C, and a 2026-07-28
    # request makes one of its own (callgrind: 8.6k instructions per Scope as a dataclass whose
    # slots were set one by one, 13.9k with object.__setattr__).

    version: str
    era: Era
    client_capabilities: dict[str, Any] = msgspec.field(default_factory=dict)
    client_info: dict[str, Any] | None = None
    log_level: str | None = None

    @property
    def stateless(self) -> bool:
        """Whether this request is spoken in the 2026-07-28 era (no session)."""
        return self.era is _STATELESS

    def has(self, feature: str) -> bool:
        """Whether this request's revision has *feature* (see ``_versions.FEATURES``)."""
        features = _FEATURES_BY_VERSION.get(self.version)
        if features is None:
            features = _features_of(self.version)
        return feature in features


_STATELESS: Final = Era.STATELESS  # a module global is looked up faster than an Enum member
_IDLE: Final = State.IDLE
_READY: Final = State.READY


#: What each revision has, by version string: the supported ones, and others as they are met
#: (bounded: an unknown version is refused before it gets this far, but a caller may make a Scope).
_FEATURES_BY_VERSION: dict[str, frozenset[str]] = {}


def _features_of(version: str) -> frozenset[str]:
    features = frozenset(feature for feature in FEATURES if has(version, feature))
    if len(_FEATURES_BY_VERSION) < 64:
        _FEATURES_BY_VERSION[version] = features
    return features


#: Where a request other than initialize leaves the handshake lifecycle, from each state.
_AFTER_REQUEST: Final = {state: transition(Role.SERVER, state, Input.REQUEST) or state for state in State}


class ServerConnection:
    """The server's view of one connection. Does no I/O."""

    #: The transport's session id (``Mcp-Session-Id``) where it has one, set by the transport.
    session_id: str | None = None
    #: ``ctx.session``: what handlers keep for the session (made on first use).
    session_state: dict[str, Any] | None = None
    #: The lists whose changes the session was told of at ``initialize`` (``listChanged``).
    changing: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self.state = _IDLE
        #: The handshake session's scope once ``initialize`` has been answered, else ``None``.
        self.session: Scope | None = None
        self._pending_init: Scope | None = None

    # -- bytes -> events ---------------------------------------------------------------------------

    def receive(self, data: bytes | str) -> jsonrpc.Event | list[jsonrpc.Event | RemoteProtocolError]:
        """Decode one framed message: an event, or for a batch a list (bad members as errors in place).

        Raises:
            RemoteProtocolError: the text is not JSON (-32700) or not JSON-RPC (-32600), or it is a
                batch where the negotiated revision has none.
        """
        decoded = jsonrpc.decode(data)
        if type(decoded) is not list:  # accept()'s first test, made here: nearly every message
            return decoded
        return self.accept(decoded)

    def accept(
        self, decoded: jsonrpc.Event | list[jsonrpc.Event | RemoteProtocolError]
    ) -> jsonrpc.Event | list[jsonrpc.Event | RemoteProtocolError]:
        """*decoded* (from ``jsonrpc.decode``) if this connection takes it: a batch only where the
        negotiated revision has batches. Raises ``RemoteProtocolError`` (-32600) otherwise."""
        if not isinstance(decoded, list):
            return decoded
        # "Implementations MAY support sending JSON-RPC batches, but MUST support receiving" only in
        # 2025-03-26; the initialize request itself "MUST NOT be part of a JSON-RPC batch".
        if self.session is None or not self.session.has("batch"):
            raise RemoteProtocolError(
                "JSON-RPC batches are not supported by this protocol revision", INVALID_REQUEST
            )
        return decoded

    # -- requests -> scopes ------------------------------------------------------------------------

    def admit(self, request: jsonrpc.Request) -> Scope:
        """Decide the revision *request* is spoken in, enforcing the lifecycle of its era.

        ``initialize`` moves the handshake forward; call :meth:`initialize_answered` once its answer
        is on its way.

        Raises:
            RPCError: the answer to send instead of handling the request (-32600, -32601 for a
                2026-07-28 ``initialize``, -32602, -32022).
        """
        params = request.params if isinstance(request.params, dict) else _EMPTY
        meta = params.get("_meta")
        if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta:
            scope = self._stateless_scope(meta)
            if request.method == "initialize":
                # The stateless era has no initialize; answering it would open a handshake
                # session from a request that never entered the handshake lifecycle.
                raise MethodNotFound(
                    f"Method not found: initialize (not part of protocol revision {scope.version})"
                )
            return scope
        if request.method == "initialize":
            return self._begin_handshake(params)
        if request.method == "server/discover":
            raise InvalidParams(f"server/discover requires _meta['{META_PROTOCOL_VERSION}']")
        if self.session is not None:
            if self.state is not _READY:  # READY stays READY; and an Enum hashes in Python
                self.state = _AFTER_REQUEST[self.state]
            return self.session
        if request.method in ALLOWED_BEFORE_INITIALIZED:
            return Scope(version=negotiate_handshake_version(None), era=Era.HANDSHAKE)
        # Neither a stateless request (no per-request _meta) nor part of an initialized session.
        raise InvalidParams(
            f"missing _meta['{META_PROTOCOL_VERSION}'] and _meta['{META_CLIENT_CAPABILITIES}']; "
            "clients of protocol revisions up to 2025-11-25 must send initialize first"
        )

    def _stateless_scope(self, meta: dict[str, Any]) -> Scope:
        version = meta[META_PROTOCOL_VERSION]
        if not isinstance(version, str) or version not in STATELESS_VERSIONS:
            raise UnsupportedProtocolVersion(
                "Unsupported protocol version",
                {"supported": list(SUPPORTED_VERSIONS), "requested": version},
            )
        capabilities = meta.get(META_CLIENT_CAPABILITIES)
        if not isinstance(capabilities, dict):
            raise InvalidParams(
                f"missing or invalid _meta['{META_CLIENT_CAPABILITIES}'] (an object is required)"
            )
        info = meta.get(META_CLIENT_INFO)
        level = meta.get(META_LOG_LEVEL)
        return Scope(
            version,
            _STATELESS,
            capabilities,
            info if isinstance(info, dict) else None,
            level if isinstance(level, str) else None,
        )

    def _begin_handshake(self, params: dict[str, Any]) -> Scope:
        nxt = transition(Role.SERVER, self.state, Input.INITIALIZE)
        if nxt is None:
            raise InvalidRequest("initialize may be sent only once per connection")
        requested = params.get("protocolVersion")
        capabilities = params.get("capabilities")
        if not isinstance(requested, str):
            raise InvalidParams("initialize requires params.protocolVersion (a string)")
        if not isinstance(capabilities, dict):
            raise InvalidParams("initialize requires params.capabilities (an object)")
        info = params.get("clientInfo")
        self.state = nxt
        self._pending_init = Scope(
            version=negotiate_handshake_version(requested),
            era=Era.HANDSHAKE,
            client_capabilities=capabilities,
            client_info=info if isinstance(info, dict) else None,
        )
        return self._pending_init

    def initialize_answered(self, ok: bool) -> None:
        """Record that the answer to ``initialize`` is being sent (``ok``: a result, not an error)."""
        nxt = transition(Role.SERVER, self.state, Input.INITIALIZE_OK if ok else Input.INITIALIZE_FAILED)
        assert nxt is not None, "initialize_answered() without a pending initialize"
        self.state = nxt
        if ok:
            self.session = self._pending_init
        self._pending_init = None

    def set_log_level(self, level: str) -> None:
        """``logging/setLevel`` in the handshake era: later requests of the session carry it."""
        if self.session is not None:
            s = self.session
            self.session = Scope(s.version, s.era, s.client_capabilities, s.client_info, level)

    # -- notifications -----------------------------------------------------------------------------

    def notification_received(self, notification: jsonrpc.Notification) -> None:
        """Advance the lifecycle on ``notifications/initialized``; other notifications pass."""
        if notification.method == "notifications/initialized":
            nxt = transition(Role.SERVER, self.state, Input.INITIALIZED)
            if nxt is not None:
                self.state = nxt
