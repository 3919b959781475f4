"""Header mirroring: encoding, decoding and the x-mcp-header rules."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit._headers import (
    decode_header_value,
    encode_header_value,
    header_value_of,
    matches,
    mirrored_parameters,
    value_at,
)


@given(st.text())
def test_any_string_survives_the_header(value: str) -> None:
    encoded = encode_header_value(value)
    assert all(0x20 <= ord(c) < 0x7F or c == "\t" for c in encoded)
    assert decode_header_value(encoded) == value


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ],
)
def test_the_spec_examples(value: str, encoded: str) -> None:
    assert encode_header_value(value) == encoded


def test_values_and_comparison() -> None:
    assert [header_value_of(v) for v in (True, 42, "x", None, 1.5)] == ["true", "42", "x", None, None]
    assert matches("42.0", 42) and matches("42", 42) and not matches("43", 42)
    assert matches("false", False) and not matches("0", False)
    assert value_at({"a": {"b": 3}}, ("a", "b")) == 3 and value_at({"a": 1}, ("a", "b")) is None
    with pytest.raises(ValueError):
        decode_header_value("=?base64?***?=")


def prop(header: str, kind: str = "string") -> dict[str, Any]:
    return {"type": kind, "x-mcp-header": header}


def test_reachable_primitive_unique_tokens_are_accepted() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": prop("Region"),
            "db": {"type": "object", "properties": {"id": prop("Db-Id", "integer")}},
        },
    }
    assert mirrored_parameters(schema) == {"Region": ("region",), "Db-Id": ("db", "id")}


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": prop("Bad Name")}},
        {"type": "object", "properties": {"a": prop("N", "number")}},
        {"type": "object", "properties": {"a": prop("X"), "b": prop("x")}},
        {"type": "object", "properties": {"a": {"type": "array", "items": prop("I")}}},
        {"type": "object", "properties": {"a": {"anyOf": [prop("U")]}}},
        {"type": "object", "$defs": {"D": {"type": "object", "properties": {"z": prop("Z")}}}},
    ],
)
def test_violations_make_the_tool_invalid(schema: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        mirrored_parameters(schema)
