"""A server for the host tests: slow calls, its own pid, tools added at run time, annotated tools."""

from __future__ import annotations

import asyncio
import os

from mcpkit import Context, Server, ToolAnnotations

server = Server("toolbox", "1.0.0")


@server.tool
async def wait(seconds: float, ctx: Context) -> str:
    """Sleep, reporting progress once first (so a caller sees the call has started)."""
    await ctx.report_progress(0, 1, "started")
    await ctx.info(f"waiting {seconds} s")
    await asyncio.sleep(seconds)
    return f"waited {seconds}"


@server.tool
def pid() -> int:
    """This process's id."""
    return os.getpid()


@server.tool
def echo(text: str, password: str = "") -> str:
    """Echo the text (the password is only there to be redacted in audit logs)."""
    return text


@server.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False))
def delete_everything() -> str:
    """A destructive tool: the policy tests deny or ask for it."""
    return "deleted"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def look() -> str:
    """A read-only tool."""
    return "looked"


@server.tool
def add_tool(name: str) -> str:
    """Register a new tool at run time (tools/list_changed)."""

    def added() -> str:
        return name

    server.add_tool(added, name=name, description="added at run time")
    return f"added {name}"


@server.tool
async def ask_user(ctx: Context) -> str:
    """Elicit a confirmation, then sample, then list roots: every upstream question the host relays."""
    answer = await ctx.elicit("Go ahead?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
    sampled = await ctx.sample("Say something")
    roots = await ctx.list_roots()
    content = sampled.content
    text = content.get("text", "?") if isinstance(content, dict) else getattr(content, "text", "?")
    return f"{answer.action}:{(answer.content or {}).get('ok')}|{text}|{','.join(r.uri for r in roots)}"


@server.tool
async def ask_both(ctx: Context) -> str:
    """Two questions at once (sent concurrently in the handshake era)."""
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    answer, sampled = await ctx.gather(ctx.elicit("Both?", schema), ctx.sample("And you?"))
    content = sampled.content
    text = content.get("text", "?") if isinstance(content, dict) else getattr(content, "text", "?")
    return f"{answer.action}|{text}"


RUNS = {"ask_then_count": 0}


@server.tool
async def ask_then_count(ctx: Context) -> str:
    """Count this tool's runs, then ask twice: a gateway that parks the call for a stateless caller's
    retries runs it once; one that replays it runs it once per round."""
    RUNS["ask_then_count"] += 1
    await ctx.elicit("First?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
    await ctx.sample("Second?")
    return str(RUNS["ask_then_count"])


if __name__ == "__main__":
    server.run()
