"""A composed server (for the tests of mounting, transforms, visibility and session state).

``parent`` mounts ``kid`` (with a lifespan, middleware, a prompt with a completion, a template, a
resource whose URI the parent also has, a task-capable tool and a tool that asks a question), which
mounts ``deep``; tools of its own are transformed and tagged. Admin tools add and remove a child
tool, and touch a child resource, so that changes can be caused over the wire. With ``--weather``
the weather example is mounted too, through a proxy of it over stdio.

Serves stdio, or HTTP on the port given as ``--port``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcpkit import Context, Server
from mcpkit.server import Arg, Call, CallNext, Forward

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
#: What the middleware of the parent and of the child saw, in order (read and cleared by ``trail``).
TRAIL: list[str] = []


def build(weather: bool = False) -> Server:
    deep = Server("deep")

    @deep.tool(tags=["deep"])
    def triple(x: int) -> int:
        return x * 3

    @asynccontextmanager
    async def kid_life(server: Server) -> AsyncIterator[str]:
        yield "kid-lifespan"

    kid = Server("kid", lifespan=kid_life)
    kid.mount(deep, namespace="deep")

    @kid.middleware("tools/call")
    async def stamp(call: Call, call_next: CallNext) -> Any:
        TRAIL.append(f"kid:{call.params['name']}")
        return await call_next(call)

    @kid.tool(tags=["kid", "life"])
    def life(ctx: Context) -> str:
        return str(ctx.lifespan)

    @kid.tool
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit(
            "Your name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"hello {answer.content['name'] if answer.content else '?'}"

    @kid.tool(task_support="optional")
    async def slow(n: int) -> int:
        await asyncio.sleep(0.05)
        return n + 1

    @kid.tool
    def shout(word: str) -> str:
        return word.upper()

    def greet(name: str) -> str:
        return f"Hello {name}"

    kid.add_prompt(greet, tags=["kid"])

    @kid.completion(prompt="greet", argument="name")
    def names(value: str, arguments: dict[str, str]) -> list[str]:
        return [name for name in ("ada", "alan", "grace") if name.startswith(value)]

    @kid.resource("data://shared", tags=["kid"])
    def kid_shared() -> str:
        return "kid's"

    @kid.resource("data://kid-only")
    def kid_only() -> str:
        return "only the kid's"

    @kid.resource("notes://{id}")
    def note(id: str) -> str:
        return f"note {id}"

    @asynccontextmanager
    async def parent_life(server: Server) -> AsyncIterator[str]:
        yield "parent-lifespan"

    parent = Server("parent", lifespan=parent_life)

    @parent.middleware("tools/call")
    async def outer(call: Call, call_next: CallNext) -> Any:
        TRAIL.append(f"parent:{call.params['name']}")
        return await call_next(call)

    @parent.tool
    def parent_life_value(ctx: Context) -> str:
        return str(ctx.lifespan)

    @parent.resource("data://shared")
    def parent_shared() -> str:
        return "parent's"

    @parent.tool(tags=["admin"])
    def add_kid_tool(name: str) -> str:
        kid.add_tool(lambda: name, name=name)
        return "added"

    @parent.tool(tags=["admin"])
    def remove_kid_tool(name: str) -> str:
        kid.remove_tool(name)
        return "removed"

    @parent.tool(tags=["admin"])
    async def touch_kid_resource(uri: str) -> str:
        await kid.resource_updated(uri)
        return "touched"

    @parent.tool(tags=["admin"])
    def trail() -> list[str]:
        seen = list(TRAIL)
        TRAIL.clear()
        return seen

    # Session state and per-session visibility.
    @parent.tool
    def count(ctx: Context) -> int:
        ctx.session["count"] = ctx.session.get("count", 0) + 1
        return int(ctx.session["count"])

    @parent.tool
    async def hide(ctx: Context, names: list[str] | None = None, tags: list[str] | None = None) -> str:
        await ctx.disable(names=names or (), tags=tags or ())
        return "hidden"

    @parent.tool
    async def show(ctx: Context, names: list[str] | None = None, tags: list[str] | None = None) -> str:
        await ctx.enable(names=names or (), tags=tags or ())
        return "shown"

    @parent.tool
    def server_disable(names: list[str] | None = None, tags: list[str] | None = None) -> str:
        parent.disable(names=names or (), tags=tags or ())
        return "disabled"

    @parent.tool
    def server_enable(names: list[str] | None = None, tags: list[str] | None = None) -> str:
        parent.enable(names=names or (), tags=tags or ())
        return "enabled"

    # Transforms of its own tool and of mounted ones.
    @parent.tool
    def search(query: str, limit: int = 10, api_key: str = "") -> dict[str, Any]:
        return {"query": query, "limit": limit, "api_key": api_key}

    parent.mount(kid, namespace="kid")
    parent.transform_tool(
        "search",
        name="find",
        description="Find things.",
        arguments={
            "query": Arg(name="q", description="What to look for"),
            "api_key": Arg(hide=True, default="k"),
        },
    )
    parent.transform_tool("kid__deep__triple", name="triple", arguments={"x": Arg(default=7)})

    async def exclaimed(arguments: dict[str, Any], forward: Forward) -> Any:
        result = await forward({**arguments, "word": arguments["word"].strip()})
        return f"{result.structured_content['result']}!" if result.structured_content else "?"

    parent.transform_tool("kid__shout", name="wrapped_shout", title="Shout, wrapped", wrap=exclaimed)
    if weather:
        from mcpkit.compose.proxy import proxy

        forecast = proxy([sys.executable, "-m", "mcpkit", "run", str(EXAMPLES / "weather.py")])
        parent.mount(forecast, namespace="weather")
        parent.transform_tool(
            "weather__get_weather", name="weather_in", arguments={"location": Arg(name="city")}
        )
    return parent


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    parser.add_argument("--weather", action="store_true")
    options = parser.parse_args()
    server = build(options.weather)
    if options.port is not None:
        server.run("http", port=options.port)
    else:
        server.run()
