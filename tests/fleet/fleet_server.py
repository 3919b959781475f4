"""The server every fleet test runs on each node (``mcpkit run fleet_server.py --redis URL``)."""

from __future__ import annotations

import asyncio
import os

from mcpkit import Context, Server, ToolAnnotations

server = Server("fleet", "1.0.0")


@server.tool
def whoami() -> str:
    """This node's process id: which node answered."""
    return str(os.getpid())


@server.tool
async def echo(text: str) -> str:
    """The text back."""
    return text


@server.tool
async def touch(uri: str) -> str:
    """Announce that *uri* changed, and that the tool list did."""
    await server.notify_resource_updated(uri)
    await server.notify_list_changed("tools")
    return str(os.getpid())


@server.tool
async def ask(ctx: Context) -> str:
    """Two questions, answered over two round trips (2026-07-28) or two server requests."""
    form = {"type": "object", "properties": {"value": {"type": "string"}}}
    first = await ctx.elicit("First?", form, key="first")
    second = await ctx.elicit("Second?", form, key="second")
    return f"{(first.content or {}).get('value')}+{(second.content or {}).get('value')}@{os.getpid()}"


@server.tool(task_support="optional")
async def ask_later(ctx: Context) -> str:
    """:func:`ask`, run as a task: its questions wait for ``tasks/update``."""
    return await ask(ctx)


@server.tool(task_support="optional")
async def slow(seconds: float, ctx: Context) -> str:
    """Work for *seconds*, reporting progress ten times."""
    for step in range(10):
        await asyncio.sleep(seconds / 10)
        await ctx.report_progress(step + 1, 10, f"on {os.getpid()}")
    return f"slept {seconds:g}s on {os.getpid()}"


@server.resource("note://{name}")
def note(name: str) -> str:
    """A note."""
    return f"note {name}"


def _append(path: str, line: str) -> None:
    with open(path, "a") as file:
        file.write(line)


async def record(path: str, seconds: float, ctx: Context) -> str:
    """Append this node's process id to the file *path* (a side effect a test counts: one line per
    execution), then work for *seconds*, reporting progress ten times."""
    await asyncio.to_thread(_append, path, f"{os.getpid()}\n")
    for step in range(10):
        await asyncio.sleep(seconds / 10)
        await ctx.report_progress(step + 1, 10, f"on {os.getpid()}")
    return f"recorded on {os.getpid()}"


# One function, four tools: what a fleet does when the node running a call dies depends on these.
server.add_tool(record)  # not safe to run twice: never taken over
server.add_tool(record, name="record_idempotent", annotations=ToolAnnotations(idempotent_hint=True))
server.add_tool(record, name="record_read_only", annotations=ToolAnnotations(read_only_hint=True))
server.add_tool(record, name="record_repeatable", repeatable=True)
server.add_tool(
    record, name="record_not_repeatable", annotations=ToolAnnotations(idempotent_hint=True), repeatable=False
)
server.add_tool(record, name="record_task", task_support="optional")  # may run as a task
