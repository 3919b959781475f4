"""The server behind the feature matrix (``tests/e2e/test_matrix.py``).

One file serves every cell of the matrix: over stdio (``mcpkit run matrix_server.py``, one process
per client) and over HTTP (``mcpkit run matrix_server.py --transport http --port N``: Streamable
HTTP at ``/mcp`` and the 2024-11-05 HTTP+SSE transport at ``/sse``, one process shared by every HTTP
cell of a test run). Because that process is shared, whatever a tool remembers is filed under a
``key`` the test makes up, so cells never see each other's state.

``page_size=3`` and more tools, resources, templates and prompts than that: every list is paginated.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

from mcpkit import Context, PromptMessage, ResourceNotFound, Server, TextContent

server = Server("matrix", "1.0.0", page_size=3)

#: What the tools remember, per test key: "started"/"cancelled"/"finished" for ``slow``, the number
#: of runs of ``plan``.
SLOW: dict[str, str] = {}
RUNS: dict[str, int] = {}

# -- tools -----------------------------------------------------------------------------------------


@server.tool
def echo(text: str) -> str:
    """Say it back."""
    return f"echo: {text}"


class Weather(TypedDict):
    city: str
    celsius: int
    sky: str


@server.tool
def weather(city: str) -> Weather:
    """Structured output: an outputSchema and structuredContent (2025-06-18 and later)."""
    return {"city": city, "celsius": len(city), "sky": "clear"}


@server.tool
async def count_up(steps: int, ctx: Context) -> str:
    """Report progress once per step."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted to {steps}"


@server.tool
async def chatter(key: str, ctx: Context) -> str:
    """Log one message at each of three levels."""
    await ctx.debug(f"debug {key}")
    await ctx.info(f"info {key}")
    await ctx.warning(f"warning {key}")
    return "logged"


@server.tool
async def ask_form(question: str, ctx: Context) -> str:
    """Form-mode elicitation: the user's answer, as the tool received it."""
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name"],
    }
    answer = await ctx.elicit(question, schema)
    content = answer.content if isinstance(answer.content, dict) else None
    return f"{answer.action} {sorted(content.items()) if content is not None else None}"


@server.tool
async def ask_url(service: str, ctx: Context) -> str:
    """URL-mode elicitation (2025-11-25 and later)."""
    answer = await ctx.elicit_url(f"Link {service}", f"https://auth.example.com/{service}")
    return f"{answer.action}"


@server.tool
async def ask_model(prompt: str, ctx: Context) -> str:
    """Sampling: the client's model answers."""
    reply = await ctx.sample(prompt, max_tokens=42)
    text = reply.content.get("text") if isinstance(reply.content, dict) else None
    return f"{reply.model}: {text}"


@server.tool
async def roots(ctx: Context) -> list[str]:
    """The client's roots, as name=uri."""
    return [f"{root.name}={root.uri}" for root in await ctx.list_roots()]


@server.tool
async def ping_client(ctx: Context) -> str:
    """Ping the client (handshake era)."""
    await ctx.ping()
    return "pong"


@server.tool
async def plan(key: str, ctx: Context) -> str:
    """Elicit, then sample, in one call: 2026-07-28 answers it over several rounds, replaying it."""
    RUNS[key] = RUNS.get(key, 0) + 1
    answer = await ctx.elicit("Go ahead?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
    ok = isinstance(answer.content, dict) and answer.content.get("ok") is True
    reply = await ctx.sample(f"Plan for {key}", max_tokens=10)
    text = reply.content.get("text") if isinstance(reply.content, dict) else None
    return f"{answer.action} ok={ok} idea={text}"


@server.tool
def runs(key: str) -> int:
    """How many times ``plan`` ran for *key*."""
    return RUNS.get(key, 0)


@server.tool
async def slow(key: str) -> str:
    """Take 30 seconds, noting whether the wait was cancelled."""
    SLOW[key] = "started"
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        SLOW[key] = "cancelled"
        raise
    SLOW[key] = "finished"
    return "finished"


@server.tool
def was_cancelled(key: str) -> str:
    """What became of ``slow(key)``: unknown, started, cancelled or finished."""
    return SLOW.get(key, "unknown")


@server.tool(task_support="optional")
async def crunch(n: int, ctx: Context) -> str:
    """Square *n* after a short while; says which task it ran as (None: not a task)."""
    await asyncio.sleep(0.2)
    task = ctx.task.task_id if ctx.task is not None else None
    return f"{n}^2={n * n} task={task}"


@server.tool
async def grow(name: str) -> str:
    """Add a tool named *name* while serving: tools/list_changed goes to whoever listens."""

    def added() -> str:
        return f"I am {name}"

    server.add_tool(added, name=name, description="Added at run time.")
    return f"added {name}"


@server.tool
async def touch(uri: str) -> str:
    """Tell the subscribers of *uri* that it changed."""
    await server.resource_updated(uri)
    return f"touched {uri}"


# -- resources: five fixed ones and four templates -------------------------------------------------


def _static(number: int) -> None:
    def read() -> str:
        return f"static resource {number}"

    server.add_resource(read, f"matrix://static/{number}", name=f"static-{number}", mime_type="text/plain")


for _number in range(5):
    _static(_number)


@server.resource("matrix://items/{item_id}", mime_type="text/plain")
def item(item_id: str) -> str:
    """An item; ``missing`` is not there."""
    if item_id == "missing":
        raise ResourceNotFound(f"no item {item_id}", {"uri": f"matrix://items/{item_id}"})
    return f"item {item_id}"


@server.resource("matrix://docs/{doc}")
def doc(doc: str) -> str:
    return f"doc {doc}"


@server.resource("matrix://days/{day}")
def day(day: str) -> str:
    return f"day {day}"


@server.resource("matrix://users/{user}")
def user(user: str) -> str:
    return f"user {user}"


# -- prompts: four, one with a completable argument ------------------------------------------------


@server.prompt(title="Greet someone")
def greet(name: str, style: str = "plain") -> list[PromptMessage]:
    """Greet *name* in a *style*."""
    return [PromptMessage(role="user", content=TextContent(text=f"Greet {name} ({style})."))]


@server.prompt
def farewell() -> str:
    return "Say goodbye."


@server.prompt
def thanks() -> str:
    return "Say thanks."


@server.prompt
def apology() -> str:
    return "Say sorry."


STYLES = ("plain", "pirate", "poetic", "formal")


@server.completion(prompt="greet", argument="style")
def complete_style(value: str, arguments: dict[str, str]) -> list[str]:
    return [style for style in STYLES if style.startswith(value)]


@server.completion(resource="matrix://items/{item_id}", argument="item_id")
def complete_item(value: str, arguments: dict[str, str]) -> list[str]:
    return [i for i in ("apple", "apricot", "banana") if i.startswith(value)]


# -- a low-level handler that fails unexpectedly ---------------------------------------------------


@server.handler("matrix/explode")
async def explode(params: dict[str, Any], ctx: Context) -> Any:
    raise RuntimeError("kaboom")


if __name__ == "__main__":
    server.run()
