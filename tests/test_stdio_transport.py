"""The stdio transport in process: its line splitting (`LineReader`), its outbox (`Outbox`), and
the server end's writes from worker threads (over a real pipe), and, over a real server process,
a lone ``def`` call answered from its worker thread while the loop's thread is held.

Whatever chunks the bytes arrive in, the same lines come out: blank lines skipped, a trailing
``\\r`` dropped, a last line without its newline kept, and every line longer than the bound read as
``OVERSIZE`` once (its bytes dropped, never buffered whole).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import select
import sys
import threading
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit._transport import OVERSIZE
from mcpkit.transports._stdio_outbox import FlowControl, Outbox
from mcpkit.transports.stdio import LineReader, StdioServerTransport


def expected(data: bytes, limit: int) -> list[bytes]:
    """The lines a reader must return, worked out the slow and obvious way."""
    out: list[bytes] = []
    pieces = data.split(b"\n")
    for index, line in enumerate(pieces):
        if index == len(pieces) - 1 and not line:
            break  # the stream ended with a newline
        if len(line) > limit:
            out.append(OVERSIZE)
        elif line.rstrip(b"\r").strip():
            out.append(line.rstrip(b"\r"))
    return out


def read_all(chunks: list[bytes], limit: int) -> list[bytes]:
    async def main() -> list[bytes]:
        stream = asyncio.StreamReader(limit=limit)
        reader = LineReader(stream, limit)
        lines: list[bytes] = []

        async def feed() -> None:
            for chunk in chunks:
                stream.feed_data(chunk)
                await asyncio.sleep(0)  # let the reader take each chunk on its own
            stream.feed_eof()

        feeder = asyncio.create_task(feed())
        while True:
            line = reader.read_nowait() if len(lines) % 2 else None  # both ways, taking turns
            if line is not None:
                lines.append(line)
                continue
            try:
                lines.append(await reader.read())
            except EOFError:
                break
        await feeder
        return lines

    return asyncio.run(main())


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    bounds = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(bounds) if b > a]


lines = st.lists(
    st.one_of(
        st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")),
        st.sampled_from([b"", b" ", b"\r", b"{}", b"x" * 30, b"y" * 17]),
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(lines, st.booleans(), st.lists(st.integers(min_value=0, max_value=10_000), max_size=8))
def test_any_chunking_yields_the_same_lines(parts: list[bytes], final_newline: bool, cuts: list[int]) -> None:
    data = b"\n".join(parts) + (b"\n" if final_newline else b"")
    got = read_all(chunked(data, cuts), 16)
    want = expected(data, 16)
    assert got == want
    # OVERSIZE is recognised by identity: the reader hands back the sentinel itself for a line too
    # long, and never for a line that merely has the same bytes.
    assert [line is OVERSIZE for line in got] == [line is OVERSIZE for line in want]


def test_a_long_line_in_many_chunks_is_refused_once_and_reading_goes_on() -> None:
    data = [b'{"a": 1}\n{"pad": "', *([b"x" * 10] * 50), b'"}\n\r\n{"b": 2}\r\n']
    assert read_all(data, 64) == [b'{"a": 1}', OVERSIZE, b'{"b": 2}']


def test_a_long_line_cut_off_by_the_end_of_the_stream_is_still_refused() -> None:
    assert read_all([b"{}\n", b"z" * 40, b"z" * 40], 64) == [b"{}", OVERSIZE]


def test_a_last_line_without_its_newline_counts() -> None:
    assert read_all([b"{}\n{", b'"x": 1}'], 64) == [b"{}", b'{"x": 1}']
    assert read_all([b"{}\n  \r"], 64) == [b"{}"]


def test_a_line_exactly_at_the_bound_is_accepted() -> None:
    assert read_all([b"a" * 8 + b"\n", b"b" * 9 + b"\n"], 8) == [b"a" * 8, OVERSIZE]


def test_send_nowait_takes_a_message_only_when_nothing_must_wait() -> None:
    class Pipe:
        def __init__(self) -> None:
            self.written: list[bytes] = []
            self.closing = False

        def write(self, data: bytes) -> None:
            self.written.append(data)

        def is_closing(self) -> bool:
            return self.closing

    async def main() -> None:
        pipe, flow = Pipe(), FlowControl()
        outbox = Outbox(pipe, flow)  # type: ignore[arg-type]
        assert outbox.send_nowait(b"1")
        await outbox.send(b"2")
        await asyncio.sleep(0)  # the turn ends: both go in one write
        assert pipe.written == [b"1\n2\n"]
        flow.pause_writing()  # over the high-water mark: the caller must wait in send()
        assert not outbox.send_nowait(b"3")
        flow.resume_writing()
        pipe.closing = True
        assert not outbox.send_nowait(b"4")
        await asyncio.sleep(0)
        assert pipe.written == [b"1\n2\n"]

    asyncio.run(main())


def _in_a_thread(send: Any, message: bytes) -> bool:
    sent: list[bool] = []
    thread = threading.Thread(target=lambda: sent.append(send(message)))
    thread.start()
    thread.join()
    return sent[0]


def _drain(fd: int) -> bytes:
    data = b""
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(fd, 65536):
            data += chunk
    return data


def test_send_from_thread_writes_only_where_the_loop_would_write_at_once() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        flow = FlowControl()
        writer, _ = await loop.connect_write_pipe(lambda: flow, os.fdopen(write_fd, "wb", buffering=0))
        reader = LineReader(asyncio.StreamReader())
        transport = StdioServerTransport(reader, write_fd, writer, flow)
        send = transport.send_from_thread
        # The client's lone request is being answered: the answer goes from the thread, at once.
        assert _in_a_thread(send, b'{"id":1}')
        assert _drain(read_fd) == b'{"id":1}\n'
        # Something went since: what follows is the loop's (it goes with the rest of the turn).
        assert not _in_a_thread(send, b'{"id":2}')
        transport._arrived(b'{"id":3}\n')  # another lone request
        assert _in_a_thread(send, b'{"id":3}')
        assert _drain(read_fd) == b'{"id":3}\n'
        transport._arrived(b'{"id":4}\n{"id":5}\n')  # a burst: its answers go together
        assert not _in_a_thread(send, b'{"id":4}')
        transport._arrived(b'{"id":6}\n')
        # Longer than one atomic pipe write: the loop writes it (it may take more than one write).
        assert not _in_a_thread(send, b'{"x":"' + b"y" * select.PIPE_BUF + b'"}')
        # Something waits in the outbox, to go at the end of this turn: nothing may pass it.
        assert transport._out is not None and transport._out.send_nowait(b'{"id":"queued"}')
        assert not _in_a_thread(send, b'{"id":6}')
        await asyncio.sleep(0)
        assert _drain(read_fd) == b'{"id":"queued"}\n'
        # The pipe is full: nothing is written, and the next answer still counts as a lone one's.
        transport._arrived(b'{"id":7}\n')
        with contextlib.suppress(BlockingIOError):
            while True:
                os.write(write_fd, b"x" * 4096)
        assert not _in_a_thread(send, b'{"id":7}')
        assert transport._quiet
        _drain(read_fd)
        assert _in_a_thread(send, b'{"id":7}')
        assert _drain(read_fd) == b'{"id":7}\n'
        writer.close()
        await asyncio.sleep(0)
        transport._arrived(b'{"id":8}\n')
        assert not _in_a_thread(send, b'{"id":8}')  # closed
        os.close(read_fd)

    asyncio.run(main())


HELD_LOOP_SERVER = """
import asyncio, os, sys, threading, time
from mcpkit import Server

