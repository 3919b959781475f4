"""Proxies called in process (``Client(proxy)``), mirroring real upstream processes over stdio.

Callers and upstreams of both eras (2025-11-25 / 2025-03-26 and the stateless 2026-07-28), each
way round: tools, prompts, resources and completions listed and used; progress and log lines reach
the caller; a cancelled call is cancelled upstream; elicitation, sampling and roots are relayed; a
list change upstream reaches the caller; a killed upstream gives a tool error, then comes back; a
config dict's servers are namespaced; bad targets are refused clearly.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, MCPError, Root, Server, TextContent
from mcpkit.compose.proxy import ProxyError, proxy
from mcpkit.context import Context
from mcpkit.lifespan import StartupError

from ..conftest import mcpkit_run
from ..host._util import run

pytestmark = pytest.mark.e2e

UPSTREAM = Path(__file__).parent / "proxy_upstream.py"
#: (upstream revision, caller revision); None is 2026-07-28.
ERAS = [("2025-03-26", None), (None, "2025-03-26"), ("2025-11-25", "2025-11-25"), (None, None)]


def upstream_command() -> list[str]:
    return [sys.executable, "-m", "mcpkit", "run", str(UPSTREAM)]


def text(result: Any) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))


class User:
    """The person behind the proxy's caller: answers what the upstream asks, and keeps count."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(params["message"])
        return {"action": "accept", "content": {"ok": True}}

    async def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append("sampling")
        return {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "test"}


@pytest.mark.parametrize(("upstream", "caller"), ERAS)
def test_everything_example_mirrored(upstream: str | None, caller: str | None) -> None:
    mirror = proxy(mcpkit_run("everything.py"), protocol_version=upstream)

    async def main() -> None:
        async with Client(mirror, protocol_version=caller) as client:
            assert client.server_info is not None and client.server_info.name == "mcpkit-everything"
            assert client.instructions == "Conformance fixtures for mcpkit."
            names = {tool.name for tool in await client.list_tools()}
            assert {"test_simple_text", "test_tool_with_progress", "test_sampling"} <= names
            assert text(await client.call_tool("test_simple_text")) != ""
            failed = await client.call_tool("test_error_handling")
            assert failed.is_error and "intentionally" in text(failed)
            prompts = {prompt.name for prompt in await client.list_prompts()}
            assert "test_prompt_with_arguments" in prompts
            got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
            assert got.messages
            resources = {resource.uri for resource in await client.list_resources()}
            assert "test://static-text" in resources
            read = await client.read_resource("test://static-text")
            assert "static text resource" in str(read.contents[0])
            templates = [t.uri_template for t in await client.list_resource_templates()]
            assert "test://template/{id}/data" in templates
            assert "42" in str((await client.read_resource("test://template/42/data")).contents[0])
            completion = await client.complete(
                {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "arg1", ""
            )
            assert completion.values

    run(main())


@pytest.mark.parametrize(("upstream", "caller"), [("2025-11-25", None), (None, "2025-11-25")])
def test_progress_logs_and_cancellation_pass_through(upstream: str | None, caller: str | None) -> None:
    mirror = proxy(upstream_command(), protocol_version=upstream)
    logs: list[dict[str, Any]] = []
    logged = asyncio.Event()
    progressed = asyncio.Event()

    async def on_log(params: dict[str, Any]) -> None:
        logs.append(params)
        logged.set()

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        if message == "started":
            progressed.set()

    async def main() -> None:
        async with Client(mirror, protocol_version=caller, on_log=on_log) as client:
            await client.set_logging_level("info")
            call = asyncio.ensure_future(client.call_tool("slow", {"seconds": 60}, on_progress=on_progress))
            await asyncio.wait_for(progressed.wait(), 60)
            await asyncio.wait_for(logged.wait(), 60)
            assert logs[0]["data"] == "sleeping 60.0 s" and logs[0]["level"] == "info"
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            deadline = time.monotonic() + 60
            while True:  # the upstream's own tool saw the cancellation
                stats = (await client.call_tool("stats")).structured_content
                if stats == {"started": 1, "cancelled": 1}:
                    break
                assert time.monotonic() < deadline, stats
                await asyncio.sleep(0.1)

    run(main())


@pytest.mark.parametrize(("upstream", "caller"), ERAS)
def test_upstream_questions_reach_the_caller(upstream: str | None, caller: str | None) -> None:
    if "2025-03-26" in (upstream, caller):
        upstream, caller = (None, "2025-06-18") if caller else ("2025-06-18", None)  # elicitation: 06-18 on
    mirror = proxy(upstream_command(), protocol_version=upstream)
    user = User()

    async def main() -> None:
        async with Client(
            mirror,
            protocol_version=caller,
            elicitation=user.elicit,
            sampling=user.sample,
            roots=[Root(uri="file:///work/project", name="project")],
        ) as client:
            result = await client.call_tool("ask")
            assert text(result) == "accept:True|hello|file:///work/project", text(result)
            assert user.asked == ["Proceed?", "sampling"]

    run(main())


@pytest.mark.parametrize(("upstream", "caller"), [(None, "2025-11-25"), ("2025-11-25", None)])
def test_a_list_change_upstream_reaches_the_caller(upstream: str | None, caller: str | None) -> None:
    mirror = proxy(upstream_command(), protocol_version=upstream)

    async def main() -> None:
        async with Client(mirror, protocol_version=caller) as client:
            subscription = await client.listen(tools=True)
            await client.call_tool("add_tool", {"name": "fresh"})
            method, _ = await asyncio.wait_for(subscription.__anext__(), 60)
            assert method == "notifications/tools/list_changed"
            deadline = time.monotonic() + 60
            while "fresh" not in [tool.name for tool in await client.list_tools()]:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.1)
            assert text(await client.call_tool("fresh")) == "I am fresh"
            await subscription.close()

    run(main())


