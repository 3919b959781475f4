"""Every server feature, end to end over real stdio, in every revision where it exists.

The matrix comes from the one feature table, ``mcpkit._versions.FEATURES``: each scenario names the
feature it exercises, and for a revision without it the test checks that it is properly absent
(-32601 for a method that the revision does not have) instead of skipping.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from mcpkit import (
    Client,
    InvalidParams,
    MethodNotFound,
    PromptMessage,
    RequestTimeout,
    ResourceNotFound,
    TextContent,
)
from mcpkit._versions import SUPPORTED_VERSIONS, has

from ..conftest import mcpkit_run

pytestmark = pytest.mark.e2e

Scenario = Callable[[Client, bool], Awaitable[None]]
SCENARIOS: dict[str, tuple[str, Scenario]] = {}


def scenario(name: str, feature: str) -> Callable[[Scenario], Scenario]:
    def register(fn: Scenario) -> Scenario:
        SCENARIOS[name] = (feature, fn)
        return fn

    return register


async def new_notebook(client: Client) -> str:
    created = await client.call_tool("create_notebook", {"title": "t"})
    return json.loads(created.content[0].text)["notebook_id"]  # type: ignore[union-attr, no-any-return]


@scenario("resources", "initialize_or_discover")
async def resources(client: Client, present: bool) -> None:
    assert [r.uri for r in await client.list_resources()] == ["notes://about"]
    templates = [t.uri_template for t in await client.list_resource_templates()]
    assert templates == ["notes://{notebook_id}", "notes://{notebook_id}/{note_id}"]
    notebook = await new_notebook(client)
    await client.call_tool("add_note", {"notebook_id": notebook, "text": "milk"})
    whole = (await client.read_resource(f"notes://{notebook}")).contents[0]
    assert whole.mime_type == "text/markdown" and whole.text == "# t\n- milk"
    assert (await client.read_resource(f"notes://{notebook}/n1")).contents[0].text == "milk"
    expected = InvalidParams if client.protocol_version >= "2026-07-28" else ResourceNotFound
    with pytest.raises(expected) as info:
        await client.read_resource("notes://nb_missing/n9")
    assert info.value.data == {"uri": "notes://nb_missing/n9"}
    with pytest.raises(expected):
        await client.read_resource("unknown://thing")


@scenario("prompts", "initialize_or_discover")
async def prompts(client: Client, present: bool) -> None:
    (prompt,) = await client.list_prompts()
    assert prompt.name == "summarize"
    assert [(a.name, a.required) for a in prompt.arguments] == [("notebook_id", True), ("style", False)]  # type: ignore[union-attr]
    notebook = await new_notebook(client)
    result = await client.get_prompt("summarize", {"notebook_id": notebook, "style": "detailed"})
    assert result.messages == [
        PromptMessage(role="user", content=TextContent(text="Summarize these notes (detailed):\n"))
    ]
    with pytest.raises(InvalidParams, match="notebook_id"):
        await client.get_prompt("summarize", {})
    with pytest.raises(InvalidParams):
        await client.get_prompt("no_such_prompt")


@scenario("completion", "completions")
async def completion(client: Client, present: bool) -> None:
    assert ("completions" in client.server_capabilities) == has(
        client.protocol_version, "completions_capability"
    )
    found = await client.complete({"type": "ref/prompt", "name": "summarize"}, "style", "")
    assert found.values == ["short", "detailed", "bullet points"] and found.has_more is False
    notebook = await new_notebook(client)
    found = await client.complete(
        {"type": "ref/resource", "uri": "notes://{notebook_id}"}, "notebook_id", notebook[:5]
    )
    assert notebook in found.values
    with pytest.raises(InvalidParams):
        await client.complete({"type": "ref/prompt", "name": "nope"}, "x", "")


@scenario("resource_subscribe", "resource_subscribe")
async def resource_subscribe(client: Client, present: bool) -> None:
    notebook = await new_notebook(client)
    if not present:
        with pytest.raises(MethodNotFound):
            await client.subscribe_resource(f"notes://{notebook}")
        return
    updates = await client.listen(uris=[f"notes://{notebook}"])
    await client.call_tool("add_note", {"notebook_id": notebook, "text": "x"})
    method, params = await asyncio.wait_for(updates.__anext__(), 30)
    assert (method, params["uri"]) == ("notifications/resources/updated", f"notes://{notebook}")
    await updates.close()


@scenario("listen", "subscriptions_listen")
async def listen(client: Client, present: bool) -> None:
    notebook = await new_notebook(client)
    if not present:
        with pytest.raises(MethodNotFound):
            await client.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        return
    first = await client.listen(uris=[f"notes://{notebook}"])
    second = await client.listen(tools=True, prompts=True)
    assert first.acknowledged == {"resourceSubscriptions": [f"notes://{notebook}"]}
    assert second.acknowledged == {"toolsListChanged": True, "promptsListChanged": True}
    await client.call_tool("add_note", {"notebook_id": notebook, "text": "x"})
    method, params = await asyncio.wait_for(first.__anext__(), 30)
    assert method == "notifications/resources/updated" and params["uri"] == f"notes://{notebook}"
    assert params["_meta"]["io.modelcontextprotocol/subscriptionId"] == first.request_id
    await first.close()
    await second.close()


@scenario("logging", "logging_set_level")
async def logging_levels(client: Client, present: bool) -> None:
    seen: list[dict[str, Any]] = []

    async def on_log(params: dict[str, Any]) -> None:
        seen.append(params)

    client.on_log = on_log
    notebook = await new_notebook(client)
    if present:
        with pytest.raises(InvalidParams):
            await client.request("logging/setLevel", {"level": "loud"})
    else:
        with pytest.raises(MethodNotFound):
            await client.request("logging/setLevel", {"level": "info"})
        await client.call_tool("export", {"notebook_id": notebook})
        await client.ping()
        assert seen == []  # "MUST NOT emit notifications/message for requests that did not include" a level
    await client.set_logging_level("error")
    await client.call_tool("export", {"notebook_id": notebook})
    await client.ping()
    assert seen == []  # info is below error
    await client.set_logging_level("debug")
    await client.call_tool("export", {"notebook_id": notebook})
    await client.ping()
    assert [s["level"] for s in seen] == ["info"] and "exported 0 notes" in seen[0]["data"]


@scenario("progress", "initialize_or_discover")
async def progress(client: Client, present: bool) -> None:
    notebook = await new_notebook(client)
    for text in ("a", "b", "c"):
        await client.call_tool("add_note", {"notebook_id": notebook, "text": text})
    reports: list[tuple[Any, ...]] = []

    async def on_progress(*args: Any) -> None:
        reports.append(args)

    await client.call_tool("export", {"notebook_id": notebook}, on_progress=on_progress)
    with_message = has(client.protocol_version, "progress_message")
    assert reports == [(n, 3, f"exported n{n}" if with_message else None) for n in (1, 2, 3)]


@scenario("ping", "ping")
async def ping(client: Client, present: bool) -> None:
    if present:
        assert await client.request("ping") == {}
    else:
        with pytest.raises(MethodNotFound):
            await client.request("ping")


def feature_present(feature: str, version: str) -> bool:
    return True if feature == "initialize_or_discover" else has(version, feature)


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_feature(name: str, version: str) -> None:
    feature, run = SCENARIOS[name]

    async def main() -> None:
        async with Client(mcpkit_run("notes.py"), protocol_version=version) as client:
            await run(client, feature_present(feature, version))

    asyncio.run(asyncio.wait_for(main(), 120))


def test_list_changed_reaches_listeners_in_both_eras(tmp_path: Path) -> None:
    path = tmp_path / "dynamic.py"
    path.write_text(
        textwrap.dedent("""
        from mcpkit import Server
        server = Server("dynamic")
        @server.tool
        def grow(name: str) -> str:
            server.add_tool(lambda: name, name=name)
            return "added"
    """)
    )

    async def main(version: str) -> None:
        seen: list[str] = []

        async def on_notification(method: str, params: dict[str, Any]) -> None:
            seen.append(method)

        command = [sys.executable, "-m", "mcpkit", "run", str(path)]
        async with Client(command, protocol_version=version, on_notification=on_notification) as client:
            changes = await client.listen(tools=True)
            await client.call_tool("grow", {"name": "sprout"})
            method, _ = await asyncio.wait_for(changes.__anext__(), 30)
            assert method == "notifications/tools/list_changed"
            assert [t.name for t in await client.list_tools()] == ["grow", "sprout"]
            await changes.close()

    for version in ("2025-11-25", "2026-07-28"):
        asyncio.run(asyncio.wait_for(main(version), 120))


def test_timeout_cancels_the_tool_on_the_server(tmp_path: Path) -> None:
    path = tmp_path / "slow.py"
    path.write_text(
        textwrap.dedent("""
        import asyncio
        from mcpkit import Server, Context
        server = Server("slow")
        state = {"cancelled": 0}
        @server.tool
        async def slow() -> str:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                state["cancelled"] += 1
                raise
            return "finished"
        @server.tool
        async def cancelled() -> int:
            return state["cancelled"]
        @server.tool
        async def chatty(ctx: Context) -> str:
            for step in range(8):
                await ctx.report_progress(step, 8)
                await asyncio.sleep(0.1)
            return "done"
    """)
    )

    async def main() -> None:
        # Connecting gets a minute (a busy machine starts the server slowly); then 3 s of silence:
        # 30 times the gap between chatty's progress reports, so a busy machine does not make one
        # report late enough to end the call.
        command = [sys.executable, "-m", "mcpkit", "run", str(path)]
        async with Client(command, timeout=60, probe_timeout=60) as client:
            client.timeout = 3
            with pytest.raises(RequestTimeout):
                await client.call_tool("slow")
            # The cancellation reaches the handler soon after: waited for, not a fixed nap.
            for _ in range(300):
                count = (await client.call_tool("cancelled")).content
                if count != [TextContent(text="0")]:
                    break
                await asyncio.sleep(0.1)
            assert count == [TextContent(text="1")]

            async def tick(*_: Any) -> None:
                pass

            # 0.8 s in all, but progress every 0.1 s keeps a 3 s timeout from firing...
            assert (await client.call_tool("chatty", on_progress=tick)).content == [TextContent(text="done")]
            # ...unless the hard maximum says otherwise.
            client.max_timeout = 0.5
            with pytest.raises(RequestTimeout):
                await client.call_tool("chatty", on_progress=tick)

    asyncio.run(asyncio.wait_for(main(), 120))
