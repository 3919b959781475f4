"""A transport seen through: every message in and out goes to a recorder before it moves on.

The inspector's traffic panel shows the wire as it is, so the recording sits right on the real
transport (below the client's session), and sees exactly the bytes that travel.

It also adds the MCP Apps extension to a handshake-era ``initialize``: the ext-apps specification
declares it in ``capabilities.extensions`` of ``initialize`` whatever the revision, while mcpkit's
client leaves ``extensions`` out before 2026-07-28. A host that renders apps has to say so, or a
server that checks the capability offers no UI tools.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from .._transport import Transport

__all__ = ["UI_EXTENSION", "UI_EXTENSION_SETTINGS", "RecordingTransport"]

#: The MCP Apps extension's identifier and what the inspector supports of it.
UI_EXTENSION: Final = "io.modelcontextprotocol/ui"
UI_EXTENSION_SETTINGS: Final = {"mimeTypes": ["text/html;profile=mcp-app"]}

#: ``fn(direction, message)``: direction is ``"out"`` (to the server) or ``"in"``.
Recorder = Callable[[str, bytes], None]


class RecordingTransport:
    """Wraps *inner*; attributes it has (``mirrored``, ``session_id``, ``describe_exit``) show through.

    *on_end* hears, once, that the server ended the connection (a process that exited, say).
    """

    _inner: Transport
    _record: Recorder
    _on_end: Callable[[str], None]

    # The short ways of a transport that has them (stdio: messages handed over as they are read, or
    # sent with no coroutine) would pass the recorder by: not forwarded, so every message is seen.
    listen = None
    send_nowait = None
    receive_nowait = None

    def __init__(self, inner: Transport, record: Recorder, on_end: Callable[[str], None]) -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_record", record)
        object.__setattr__(self, "_on_end", on_end)

    async def receive(self) -> bytes:
        try:
            data = await self._inner.receive()
        except EOFError:
            describe = getattr(self._inner, "describe_exit", None)
            self._on_end(f"the server closed the connection ({describe()})" if describe else "closed")
            raise
        self._record("in", data)
        return data

    async def send(self, message: bytes) -> None:
        message = _declare_ui(message)
        self._record("out", message)
        await self._inner.send(message)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        # The client forgets a lost HTTP session by writing ``transport.session_id``: it must reach
        # the real transport.
        setattr(self._inner, name, value)


def _declare_ui(message: bytes) -> bytes:
    """*message* with the UI extension declared, if it is an ``initialize`` request."""
    if b'"initialize"' not in message:
        return message
    try:
        data = json.loads(message)
    except ValueError:
        return message
    if not isinstance(data, dict) or data.get("method") != "initialize":
        return message
    params = data.get("params")
    capabilities = params.get("capabilities") if isinstance(params, dict) else None
    if not isinstance(capabilities, dict):
        return message
    extensions = capabilities.setdefault("extensions", {})
    if isinstance(extensions, dict):
        extensions.setdefault(UI_EXTENSION, UI_EXTENSION_SETTINGS)
    return json.dumps(data, separators=(",", ":")).encode()
