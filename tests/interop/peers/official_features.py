"""The official ``mcp`` 2.x client exercising every feature of mcpkit's example servers.

    python official_features.py --mode auto|legacy NOTES_COMMAND... -- TRAVEL_COMMAND...

Prints one JSON object of what it saw; the test asserts on it. Exercised: resources (list, templates,
read), prompts (list, get), completion, logging, progress, and elicitation, sampling and roots
through the SDK's callbacks (as server-to-client requests in the handshake era, as multi
round-trip input_required results in 2026-07-28).
"""

from __future__ import annotations

import asyncio
import json
import sys
import warnings
from typing import Any

import mcp_types as types
from mcp import Client, StdioServerParameters


def params(command: list[str]) -> StdioServerParameters:
    return StdioServerParameters(command=command[0], args=command[1:])


async def notes(command: list[str], mode: str) -> dict[str, Any]:
    logs: list[str] = []
    progress: list[float] = []

    async def on_log(message: types.LoggingMessageNotificationParams) -> None:
        logs.append(f"{message.level}: {message.data}")

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with Client(params(command), mode=mode, logging_callback=on_log, log_level="info") as client:
        if mode == "legacy":
            await client.set_logging_level("info")
        created = await client.call_tool("create_notebook", {"title": "sdk"})
        notebook = created.structured_content["notebook_id"]  # type: ignore[index]
        await client.call_tool("add_note", {"notebook_id": notebook, "text": "hello"})
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        read = await client.read_resource(f"notes://{notebook}")
        prompts = await client.list_prompts()
        prompt = await client.get_prompt("summarize", {"notebook_id": notebook, "style": "short"})
        completion = await client.complete(
            types.PromptReference(type="ref/prompt", name="summarize"), {"name": "style", "value": "b"}
        )
        exported = await client.call_tool("export", {"notebook_id": notebook}, progress_callback=on_progress)
        await asyncio.sleep(0.2)
        return {
            "protocolVersion": client.protocol_version,
            "resources": [r.uri for r in resources.resources],
            "templates": [t.uri_template for t in templates.resource_templates],
            "read": [c.model_dump(by_alias=True, exclude_none=True) for c in read.contents],
            "prompts": [p.name for p in prompts.prompts],
            "prompt": [m.model_dump(by_alias=True, exclude_none=True) for m in prompt.messages],
            "completion": completion.completion.values,
            "exported": exported.content[0].text,  # type: ignore[union-attr]
            "progress": progress,
            "logs": logs,
        }


async def travel(command: list[str], mode: str) -> dict[str, Any]:
    asked: list[str] = []

    async def elicit(context: Any, request: Any) -> types.ElicitResult:
        asked.append("elicitation")
        return types.ElicitResult(action="accept", content={"confirm": True, "travellers": 3})

    async def sample(context: Any, request: Any) -> types.CreateMessageResult:
        asked.append("sampling")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="eat waffles"), model="sdk-test"
        )

    async def roots(context: Any) -> types.ListRootsResult:
        asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///srv/trips", name="trips")])

    async with Client(
        params(command),
        mode=mode,
        elicitation_callback=elicit,
        sampling_callback=sample,
        list_roots_callback=roots,
    ) as client:
        planned = await client.call_tool("plan_trip", {"destination": "Brussels"})
        saved = await client.call_tool("where_to_save")
        return {
            "plan": planned.content[0].text,  # type: ignore[union-attr]
            "isError": planned.is_error,
            "roots": saved.structured_content,
            "asked": asked,
        }


def main() -> int:
    warnings.simplefilter("ignore")  # the SDK warns that logging is deprecated; we test it anyway
    mode = sys.argv[2]
    rest = sys.argv[3:]
    split = rest.index("--")
    out = {
        "notes": asyncio.run(notes(rest[:split], mode)),
        "travel": asyncio.run(travel(rest[split + 1 :], mode)),
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
