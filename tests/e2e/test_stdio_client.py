"""The stdio client transport's writes, over real pipes to real processes: what one turn of the loop
sends goes out in one write, a lone message goes at once, a sender that never yields is held by the
pipe's flow control, and closing writes what was sent first."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, ConnectionClosed, RequestTimeout, TextContent
from mcpkit.transports.stdio import StdioClientTransport

from .test_faults import SERVE, run, text

pytestmark = pytest.mark.e2e


def request(request_id: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


class WriteCounter:
    """Counts the write(2) calls made to one file descriptor (the server's stdin)."""

    def __init__(self) -> None:
        self.fd = -1
        self.writes = 0


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> WriteCounter:
    counting = WriteCounter()
    real_write = os.write

    def write(fd: int, data: Any) -> int:
        if fd == counting.fd:
            counting.writes += 1
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    return counting


def stdin_fd(transport: object) -> int:
    assert isinstance(transport, StdioClientTransport)
    pipe = transport._out._writer.get_extra_info("pipe")
    return int(pipe.fileno())


def test_calls_sent_in_one_turn_go_out_in_one_write(counter: WriteCounter) -> None:
    async def main() -> None:
        async with Client(SERVE, protocol_version="2025-11-25") as client:
            counter.fd = stdin_fd(client._transport)
            texts = [str(n) for n in range(16)]
            results = await asyncio.gather(*(client.call_tool("echo", {"text": t}) for t in texts))
            answers = [block.text for r in results for block in r.content if isinstance(block, TextContent)]
            assert answers == texts
            # Sixteen requests started in one turn: one write (two if the server was heard from
            # just before, whose first message goes at once), not sixteen.
            assert 1 <= counter.writes <= 2

    run(main())


def test_a_lone_message_is_written_before_send_returns(counter: WriteCounter) -> None:
    async def main() -> None:
        transport = await StdioClientTransport.spawn(SERVE)
        try:
            counter.fd = stdin_fd(transport)
            version = {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            }
            await transport.send(request(1, "initialize", version))
            assert counter.writes == 1  # no waiting for the end of the turn
            assert json.loads(await transport.receive())["id"] == 1
            await transport.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            assert counter.writes == 2
            await transport.send(request(2, "ping"))  # the same turn: waits for the turn's end
            assert counter.writes == 2
            assert json.loads(await transport.receive())["id"] == 2
            assert counter.writes == 3
        finally:
            await transport.aclose()

    run(main())


#: Answers each round of 16 requests with one write of their 16 answers.
BURST = """
import json, sys
for _ in range(2):
    ids = [json.loads(sys.stdin.readline())["id"] for _ in range(16)]
    sys.stdout.write("".join(json.dumps({"jsonrpc": "2.0", "id": i, "result": {}}) + "\\n" for i in ids))
    sys.stdout.flush()
"""


def test_the_requests_a_burst_of_answers_wakes_go_out_in_one_write(counter: WriteCounter) -> None:
    async def ids(transport: StdioClientTransport) -> list[int]:
        return sorted([json.loads(await transport.receive())["id"] for _ in range(16)])

    async def main() -> None:
        transport = await StdioClientTransport.spawn([sys.executable, "-c", BURST])
        try:
            counter.fd = stdin_fd(transport)
            for n in range(16):
                await transport.send(request(n, "ping"))
            assert await ids(transport) == list(range(16))
            before = counter.writes
            for n in range(16, 32):  # what the callers those answers woke would send, in one turn
                await transport.send(request(n, "ping"))
            assert counter.writes == before  # none at once: the burst said more would follow
            assert await ids(transport) == list(range(16, 32))
            assert counter.writes == before + 1
        finally:
            await transport.aclose()

    run(main())


def test_a_sender_that_never_yields_is_held_by_the_pipe_and_freed_when_it_closes() -> None:
    async def main() -> None:
        # A server that never reads its stdin: the pipe fills, then the transport's buffer does.
        transport = await StdioClientTransport.spawn([sys.executable, "-c", "import time; time.sleep(60)"])
        message = json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"pad": "x" * 16_000}}).encode()
        count = 1_000  # 16 MB if nothing held the sender back
        sent = 0

        async def sender() -> None:
            nonlocal sent
            for _ in range(count):
                await transport.send(message)  # never yields unless made to wait
                sent += 1

        task = asyncio.ensure_future(sender())
        try:
            for _ in range(20):
                await asyncio.sleep(0)
            assert not task.done() and sent < count // 10
            out = transport._out
            held = out._writer.get_write_buffer_size() + out._pending_bytes
            assert held < 512 * 1024, f"{held} bytes waiting for a server that does not read"
        finally:
            transport.process.kill()
            with pytest.raises(ConnectionClosed):
                await task  # the pipe closed under the waiting sender
            await transport.aclose()

    run(main())


def test_closing_writes_what_this_turn_sent_first(tmp_path: Path) -> None:
    received = tmp_path / "received"
    copy = f"import sys; open({str(received)!r}, 'wb').write(sys.stdin.buffer.read())"

    async def main() -> None:
        transport = await StdioClientTransport.spawn([sys.executable, "-c", copy])
        for n in range(3):
            await transport.send(request(n, "ping"))
        await transport.aclose()
        assert transport.process.returncode == 0

    run(main())
    assert [json.loads(line)["id"] for line in received.read_bytes().splitlines()] == [0, 1, 2]


# -- one timer for the deadlines of every request in flight ------------------------------------------


def test_a_shorter_timeout_sent_later_still_ends_first() -> None:
    async def main() -> None:
        async with Client(SERVE, timeout=60) as client:
            patient = asyncio.ensure_future(client.call_tool("slow_default", timeout=600))
            await asyncio.sleep(0)  # sent first: the one timer is armed for its deadline
            with pytest.raises(RequestTimeout):  # the watcher is armed again, earlier
                await client.call_tool("slow_default", timeout=0.2)
            assert not patient.done()
            patient.cancel()
            assert text(await client.call_tool("echo", {"text": "still here"})) == "still here"

    run(main(), 120)  # a stall past this is the failure: 600 s is the other request's timeout


def test_a_deadline_outlives_the_answered_request_the_timer_was_armed_for() -> None:
    async def main() -> None:
        async with Client(SERVE) as client:
            # 10 s: the echo is answered long before, however busy the machine.
            assert text(await client.call_tool("echo", {"text": "quick"}, timeout=10)) == "quick"
            # The timer armed for the answered call fires first, and must be armed again for this.
            with pytest.raises(RequestTimeout):
                await client.call_tool("slow_default", timeout=11)

    run(main(), 120)
