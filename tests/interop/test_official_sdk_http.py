"""Interoperability over Streamable HTTP on 127.0.0.1, with the official `mcp` SDK.

* mcpkit's client against the SDK's HTTP server: 2.3.0 (2026-07-28, and handshake sessions at 2025-11-25
  and 2025-03-26 with Mcp-Session-Id and DELETE) and 1.30.0 (legacy: the modern probe fails, the client
  falls back to initialize);
* the SDK 2.3.0 client against mcpkit's HTTP server (2026-07-28; mcpkit does not serve handshake-era
  HTTP sessions yet).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, TextContent

from ..conftest import free_port, http_server, mcpkit_run
from .test_official_sdk import CALLS, PEERS, check_weather, sdk_client
from .venvs import ensure_venv

pytestmark = [pytest.mark.e2e, pytest.mark.interop]


@pytest.fixture(scope="module")
def sdk2_url() -> Iterator[str]:
    port = free_port()
    yield from http_server([sys.executable, str(PEERS / "official_server.py"), "--http", str(port)], port, 20)


@pytest.fixture(scope="module")
def sdk1_url() -> Iterator[str]:
    python: Path = ensure_venv("mcp1", "mcp==1.30.0")
    port = free_port()
    yield from http_server([str(python), str(PEERS / "official_server.py"), "--http", str(port)], port, 20)


@pytest.fixture(scope="module")
def our_url() -> Iterator[str]:
    port = free_port()
    command = mcpkit_run("weather.py", "--transport", "http", "--port", str(port))
    yield from http_server(command, port, 20)


async def exercise(url: str, version: str | None, expected: str) -> None:
    # A modern server's probe answer may be slow on a busy machine: it must not be taken for silence
    # (a legacy server refuses the probe, which ends it at once).
    async with Client(url, protocol_version=version, probe_timeout=60) as client:
        assert client.protocol_version == expected
        assert client.server_info is not None and client.server_info.name == "sdk-weather"
        assert {t.name for t in await client.list_tools()} == {"get_weather", "add", "echo", "fail"}
        assert (await client.call_tool("add", {"a": 2, "b": 40})).content == [TextContent(text="42")]
        assert (await client.call_tool("echo", {"text": "héllo\nwörld"})).content == [
            TextContent(text="héllo\nwörld")
        ]
        assert (await client.call_tool("fail")).is_error is True


@pytest.mark.parametrize(
    ("version", "expected"),
    [(None, "2026-07-28"), ("2025-11-25", "2025-11-25"), ("2025-03-26", "2025-03-26")],
)
def test_our_client_against_sdk2_http_server(sdk2_url: str, version: str | None, expected: str) -> None:
    asyncio.run(asyncio.wait_for(exercise(sdk2_url, version, expected), 120))


def test_our_client_falls_back_over_http_with_sdk1(sdk1_url: str) -> None:
    asyncio.run(asyncio.wait_for(exercise(sdk1_url, None, "2025-11-25"), 120))


@pytest.mark.parametrize("sdk", ["mcp2", "mcp1"])
def test_our_client_falls_back_to_http_sse(sdk: str) -> None:
    # POST to the SSE URL fails with a 4xx, so the client opens the 2024-11-05 stream instead.
    python = Path(sys.executable) if sdk == "mcp2" else ensure_venv("mcp1", "mcp==1.30.0")
    port = free_port()
    for url in http_server([str(python), str(PEERS / "official_server.py"), "--sse", str(port)], port, 20):
        sse_url = url.removesuffix("/mcp") + "/sse"
        asyncio.run(asyncio.wait_for(exercise(sse_url, None, "2024-11-05"), 120))


def test_our_client_falls_back_to_our_own_http_sse(our_url: str) -> None:
    async def main() -> None:
        async with Client(our_url.removesuffix("/mcp") + "/sse") as client:
            assert client.protocol_version == "2024-11-05"
            result = await client.call_tool("get_weather", {"location": "Oslo"})
            assert result.is_error is not True and "Oslo" in str(result.content)

    asyncio.run(asyncio.wait_for(main(), 120))


def test_sdk2_client_against_our_http_server(our_url: str) -> None:
    out: dict[str, Any] = sdk_client(sys.executable, *CALLS, "--", our_url)
    assert out["protocolVersion"] == "2026-07-28"
    check_weather(out, structured=True)


def test_our_client_against_our_http_server(our_url: str) -> None:
    async def main() -> None:
        async with Client(our_url, probe_timeout=60) as client:
            assert client.protocol_version == "2026-07-28"
            names = [t.name for t in await client.list_tools()]
            assert names == ["get_weather", "get_weather_data", "forecast"]
            data = await client.call_tool("get_weather_data", {"location": "Zürich"})
            assert data.structured_content["location"] == "Zürich"  # type: ignore[index]

    asyncio.run(asyncio.wait_for(main(), 120))


def test_sdk2_legacy_client_against_our_http_server(our_url: str) -> None:
    out: dict[str, Any] = sdk_client(sys.executable, "--mode", "legacy", *CALLS, "--", our_url)
    assert out["protocolVersion"] == "2025-11-25"
    check_weather(out, structured=True)


def test_sdk1_client_against_our_http_server(our_url: str) -> None:
    python = ensure_venv("mcp1", "mcp==1.30.0")
    script = PEERS / "official_http_client.py"
    proc = subprocess.run([str(python), str(script), our_url], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["2025-11-25 weather", "Current weather in Rome:"]


@pytest.mark.parametrize("sdk", ["2.3.0", "1.30.0"])
def test_sdk_clients_on_the_2024_11_05_http_sse_transport(our_url: str, sdk: str) -> None:
    python = sys.executable if sdk == "2.3.0" else str(ensure_venv("mcp1", "mcp==1.30.0"))
    sse_url = our_url.removesuffix("/mcp") + "/sse"
    proc = subprocess.run(
        [python, str(PEERS / "official_http_client.py"), "--sse", sse_url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["2025-11-25 weather", "Current weather in Rome:"]
