"""The benchmark's server on the official ``mcp`` SDK's low-level ``Server`` (the baseline of the ratios).

``python sdk_lowlevel.py`` serves stdio; ``python sdk_lowlevel.py --http PORT`` serves Streamable HTTP at
``http://127.0.0.1:PORT/mcp`` with the SDK's defaults (sessions, SSE answers).
"""

from __future__ import annotations

import sys
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

TOOLS = [
    types.Tool(
        name="echo",
        description="Return the text unchanged.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    ),
    types.Tool(
        name="add",
        description="Add two integers.",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    ),
]


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    arguments = params.arguments or {}
    if params.name == "echo":
        text = str(arguments["text"])
    elif params.name == "add":
        text = str(arguments["a"] + arguments["b"])
    else:
        return types.CallToolResult(
            content=[types.TextContent(text=f"unknown tool {params.name}")], is_error=True
        )
    return types.CallToolResult(content=[types.TextContent(text=text)])


server = Server("bench-sdk-lowlevel", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        import uvicorn

        uvicorn.run(
            server.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[2]), log_level="warning"
        )
    else:
        import anyio

        anyio.run(serve_stdio)
