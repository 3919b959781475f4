"""Server(lifespan=...): entered once before the first request, exited when serving stops, its
value in ctx.lifespan of every kind of handler; in process, over stdio and over HTTP, both eras."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, Context, Server, StartupError

from ..conftest import free_port, http_server
from ._sync import sync

SERVERS = Path(__file__).parent / "servers"
ERAS = ["2025-11-25", "2026-07-28"]


def recording_server(log: list[str], name: str = "app") -> Server:
    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
        log.append(f"enter {server.info.name}")
        try:
            yield {"pool": f"{server.info.name}-pool"}
        finally:
            log.append(f"exit {server.info.name}")

    server = Server(name, lifespan=lifespan)

    @server.tool
    def sync_tool(ctx: Context) -> str:
        return str(ctx.lifespan["pool"])

    @server.tool
    async def async_tool(ctx: Context) -> str:
        return str(ctx.lifespan["pool"])

    @server.resource("pool://{name}")
    async def pool_resource(name: str, ctx: Context) -> str:
        return f"{name}:{ctx.lifespan['pool']}"

    @server.prompt
    def pool_prompt(ctx: Context) -> str:
        return str(ctx.lifespan["pool"])

    @server.completion(resource="pool://{name}", argument="name")
    async def complete_name(value: str, arguments: dict[str, str], ctx: Context) -> list[str]:
        return [ctx.lifespan["pool"]]

    return server


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_every_handler_sees_the_lifespan_value_in_process(version: str) -> None:
    log: list[str] = []
    server = recording_server(log)
    assert log == []
    async with Client(server, protocol_version=version) as client:
        assert log == ["enter app"]
        assert (await client.call_tool("sync_tool", {})).content[0].text == "app-pool"  # type: ignore[union-attr]
        assert (await client.call_tool("async_tool", {})).content[0].text == "app-pool"  # type: ignore[union-attr]
        read = await client.read_resource("pool://x")
        assert read.contents[0].text == "x:app-pool"  # type: ignore[union-attr]
        prompt = await client.get_prompt("pool_prompt", {})
        assert prompt.messages[0].content.text == "app-pool"  # type: ignore[union-attr]
        completed = await client.complete({"type": "ref/resource", "uri": "pool://{name}"}, "name", "")
        assert completed.values == ["app-pool"]
    assert log == ["enter app", "exit app"]


@sync
async def test_two_clients_at_once_share_one_entry() -> None:
    log: list[str] = []
    server = recording_server(log)
    async with Client(server) as first, Client(server, protocol_version="2026-07-28") as second:
        await first.call_tool("sync_tool", {})
        await second.call_tool("sync_tool", {})
        assert log == ["enter app"]
    assert log == ["enter app", "exit app"]


@sync
async def test_a_failing_lifespan_fails_connect_with_one_line() -> None:
    @contextlib.asynccontextmanager
    async def broken(server: Server) -> AsyncIterator[None]:
        raise OSError("no database at /srv/db\n(and a second line)")
        yield

    server = Server("broken", lifespan=broken)
    with pytest.raises(StartupError) as caught:
        async with Client(server):
            pass
    assert (
        str(caught.value)
        == "server 'broken' failed to start: its lifespan raised OSError: no database at /srv/db"
    )
    # Nothing half-started is left: a later start tries again.
    with pytest.raises(StartupError):
        async with Client(server):
            pass


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_stdio_enters_before_serving_and_exits_when_the_client_goes(
    tmp_path: Path, version: str
) -> None:
    log = tmp_path / "lifespan.log"
    env = {**os.environ, "LIFESPAN_LOG": str(log)}
    async with Client(
        [sys.executable, str(SERVERS / "lifespan_server.py")], env=env, protocol_version=version
    ) as client:
        pid = (await client.call_tool("pool_sync", {})).content[0].text.removeprefix("pool-")  # type: ignore[union-attr]
        assert (await client.call_tool("pool_async", {})).content[0].text == f"pool-{pid}"  # type: ignore[union-attr]
        assert log.read_text() == f"enter {pid}\n"
    for _ in range(1200):  # the process exits once it has read the end of its stdin
        if log.read_text().count("\n") == 2:
            break
        await asyncio.sleep(0.1)
    assert log.read_text() == f"enter {pid}\nexit {pid}\n"


def test_stdio_startup_failure_is_one_line_and_a_failed_exit(tmp_path: Path) -> None:
    env = {**os.environ, "LIFESPAN_LOG": str(tmp_path / "log"), "LIFESPAN_FAIL": "1"}
    done = subprocess.run(
        [sys.executable, str(SERVERS / "lifespan_server.py")],
        env=env, input=b"", capture_output=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.decode().strip() == (
        "mcpkit: server 'lifespan' failed to start: its lifespan raised ConnectionRefusedError: "
        "database at db.invalid:5432 refused the connection"
    )


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_http_enters_at_startup_and_exits_at_shutdown(tmp_path: Path, version: str) -> None:
    log = tmp_path / "lifespan.log"
    os.environ["LIFESPAN_LOG"] = str(log)  # the server process inherits it
    try:
        port = free_port()
        serving = http_server([sys.executable, str(SERVERS / "lifespan_server.py"), str(port)], port, 120)
        url = next(serving)
        pid = log.read_text().split()[1]  # entered before the port listened
        async with Client(url, protocol_version=version) as client:
            assert (await client.call_tool("pool_async", {})).content[0].text == f"pool-{pid}"  # type: ignore[union-attr]
            assert (await client.call_tool("pool_sync", {})).content[0].text == f"pool-{pid}"  # type: ignore[union-attr]
        assert log.read_text() == f"enter {pid}\n"
        with contextlib.suppress(StopIteration):
            next(serving)  # SIGTERM: uvicorn runs the lifespan's shutdown
        assert log.read_text() == f"enter {pid}\nexit {pid}\n"
    finally:
        del os.environ["LIFESPAN_LOG"]


def test_http_startup_failure_stops_the_process_with_the_message(tmp_path: Path) -> None:
    env = {**os.environ, "LIFESPAN_LOG": str(tmp_path / "log"), "LIFESPAN_FAIL": "1"}
    done = subprocess.run(
        [sys.executable, str(SERVERS / "lifespan_server.py"), str(free_port())],
        env=env, capture_output=True, timeout=120,
    )  # fmt: skip
    assert done.returncode != 0
    assert "failed to start: its lifespan raised ConnectionRefusedError" in done.stderr.decode()
