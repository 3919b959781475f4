"""Properties of the JSON-RPC codec (`mcpkit._jsonrpc`), checked by hypothesis.

* what one side encodes, the other decodes as an equal event;
* whatever bytes arrive, ``decode`` returns events or raises ``RemoteProtocolError`` carrying -32700
  or -32600, and nothing else escapes;
* a batch keeps every member in its place, a bad one as its error;
* ``decode_response`` (the client's fast path for answers) never takes anything ``decode`` would
  not read as the same successful response, and takes every one mcpkit encodes.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec import UNSET

from mcpkit._errors import INVALID_REQUEST, PARSE_ERROR, RemoteProtocolError
from mcpkit._jsonrpc import (
    ErrorResponse,
    Event,
    Notification,
    Request,
    Response,
    decode,
    decode_response,
    encode,
    encode_batch,
)

EXAMPLES = 300
CODEC_CODES = {PARSE_ERROR, INVALID_REQUEST}

# JSON itself. Floats are finite (JSON has no NaN); integers stay within what any peer can echo.
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
objects = st.dictionaries(st.text(max_size=8), json_values, max_size=4)

ids = st.integers(min_value=-(2**63), max_value=2**63 - 1) | st.text(max_size=16)
methods = st.text(max_size=24)
params = st.just(UNSET) | objects
error_objects = st.fixed_dictionaries(
    {"code": st.integers(min_value=-(2**31), max_value=2**31 - 1), "message": st.text(max_size=16)},
    optional={"data": json_values},
)

requests = st.builds(Request, id=ids, method=methods, params=params)
notifications = st.builds(Notification, method=methods, params=params)
responses = st.builds(Response, id=ids, result=json_values)
error_responses = st.builds(ErrorResponse, id=st.none() | ids, error=error_objects)
events: st.SearchStrategy[Event] = requests | notifications | responses | error_responses

# Values that are JSON but not a JSON-RPC message, each a different way to be wrong.
not_ids = (
    st.none()
    | st.booleans()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.lists(scalars, max_size=2)
    | objects
)
not_params = scalars.filter(lambda v: not isinstance(v, dict)) | st.lists(scalars, max_size=3)
bad_messages = st.one_of(
    scalars,
    st.lists(scalars, max_size=0).map(lambda _: 42),  # a bare number
    st.builds(lambda m: {"jsonrpc": "1.0", "id": 1, "method": m}, methods),
    st.builds(lambda m: {"id": 1, "method": m}, methods),  # no jsonrpc
    st.builds(
        lambda i, m: {"jsonrpc": "2.0", "id": i, "method": m},
        not_ids.filter(lambda v: v is not None),
        methods,
    ),
    st.builds(lambda m: {"jsonrpc": "2.0", "id": None, "method": m}, methods),
    st.builds(lambda v: {"jsonrpc": "2.0", "id": 1, "method": v}, not_ids | st.integers()),
    st.builds(lambda p: {"jsonrpc": "2.0", "id": 1, "method": "m", "params": p}, not_params),
    st.builds(lambda p: {"jsonrpc": "2.0", "method": "m", "params": p}, not_params),
    st.builds(lambda i: {"jsonrpc": "2.0", "id": i, "result": 1, "error": {"code": 1}}, ids),
    st.builds(lambda i: {"jsonrpc": "2.0", "id": i, "result": 1}, not_ids),
    st.builds(lambda e: {"jsonrpc": "2.0", "id": 1, "error": e}, scalars | st.just({"code": "x"})),
    st.just({"jsonrpc": "2.0", "id": 1}),
    st.just({"jsonrpc": "2.0"}),
)


def as_json(event: Event) -> Any:
    """The event as the plain JSON value a peer would send."""
    return json.loads(encode(event))


@settings(max_examples=EXAMPLES)
@given(events)
def test_any_message_round_trips(event: Event) -> None:
    data = encode(event)
    assert b"\n" not in data  # stdio framing relies on it
    assert decode(data) == event
    assert decode(data.decode()) == event


@settings(max_examples=EXAMPLES // 3)
@given(st.lists(responses | error_responses, min_size=1, max_size=6))
def test_a_batch_of_answers_round_trips(answers: list[Response | ErrorResponse]) -> None:
    assert decode(encode_batch(answers)) == answers


def outcome(data: bytes | str) -> Event | list[Event | RemoteProtocolError] | RemoteProtocolError:
    """What ``decode`` makes of *data*: its events, or the protocol error it raised (anything else
    escapes and fails the test)."""
    try:
        return decode(data)
    except RemoteProtocolError as exc:
        return exc


def _decodes_or_refuses(data: bytes | str) -> None:
    decoded = outcome(data)
    if isinstance(decoded, RemoteProtocolError):
        assert decoded.code in CODEC_CODES, decoded
        assert decoded.request_id is None or isinstance(decoded.request_id, (int, str))
        return
    members = decoded if isinstance(decoded, list) else [decoded]
    assert members
    for member in members:
        assert isinstance(member, (Request, Notification, Response, ErrorResponse, RemoteProtocolError))
        if isinstance(member, RemoteProtocolError):
            assert member.code in CODEC_CODES


@settings(max_examples=EXAMPLES * 2)
@given(st.binary(max_size=200))
def test_any_bytes_decode_or_raise_a_protocol_error(data: bytes) -> None:
    _decodes_or_refuses(data)


@settings(max_examples=EXAMPLES)
@given(json_values)
def test_any_json_value_decodes_or_raises_a_protocol_error(value: Any) -> None:
    _decodes_or_refuses(json.dumps(value).encode())


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow])
@given(events, st.data())
def test_any_mutilated_message_decodes_or_raises_a_protocol_error(event: Event, data: st.DataObject) -> None:
    """Truncated, spliced and byte-flipped versions of real messages: near misses hit more branches."""
    raw = bytearray(encode(event))
    cut = data.draw(st.integers(min_value=0, max_value=len(raw)))
    at = data.draw(st.integers(min_value=0, max_value=max(len(raw) - 1, 0)))
    junk = data.draw(st.binary(min_size=1, max_size=4))
    _decodes_or_refuses(bytes(raw[:cut]))
    _decodes_or_refuses(bytes(raw[:at] + junk + raw[at + 1 :]))


@settings(max_examples=EXAMPLES)
@given(bad_messages)
def test_a_message_that_is_not_json_rpc_is_invalid_request(value: Any) -> None:
    decoded = outcome(json.dumps(value).encode())
    assert isinstance(decoded, RemoteProtocolError), f"{value!r} decoded as {decoded!r}"
    assert decoded.code == INVALID_REQUEST


@settings(max_examples=EXAMPLES // 3)
@given(st.lists(st.tuples(st.booleans(), events, bad_messages), min_size=1, max_size=8))
def test_a_batch_keeps_bad_members_in_place(members: list[tuple[bool, Event, Any]]) -> None:
    batch = [as_json(event) if good else bad for good, event, bad in members]
    decoded = decode(json.dumps(batch).encode())
    assert isinstance(decoded, list) and len(decoded) == len(members)
    for (good, event, _), got in zip(members, decoded, strict=True):
        if good:
            assert got == event
        else:
            assert isinstance(got, RemoteProtocolError) and got.code == INVALID_REQUEST


@settings(max_examples=EXAMPLES)
@given(ids, methods)
def test_a_bad_member_keeps_its_readable_id(request_id: int | str, method: str) -> None:
    """So its error answer is addressed: a request whose params are wrong still names its id."""
    decoded = decode(json.dumps([{"jsonrpc": "2.0", "id": request_id, "method": method, "params": [1]}]))
    assert isinstance(decoded, list)
    [error] = decoded
    assert isinstance(error, RemoteProtocolError) and error.request_id == request_id


def test_an_empty_batch_is_invalid_request() -> None:
    for data in (b"[]", b" [ ] "):
        refused = outcome(data)
        assert isinstance(refused, RemoteProtocolError) and refused.code == INVALID_REQUEST


def test_deep_nesting_is_a_parse_error_not_a_crash() -> None:
    for data in (b"[" * 100_000, b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000):
        refused = outcome(data)
        assert isinstance(refused, RemoteProtocolError) and refused.code in CODEC_CODES


def _agrees_with_decode(data: bytes) -> None:
    fast = decode_response(data)
    if fast is not None:
        slow = outcome(data)
        assert isinstance(slow, Response) and (slow.id, slow.result) == (fast.id, fast.result)


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow])
@given(events, bad_messages, st.binary(max_size=60), st.data())
def test_decode_response_takes_only_what_decode_reads_as_that_response(
    event: Event, bad: Any, junk: bytes, data: st.DataObject
) -> None:
    raw = encode(event)
    fast = decode_response(raw)
    if isinstance(event, Response):
        assert fast is not None and (fast.id, fast.result) == (event.id, event.result)
    else:
        assert fast is None
    cut = data.draw(st.integers(min_value=0, max_value=len(raw)))
    for candidate in (raw[:cut], raw[:cut] + junk + raw[cut + 1 :], json.dumps(bad).encode(), junk):
        _agrees_with_decode(candidate)