server = Server("held")
loops = []

@server.tool
async def remember() -> str:
    loops.append(asyncio.get_running_loop())
    return "remembered"

@server.tool
def answered_while_held(release: str) -> str:
    held = threading.Event()

    def hold() -> None:  # the loop's thread: held until the client has the answer (or 120 s)
        held.set()
        deadline = time.monotonic() + 120
        while not os.path.exists(release) and time.monotonic() < deadline:
            time.sleep(0.01)

    loops[0].call_soon_threadsafe(hold)
    held.wait(120)
    return "from the worker"

server.run()
"""


def test_a_lone_def_call_is_answered_while_the_loops_thread_is_held(tmp_path: Path) -> None:
    # Its worker thread writes the answer: the loop's thread, held in a callback until the client
    # has it, never gets to. Were the loop to send it, the client would wait the hold's 120 s (and
    # gives up after 60).
    script = tmp_path / "held.py"
    script.write_text(HELD_LOOP_SERVER)
    release = tmp_path / "release"

    def line(message: dict[str, Any]) -> bytes:
        return json.dumps(message).encode() + b"\n"

    def call(request_id: int, name: str, arguments: dict[str, Any]) -> bytes:
        params = {"name": name, "arguments": arguments}
        return line({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})

    async def main() -> list[dict[str, Any]]:
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(script), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        assert process.stdin is not None and process.stdout is not None
        try:
            initialize = {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            }
            process.stdin.write(
                line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize})
            )
            answers = [json.loads(await asyncio.wait_for(process.stdout.readline(), 120))]
            process.stdin.write(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            process.stdin.write(call(2, "remember", {}))
            answers.append(json.loads(await asyncio.wait_for(process.stdout.readline(), 120)))
            process.stdin.write(call(3, "answered_while_held", {"release": str(release)}))
            answers.append(json.loads(await asyncio.wait_for(process.stdout.readline(), 60)))
            release.touch()
            # The loop goes on, and knows request 3 is done: id 3 is free again.
            process.stdin.write(call(3, "remember", {}))
            answers.append(json.loads(await asyncio.wait_for(process.stdout.readline(), 120)))
        finally:
            release.touch()
            process.stdin.close()
            await asyncio.wait_for(process.wait(), 60)
        return answers

    answers = asyncio.run(main())
    assert [answer["id"] for answer in answers] == [1, 2, 3, 3]
    texts = [answer["result"]["content"][0]["text"] for answer in answers[1:]]
    assert texts == ["remembered", "from the worker", "remembered"]
