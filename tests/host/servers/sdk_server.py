"""A server on the official ``mcp`` SDK (``MCPServer`` in 2.x, ``FastMCP`` in 1.x) for the host tests."""

from __future__ import annotations

try:
    from mcp.server.mcpserver import MCPServer as HighLevel  # mcp 2.x
except ImportError:
    from mcp.server.fastmcp import FastMCP as HighLevel  # type: ignore[no-redef]  # mcp 1.x

server = HighLevel("sdk-tools")


@server.tool()
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


@server.resource("sdk://motto")
def motto() -> str:
    """A fixed resource."""
    return "keep it small"


@server.prompt()
def greet(name: str) -> str:
    """A greeting prompt."""
    return f"Say hello to {name}."


if __name__ == "__main__":
    server.run()
