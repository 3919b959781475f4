"""A client built on the official ``mcp`` SDK, run as a subprocess by the interoperability tests.

    python official_client.py [--mode auto|legacy] [--call NAME JSON]... -- COMMAND [ARGS...]

Connects to the stdio server COMMAND (or, with mcp 2.x, the Streamable HTTP URL given instead), lists its tools, makes the calls, and prints one JSON object:
``{"protocolVersion", "serverInfo", "tools", "calls"}``. Errors print ``{"error": ...}`` and exit 1.

With ``mcp`` 2.x, ``--mode auto`` (the SDK's default) probes ``server/discover`` and speaks
2026-07-28 to a modern server; ``--mode legacy`` uses the ``initialize`` handshake at the SDK's
latest handshake revision. With ``mcp`` 1.x there is only the handshake, and ``--mode`` is ignored.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any


def dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def with_v2(command: list[str], mode: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    target: Any = (
        command[0]
        if command[0].startswith("http")
        else StdioServerParameters(command=command[0], args=command[1:])
    )
    async with Client(target, mode=mode) as client:
        tools = await client.list_tools()
        results = {name: dump(await client.call_tool(name, arguments)) for name, arguments in calls}
        info = client.server_info
        return {
            "protocolVersion": client.protocol_version,
            "serverInfo": dump(info) if info is not None else None,
            "tools": [dump(t) for t in tools.tools],
            "calls": results,
        }


async def with_v1(command: list[str], calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        tools = await session.list_tools()
        results = {name: dump(await session.call_tool(name, arguments)) for name, arguments in calls}
        return {
            "protocolVersion": init.protocolVersion,
            "serverInfo": dump(init.serverInfo),
            "tools": [dump(t) for t in tools.tools],
            "calls": results,
        }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="auto")
    parser.add_argument("--call", nargs=2, action="append", default=[], metavar=("NAME", "JSON"))
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    calls = [(name, json.loads(arguments)) for name, arguments in args.call]
    import mcp

    try:
        if hasattr(mcp, "Client"):
            out = asyncio.run(with_v2(args.command, args.mode, calls))
        else:
            out = asyncio.run(with_v1(args.command, calls))
    except Exception as exc:  # the test reads the message
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
