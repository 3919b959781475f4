"""The stdio transports handing messages over as they arrive (``listen``, which ``Peer.run`` sets
to ``Peer.take``), against real child processes that write scripted bytes: what is taken at once,
and what must still wait its turn; on the client's end and on the server's."""

from __future__ import annotations

import asyncio
import functools
import json
import sys
import textwrap
from pathlib import Path
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
            # A slow handler: answers 2 and 3 must wait for it. Slow enough that answer 3 (written
            # 0.1 s after the chunk that carried the notification) arrives while it runs, however
            # late a busy machine lets the child write it.
            await asyncio.sleep(2.0)
            order.append("notification ends")

        peer = Peer(transport, on_notification=on_notification)
        seen: list[bytes] = []

        take_now = peer.take

        def take(data: bytes) -> bool:
            taken = take_now(data)
            if taken:
                seen.append(data)
            return taken

        peer.take = take  # type: ignore[method-assign]  # what run() hands the transport
        reader = asyncio.ensure_future(peer.run())
        futures = [await peer.send_request(n, "ping", None) for n in (1, 2, 3, 4)]
        for n, future in enumerate(futures, 1):
            future.add_done_callback(functools.partial(lambda n, _: order.append(f"answer {n}"), n))
        results: list[Any] = await asyncio.wait_for(asyncio.gather(*futures), 120)
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

        take_now = peer.take

        def take(data: bytes) -> bool:
            nonlocal taken
            taken += take_now(data)
            return True

        peer.take = take  # type: ignore[method-assign]  # what run() hands the transport
        reader = asyncio.ensure_future(peer.run())
        for _ in range(20):
            assert await asyncio.wait_for(peer.request("ping"), 60) == {}
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


def test_take_starts_requests_and_settles_answers_and_leaves_the_rest_to_run() -> None:
    async def main() -> None:
        near, far = memory_pair()

        async def on_request(request: jsonrpc.Request) -> dict[str, Any]:
            return {"method": request.method}

        peer = Peer(near, on_request=on_request)
        assert not peer.take(b'{"jsonrpc":"2.0","method":"notifications/message","params":{}}')
        assert not peer.take(b'[{"jsonrpc":"2.0","id":8,"method":"ping"}]')  # a batch: in order, by run()
        assert not peer.take(b"{not json")  # run() answers it (-32700)
        # A request starts now and is answered as run() would have it answered.
        assert peer.take(b'{"jsonrpc":"2.0","id":7,"method":"ping"}')
        assert (
            await asyncio.wait_for(far.receive(), 5) == b'{"jsonrpc":"2.0","id":7,"result":{"method":"ping"}}'
        )
        # An answer to nothing pending is taken (and dropped), as run() would.
        assert peer.take(b'{"jsonrpc":"2.0","id":99,"result":{}}')

    asyncio.run(main())


# A server with a slow notification handler and a tool that says what that handler has seen.
SLOW_NOTE_SERVER = textwrap.dedent(
    """
    import asyncio
    from mcpkit import Server

    server = Server("slow-note")
    heard = []

    @server.notification_handler("notifications/roots/list_changed")
    async def roots_changed(params):
        await asyncio.sleep(0.3)
        heard.append("roots changed")

    @server.tool
    async def seen() -> str:
        return ",".join(heard) or "nothing"

    server.run()
    """
)


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_the_server_takes_a_lone_request_at_once_but_never_ahead_of_a_notification_before_it(
    tmp_path: Path,
) -> None:
    script = tmp_path / "slow_note.py"
    script.write_text(SLOW_NOTE_SERVER)

    async def main() -> list[dict[str, Any]]:
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(script), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        assert process.stdin is not None and process.stdout is not None
        initialize = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        call = {"name": "seen", "arguments": {}}
        process.stdin.write(_line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}))
        answers = [json.loads(await asyncio.wait_for(process.stdout.readline(), 120))]
        process.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        # A lone request: taken as it arrives, the handler has heard nothing yet.
        process.stdin.write(_line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}))
        answers.append(json.loads(await asyncio.wait_for(process.stdout.readline(), 120)))
        # The notification and a request behind it in one chunk; then, while the slow handler still
        # runs, another request on its own: both wait for the handler, in order.
        process.stdin.write(
            _line({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
            + _line({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
        )
        await process.stdin.drain()
        await asyncio.sleep(0.1)
        process.stdin.write(_line({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": call}))
        for _ in range(2):
            answers.append(json.loads(await asyncio.wait_for(process.stdout.readline(), 120)))
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 60)
        return answers

    answers = asyncio.run(main())
    assert [answer["id"] for answer in answers] == [1, 2, 3, 4]
    texts = [answer["result"]["content"][0]["text"] for answer in answers[1:]]
    assert texts == ["nothing", "roots changed", "roots changed"]


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
