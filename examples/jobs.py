"""Long-running work as tasks: start it, poll it, feed it, cancel it.

``slow_compute`` may run as a task: a 2025-11-25 client asks for one with ``params.task`` and polls
``tasks/get`` / waits on ``tasks/result``; for a 2026-07-28 client that declares the
``io.modelcontextprotocol/tasks`` extension the server starts one by itself, and the client polls
``tasks/get`` (mcpkit's ``Client.call_tool`` does all of that for you). ``approve`` asks the user
while it runs as a task. ``greet`` always answers at once.

Run it with ``mcpkit run examples/jobs.py``.
"""

from __future__ import annotations

import asyncio

from mcpkit import Context, InternalError, Server, ToolError

server = Server("jobs", "1.0.0")


@server.tool
def greet(name: str) -> str:
    """Say hello (never a task)."""
    return f"Hello, {name}!"


@server.tool(task_support="optional")
async def slow_compute(seconds: float, ctx: Context, label: str = "job") -> str:
    """Work for a while, reporting progress each tenth of the time."""
    for step in range(10):
        await asyncio.sleep(seconds / 10)
        await ctx.report_progress(step + 1, 10)
    return f"{label} done after {seconds:g}s"


@server.tool(task_support="optional")
async def approve(job: str, ctx: Context) -> str:
    """Ask the user to approve a job, then run it."""
    answer = await ctx.elicit(f"Run {job}?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
    if answer.action != "accept" or not (answer.content or {}).get("ok"):
        raise ToolError(f"{job} was not approved")
    return f"{job} approved and run"


@server.tool(task_support="optional")
async def broken_job() -> str:
    """A task whose server side fails: a protocol-level failure (the task is "failed"), unlike a
    tool error (the task is "completed" with ``isError``)."""
    raise InternalError("the worker crashed")


if __name__ == "__main__":
    server.run()
