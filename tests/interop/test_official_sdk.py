"""Interoperability with the official ``mcp`` SDK, both ways, over real stdio, in both eras.

* its client against mcpkit's server: 2.3.0 in its default (2026-07-28, discover probe) and legacy
  (initialize at 2025-11-25) modes, and 1.30.0 (handshake only);
* mcpkit's client against its server: 2.3.0 (modern, and forced to handshake revisions) and 1.30.0
  (a legacy server: mcpkit must fall back from the discover probe to initialize).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, RPCError, TextContent

from ..conftest import mcpkit_run
from .venvs import ensure_venv

pytestmark = [pytest.mark.e2e, pytest.mark.interop]

PEERS = Path(__file__).parent / "peers"
MCP1 = "mcp==1.30.0"


@pytest.fixture(scope="session")
def mcp1_python() -> Path:
    return ensure_venv("mcp1", MCP1)


def sdk_client(python: Path | str, *args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [str(python), str(PEERS / "official_client.py"), *args], capture_output=True, text=True, timeout=60
    )
    out = json.loads(proc.stdout)
    assert proc.returncode == 0, out.get("error", proc.stderr)
    return out  # type: ignore[no-any-return]


CALLS = (
    "--call", "get_weather", '{"location": "Paris"}',
    "--call", "get_weather_data", '{"location": "Oslo", "unit": "fahrenheit"}',
    "--call", "forecast", '{"location": "Lima", "days": 12}',
)  # fmt: skip


def check_weather(out: dict[str, Any], *, structured: bool) -> None:
    assert out["serverInfo"]["name"] == "weather"
    assert [t["name"] for t in out["tools"]] == ["get_weather", "get_weather_data", "forecast"]
    assert out["tools"][0]["inputSchema"]["properties"]["location"]["type"] == "string"
    weather = out["calls"]["get_weather"]
    assert "Paris" in weather["content"][0]["text"] and not weather.get("isError")
    data = out["calls"]["get_weather_data"]
    if structured:
        assert data["structuredContent"]["unit"] == "fahrenheit"
    assert json.loads(data["content"][0]["text"])["unit"] == "fahrenheit"
    failed = out["calls"]["forecast"]
    assert failed["isError"] is True and "between 1 and 7" in failed["content"][0]["text"]


def test_sdk2_client_modern_against_our_server() -> None:
    out = sdk_client(sys.executable, *CALLS, "--", *mcpkit_run("weather.py"))
    assert out["protocolVersion"] == "2026-07-28"
    check_weather(out, structured=True)


def test_sdk2_client_legacy_against_our_server() -> None:
    out = sdk_client(sys.executable, "--mode", "legacy", *CALLS, "--", *mcpkit_run("weather.py"))
    assert out["protocolVersion"] == "2025-11-25"
    check_weather(out, structured=True)


def test_sdk1_client_against_our_server(mcp1_python: Path) -> None:
    out = sdk_client(mcp1_python, *CALLS, "--", *mcpkit_run("weather.py"))
    assert out["protocolVersion"] == "2025-11-25"
    check_weather(out, structured=True)


def test_sdk2_client_handles_notes_handles() -> None:
    out = sdk_client(
        sys.executable, "--call", "create_notebook", '{"title": "x"}', "--", *mcpkit_run("notes.py")
    )
    assert out["calls"]["create_notebook"]["structuredContent"]["notebook_id"].startswith("nb_")


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


async def exercise_sdk_server(command: list[str], version: str | None, expected_version: str) -> None:
    # The SDK server logs a full traceback for the failing tool: keep the test output readable.
    async with Client(command, protocol_version=version, stderr=subprocess.DEVNULL) as client:
        assert client.protocol_version == expected_version
        assert client.server_info is not None and client.server_info.name == "sdk-weather"
        tools = {t.name: t for t in await client.list_tools()}
        assert set(tools) == {"get_weather", "add", "echo", "fail"}
        assert tools["add"].input_schema["required"] == ["a", "b"]
        added = await client.call_tool("add", {"a": 2, "b": 40})
        assert added.content == [TextContent(text="42")]
        if expected_version >= "2025-06-18":
            assert added.structured_content == {"result": 42}
        echoed = await client.call_tool("echo", {"text": "héllo\nworld"})
        assert echoed.content == [TextContent(text="héllo\nworld")]
        failed = await client.call_tool("fail")
        assert failed.is_error is True
        bad = await client.call_tool("add", {"a": "x", "b": 1})
        assert bad.is_error is True
        with pytest.raises(RPCError):  # the SDK's code for this varies by version
            await client.request("prompts/get", {"name": "nope"})


@pytest.mark.parametrize(
    ("version", "expected"),
    [(None, "2026-07-28"), ("2025-11-25", "2025-11-25"), ("2025-03-26", "2025-03-26")],
)
def test_our_client_against_sdk2_server(version: str | None, expected: str) -> None:
    run(exercise_sdk_server([sys.executable, str(PEERS / "official_server.py")], version, expected))


def test_our_client_falls_back_to_initialize_with_sdk1_server(mcp1_python: Path) -> None:
    run(exercise_sdk_server([str(mcp1_python), str(PEERS / "official_server.py")], None, "2025-11-25"))


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_sdk2_client_exercises_every_feature(mode: str, version: str) -> None:
    command = [sys.executable, str(PEERS / "official_features.py"), "--mode", mode]
    command += [*mcpkit_run("notes.py"), "--", *mcpkit_run("travel.py")]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    notes, travel = out["notes"], out["travel"]
    assert notes["protocolVersion"] == version
    assert notes["resources"] == ["notes://about"]
    assert notes["templates"] == ["notes://{notebook_id}", "notes://{notebook_id}/{note_id}"]
    assert notes["read"][0]["text"] == "# sdk\n- hello" and notes["read"][0]["mimeType"] == "text/markdown"
    assert notes["prompts"] == ["summarize"]
    assert notes["prompt"][0]["content"]["text"] == "Summarize these notes (short):\nhello"
    assert notes["completion"] == ["bullet points"]
    assert notes["progress"] == [1.0]
    assert notes["logs"] and notes["logs"][0].startswith("info: exported 1 notes")
    assert travel == {
        "plan": "Trip to Brussels for 3 (medium budget). Idea: eat waffles",
        "isError": False,
        "roots": {"result": ["file:///srv/trips"]},
        "asked": ["elicitation", "sampling", "roots"],
    }
