"""The README's Python examples run as written."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, LowLevelServer
from mcpkit.transports.memory import memory_pair

from .conftest import ROOT

BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def block(marker: str) -> str:
    found = [b for b in BLOCKS if marker in b]
    assert len(found) == 1, marker
    return found[0]


def test_the_low_level_example_serves_what_it_says() -> None:
    namespace: dict[str, Any] = {}
    exec(block("LowLevelServer("), namespace)
    server = namespace["server"]
    assert isinstance(server, LowLevelServer)

    async def main() -> None:
        ours, theirs = memory_pair()
        task = asyncio.ensure_future(server.serve(theirs))
        async with Client(ours) as client:
            assert [t.name for t in await client.list_tools()] == ["add"]
            assert (await client.call_tool("add", {"a": 1, "b": 2})).content[0].text == "3"  # type: ignore[union-attr]
            assert await client.request("prompts/list") == {
                "prompts": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "private",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "calc", "version": "0.1.0"}},
            }  # fmt: skip
        await task

    asyncio.run(asyncio.wait_for(main(), 60))


def test_the_client_example_runs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    exec(block("async with Client("), {"__name__": "readme"})
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "2026-07-28"
    assert "get_weather" in out and "Current weather in Paris:" in out


def test_the_server_example_defines_a_working_tool() -> None:
    namespace: dict[str, Any] = {"__name__": "readme"}
    exec(block('Server("weather"'), namespace)
    assert [t.name for t in namespace["server"].tools] == ["get_weather"]
    assert (
        namespace["server"].tools[0].input_schema["properties"]["location"]["description"]
        == "City name or zip code"
    )
