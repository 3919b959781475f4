"""ctx.session: a dict that lives as long as the session (an in-process client, a stdio connection,
a handshake-era HTTP session), one per session, shared by a mounted server's tools; a 2026-07-28
request over HTTP belongs to no session, so there it lives for that request only."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcpkit import Client, Context, Server

from ._composed import ERAS, connect, serve_http, stdio_command, text
from ._sync import sync


def counting() -> Server:
    parent, child = Server("parent"), Server("child")

    @parent.tool
    def count(ctx: Context) -> int:
        ctx.session["count"] = ctx.session.get("count", 0) + 1
        return int(ctx.session["count"])

    @child.tool
    def peek(ctx: Context) -> int:
        return int(ctx.session.get("count", 0))

    parent.mount(child, namespace="kid")
    return parent


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_in_process_per_client(version: str) -> None:
    server = counting()
    async with (
        Client(server, protocol_version=version) as one,
        Client(server, protocol_version=version) as two,
    ):
        assert [text(await one.call_tool("count", {})) for _ in range(3)] == ["1", "2", "3"]
        assert text(await two.call_tool("count", {})) == "1"  # a session of its own
        assert text(await one.call_tool("kid__peek", {})) == "3"  # a mounted tool sees the caller's
    async with Client(server, protocol_version=version) as again:
        assert text(await again.call_tool("count", {})) == "1"  # a new session starts empty


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_stdio_connection(version: str) -> None:
    async with (
        Client(stdio_command(), protocol_version=version, timeout=120, probe_timeout=60) as one,
        Client(stdio_command(), protocol_version=version, timeout=120, probe_timeout=60) as two,
    ):
        assert [text(await one.call_tool("count", {})) for _ in range(3)] == ["1", "2", "3"]
        assert text(await two.call_tool("count", {})) == "1"


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    yield from serve_http()


@sync
async def test_http_handshake_session(request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("http_url")
    async with connect("http", url, "2025-11-25") as one, connect("http", url, "2025-11-25") as two:
        assert [text(await one.call_tool("count", {})) for _ in range(3)] == ["1", "2", "3"]
        assert [text(await two.call_tool("count", {})) for _ in range(2)] == ["1", "2"]
        assert text(await one.call_tool("count", {})) == "4"


@sync
async def test_stateless_http_request_only(request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("http_url")
    async with connect("http", url, "2026-07-28") as client:
        assert [text(await client.call_tool("count", {})) for _ in range(3)] == ["1", "1", "1"]
