"""The I/O-free server connection: eras, lifecycle and the errors of each."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit._connection import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, ServerConnection
from mcpkit._errors import InvalidParams, InvalidRequest, RemoteProtocolError, UnsupportedProtocolVersion
from mcpkit._jsonrpc import Notification, Request
from mcpkit._state import State
from mcpkit._versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS, SUPPORTED_VERSIONS, Era


def initialize(version: str = "2025-11-25") -> Request:
    return Request(
        id=1,
        method="initialize",
        params={"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    )


def modern(method: str, version: str = "2026-07-28", **meta: Any) -> Request:
    return Request(
        id=9,
        method=method,
        params={"_meta": {META_PROTOCOL_VERSION: version, META_CLIENT_CAPABILITIES: {}, **meta}},
    )


@given(st.sampled_from(HANDSHAKE_VERSIONS))
def test_handshake_scope_follows_the_negotiated_version(version: str) -> None:
    conn = ServerConnection()
    scope = conn.admit(initialize(version))
    assert scope.version == version and scope.era is Era.HANDSHAKE
    conn.initialize_answered(ok=True)
    conn.notification_received(Notification(method="notifications/initialized"))
    assert conn.state is State.READY
    assert conn.admit(Request(id=2, method="tools/list")).version == version


def test_unknown_version_gets_the_latest_handshake_version() -> None:
    conn = ServerConnection()
    assert conn.admit(initialize("2099-01-01")).version == HANDSHAKE_VERSIONS[-1]


def test_requests_before_initialize_are_refused_but_ping_is_not() -> None:
    conn = ServerConnection()
    with pytest.raises(InvalidParams):
        conn.admit(Request(id=1, method="tools/list"))
    assert conn.admit(Request(id=2, method="ping")).era is Era.HANDSHAKE


def test_requests_while_initialize_is_pending_are_refused() -> None:
    conn = ServerConnection()
    conn.admit(initialize())
    with pytest.raises(InvalidParams):
        conn.admit(Request(id=2, method="tools/list"))


def test_initialize_twice_is_invalid() -> None:
    conn = ServerConnection()
    conn.admit(initialize())
    conn.initialize_answered(ok=True)
    with pytest.raises(InvalidRequest):
        conn.admit(initialize())


def test_a_failed_initialize_may_be_retried() -> None:
    conn = ServerConnection()
    conn.admit(initialize())
    conn.initialize_answered(ok=False)
    assert conn.state is State.IDLE
    conn.admit(initialize())


@pytest.mark.parametrize(
    "params", [{}, {"protocolVersion": 5, "capabilities": {}}, {"protocolVersion": "2025-11-25"}]
)
def test_malformed_initialize(params: dict[str, Any]) -> None:
    with pytest.raises(InvalidParams):
        ServerConnection().admit(Request(id=1, method="initialize", params=params))


@given(st.sampled_from(STATELESS_VERSIONS), st.sampled_from(["tools/list", "tools/call", "server/discover"]))
def test_stateless_requests_need_no_handshake(version: str, method: str) -> None:
    scope = ServerConnection().admit(modern(method, version, **{"io.modelcontextprotocol/logLevel": "info"}))
    assert scope.era is Era.STATELESS and scope.version == version and scope.log_level == "info"


def test_both_eras_on_one_connection() -> None:
    conn = ServerConnection()
    conn.admit(initialize("2025-06-18"))
    conn.initialize_answered(ok=True)
    assert conn.admit(modern("tools/list")).era is Era.STATELESS
    assert conn.admit(Request(id=3, method="tools/list")).version == "2025-06-18"


@given(st.text().filter(lambda v: v not in STATELESS_VERSIONS))
def test_unsupported_stateless_version(version: str) -> None:
    with pytest.raises(UnsupportedProtocolVersion) as info:
        ServerConnection().admit(modern("tools/list", version))
    assert info.value.code == -32022
    assert info.value.data == {"supported": list(SUPPORTED_VERSIONS), "requested": version}


def test_missing_client_capabilities_is_invalid_params() -> None:
    request = Request(id=1, method="tools/list", params={"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}})
    with pytest.raises(InvalidParams) as info:
        ServerConnection().admit(request)
    assert info.value.code == -32602


def test_discover_without_meta_is_invalid_params() -> None:
    with pytest.raises(InvalidParams):
        ServerConnection().admit(Request(id=1, method="server/discover"))


def test_batches_only_in_2025_03_26() -> None:
    batch = b'[{"jsonrpc": "2.0", "id": 5, "method": "ping"}]'
    conn = ServerConnection()
    with pytest.raises(RemoteProtocolError):
        conn.receive(batch)
    conn.admit(initialize("2025-03-26"))
    conn.initialize_answered(ok=True)
    assert conn.receive(batch) == [Request(id=5, method="ping")]
    other = ServerConnection()
    other.admit(initialize("2025-06-18"))
    other.initialize_answered(ok=True)
    with pytest.raises(RemoteProtocolError):
        other.receive(batch)
