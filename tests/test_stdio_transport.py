"""The stdio transport in process: its line splitting (`LineReader`) and its outbox (`_Outbox`).

Whatever chunks the bytes arrive in, the same lines come out: blank lines skipped, a trailing
``\\r`` dropped, a last line without its newline kept, and every line longer than the bound read as
``OVERSIZE`` once (its bytes dropped, never buffered whole).
"""

from __future__ import annotations

import asyncio
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.transports.base import OVERSIZE
from mcpkit.transports.stdio import LineReader, _FlowControl, _Outbox


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
        pipe, flow = Pipe(), _FlowControl()
        outbox = _Outbox(pipe, flow)  # type: ignore[arg-type]
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
