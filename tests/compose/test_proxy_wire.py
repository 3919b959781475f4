"""Proxies on the real wire: a proxy process served over stdio and over Streamable HTTP (uvicorn on
127.0.0.1), in front of upstreams over stdio and over HTTP, with callers of both eras; and the npm
everything server (TypeScript SDK) behind an in-process proxy."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, Root
from mcpkit.compose.proxy import proxy

from ..conftest import free_port, http_server, node_project
from ..host._util import NPM, run
from .test_proxy import User, text, upstream_command

pytestmark = pytest.mark.e2e

APP = Path(__file__).parent / "proxy_app.py"


def proxy_env(target: Any, **options: Any) -> dict[str, str]:
    return {"PROXY_TARGET": json.dumps(target), "PROXY_OPTIONS": json.dumps(options)}


def proxy_command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "mcpkit", "run", str(APP), *extra]


async def exercise(client: Client, user: User) -> None:
    """What every wire test asks of the proxy: list, call, progress, a log line, questions."""
    names = {tool.name for tool in await client.list_tools()}
    assert {"echo", "slow", "ask", "pid"} <= names, names
    assert text(await client.call_tool("echo", {"text": "over the wire"})) == "over the wire"
    assert {prompt.name for prompt in await client.list_prompts()} == {"greet"}
    greeting = await client.get_prompt("greet", {"person": "Ada"})
    assert "Hello, Ada!" in str(greeting.messages[0].content)
    assert "Read me." in str((await client.read_resource("memo://readme")).contents[0])
    assert "Note x." in str((await client.read_resource("memo://notes/x")).contents[0])
    completion = await client.complete({"type": "ref/prompt", "name": "greet"}, "person", "A")
    assert completion.values == ["Ada", "Alan"]
    progress: list[str | None] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    assert text(await client.call_tool("slow", {"seconds": 0.2}, on_progress=on_progress)) == "slept 0.2"
    assert progress == ["started"]
    assert text(await client.call_tool("ask")) == "accept:True|hello|file:///work/project"
    assert user.asked[-2:] == ["Proceed?", "sampling"]


def caller(target: Any, version: str | None, user: User, **options: Any) -> Client:
    return Client(
        target,
        protocol_version=version,
        elicitation=user.elicit,
        sampling=user.sample,
        roots=[Root(uri="file:///work/project", name="project")],
        **options,
    )


@pytest.mark.parametrize(("upstream", "version"), [("2025-11-25", None), (None, "2025-11-25")])
def test_a_proxy_served_over_stdio(upstream: str | None, version: str | None) -> None:
    env = proxy_env(upstream_command(), protocol_version=upstream)
    user = User()
    logs: list[dict[str, Any]] = []

    async def on_log(params: dict[str, Any]) -> None:
        logs.append(params)

    async def main() -> None:
        async with caller(proxy_command(), version, user, env=env, on_log=on_log) as client:
            assert client.protocol_version == (version or "2026-07-28")
            assert client.server_info is not None and client.server_info.name == "proxy-upstream"
            await client.set_logging_level("info")
            await exercise(client, user)
            assert any(line.get("data") == "sleeping 0.2 s" for line in logs), logs
            if upstream is not None:
                # A handshake-era upstream gives a caller that can be asked a process of its own
                # (see mcpkit.host.pool): a tool it adds is not in the shared one's list.
                return
            subscription = await client.listen(tools=True)
            await client.call_tool("add_tool", {"name": "late"})
            method, _ = await asyncio.wait_for(subscription.__anext__(), 60)
            assert method == "notifications/tools/list_changed"
            await subscription.close()

    run(main())


@pytest.fixture(params=["2025-11-25", "2026-07-28"], scope="module")
def http_proxy(request: pytest.FixtureRequest) -> Iterator[str]:
    """A proxy over HTTP in front of an upstream over HTTP, the proxy's upstream in the param's era."""
    upstream_port, proxy_port = free_port(), free_port()
    upstream_server = [*upstream_command(), "--transport", "http", "--port", str(upstream_port)]
    for upstream_url in http_server(upstream_server, upstream_port, 60):
        env = proxy_env(upstream_url, protocol_version=request.param)
        served = proxy_command("--transport", "http", "--port", str(proxy_port))
        yield from http_server(["env", *(f"{k}={v}" for k, v in env.items()), *served], proxy_port, 60)


@pytest.mark.parametrize("version", [None, "2025-11-25"])
def test_a_proxy_served_over_http(http_proxy: str, version: str | None) -> None:
    user = User()

    async def main() -> None:
        async with caller(http_proxy, version, user, probe_timeout=60) as client:
            assert client.protocol_version == (version or "2026-07-28")
            await exercise(client, user)

    run(main())


@pytest.fixture(scope="module")
def everything_command() -> list[str]:
    """The npm everything server over stdio (installed with npm ci if missing; skipped when npm is
    not there or cannot install)."""
    installed = (NPM / "node_modules" / "@modelcontextprotocol" / "server-everything").is_dir()
    if not installed and shutil.which("npm") is None:
        pytest.skip("npm is not installed: the npm everything server cannot be installed")
    try:
        node, script = node_project(NPM, "@modelcontextprotocol/server-everything/dist/index.js")
    except (subprocess.SubprocessError, OSError) as exc:
        pytest.skip(f"the npm everything server could not be installed: {exc}")
    return [node, script, "stdio"]


@pytest.mark.interop
@pytest.mark.parametrize("version", [None, "2025-11-25"])
def test_the_npm_everything_server_behind_a_proxy(everything_command: list[str], version: str | None) -> None:
    mirror = proxy(everything_command)

    async def main() -> None:
        async with Client(mirror, protocol_version=version) as client:
            assert client.protocol_version == (version or "2026-07-28")
            names = {tool.name for tool in await client.list_tools()}
            assert {"echo", "get-sum"} <= names, names
            assert "hi" in text(await client.call_tool("echo", {"message": "hi"}))
            assert "7" in text(await client.call_tool("get-sum", {"a": 3, "b": 4}))
            assert await client.list_prompts()
            resources = await client.list_resources()
            if resources:
                assert (await client.read_resource(resources[0].uri)).contents

    run(main())
