"""A parent with no middleware of its own mounting two servers with ``tools/call`` middleware (for
the tests of the shortest ways through middleware and mounts): ``kid`` has one middleware (it
records, refuses ``drop``, and changes the arguments of ``double``), ``duo`` two (recorded in
order; the outer one stamps the result). ``trail`` answers what the middleware saw, and clears it.

Serves stdio, or HTTP on the port given as argv[1]."""

from __future__ import annotations

import sys
from typing import Any

import msgspec

from mcpkit import CallToolResult, Context, Server, TextContent, ToolError
from mcpkit.server import Call, CallNext

TRAIL: list[str] = []


def build() -> Server:
    kid = Server("kid")

    @kid.middleware("tools/call")
    async def guard(call: Call, call_next: CallNext) -> Any:
        name = call.params["name"]
        TRAIL.append(f"kid>{name}")
        if name == "drop":
            raise ToolError("drop is switched off")
        if name == "double":
            arguments = {"x": call.params["arguments"]["x"] * 2}
            return await call_next(Call(call.method, {**call.params, "arguments": arguments}, call.context))
        return await call_next(call)

    @kid.tool
    async def echo(text: str) -> str:
        return text

    @kid.tool
    async def double(x: int) -> int:
        return x

    @kid.tool
    async def drop() -> str:
        TRAIL.append("dropped")
        return "dropped"

    @kid.tool
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit(
            "Your name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"hello {answer.content['name'] if answer.content else '?'}"

    duo = Server("duo")

    @duo.middleware("tools/call")
    async def outer(call: Call, call_next: CallNext) -> Any:
        TRAIL.append(f"outer>{call.params['name']}")
        result = await call_next(call)
        TRAIL.append(f"outer<{type(result).__name__}")
        assert isinstance(result, CallToolResult)
        return msgspec.structs.replace(result, content=[*result.content, TextContent(text="stamped")])

    @duo.middleware("tools/call")
    async def inner(call: Call, call_next: CallNext) -> Any:
        TRAIL.append(f"inner>{call.params['name']}")
        result = await call_next(call)
        TRAIL.append(f"inner<{type(result).__name__}")
        return result

    @duo.tool
    async def echo2(text: str) -> str:
        return text

    parent = Server("parent")

    @parent.tool
    def trail() -> list[str]:
        seen = list(TRAIL)
        TRAIL.clear()
        return seen

    parent.mount(kid, namespace="kid")
    parent.mount(duo, namespace="duo")
    return parent


if __name__ == "__main__":
    server = build()
    if len(sys.argv) > 1:
        server.run("http", port=int(sys.argv[1]))
    else:
        server.run()
