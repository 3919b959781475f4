"""The JSON-RPC codec: round trips, the envelope rules, and the spec's own example messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit import _jsonrpc as jsonrpc
from mcpkit._errors import INVALID_REQUEST, PARSE_ERROR, RemoteProtocolError

from .conftest import SPEC, requires_spec

ids = st.one_of(st.integers(min_value=-(2**53), max_value=2**53), st.text(max_size=20))
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.text(max_size=20)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
params = st.dictionaries(st.text(max_size=10), json_values, max_size=4)
methods = st.text(min_size=1, max_size=30)
events = st.one_of(
    st.builds(jsonrpc.Request, id=ids, method=methods, params=params | st.just(jsonrpc.UNSET)),
    st.builds(jsonrpc.Notification, method=methods, params=params | st.just(jsonrpc.UNSET)),
    st.builds(jsonrpc.Response, id=ids, result=json_values),
    st.builds(
        jsonrpc.ErrorResponse,
        id=ids | st.none(),
        error=st.fixed_dictionaries({"code": st.integers(-33000, 33000), "message": st.text(max_size=20)}),
    ),
)


@given(events)
def test_round_trip(event: jsonrpc.Event) -> None:
    data = jsonrpc.encode(event)
    assert b"\n" not in data  # stdio framing depends on it
    assert jsonrpc.decode(data) == event


@given(st.lists(events, min_size=1, max_size=5))
def test_batches_decode_member_by_member(batch: list[jsonrpc.Event]) -> None:
    data = b"[" + b",".join(jsonrpc.encode(e) for e in batch) + b"]"
    assert jsonrpc.decode(data) == batch


@given(st.binary(max_size=50))
def test_arbitrary_bytes_never_escape_as_other_errors(data: bytes) -> None:
    try:
        jsonrpc.decode(data)
    except RemoteProtocolError as exc:
        assert exc.code in (PARSE_ERROR, INVALID_REQUEST)  # noqa: PT017


@pytest.mark.parametrize(
    ("text", "code", "request_id"),
    [
        ("{", PARSE_ERROR, None),
        ("[]", INVALID_REQUEST, None),
        ("42", INVALID_REQUEST, None),
        ('{"jsonrpc": "1.0", "id": 3, "method": "x"}', INVALID_REQUEST, 3),
        ('{"jsonrpc": "2.0", "id": null, "method": "x"}', INVALID_REQUEST, None),
        ('{"jsonrpc": "2.0", "id": true, "method": "x"}', INVALID_REQUEST, None),
        ('{"jsonrpc": "2.0", "id": 1.5, "method": "x"}', INVALID_REQUEST, None),
        ('{"jsonrpc": "2.0", "id": 7, "method": 12}', INVALID_REQUEST, 7),
        ('{"jsonrpc": "2.0", "id": "a", "method": "x", "params": [1, 2]}', INVALID_REQUEST, "a"),
        ('{"jsonrpc": "2.0", "id": 1}', INVALID_REQUEST, 1),
        (
            '{"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": ""}}',
            INVALID_REQUEST,
            None,
        ),
    ],
)
def test_envelope_errors(text: str, code: int, request_id: Any) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        jsonrpc.decode(text)
    assert info.value.code == code
    assert info.value.request_id == request_id


def test_bad_batch_member_is_reported_in_place() -> None:
    decoded = jsonrpc.decode(
        '[{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": null}]'
    )
    assert isinstance(decoded, list)
    assert decoded[0] == jsonrpc.Request(id=1, method="ping")
    assert isinstance(decoded[1], RemoteProtocolError)


def _envelope_examples() -> list[Path]:
    # The spec's example folders hold whole messages and bare objects; the codec takes the former.
    # Without the spec there are none, and the tests below are skipped (not parametrized away).
    return sorted(path for path in SPEC.glob("*/examples/*/*.json") if '"jsonrpc"' in path.read_text())


@requires_spec
@pytest.mark.parametrize("path", _envelope_examples(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_spec_example_round_trips(path: Path) -> None:
    original = json.loads(path.read_text())
    event = jsonrpc.decode(path.read_bytes())
    assert not isinstance(event, list)
    assert json.loads(jsonrpc.encode(event)) == original


@requires_spec
def test_spec_examples_were_found() -> None:
    assert len(_envelope_examples()) >= 30
