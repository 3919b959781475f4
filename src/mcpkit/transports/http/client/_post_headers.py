"""The headers of one MCP POST: the standard ones the revision asks for, its fixed part made once.

A POST carries ``Accept``, ``Content-Type``, ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``
(the tool, prompt or resource it names), ``Mcp-Session-Id`` in a handshake-era session, and for a
``tools/call`` the ``Mcp-Param-*`` headers the tool's schema mirrors from its arguments. All but the
last depend only on the method, the name, the revision and the session, and a client calls the same
few tools over and over: those lines are kept, as bytes, per combination (a bounded table), and only
the ``Mcp-Param-*`` lines are made per call.

>>> heads = PostHeaders()
>>> request = {"method": "tools/call", "params": {"name": "echo", "arguments": {"city": "Oslo"}}}
>>> heads.mirrored["echo"] = {"City": ("city",)}
>>> heads.lines(request, "2026-07-28", None).decode().splitlines()[2:]
['MCP-Protocol-Version: 2026-07-28', 'Mcp-Method: tools/call', 'Mcp-Name: echo', 'Mcp-Param-City: Oslo']
"""

from __future__ import annotations

from typing import Any, Final

from ...._headers import encode_header_value, header_value_of, value_at
from ...._methods import mcp_name_field

__all__ = ["PostHeaders"]

_META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
_KEPT: Final = 1024  # fixed parts kept at most (a client naming ever new tools starts the table again)


class PostHeaders:
    """Makes the headers of each POST for one transport (see the module)."""

    __slots__ = ("_fixed", "mirrored")

    def __init__(self) -> None:
        #: Per tool name, the ``Mcp-Param-*`` headers its schema declares and where each value sits
        #: in the arguments (filled in from ``tools/list``).
        self.mirrored: dict[str, dict[str, tuple[str, ...]]] = {}
        self._fixed: dict[tuple[str, Any, Any, str | None], bytes] = {}

    def lines(self, data: dict[str, Any], version: str | None, session_id: str | None) -> bytes:
        """The header lines of a POST of *data* (a decoded JSON-RPC message), each ending in CRLF;
        *version* is the transport's revision, unless the message names its own."""
        method, name, revision, params = _read(data, version)
        if type(method) is not str or not _plain(name) or not _plain(revision):  # odd: not kept
            return _encode(self.headers(data, version, session_id))
        key = (method, name, revision, session_id)
        fixed = self._fixed.get(key)
        if fixed is None:
            if len(self._fixed) >= _KEPT:
                self._fixed.clear()
            fixed = self._fixed[key] = _encode(_fixed_headers(method, name, revision, session_id))
        if method == "tools/call" and name in self.mirrored:
            return fixed + _encode(self._params(name, params))
        return fixed

    def headers(self, data: dict[str, Any], version: str | None, session_id: str | None) -> dict[str, str]:
        """The same headers as a dict (for the awaiting path, which sends them with httpx)."""
        method, name, version, params = _read(data, version)
        headers = _fixed_headers(method, name, version, session_id)
        if method == "tools/call":
            headers.update(self._params(name, params))
        return headers

    def _params(self, name: Any, params: dict[str, Any]) -> dict[str, str]:
        found: dict[str, str] = {}
        for header, path in self.mirrored.get(str(name), {}).items():
            value = header_value_of(value_at(params.get("arguments"), path))
            if value is not None:
                found[f"Mcp-Param-{header}"] = value
        return found


def _read(data: dict[str, Any], version: str | None) -> tuple[Any, Any, Any, dict[str, Any]]:
    """The method, its name (the tool, prompt or resource), the revision, and the params."""
    method = data.get("method")
    raw_params = data.get("params")
    params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
    meta = params.get("_meta")
    version = (meta.get(_META_VERSION) if isinstance(meta, dict) else None) or version
    if method == "initialize":
        version = params.get("protocolVersion")
    field = mcp_name_field(method) if isinstance(method, str) else None
    return method, params.get(field) if field is not None else None, version, params


def _plain(part: Any) -> bool:
    return part is None or type(part) is str


def _fixed_headers(method: Any, name: Any, version: Any, session_id: str | None) -> dict[str, str]:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if isinstance(version, str) and version.isascii() and version.isprintable():
        headers["MCP-Protocol-Version"] = version
    if isinstance(method, str):
        plain = method.isascii() and method.isprintable()
        headers["Mcp-Method"] = method if plain else encode_header_value(method)
        if isinstance(name, str):
            headers["Mcp-Name"] = encode_header_value(name)
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    return headers


def _encode(headers: dict[str, str]) -> bytes:
    return "".join(f"{k}: {v}\r\n" for k, v in headers.items()).encode("latin-1")
