"""HTTP header values that mirror the request body (2026-07-28 Streamable HTTP), with no I/O.

``Mcp-Name`` and ``Mcp-Param-{Name}`` carry body values in headers so that intermediaries can route
on them; the server checks they agree with the body (:func:`check_request_headers`: "Servers that
process the request body MUST reject requests where the values specified in the headers do not match
the corresponding values in the request body", -32020). Values that are not plain header-safe ASCII
travel as ``=?base64?{UTF-8 bytes, base64}?=``. A tool parameter is mirrored when its schema names a
header with ``x-mcp-header``, under constraints this module checks (token syntax, unique, primitive,
reached through ``properties`` only).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from typing import Any, Final

from ._errors import HeaderMismatch
from ._methods import mcp_name_field

__all__ = [
    "check_request_headers",
    "check_version_header",
    "decode_header_value",
    "encode_header_value",
    "header",
    "header_value_of",
    "matches",
    "mirrored_parameters",
    "value_at",
]

_SAFE: Final = frozenset(chr(c) for c in range(0x20, 0x7F)) | {"\t"}
_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_MAX_SAFE_INTEGER: Final = 2**53 - 1
_PRIMITIVE: Final = frozenset({"string", "integer", "boolean"})


def header(name: str) -> Any:
    """Mark a tool parameter to be mirrored into the ``Mcp-Param-{name}`` HTTP header::

    async def query(region: Annotated[str, header("Region")], sql: str) -> str: ...
    """
    import msgspec

    if not _TOKEN.fullmatch(name):
        raise ValueError(f"header name {name!r} is not an HTTP field-name token")
    return msgspec.Meta(extra_json_schema={"x-mcp-header": name})


def encode_header_value(value: str) -> str:
    """*value* as a header value: itself when plain and unambiguous, else the base64 sentinel form."""
    plain = bool(value) and set(value) <= _SAFE and value == value.strip()
    if plain and not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


def decode_header_value(value: str) -> str:
    """A received header value with the sentinel encoding undone. Raises ``ValueError`` if malformed."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise ValueError(f"malformed base64 header value {value!r}") from None
    # Printable ASCII is the usual case: two C calls instead of a set of the value's characters.
    if not (value.isascii() and value.isprintable()) and not set(value) <= _SAFE:
        raise ValueError(f"header value {value!r} has characters a header cannot carry")
    return value


def header_value_of(value: Any) -> str | None:
    """How a parameter's value is written in its header (``None``: no header is sent)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return encode_header_value(value)
    return None


def mirrored_parameters(input_schema: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """``{header name: property path}`` for the ``x-mcp-header`` annotations of a tool's input schema.

    Raises:
        ValueError: an annotation breaks the spec's constraints (the tool definition is invalid).
    """
    found: dict[str, tuple[str, ...]] = {}
    _walk(input_schema, (), found, reachable=True)
    lowered = [name.lower() for name in found]
    if len(set(lowered)) != len(lowered):
        raise ValueError("x-mcp-header values must be unique (case-insensitively)")
    return found


def _walk(schema: Any, path: tuple[str, ...], found: dict[str, tuple[str, ...]], *, reachable: bool) -> None:
    if not isinstance(schema, dict):
        return
    name = schema.get("x-mcp-header")
    if name is not None:
        if not reachable or not path:
            raise ValueError(
                f"x-mcp-header {name!r} must sit on a property reached through 'properties' only"
            )
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise ValueError(f"x-mcp-header {name!r} is not an HTTP field-name token")
        if schema.get("type") not in _PRIMITIVE:
            raise ValueError(f"x-mcp-header {name!r} must annotate a string, integer or boolean parameter")
        if name in found:
            raise ValueError(f"x-mcp-header {name!r} appears twice")
        found[name] = path
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            for prop, sub in value.items():
                _walk(sub, (*path, prop), found, reachable=reachable)
        elif isinstance(value, dict):
            _walk(value, path, found, reachable=False)
        elif isinstance(value, list):
            for item in value:
                _walk(item, path, found, reachable=False)


def value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    """The argument at *path* (``None`` when absent)."""
    for key in path:
        if not isinstance(arguments, dict):
            return None
        arguments = arguments.get(key)
    return arguments


def matches(header: str, value: Any) -> bool:
    """Whether a decoded header agrees with the body *value* (integers compare as numbers)."""
    if isinstance(value, bool):
        return header == ("true" if value else "false")
    if isinstance(value, int):
        try:
            number = float(header)
        except ValueError:
            return False
        return number == value and abs(value) <= _MAX_SAFE_INTEGER
    return isinstance(value, str) and header == value


def check_version_header(headers: dict[str, str], version: str) -> None:
    """``MCP-Protocol-Version`` must name the revision the body's ``_meta`` names (-32020)."""
    sent = headers.get("mcp-protocol-version")
    if sent != version:
        raise HeaderMismatch(
            f"Header mismatch: MCP-Protocol-Version {sent!r} does not match body {version!r}"
        )


def check_request_headers(
    method: str,
    params: dict[str, Any],
    headers: dict[str, str],
    mirrored: Callable[[str], dict[str, tuple[str, ...]]],
) -> None:
    """The headers naming the method and its target must be there and agree with the body (-32020
    otherwise). *params*: the request's (``{}`` when it has none); *headers*: lower-cased names;
    *mirrored*: a tool's ``{header: argument path}`` by its name (asked for ``tools/call`` only).

    >>> check_request_headers("tools/call", {"name": "add"}, {"mcp-method": "tools/call"}, dict)
    Traceback (most recent call last):
    ...
    mcpkit._errors.HeaderMismatch: Header mismatch: Mcp-Name is required for tools/call
    """
    sent_method = headers.get("mcp-method")
    if sent_method != method:
        raise HeaderMismatch(f"Header mismatch: Mcp-Method {sent_method!r} does not match body {method!r}")
    field = mcp_name_field(method)
    if field is not None:
        name = headers.get("mcp-name")
        if name is None:
            raise HeaderMismatch(f"Header mismatch: Mcp-Name is required for {method}")
        if _decoded(name) != params.get(field):
            raise HeaderMismatch(
                f"Header mismatch: Mcp-Name header value {name!r} does not match body value {params.get(field)!r}"
            )
    if method == "tools/call":
        tool = params.get("name")
        if isinstance(tool, str):
            found = mirrored(tool)
            if found:  # most tools mirror no argument into a header
                _check_parameter_headers(params, headers, found)


def _decoded(value: str) -> str:
    try:
        return decode_header_value(value)
    except ValueError as exc:
        raise HeaderMismatch(f"Header mismatch: {exc}") from None


def _check_parameter_headers(
    params: dict[str, Any], headers: dict[str, str], mirrored: dict[str, tuple[str, ...]]
) -> None:
    """``Mcp-Param-*`` headers must be present for every mirrored argument, and agree with it."""
    arguments = params.get("arguments")
    for name, path in mirrored.items():
        value = value_at(arguments, path)
        if value is None:
            continue  # "Server MUST NOT expect the header"
        sent = headers.get(f"mcp-param-{name.lower()}")
        if sent is None:
            raise HeaderMismatch(
                f"Header mismatch: Mcp-Param-{name} is required when {'.'.join(path)} is given"
            )
        if not matches(_decoded(sent), value):
            raise HeaderMismatch(
                f"Header mismatch: Mcp-Param-{name} value {sent!r} does not match body value {value!r}"
            )
