"""A low-level server for the host tests that announces nothing: its tools change without
``list_changed`` (``grow``), and it records the ``resources/subscribe`` and ``resources/unsubscribe``
requests it gets (``events``)."""

from __future__ import annotations

import os
from typing import Any

from mcpkit import Context
from mcpkit.lowlevel import LowLevelServer

server = LowLevelServer("recorder", "1.0.0")
server.extra_capabilities = {"resources": {"subscribe": True}}  # and no listChanged anywhere

BUILT_IN = ("grow", "events", "pid")
TOOLS: list[str] = list(BUILT_IN)
EVENTS: list[str] = []
RESOURCES = ["rec://a", "rec://b"]


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


@server.handler("tools/list")
async def list_tools(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"tools": [{"name": name, "inputSchema": {"type": "object"}} for name in TOOLS]}


@server.handler("tools/call")
async def call_tool(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    name = params.get("name")
    if name == "grow":  # a new tool, and no notifications/tools/list_changed
        TOOLS.append(f"extra{len(TOOLS) - len(BUILT_IN) + 1}")
        return _text(TOOLS[-1])
    if name == "events":
        return _text(" ".join(EVENTS))
    if name == "pid":
        return _text(str(os.getpid()))
    return _text(str(name))


@server.handler("resources/list")
async def list_resources(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"resources": [{"uri": uri, "name": uri} for uri in RESOURCES]}


@server.handler("resources/read")
async def read_resource(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return {"contents": [{"uri": params["uri"], "text": "recorded"}]}


@server.handler("resources/subscribe")
async def subscribe(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    EVENTS.append(f"+{params['uri']}")
    return {}


@server.handler("resources/unsubscribe")
async def unsubscribe(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    EVENTS.append(f"-{params['uri']}")
    return {}


if __name__ == "__main__":
    server.run()
