"""A node dies in the middle of a long tool call: the client resumes on another node and gets
every progress message and the result, each once (the work is taken over, see
``mcpkit.transports.http.roaming``: the tool says it is safe to run again; one that does not is
not taken over, see ``test_at_most_once``)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from mcpkit import Client

from .conftest import Fleet


def test_a_long_call_survives_its_node_being_killed(own_fleet: Fleet, tmp_path: Path) -> None:
    fleet = own_fleet

    async def main() -> None:
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
            arguments = {"path": str(tmp_path / "runs"), "seconds": 2}
            result = await client.call_tool(
                "record_read_only", arguments, on_progress=on_progress, timeout=30
            )
        assert killed and progress == [float(n) for n in range(1, 11)]  # none lost, none twice
        text: str = result.content[0].text  # type: ignore[union-attr]
        assert text.startswith("recorded on ") and text != f"recorded on {killed[0]}"

    asyncio.run(main())