def test_a_dead_upstream_is_a_tool_error_then_comes_back() -> None:
    mirror = proxy(upstream_command())

    async def main() -> None:
        async with Client(mirror, protocol_version="2025-11-25") as client:
            first = int(text(await client.call_tool("pid")))
            started = asyncio.Event()

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                started.set()

            call = asyncio.ensure_future(client.call_tool("slow", {"seconds": 120}, on_progress=on_progress))
            await asyncio.wait_for(started.wait(), 60)
            os.kill(first, signal.SIGKILL)
            failed = await asyncio.wait_for(call, 60)
            assert failed.is_error and "failed during the call" in text(failed), text(failed)
            deadline = time.monotonic() + 90
            while True:  # restarted behind the proxy
                result = await client.call_tool("pid")
                if not result.is_error:
                    break
                assert time.monotonic() < deadline, text(result)
                await asyncio.sleep(0.2)
            assert int(text(result)) != first

    run(main(), 180)


@pytest.mark.parametrize("caller", [None, "2025-11-25"])
def test_a_config_dict_namespaces_its_servers(caller: str | None) -> None:
    document = {
        "mcpServers": {
            "weather": {"command": sys.executable, "args": mcpkit_run("weather.py")[1:]},
            "box": {
                "command": sys.executable,
                "args": upstream_command()[1:],
                "protocolVersion": "2025-11-25",
            },
        }
    }
    mirror = proxy(document, name="both")

    async def main() -> None:
        async with Client(mirror, protocol_version=caller) as client:
            assert client.server_info is not None and client.server_info.name == "both"
            names = {tool.name for tool in await client.list_tools()}
            assert {"weather__get_weather", "box__echo", "box__slow"} <= names
            assert "Lima" in text(await client.call_tool("weather__get_weather", {"location": "Lima"}))
            assert text(await client.call_tool("box__echo", {"text": "hi"})) == "hi"
            assert "box__greet" in {prompt.name for prompt in await client.list_prompts()}

    run(main())


def test_a_client_and_a_server_as_targets() -> None:
    inner = Server("inner")

    @inner.tool
    def shout(word: str) -> str:
        return word.upper()

    async def main() -> None:
        async with Client(proxy(inner), protocol_version="2025-11-25") as client:
            assert text(await client.call_tool("shout", {"word": "hey"})) == "HEY"
        adopted = Client(upstream_command(), protocol_version="2025-11-25")
        mirror = proxy(adopted)
        async with Client(mirror) as client:  # a 2026-07-28 caller of a 2025-11-25 upstream
            assert text(await client.call_tool("echo", {"text": "via a client"})) == "via a client"
            assert adopted.protocol_version == "2025-11-25"
        # the proxy closed the client it was given when it stopped serving
        with pytest.raises(MCPError):
            await asyncio.wait_for(adopted.call_tool("echo", {"text": "closed"}), 10)

    run(main())


def test_a_proxy_answers_through_its_handler_table() -> None:
    """Mounting delegates to a child's handlers with the caller's context: so does this parent."""
    child = proxy(upstream_command())

    @asynccontextmanager
    async def with_child(server: Any) -> AsyncIterator[None]:
        await child.running.enter()
        try:
            yield None
        finally:
            await child.running.exit()

    parent = Server("parent", lifespan=with_child)

    async def delegate_list(params: dict[str, Any], ctx: Context) -> Any:
        return await child._handlers["tools/list"](params, ctx)

    async def delegate_call(params: dict[str, Any], ctx: Context) -> Any:
        return await child._handlers["tools/call"](params, ctx)

    parent.set_handler("tools/list", delegate_list)
    parent.set_handler("tools/call", delegate_call)
    user = User()

    async def main() -> None:
        for version in (None, "2025-11-25"):
            async with Client(
                parent, protocol_version=version, elicitation=user.elicit, sampling=user.sample, roots=[]
            ) as client:
                assert "echo" in {tool.name for tool in await client.list_tools()}
                assert text(await client.call_tool("echo", {"text": "deep"})) == "deep"
                assert text(await client.call_tool("ask")) == "accept:True|hello|"

    run(main())


def test_bad_targets_and_options_are_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(ProxyError, match="not int"):
        proxy(42)
    with pytest.raises(ProxyError, match="empty"):
        proxy([])
    with pytest.raises(ProxyError, match="sampling"):
        proxy(upstream_command(), sampling=lambda params: None)
    with pytest.raises(ProxyError, match="unknown Client option"):
        proxy(upstream_command(), colour="blue")

    async def main() -> None:
        async with Client(proxy(Server("x"))) as connected:
            with pytest.raises(ProxyError, match="connected already"):
                proxy(connected)
        missing = proxy([str(tmp_path / "no-such-server")])
        with pytest.raises(StartupError, match="command not found"):
            async with Client(missing):
                pass

    run(main())
