"""The client command for the official conformance suite's client scenarios.

The suite starts a test server for a scenario and runs ``python conformance_client.py <server url>``
with ``MCP_CONFORMANCE_SCENARIO`` naming the scenario, ``MCP_CONFORMANCE_CONTEXT`` holding its data
(JSON) and, when a revision is pinned, ``MCP_CONFORMANCE_PROTOCOL_VERSION``. The ``auth/*`` scenarios are
in ``conformance_auth.py``. Everything below is
mcpkit's ordinary :class:`~mcpkit.Client`: the suite checks what it puts on the wire.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit import Client, MCPError

Scenario = Callable[[Client, dict[str, Any]], Awaitable[None]]


async def accept_form(params: dict[str, Any]) -> dict[str, Any]:
    """Answer any form: accept, leaving every field to its default (the client fills those in)."""
    return {"action": "accept", "content": {}}


async def confirm(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"confirmed": True}}


async def sample(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "Hello"}, "model": "conformance"}


async def call_first_tool(client: Client, context: dict[str, Any]) -> None:
    """initialize, tools_call: list the tools and call the first one."""
    tools = await client.list_tools()
    if tools:
        await client.call_tool(tools[0].name, {"a": 2, "b": 3})


async def list_tools_only(client: Client, context: dict[str, Any]) -> None:
    """request-metadata, json-schema-ref-no-deref: list the tools (and never fetch a ``$ref``)."""
    await client.list_tools()


async def call_each_listed_tool(client: Client, context: dict[str, Any]) -> None:
    """http-invalid-tool-headers: tools with bad ``x-mcp-header`` never make it into the list."""
    for tool in await client.list_tools():
        await _tolerant(client.call_tool(tool.name, {}))


async def call_context_tools(client: Client, context: dict[str, Any]) -> None:
    """http-custom-headers: call the tools the scenario names, with its arguments."""
    await client.list_tools()
    for call in context.get("toolCalls", []):
        await _tolerant(client.call_tool(call["name"], call.get("arguments", {})))


async def exercise_every_method(client: Client, context: dict[str, Any]) -> None:
    """http-standard-headers: one of each request that carries Mcp-Method / Mcp-Name."""
    tools = await client.list_tools()
    if tools:
        await _tolerant(client.call_tool(tools[0].name, {}))
    resources = await client.list_resources()
    if resources:
        await _tolerant(client.read_resource(resources[0].uri))
    prompts = await client.list_prompts()
    if prompts:
        await _tolerant(client.get_prompt(prompts[0].name, {}))


async def echo_schema(client: Client, context: dict[str, Any]) -> None:
    """json-schema-2020-12-preservation: send back the focal tool's schema exactly as listed."""
    tools = {tool.name: tool for tool in await client.list_tools()}
    focal = tools["json_schema_2020_12_tool"]
    await client.call_tool("json_schema_echo", {"schema": focal.input_schema})


async def call_elicitation_defaults(client: Client, context: dict[str, Any]) -> None:
    """elicitation-sep1034-client-defaults: accept with nothing; the defaults fill the form."""
    await client.list_tools()
    await client.call_tool("test_client_elicitation_defaults", {})


async def call_mrtr_tools(client: Client, context: dict[str, Any]) -> None:
    """sep-2322-client-request-state: multi round-trip calls; the client echoes requestState."""
    await client.list_tools()
    for name in (
        "test_mrtr_echo_state",
        "test_mrtr_unrelated",
        "test_mrtr_no_state",
        "test_mrtr_no_result_type",
    ):
        await _tolerant(client.call_tool(name, {}))


async def call_reconnection(client: Client, context: dict[str, Any]) -> None:
    """sse-retry: the server drops the stream; the client waits ``retry`` and resumes it."""
    await client.list_tools()
    await client.call_tool("test_reconnection", {})


SCENARIOS: dict[str, Scenario] = {
    "initialize": call_first_tool,
    "tools_call": call_first_tool,
    "request-metadata": list_tools_only,
    "json-schema-ref-no-deref": list_tools_only,
    "json-schema-2020-12-preservation": echo_schema,
    "http-standard-headers": exercise_every_method,
    "http-custom-headers": call_context_tools,
    "http-invalid-tool-headers": call_each_listed_tool,
    "elicitation-sep1034-client-defaults": call_elicitation_defaults,
    "sep-2322-client-request-state": call_mrtr_tools,
    "sse-retry": call_reconnection,
}


async def _tolerant(call: Awaitable[Any]) -> None:
    """A scenario's server may refuse a call on purpose; the client goes on with the next."""
    try:
        await call
    except MCPError as exc:
        print(f"(server refused: {exc})", file=sys.stderr)


async def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or None
    if scenario.startswith("auth/"):
        from conformance_auth import auth_scenario  # mcpkit.client.auth against the suite's servers

        await auth_scenario(url, scenario, context, version)
        return 0
    if scenario.startswith("sep-2640-client-"):
        from conformance_skills import skills_scenario  # the skills extension's host behaviour

        async with Client(url, protocol_version=version) as client:
            await skills_scenario(client, scenario)
        return 0
    run = SCENARIOS.get(scenario)
    if run is None:
        print(f"unknown scenario {scenario!r}", file=sys.stderr)
        return 2
    elicitation = confirm if scenario == "sep-2322-client-request-state" else accept_form
    async with Client(
        url, protocol_version=version, elicitation=elicitation, sampling=sample, roots=[]
    ) as client:
        await run(client, context)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[-1])))
