"""The stdio client transport handing answers over as they arrive (``listen``), against a real child
process that writes scripted bytes: what is taken at once, and what must still wait its turn."""

from __future__ import annotations

import asyncio
import functools
import sys
import textwrap
from typing import Any

from mcpkit import _jsonrpc as jsonrpc
from mcpkit.client.connect import ProbeAnswers
from mcpkit.session import Peer
from mcpkit.transports.memory import memory_pair
from mcpkit.transports.stdio import StdioClientTransport

# Reads four requests, then writes, a chunk at a time: answer 1, a notification, answer 2 and a line
# of log text; answer 3 (while the notification is still being handled); the first half of answer 4;
# its second half (which completes a line begun in an earlier chunk).
SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    for _ in range(4):
        sys.stdin.buffer.readline()
    note = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'
    os.write(1, b'{"jsonrpc":"2.0","id":1,"result":{"n":1}}\\n' + note + b'\\n'
                + b'{"jsonrpc":"2.0","id":2,"result":{"n":2}}\\n' + b'starting up...\\n')
    time.sleep(0.1)
    os.write(1, b'{"jsonrpc":"2.0","id":3,"result":{"n":3}}\\n')
    time.sleep(0.5)
    os.write(1, b'{"jsonrpc":"2.0","id":4,')
    time.sleep(0.1)
    os.write(1, b'"result":{"n":4}}\\n')
    sys.stdin.buffer.read()
    """
)


def test_answers_are_taken_as_they_arrive_but_never_ahead_of_what_came_before() -> None:
    async def main() -> tuple[list[str], list[bytes], int]:
        transport = await StdioClientTransport.spawn([sys.executable, "-c", SCRIPT])
        order: list[str] = []

        async def on_notification(note: jsonrpc.Notification) -> None:
            order.append("notification starts")
            await asyncio.sleep(0.3)  # a slow handler: answers 2 and 3 must wait for it
            order.append("notification ends")

        peer = Peer(transport, on_notification=on_notification)
        seen: list[bytes] = []

        def take(data: bytes) -> bool:
            taken = peer.take(data)
            if taken:
                seen.append(data)
            return taken

        transport.listen(take)
        reader = asyncio.ensure_future(peer.run())
        futures = [await peer.send_request(n, "ping", None) for n in (1, 2, 3, 4)]
        for n, future in enumerate(futures, 1):
            future.add_done_callback(functools.partial(lambda n, _: order.append(f"answer {n}"), n))
        results: list[Any] = await asyncio.wait_for(asyncio.gather(*futures), 10)
        assert results == [{"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}]
        skipped = transport.skipped
        await transport.aclose()
        await reader
        return order, seen, skipped

    order, seen, skipped = asyncio.run(main())
    assert order == [
        "answer 1",
        "notification starts",
        "notification ends",
        "answer 2",
        "answer 3",
        "answer 4",
    ]
    # Only answer 1 was taken on arrival: the notification after it and all that followed in its
    # chunk went through the reading task in order; answer 3 came while that task was still busy
    # with the notification, and answer 4 ended a line begun in an earlier chunk.
    assert seen == [b'{"jsonrpc":"2.0","id":1,"result":{"n":1}}']
    assert skipped == 1  # the log text was still seen and skipped


def test_lone_answers_are_all_taken_on_arrival() -> None:
    script = textwrap.dedent(
        """
        import sys, json
        for line in sys.stdin.buffer:
            request = json.loads(line)
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {}}) + "\\n")
            sys.stdout.flush()
        """
    )

    async def main() -> int:
        transport = await StdioClientTransport.spawn([sys.executable, "-c", script])
        peer = Peer(transport)
        taken = 0

        def take(data: bytes) -> bool:
            nonlocal taken
            taken += peer.take(data)
            return True

        transport.listen(take)
        reader = asyncio.ensure_future(peer.run())
        for _ in range(20):
            assert await asyncio.wait_for(peer.request("ping"), 10) == {}
        await transport.aclose()
        await reader
        return taken

    assert asyncio.run(main()) == 20


def test_the_probe_turns_listening_off_while_it_waits_and_back_on_after() -> None:
    class Listening:
        def __init__(self) -> None:
            self.calls: list[object] = []

        def listen(self, take: object) -> None:
            self.calls.append(take)

        async def receive(self) -> bytes:
            raise EOFError

        async def send(self, message: bytes) -> None:
            pass

        async def aclose(self) -> None:
            pass

    def take(data: bytes) -> bool:
        return False

    transport = Listening()
    probe = ProbeAnswers(transport)
    probe.listen(take)
    with probe.expecting(1):
        assert transport.calls == [take, None]
    assert transport.calls == [take, None, take]


def test_take_leaves_anything_but_an_answer_to_run() -> None:
    peer = Peer(memory_pair()[0])
    assert not peer.take(b'{"jsonrpc":"2.0","method":"notifications/message","params":{}}')
    assert not peer.take(b'{"jsonrpc":"2.0","id":7,"method":"ping"}')
    assert not peer.take(b"{not json")
    # An answer to nothing pending is taken (and dropped), as run() would.
    assert peer.take(b'{"jsonrpc":"2.0","id":99,"result":{}}')


def test_send_request_nowait_sends_only_where_the_transport_takes_it_at_once() -> None:
    class Taking:
        def __init__(self, accept: bool) -> None:
            self.accept = accept
            self.sent: list[bytes] = []

        def send_nowait(self, message: bytes) -> bool:
            if self.accept:
                self.sent.append(message)
            return self.accept

        async def receive(self) -> bytes:
            raise EOFError

        async def send(self, message: bytes) -> None:
            self.sent.append(message)

        async def aclose(self) -> None:
            pass

    async def main() -> None:
        # No send_nowait at all (memory): the caller must await send_request.
        assert Peer(memory_pair()[0]).send_request_nowait(1, "ping", None) is None
        # A transport that cannot take it now (over its high-water mark): nothing sent or pending.
        full = Taking(accept=False)
        peer = Peer(full)
        assert peer.send_request_nowait(1, "ping", None) is None
        assert full.sent == []
        assert peer.take(b'{"jsonrpc":"2.0","id":1,"result":{}}')  # an answer to nothing: dropped
        # One that can: sent, and its answer settles the returned future.
        ready = Taking(accept=True)
        peer = Peer(ready)
        future = peer.send_request_nowait(2, "ping", None)
        assert future is not None
        assert ready.sent == [b'{"jsonrpc":"2.0","id":2,"method":"ping"}']
        assert peer.take(b'{"jsonrpc":"2.0","id":2,"result":{"ok":true}}')
        assert await future == {"ok": True}

    asyncio.run(main())
