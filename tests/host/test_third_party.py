"""The host and the gateway over servers mcpkit did not write: the TypeScript reference servers
(server-everything, server-filesystem, server-memory, on Node 24 from ``tests/host/npm``) and servers
on the official Python SDK (2.3.0 here, 1.30.0 from the venv the interop tests build)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, TextContent
from mcpkit.host import Host

from ..conftest import node_project
from ..interop.venvs import ensure_venv
from ._util import NPM, SERVERS, config, run
from .test_gateway import User, gateway, write_config

pytestmark = [pytest.mark.e2e, pytest.mark.interop]


def _text(result: Any) -> str:
    return " ".join(b.text for b in result.content if isinstance(b, TextContent))


@pytest.fixture(scope="module")
def npm_servers() -> dict[str, list[str]]:
    """``node script`` command lines of the three npm servers (installed with npm ci if missing)."""
    node, everything = node_project(NPM, "@modelcontextprotocol/server-everything/dist/index.js")
    modules = NPM / "node_modules" / "@modelcontextprotocol"
    return {
        "everything": [node, everything, "stdio"],
        "filesystem": [node, str(modules / "server-filesystem" / "dist" / "index.js")],
        "memory": [node, str(modules / "server-memory" / "dist" / "index.js")],
    }


def _entry(command: list[str], *args: str, **extra: Any) -> dict[str, Any]:
    return {"command": command[0], "args": [*command[1:], *args], **extra}


def test_host_over_npm_and_sdk_servers(tmp_path: Path, npm_servers: dict[str, list[str]]) -> None:
    files = tmp_path / "files"
    files.mkdir()
    mcp1 = ensure_venv("mcp1", "mcp==1.30.0")
    servers = {
        "everything": _entry(npm_servers["everything"]),
        "filesystem": _entry(npm_servers["filesystem"], str(files)),
        "memory": _entry(npm_servers["memory"], env={"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}),
        "sdk": {"command": sys.executable, "args": [str(SERVERS / "sdk_server.py")]},
        "sdk1": {"command": str(mcp1), "args": [str(SERVERS / "sdk_server.py")]},
    }
    cfg = config(servers, tmp_path, roots=[files.as_uri()])

    async def main() -> None:
        # Five servers start at once (Node, and two Pythons importing an SDK): on a busy machine that
        # takes far longer than the default 30 s, and start-up speed is not what this tests.
        async with Host(cfg, connect_timeout=180) as host:
            status = host.status()
            assert {key: s.state for key, s in status.items()} == dict.fromkeys(servers, "ready")
            assert status["sdk"].protocol_version == "2026-07-28"
            assert status["sdk1"].protocol_version == "2025-11-25"  # 1.x: the handshake only
            names = {tool.name for tool in host.tools()}
            assert {
                "everything__echo",
                "filesystem__write_file",
                "memory__read_graph",
                "sdk__shout",
                "sdk1__shout",
            } <= names
            assert "hi" in _text(await host.call_tool("everything__echo", {"message": "hi"}))
            assert "7" in _text(await host.call_tool("everything__get-sum", {"a": 3, "b": 4}))
            target = str(files / "note.txt")
            await host.call_tool("filesystem__write_file", {"path": target, "content": "from the host"})
            read = await host.call_tool("filesystem__read_text_file", {"path": target})
            assert _text(read) == "from the host"
            outside = await host.call_tool("filesystem__read_text_file", {"path": "/etc/hostname"})
            assert outside.is_error  # the roots the host offered are the only ones allowed
            entities = [{"name": "mcpkit", "entityType": "project", "observations": ["small"]}]
            await host.call_tool("memory__create_entities", {"entities": entities})
            graph = await host.call_tool("memory__read_graph")
            assert "mcpkit" in _text(graph) or "mcpkit" in json.dumps(graph.structured_content)
            for key in ("sdk", "sdk1"):
                assert _text(await host.call_tool(f"{key}__shout", {"text": "hey"})) == "HEY"
                prompt = await host.get_prompt(f"{key}__greet", {"name": "Ann"})
                assert "Ann" in getattr(prompt.messages[0].content, "text", "")
            # two servers list the same URI: the first in the config keeps it
            assert await host.read_resource("sdk://motto")
            assert any("sdk://motto" in c and "'sdk1'" in c for c in host.conflicts())

    run(main(), 300)


@pytest.mark.parametrize("caller", [None, "2025-11-25"])
def test_gateway_relays_server_everything_sampling_and_elicitation(
    tmp_path: Path, npm_servers: dict[str, list[str]], caller: str | None
) -> None:
    path = write_config(tmp_path, {"everything": _entry(npm_servers["everything"])})
    user = User()

    async def main() -> None:
        async with Client(
            gateway(path), protocol_version=caller, elicitation=user.elicit, sampling=user.sample
        ) as client:
            names = [tool.name for tool in await client.list_tools()]
            assert "everything__trigger-sampling-request" in names
            sampled = await client.call_tool("everything__trigger-sampling-request", {"prompt": "Say hi"})
            assert "hello" in _text(sampled)
            elicited = await client.call_tool("everything__trigger-elicitation-request")
            assert not elicited.is_error, _text(elicited)
            assert user.asked[0] == "sampling" and len(user.asked) == 2

    run(main(), 180)
