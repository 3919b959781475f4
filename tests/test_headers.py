"""Header mirroring: encoding, decoding and the x-mcp-header rules."""

from __future__ import annotations

import doctest
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit import _headers
from mcpkit._errors import HeaderMismatch
from mcpkit._headers import (
    check_request_headers,
    check_version_header,
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


def test_the_docstring_examples_run() -> None:
    failed, attempted = doctest.testmod(_headers, optionflags=doctest.ELLIPSIS)
    assert failed == 0 and attempted > 0


MIRRORED = {"Region": ("region",), "Tenant": ("where", "tenant")}


def _mirrored(tool: str) -> dict[str, tuple[str, ...]]:
    return MIRRORED if tool == "deploy" else {}


def _call(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": "deploy", "arguments": arguments}


CALL_HEADERS = {"mcp-method": "tools/call", "mcp-name": "deploy"}


@pytest.mark.parametrize(
    ("method", "params", "headers"),
    [
        ("tools/call", _call({}), CALL_HEADERS),
        ("tools/call", _call({"region": "eu"}), {**CALL_HEADERS, "mcp-param-region": "eu"}),
        # An argument that is not given: "Server MUST NOT expect the header".
        ("tools/call", _call({"where": {}}), CALL_HEADERS),
        (
            "tools/call",
            _call({"where": {"tenant": "ü"}}),
            {**CALL_HEADERS, "mcp-param-tenant": "=?base64?w7w=?="},
        ),
        ("resources/read", {"uri": "notes://1"}, {"mcp-method": "resources/read", "mcp-name": "notes://1"}),
        ("tools/list", {}, {"mcp-method": "tools/list"}),
    ],
)
def test_headers_that_agree_with_the_body_pass(
    method: str, params: dict[str, Any], headers: dict[str, str]
) -> None:
    check_request_headers(method, params, headers, _mirrored)


@pytest.mark.parametrize(
    ("method", "params", "headers", "says"),
    [
        ("tools/call", _call({}), {"mcp-name": "deploy"}, "Mcp-Method None"),
        ("tools/call", _call({}), {**CALL_HEADERS, "mcp-method": "tools/list"}, "Mcp-Method 'tools/list'"),
        ("tools/call", _call({}), {"mcp-method": "tools/call"}, "Mcp-Name is required"),
        (
            "tools/call",
            _call({}),
            {**CALL_HEADERS, "mcp-name": "other"},
            "does not match body value 'deploy'",
        ),
        ("tools/call", _call({}), {**CALL_HEADERS, "mcp-name": "=?base64?!!?="}, "Header mismatch"),
        ("tools/call", _call({"region": "eu"}), CALL_HEADERS, "Mcp-Param-Region is required"),
        (
            "tools/call",
            _call({"region": "eu"}),
            {**CALL_HEADERS, "mcp-param-region": "us"},
            "Mcp-Param-Region",
        ),
        ("prompts/get", {"name": "a"}, {"mcp-method": "prompts/get", "mcp-name": "b"}, "Mcp-Name header"),
    ],
)
def test_headers_that_disagree_are_refused(
    method: str, params: dict[str, Any], headers: dict[str, str], says: str
) -> None:
    with pytest.raises(HeaderMismatch, match=re.escape(says)):
        check_request_headers(method, params, headers, _mirrored)


def test_the_version_header_names_the_body_revision() -> None:
    check_version_header({"mcp-protocol-version": "2026-07-28"}, "2026-07-28")
    for headers in ({}, {"mcp-protocol-version": "2025-11-25"}):
        with pytest.raises(HeaderMismatch) as raised:
            check_version_header(headers, "2026-07-28")
        assert raised.value.code == -32020
