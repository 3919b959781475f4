"""An upstream server for the proxy tests (``python -m mcpkit run`` it, over stdio or HTTP).

Its tools report progress and log lines, notice their own cancellation, ask the caller questions
(elicitation, sampling, roots), add a tool at run time and say their process id; it has a prompt
with a completion, a resource and a template.
"""

from __future__ import annotations

import asyncio
import os

from mcpkit import Context, Server

server = Server("proxy-upstream", "2.0.0", instructions="An upstream for the proxy tests.")

#: Calls of ``slow`` that were cancelled, and started (``stats`` says).
SEEN = {"started": 0, "cancelled": 0}


@server.tool
async def slow(seconds: float, ctx: Context) -> str:
    """Report progress and log a line, then sleep; a cancellation is counted."""
    SEEN["started"] += 1
    await ctx.report_progress(0, 1, "started")
    await ctx.info(f"sleeping {seconds} s")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        SEEN["cancelled"] += 1
        raise
    return f"slept {seconds}"


@server.tool
def stats() -> dict[str, int]:
    """How many ``slow`` calls started, and how many were cancelled."""
    return dict(SEEN)


@server.tool
def pid() -> int:
    """This process's id."""
    return os.getpid()


@server.tool
def echo(text: str) -> str:
    """The text, unchanged."""
    return text


@server.tool
async def ask(ctx: Context) -> str:
    """Elicit, sample and list roots: every question an upstream puts to the proxy's caller."""
    answer = await ctx.elicit("Proceed?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
    sampled = await ctx.sample("Say hello")
    roots = await ctx.list_roots()
    content = sampled.content
    text = content.get("text", "?") if isinstance(content, dict) else getattr(content, "text", "?")
    return f"{answer.action}:{(answer.content or {}).get('ok')}|{text}|{','.join(r.uri for r in roots)}"


@server.tool
def add_tool(name: str) -> str:
    """Register a tool at run time: the list changes."""

    def added() -> str:
        return f"I am {name}"

    server.add_tool(added, name=name, description="added at run time")
    return f"added {name}"


@server.prompt
def greet(person: str) -> str:
    """A greeting for *person*."""
    return f"Hello, {person}!"


@server.completion(prompt="greet", argument="person")
def complete_person(value: str, arguments: dict[str, str]) -> list[str]:
    return [name for name in ("Ada", "Alan", "Grace") if name.startswith(value)]


@server.resource("memo://readme", name="readme", mime_type="text/plain")
def readme() -> str:
    """A fixed text."""
    return "Read me."


@server.resource("memo://notes/{slug}", name="note", mime_type="text/plain")
def note(slug: str) -> str:
    """A note named by *slug*."""
    return f"Note {slug}."
