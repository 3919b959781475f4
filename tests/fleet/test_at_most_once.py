"""At most once by default: a tool call whose node is killed mid-call is run again on another node
only if its tool says that is safe (``readOnlyHint``, ``idempotentHint`` or ``repeatable=True``);
otherwise the client's resumed stream ends with a tool error saying the outcome is unknown, and the
tool ran once.

Each call appends a line to a file (``record`` in ``fleet_server.py``): the executions, counted.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client
from mcpkit.fleet.takeover import NOT_REPEATED

from .conftest import Fleet, start_node, wait_ready


def revive(fleet: Fleet) -> None:
    """Start again, on their ports, the nodes a test killed (nginx keeps them in its upstream)."""
    for index, node in enumerate(fleet.nodes):
        if node.poll() is not None:
            fleet.nodes[index] = start_node(fleet.ports[index], fleet.redis_url)
    for port, node in zip(fleet.ports, fleet.nodes, strict=True):
        wait_ready(port, node)


@pytest.fixture
def fleet(own_fleet: Fleet) -> Fleet:
    revive(own_fleet)
    return own_fleet


def executions(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


async def call_and_kill(fleet: Fleet, tool: str, path: Path) -> tuple[Any, list[float], int]:
    """Call *tool* through nginx and SIGKILL the node running it at its third progress step: the
    result, the progress heard, and the pid killed."""
    progress: list[float] = []
    killed: list[int] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)
        if value == 3 and not killed:
            assert message is not None
            pid = int(message.split()[-1])  # the node doing the work
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    async with Client(fleet.url, protocol_version="2025-11-25") as client:
        arguments = {"path": str(path), "seconds": 3}
        result = await client.call_tool(tool, arguments, on_progress=on_progress, timeout=60)
    assert killed, "the call ended before its node could be killed"
    return result, progress, killed[0]


@pytest.mark.parametrize("tool", ["record", "record_not_repeatable"])
def test_a_call_whose_node_died_is_not_run_again(fleet: Fleet, tool: str, tmp_path: Path) -> None:
    path = tmp_path / "executions"
    result, progress, killed = asyncio.run(call_and_kill(fleet, tool, path))
    assert result.is_error
    assert result.content[0].text == NOT_REPEATED
    assert progress == [1.0, 2.0, 3.0]  # what the dead node sent, once each; nothing after
    assert executions(path) == [str(killed)]  # it ran once, on the node that died


@pytest.mark.parametrize("tool", ["record_idempotent", "record_read_only", "record_repeatable"])
def test_a_call_safe_to_repeat_is_taken_over(fleet: Fleet, tool: str, tmp_path: Path) -> None:
    path = tmp_path / "executions"
    result, progress, killed = asyncio.run(call_and_kill(fleet, tool, path))
    assert not result.is_error, result
    assert progress == [float(n) for n in range(1, 11)]  # none lost, none twice
    ran = executions(path)
    assert len(ran) == 2 and ran[0] == str(killed) and ran[1] != str(killed)
    assert result.content[0].text == f"recorded on {ran[1]}"


def test_the_official_sdk_client_gets_the_error_result(fleet: Fleet, tmp_path: Path) -> None:
    """mcp 2.x's client resumes the stream with Last-Event-ID, and reads the error result there
    (it does not hang)."""
    pytest.importorskip("mcp")
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    path = tmp_path / "executions"

    async def main() -> None:
        killed: list[int] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if progress == 3 and not killed:
                assert message is not None
                killed.append(int(message.split()[-1]))
                os.kill(killed[0], signal.SIGKILL)

        async with (
            streamable_http_client(fleet.url) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            arguments: dict[str, Any] = {"path": str(path), "seconds": 3}
            async with asyncio.timeout(60):
                result = await session.call_tool("record", arguments, progress_callback=on_progress)
        assert killed
        assert result.is_error
        assert result.content[0].text == NOT_REPEATED  # type: ignore[union-attr]
        assert executions(path) == [str(killed[0])]

    asyncio.run(main())
