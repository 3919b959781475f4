"""A node dies in the middle of a long tool call: the client resumes on another node and gets
every progress message and the result, each once (the work is taken over, see
``mcpkit.fleet.sessions``: the tool says it is safe to run again; one that does not is
not taken over, see ``test_at_most_once``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from .conftest import Fleet
from .test_at_most_once import call_and_kill


def test_a_long_call_survives_its_node_being_killed(own_fleet: Fleet, tmp_path: Path) -> None:
    result, progress, killed = asyncio.run(call_and_kill(own_fleet, "record_read_only", tmp_path / "runs"))
    assert progress == [float(n) for n in range(1, 11)]  # none lost, none twice
    text: str = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("recorded on ") and text != f"recorded on {killed}"
