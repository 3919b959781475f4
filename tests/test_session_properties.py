"""Properties of the server's state machine and of the async peer, checked by hypothesis.

* ``ServerConnection``: for any sequence of requests and notifications of both eras, ``admit()``
  returns a scope or raises an ``RPCError`` with a JSON-RPC/MCP code; the handshake lifecycle never
  goes backwards (except the one edge the table has: a refused ``initialize``); a 2026-07-28 request
  never touches the handshake state.
* ``Peer`` fed arbitrary lines over the in-memory transport: every request gets exactly one answer
  (none when cancelled), every refused line exactly one error, the peer keeps serving, and nothing
  escapes ``run()``.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit._connection import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, Scope, ServerConnection
from mcpkit._errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    InvalidParams,
    RemoteProtocolError,
    RPCError,
)
from mcpkit._jsonrpc import Notification, Request, RequestId, decode
from mcpkit._state import HANDSHAKE, MRTR, Input, Role, State, transition
from mcpkit._versions import SUPPORTED_VERSIONS, Era
from mcpkit.session import Peer
from mcpkit.transports.memory import memory_pair

ADMIT_CODES = {INVALID_REQUEST, INVALID_PARAMS, UNSUPPORTED_PROTOCOL_VERSION, METHOD_NOT_FOUND}
# Forward order of the handshake lifecycle.
RANK = {State.IDLE: 0, State.INITIALIZING: 1, State.INITIALIZED: 2, State.READY: 3}

# -- the tables --------------------------------------------------------------------------------------


@given(st.sampled_from(Role), st.sampled_from(State), st.sampled_from(Input))
def test_handshake_table_is_total_and_forward(role: Role, state: State, inp: Input) -> None:
    nxt = transition(role, state, inp)
    assert nxt is HANDSHAKE.get((role, state, inp))
    if nxt is not None:
        assert state in RANK and nxt in RANK
        backwards = (state, inp, nxt) == (State.INITIALIZING, Input.INITIALIZE_FAILED, State.IDLE)
        assert RANK[nxt] >= RANK[state] or backwards


def test_mrtr_table_only_ends_in_done() -> None:
    assert all(nxt in (State.DONE, State.INPUT_REQUIRED, State.SENT) for nxt in MRTR.values())
    assert not [key for key in MRTR if key[0] is State.DONE]


# -- ServerConnection --------------------------------------------------------------------------------

versions = st.sampled_from([*SUPPORTED_VERSIONS, "1999-01-01", ""]) | st.integers() | st.none()
capabilities: st.SearchStrategy[Any] = (
    st.just({}) | st.just({"roots": {}}) | st.none() | st.just([]) | st.text(max_size=3)
)
methods = st.sampled_from(["ping", "tools/list", "tools/call", "server/discover", "initialize", "nope", ""])


@st.composite
def stateless_params(draw: st.DrawFn) -> dict[str, Any]:
    meta: dict[str, Any] = {META_PROTOCOL_VERSION: draw(versions)}
    if draw(st.booleans()):
        meta[META_CLIENT_CAPABILITIES] = draw(capabilities)
    return {"_meta": meta}


@st.composite
def initialize_params(draw: st.DrawFn) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if draw(st.booleans()):
        params["protocolVersion"] = draw(versions)
    if draw(st.booleans()):
        params["capabilities"] = draw(capabilities)
    if draw(st.booleans()):
        params["_meta"] = draw(st.just({}) | st.just({"progressToken": 1}))
    return params


# Steps: ("request", Request, ok-answer-if-initialize) | ("notify", Notification) | ("loglevel", str)
steps = st.one_of(
    st.tuples(
        st.just("request"),
        st.builds(Request, id=st.integers(0, 5), method=methods, params=stateless_params()),
        st.booleans(),
    ),
    st.tuples(
        st.just("request"),
        st.builds(Request, id=st.integers(0, 5), method=st.just("initialize"), params=initialize_params()),
        st.booleans(),
    ),
    st.tuples(
        st.just("request"),
        st.builds(Request, id=st.integers(0, 5), method=methods, params=st.just({}) | st.just({"_meta": {}})),
        st.booleans(),
    ),
    st.tuples(
        st.just("notify"),
        st.builds(Notification, method=st.sampled_from(["notifications/initialized", "notifications/x"])),
    ),
    st.tuples(st.just("loglevel"), st.sampled_from(["debug", "error"])),
)


def _admit(conn: ServerConnection, request: Request) -> Scope | RPCError:
    try:
        return conn.admit(request)
    except RPCError as exc:
        return exc


def _snapshot(conn: ServerConnection) -> tuple[State, Scope | None]:
    return conn.state, conn.session


@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(steps, max_size=12))
def test_admit_answers_a_scope_or_a_valid_error_and_never_goes_back(sequence: list[Any]) -> None:
    conn = ServerConnection()
    for step in sequence:
        before_state, before_session = _snapshot(conn)
        if step[0] == "notify":
            conn.notification_received(step[1])
        elif step[0] == "loglevel":
            conn.set_log_level(step[1])
            assert conn.state is before_state
        else:
            request: Request = step[1]
            meta = request.params.get("_meta") if isinstance(request.params, dict) else None
            stateless = isinstance(meta, dict) and META_PROTOCOL_VERSION in meta
            scope = _admit(conn, request)
            if isinstance(scope, RPCError):
                assert scope.code in ADMIT_CODES, scope
                if request.method == "initialize" and not stateless and before_state is State.IDLE:
                    assert scope.code == INVALID_PARAMS
                # Only the stateless era's non-existent initialize is refused as an unknown method.
                if scope.code == METHOD_NOT_FOUND:
                    assert stateless and request.method == "initialize"
                # A refused request leaves the lifecycle where it was.
                assert _snapshot(conn) == (before_state, before_session)
            else:
                assert isinstance(scope, Scope) and scope.version in SUPPORTED_VERSIONS
                if stateless:
                    assert scope.era is Era.STATELESS and scope.version == meta[META_PROTOCOL_VERSION]  # type: ignore[index]
                else:
                    assert scope.era is Era.HANDSHAKE
                if request.method == "initialize" and not stateless:
                    assert conn.state is State.INITIALIZING
                    conn.initialize_answered(step[2])
            if stateless:
                # "A stateless request never changes the handshake state."
                assert _snapshot(conn) == (before_state, before_session)
        after_state, after_session = _snapshot(conn)
        refused_init = before_state is State.INITIALIZING and after_state is State.IDLE
        assert RANK[after_state] >= RANK[before_state] or refused_init
        if before_session is not None:
            # Once open, the handshake session keeps its revision for good.
            assert after_session is not None and after_session.version == before_session.version
        if after_session is not None:
            assert after_state in (State.INITIALIZED, State.READY)


@settings(max_examples=200)
@given(st.lists(steps, max_size=6), st.binary(max_size=40) | st.just(b"[]") | st.just(b'[{"jsonrpc":"2.0"}]'))
def test_receive_refuses_batches_outside_2025_03_26(sequence: list[Any], data: bytes) -> None:
    conn = ServerConnection()
    for step in sequence:
        if step[0] == "request":
            try:
                conn.admit(step[1])
            except RPCError:
                continue
            if conn.state is State.INITIALIZING:
                conn.initialize_answered(step[2])
    batch_ok = conn.session is not None and conn.session.has("batch")
    decoded = _receive(conn, b"[" + json.dumps({"jsonrpc": "2.0", "method": "x"}).encode() + b"]")
    if batch_ok:
        assert isinstance(decoded, list)
    else:
        assert isinstance(decoded, RemoteProtocolError) and decoded.code == INVALID_REQUEST
    decoded = _receive(conn, data)
    if isinstance(decoded, RemoteProtocolError):
        assert decoded.code in (-32700, INVALID_REQUEST)


def _receive(conn: ServerConnection, data: bytes) -> object:
    try:
        return conn.receive(data)
    except RemoteProtocolError as exc:
        return exc


# -- Peer over the in-memory transport ---------------------------------------------------------------

POOL: list[RequestId] = [1, 2, 3, "a", "1"]
json_ids = st.sampled_from(POOL)
call_methods = st.sampled_from(["echo", "slow", "fail", "crash", "raise", "nope"])
junk_values = st.sampled_from(
    [
        42,
        "x",
        None,
        {"jsonrpc": "2.0", "id": 1.5, "method": "echo"},
        {"jsonrpc": "2.0", "id": True, "method": "echo"},
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "echo"},
        {"jsonrpc": "2.0", "id": 2, "method": 7},
        {"jsonrpc": "2.0", "id": "a", "method": "echo", "params": [1]},
        {"jsonrpc": "2.0", "id": 3, "method": "echo", "params": "s"},
        {"jsonrpc": "1.0", "id": 1, "method": "echo"},
        {"jsonrpc": "2.0", "id": 1, "error": "bad"},
        {"jsonrpc": "2.0"},
    ]
)
message_values = st.one_of(
    st.builds(
        lambda i, m, p: {"jsonrpc": "2.0", "id": i, "method": m, **({"params": p} if p is not None else {})},
        json_ids,
        call_methods,
        st.none() | st.just({"k": [1, "v"]}),
    ),
    st.builds(
        lambda r: {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": r}},
        json_ids | st.sampled_from([True, False, 1.0, None, 99]),
    ),
    st.just({"jsonrpc": "2.0", "method": "notifications/other"}),
    st.builds(lambda i: {"jsonrpc": "2.0", "id": i, "result": {}}, json_ids | st.just(999)),
    st.builds(
        lambda i: {"jsonrpc": "2.0", "id": i, "error": {"code": -1, "message": "m"}}, json_ids | st.none()
    ),
    junk_values,
)
lines = st.one_of(
    message_values.map(lambda v: json.dumps(v).encode()),
    st.lists(message_values, min_size=1, max_size=5).map(lambda v: json.dumps(v).encode()),
    st.binary(min_size=1, max_size=30),  # b"" is the memory transport's end marker, never a line
    st.sampled_from([b"[]", b"[" * 10_000, b"\xff\xfe", b'{"jsonrpc":"2.0","id":1,"method":"echo"']),
)


async def _handler(gate: asyncio.Event, request: Request) -> Any:
    if request.method == "echo":
        return request.params if isinstance(request.params, dict) else {}
    if request.method == "slow":
        await gate.wait()
        return {}
    if request.method == "fail":
        raise InvalidParams("bad params")
    if request.method == "crash":
        raise ValueError("a handler bug")
    raise RPCError(-32601, f"Method not found: {request.method}")


def _on_request(gate: asyncio.Event, request: Request) -> Any:
    if request.method == "raise":  # a bug in on_request itself, before any coroutine exists
        raise AssertionError("on_request failed")
    return _handler(gate, request)


def _expected(data: bytes, owed: Counter[Any], cancels: Counter[Any]) -> None:
    """Count what *data* is owed: one answer per request and per refused line or member."""
    try:
        decoded = decode(data)
    except RemoteProtocolError as exc:
        owed[exc.request_id] += 1
        return
    for event in decoded if isinstance(decoded, list) else [decoded]:
        if isinstance(event, RemoteProtocolError):
            owed[event.request_id] += 1
        elif isinstance(event, Request):
            owed[event.id] += 1
        elif isinstance(event, Notification) and event.method == "notifications/cancelled":
            rid = (event.params or {}).get("requestId")
            if rid in POOL and type(rid) in (int, str):
                cancels[rid] += 1


def _items(raw: bytes) -> list[Any]:
    parsed = json.loads(raw)
    return parsed if isinstance(parsed, list) else [parsed]


async def _serve(sent: list[bytes]) -> tuple[Counter[Any], list[Any]]:
    client, server = memory_pair()
    gate = asyncio.Event()
    peer = Peer(server, on_request=lambda request: _on_request(gate, request), decode=decode)
    runner = asyncio.get_running_loop().create_task(peer.run())
    for data in sent:
        await client.send(data)
        await asyncio.sleep(0)
    gate.set()
    # The peer keeps serving: a normal call after all of that is answered.
    await client.send(json.dumps({"jsonrpc": "2.0", "id": "final", "method": "echo", "params": {}}).encode())
    answers: Counter[Any] = Counter()
    seen: list[Any] = []
    while answers["final"] == 0:
        raw = await asyncio.wait_for(client.receive(), 60)
        for item in _items(raw):
            seen.append(item)
            assert "id" in item and ("result" in item) != ("error" in item), item
            answers[item["id"]] += 1
    # Let every request still in flight finish, then end the conversation: run() returns quietly.
    while peer._tasks:
        await asyncio.wait(set(peer._tasks))
    while True:
        try:
            raw = client._inbox.get_nowait()
        except asyncio.QueueEmpty:
            break
        for item in _items(raw):
            seen.append(item)
            answers[item["id"]] += 1
    await client.aclose()
    await asyncio.wait_for(runner, 60)
    assert runner.exception() is None
    return answers, seen


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lines, min_size=1, max_size=10))
def test_peer_answers_each_request_once_and_keeps_serving(sent: list[bytes]) -> None:
    owed: Counter[Any] = Counter()
    cancels: Counter[Any] = Counter()
    for data in sent:
        _expected(data, owed, cancels)
    answers, seen = asyncio.run(_serve(sent))
    assert answers.pop("final") == 1
    for key in set(owed) | set(answers):
        if cancels[key]:
            assert owed[key] - cancels[key] <= answers[key] <= owed[key], (key, seen)
        else:
            assert answers[key] == owed[key], (key, seen)
    for item in seen:
        if "error" in item:
            assert isinstance(item["error"]["code"], int)
            assert item["error"]["code"] in (-32700, -32600, -32601, -32602, -32603), item


# -- what the fuzzing found, pinned ------------------------------------------------------------------


def _cancel(request_id: object) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
    ).encode()


def test_cancelled_with_requestid_true_does_not_cancel_request_1() -> None:
    """`true` is no RequestId (bool is an int subclass in Python, so it once matched request 1)."""
    call = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "slow"}).encode()
    answers, seen = asyncio.run(_serve([call, _cancel(True)]))
    assert answers[1] == 1, seen


def test_a_request_cancelled_before_its_task_runs_leaves_no_unawaited_coroutine() -> None:
    """Under ``filterwarnings=error`` a "coroutine was never awaited" warning fails the test."""
    call = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "echo"}).encode()
    batch = json.dumps([{"jsonrpc": "2.0", "id": 2, "method": "echo"}, json.loads(_cancel(2))]).encode()
    answers, seen = asyncio.run(_serve([call, batch]))
    assert answers[2] == 0, seen


def test_on_request_raising_keeps_the_peer_serving() -> None:
    """A bug in on_request (not an RPCError) is answered -32603; it once escaped run() and ended the
    connection: a stdio server died on an initialize carrying 2026-07-28 _meta."""
    answers, seen = asyncio.run(_serve([json.dumps({"jsonrpc": "2.0", "id": 1, "method": "raise"}).encode()]))
    assert answers[1] == 1 and seen[0]["error"]["code"] == -32603, seen


def test_a_2026_initialize_is_method_not_found_and_opens_nothing() -> None:
    conn = ServerConnection()
    params = {
        "_meta": {META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {}},
        "protocolVersion": "2025-11-25",
        "capabilities": {},
    }
    refused = _admit(conn, Request(id=1, method="initialize", params=params))
    assert isinstance(refused, RPCError) and refused.code == METHOD_NOT_FOUND
    assert _snapshot(conn) == (State.IDLE, None)


# -- a real Server behind the Peer ------------------------------------------------------------------

_MODERN_META = {META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {}}
server_messages = st.one_of(
    st.builds(
        lambda i, v, meta: {
            "jsonrpc": "2.0",
            "id": i,
            "method": "initialize",
            "params": {
                "protocolVersion": v,
                "capabilities": {},
                "clientInfo": {"name": "f", "version": "1"},
                **({"_meta": _MODERN_META} if meta else {}),
            },
        },
        json_ids,
        st.sampled_from([*SUPPORTED_VERSIONS, "1999-01-01"]),
        st.booleans(),
    ),
    st.builds(
        lambda i, m, meta, p: {
            "jsonrpc": "2.0",
            "id": i,
            "method": m,
            "params": {**p, **({"_meta": _MODERN_META} if meta else {})},
        },
        json_ids,
        st.sampled_from(
            [
                "ping",
                "tools/list",
                "tools/call",
                "server/discover",
                "logging/setLevel",
                "resources/list",
                "prompts/list",
                "completion/complete",
                "resources/read",
                "subscriptions/listen",
                "tasks/get",
            ]
        ),
        st.booleans(),
        st.sampled_from(
            [
                {},
                {"name": "add", "arguments": {"a": 1, "b": 2}},
                {"name": "add", "arguments": {"a": "x"}},
                {"name": "add"},
                {"name": 7},
                {"level": "debug"},
                {"level": 3},
                {"uri": 5},
                {"cursor": "junk"},
                {"taskId": "nope"},
                {"ref": {"type": "ref/prompt"}},
            ]
        ),
    ),
    st.just({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    st.builds(
        lambda r: {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": r}},
        json_ids,
    ),
    st.builds(lambda i: {"jsonrpc": "2.0", "id": i, "result": {}}, json_ids),
    junk_values,
)
server_lines = st.one_of(
    server_messages.map(lambda v: json.dumps(v).encode()),
    st.lists(server_messages, min_size=1, max_size=3).map(lambda v: json.dumps(v).encode()),
    st.binary(min_size=1, max_size=20),
)


async def _serve_real(sent: list[bytes]) -> list[Any]:
    from mcpkit import Server

    server = Server("fuzz", "1.0.0")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    client, theirs = memory_pair()
    serving = asyncio.get_running_loop().create_task(server.serve(theirs, drain_seconds=1))
    for data in sent:
        await client.send(data)
        await asyncio.sleep(0)
    final = {"jsonrpc": "2.0", "id": "final", "method": "tools/list", "params": {"_meta": _MODERN_META}}
    await client.send(json.dumps(final).encode())
    seen: list[Any] = []
    while not any(isinstance(m, dict) and m.get("id") == "final" for m in seen):
        seen.extend(_items(await asyncio.wait_for(client.receive(), 60)))
    await client.aclose()
    await asyncio.wait_for(serving, 60)
    return seen


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(server_lines, min_size=1, max_size=8))
def test_a_real_server_never_fails_internally_and_keeps_serving(sent: list[bytes]) -> None:
    """Whatever arrives, in either era: no -32603 (a bug answered), and a final call is answered."""
    seen = asyncio.run(_serve_real(sent))
    internal = [m for m in seen if isinstance(m, dict) and (m.get("error") or {}).get("code") == -32603]
    assert not internal, internal
    [final] = [m for m in seen if isinstance(m, dict) and m.get("id") == "final"]
    assert "result" in final, final
