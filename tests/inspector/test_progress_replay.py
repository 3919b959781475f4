"""The inspector shows the progress a 2026-07-28 tool reports before asking the user once, though
the tool, run again with the answer, reports it again (each round under a new progress token).

The inspector's session is driven as the page drives it (``handle``), against the server over real
stdio and real HTTP; the page only draws the ``progress`` events it is sent."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit.inspector.session import InspectorSession

from ..conftest import free_port, http_server

REPLAY = Path(__file__).parents[1] / "cli" / "fixtures" / "replay.py"


@pytest.fixture(scope="module")
def replay_url() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "mcpkit", "run", str(REPLAY), "--transport", "http", "--port", str(port)]
    yield from http_server(command, port, 60)


async def _call_and_answer(target: dict[str, str]) -> tuple[Any, list[tuple[Any, Any]]]:
    session = InspectorSession(None)
    await session.handle("connect", {"target": target, "protocolVersion": "2026-07-28"})
    seen: list[dict[str, Any]] = []

    async def page() -> None:
        """What the page does with the events: keep them, answer the question."""
        while True:
            event = await session.events.get()
            seen.append(event)
            if event["type"] == "question":
                answer = {"action": "accept", "content": {"name": "Ada"}}
                session.answer({"key": event["key"], "result": answer})

    reader = asyncio.ensure_future(page())
    try:
        params = {"method": "tools/call", "params": {"name": "steps", "arguments": {}}, "callId": "c1"}
        result = await session.handle("request", params)
    finally:
        reader.cancel()
        await session.close()
    while not session.events.empty():  # what the page had not read yet
        seen.append(session.events.get_nowait())
    progress = [(event["callId"], event["progress"]) for event in seen if event["type"] == "progress"]
    return result, progress


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_progress_before_a_question_is_shown_once(transport: str, request: pytest.FixtureRequest) -> None:
    if transport == "stdio":
        target = {"kind": "command", "value": f"{sys.executable} -m mcpkit run {REPLAY}"}
    else:
        target = {"kind": "url", "value": request.getfixturevalue("replay_url")}
    result, progress = asyncio.run(asyncio.wait_for(_call_and_answer(target), 60))
    assert result["content"][0]["text"] == "answer: accept"
    assert progress == [("c1", 1), ("c1", 2), ("c1", 3)]
