"""A stdio server built on the official ``mcp`` SDK's high-level API, for interoperability tests.

Runs under ``mcp`` 2.x (``MCPServer``) and 1.x (``FastMCP``), over stdio or, with ``--http PORT``,
Streamable HTTP at ``http://127.0.0.1:PORT/mcp`` (``--sse PORT``: HTTP+SSE at ``/sse``). Tools: ``get_weather``, ``add``,
``echo`` and ``fail`` (raises, so the call ends with ``isError``).
"""

from __future__ import annotations

try:
    from mcp.server.mcpserver import MCPServer as HighLevel  # mcp 2.x
except ImportError:
    from mcp.server.fastmcp import FastMCP as HighLevel  # type: ignore[no-redef]  # mcp 1.x

server = HighLevel("sdk-weather")


@server.tool()
def get_weather(location: str) -> str:
    """Current weather for a location."""
    return f"Weather in {location}: 22°C, partly cloudy"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("this tool always fails")


if __name__ == "__main__":
    import sys

    # python official_server.py --http PORT (Streamable HTTP) | --sse PORT (2024-11-05 HTTP+SSE)
    if len(sys.argv) == 3 and sys.argv[1] in ("--http", "--sse"):
        transport = "streamable-http" if sys.argv[1] == "--http" else "sse"
        if HighLevel.__name__ == "FastMCP":  # mcp 1.x: host and port are settings
            server.settings.host, server.settings.port = "127.0.0.1", int(sys.argv[2])
            server.run(transport)
        else:
            server.run(transport, host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
