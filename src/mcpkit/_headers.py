"""HTTP header values that mirror the request body (2026-07-28 Streamable HTTP), with no I/O.

``Mcp-Name`` and ``Mcp-Param-{Name}`` carry body values in headers so that intermediaries can route on
them; the server checks they agree with the body. Values that are not plain header-safe ASCII travel
as ``=?base64?{UTF-8 bytes, base64}?=``. A tool parameter is mirrored when its schema names a header
with ``x-mcp-header``, under constraints this module checks (token syntax, unique, primitive, reached
through ``properties`` only).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Final

__all__ = [
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
