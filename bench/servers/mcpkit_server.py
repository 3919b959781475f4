"""The benchmark's mcpkit server: the high-level API, as a user would write it.

Served with ``mcpkit run bench/servers/mcpkit_server.py`` (stdio) or with ``--transport http``.
``echo_sync`` is ``echo`` written as a plain ``def``, the way most tools are written: it runs on a
worker thread, and the benchmark measures it beside the ``async def`` one.
"""

from __future__ import annotations

from mcpkit import Server

server = Server("bench-mcpkit", "1.0.0")


@server.tool
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
def echo_sync(text: str) -> str:
    """Return the text unchanged (a sync tool: it runs on a worker thread)."""
    return text
