"""A server with middleware (for the tests): every request is recorded and answered with the list
of what passed (tool `seen`); `tools/call` middleware refuses `delete_*` tools and stamps results.
Serves stdio, or HTTP on the port given as argv[1]."""

from __future__ import annotations

import sys
from typing import Any

import msgspec

from mcpkit import CallToolResult, Context, Server, TextContent, ToolError
from mcpkit.server import Call, CallNext

server = Server("middleware")
passed: list[str] = []
deleted: list[str] = []


@server.middleware
async def record(call: Call, call_next: CallNext) -> Any:
    passed.append(f"outer>{call.method}")
    result = await call_next(call)
    passed.append(f"outer<{call.method}")
    return result


@server.middleware("tools/call")
async def policy(call: Call, call_next: CallNext) -> Any:
    if str(call.params.get("name", "")).startswith("delete_"):
        raise ToolError(f"{call.params['name']} is refused by policy")
    result = await call_next(call)
    assert isinstance(result, CallToolResult)
    return msgspec.structs.replace(result, content=[*result.content, TextContent(text="stamped")])


@server.tool
def delete_everything() -> str:
    deleted.append("everything")
    return "deleted"


@server.tool
def seen() -> list[str]:
    return [*passed, f"deleted={len(deleted)}"]


@server.tool
async def ask(ctx: Context) -> str:
    answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"hello {answer.content['name'] if answer.content else '?'}"


if __name__ == "__main__":
    if len(sys.argv) > 1:
        server.run("http", port=int(sys.argv[1]))
    else:
        server.run()
