"""Faults over real stdio: servers that crash, hang or write junk, clients that vanish or never
read, cancellation racing completion, blocking and slow tools (issue 12, item 3)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, ConnectionClosed, RequestTimeout, TextContent

pytestmark = pytest.mark.e2e

FAULTY = Path(__file__).parent / "fault_servers" / "faulty.py"
SERVE = [sys.executable, "-m", "mcpkit", "run", str(FAULTY)]
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def run(coro: Any, seconds: float = 30) -> Any:
    return asyncio.run(asyncio.wait_for(coro, seconds))


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def call_line(request_id: int | str, tool: str, arguments: dict[str, Any], **meta: Any) -> bytes:
    params = {"name": tool, "arguments": arguments, "_meta": {**META, **meta}}
    return (
        json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()
        + b"\n"
    )


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


# -- a server that crashes ---------------------------------------------------------------------------


@pytest.mark.parametrize(("tool", "status"), [("crash", "exit code 7"), ("kill_self", "killed by SIGKILL")])
def test_crash_fails_every_pending_request_promptly_naming_the_exit_status(tool: str, status: str) -> None:
    async def main() -> None:
        async with Client(SERVE, timeout=20) as client:
            pending = [asyncio.ensure_future(client.call_tool("block", {"seconds": 10})) for _ in range(3)]
            await asyncio.sleep(0)
            dying = asyncio.ensure_future(client.call_tool(tool))
            # Promptly: left waiting, the blocked calls would end in 10 s with "slept", or time out.
            for call in [dying, *pending]:
                with pytest.raises(ConnectionClosed, match=status):
                    await call
            with pytest.raises(ConnectionClosed):  # and later calls fail at once, not hang
                await client.call_tool("echo", {"text": "x"})

    run(main())


# -- a server that hangs -----------------------------------------------------------------------------

HANG = """
import json, signal, sys, time
if sys.argv[1] == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": "2025-11-25",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "hang", "version": "0"}}}), flush=True)
    elif msg.get("method") == "server/discover":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}), flush=True)
    elif msg.get("method") == "tools/call":
        while True:  # never answers, never reads again, and ignores stdin closing
            time.sleep(1)
"""


@pytest.mark.parametrize(
    ("mode", "signal_"), [("exit-on-term", signal.SIGTERM), ("ignore-term", signal.SIGKILL)]
)
def test_hung_server_times_out_and_closing_ends_the_process(
    tmp_path: Path, mode: str, signal_: signal.Signals
) -> None:
    script = tmp_path / "hang.py"
    script.write_text(textwrap.dedent(HANG))

    async def main() -> None:
        client = Client([sys.executable, str(script), mode], probe_timeout=5)
        await client.connect()
        with pytest.raises(RequestTimeout):  # the server never answers: the timeout is all there is
            await client.call_tool("anything", timeout=0.5)
        transport: Any = client._transport
        await client.aclose()  # stdin closed, 2 s; SIGTERM, 2 s; SIGKILL
        # Which signal ended it shows how far the escalation went (how long it took is the machine's).
        assert transport.process.returncode == -signal_

    run(main())


# -- a server that writes junk to stdout -------------------------------------------------------------

JUNK = """
import json, sys
def say(obj):
    sys.stdout.write("starting up... (a stray print)\\n" + json.dumps(obj) + "\\n\\n   \\nDEBUG x=1\\n{oops\\n")
    sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:  # a notification, or the client's -32700 for "{oops"
        continue
    if msg.get("method") == "initialize":
        say({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": "2025-11-25",
             "capabilities": {"tools": {}}, "serverInfo": {"name": "junk", "version": "0"}}})
    elif msg.get("method") == "tools/call":
        say({"jsonrpc": "2.0", "id": msg["id"], "result": {"content": [{"type": "text", "text": "fine"}]}})
    elif msg.get("method") == "server/discover":
        say({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}})
    else:
        say({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
"""


def test_junk_between_messages_is_skipped_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    script = tmp_path / "junk.py"
    script.write_text(textwrap.dedent(JUNK))

    async def main() -> int:
        async with Client([sys.executable, str(script)], probe_timeout=5) as client:
            for _ in range(20):
                assert text(await client.call_tool("anything")) == "fine"
            results = await asyncio.gather(*(client.call_tool("anything") for _ in range(20)))
            assert all(text(r) == "fine" for r in results)
            transport: Any = client._transport
            return int(transport.skipped)

    skipped = run(main())
    # Two lines of text around each answer are skipped (blank lines are not junk); "{oops" looks like
    # JSON, so it reaches the decoder and is answered with -32700 like any malformed message.
    assert skipped >= 2 * 41
    warnings = [r for r in caplog.records if r.name == "mcpkit.client" and "not JSON-RPC" in r.getMessage()]
    assert len(warnings) == skipped and "stray print" in warnings[0].getMessage()


# -- a client that disconnects mid-stream -------------------------------------------------------------


def test_client_vanishing_mid_stream_ends_the_server_cleanly() -> None:
    proc = subprocess.Popen(SERVE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(call_line(1, "chatter", {"count": 1_000_000, "size": 100}, progressToken="p"))
    proc.stdin.flush()
    for _ in range(100):  # the stream is flowing
        assert json.loads(proc.stdout.readline())["method"] == "notifications/progress"
    proc.stdout.close()  # gone: nothing reads our stdout any more, and stdin ends
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    assert "Traceback" not in stderr, stderr


# -- a client that never reads: outbound back-pressure ------------------------------------------------


def test_never_reading_client_back_pressures_the_server_and_loses_nothing() -> None:
    count, size = 100_000, 1000  # ~110 MB of log notifications if the server buffered them all
    proc = subprocess.Popen(SERVE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(call_line(1, "chatter", {"count": 20, "size": 10}, progressToken="warm"))
        proc.stdin.flush()
        while json.loads(proc.stdout.readline()).get("id") != 1:
            pass
        baseline = rss_kib(proc.pid)
        logs = {"io.modelcontextprotocol/logLevel": "debug"}
        proc.stdin.write(call_line(2, "chatter", {"count": count, "size": size, "log": True}, **logs))
        proc.stdin.flush()
        time.sleep(2.0)  # not reading: without back-pressure the server queues it all by now
        grown = rss_kib(proc.pid) - baseline
        assert grown < 20_000, f"the server grew by {grown} KiB for a client that does not read"
        seen = 0
        while True:  # now read: every notification and the answer arrive, in order
            message = json.loads(proc.stdout.readline())
            if message.get("id") == 2:
                break
            assert message["method"] == "notifications/message" and message["params"]["data"]["index"] == seen
            seen += 1
        assert seen == count and message["result"]["content"][0]["text"] == f"sent {count}"
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        proc.stdout.close()


# -- cancellation racing completion -----------------------------------------------------------------


def test_cancel_racing_completion_never_gives_two_answers() -> None:
    rng = random.Random(7)
    proc = subprocess.Popen(SERVE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    for request_id in range(200):  # the cancel follows its request after 0 to 5 ms: some win, some lose
        proc.stdin.write(call_line(request_id, "echo", {"text": str(request_id)}))
        proc.stdin.flush()
        pause = rng.choice([0.0, 0.0005, 0.001, 0.002, 0.003, 0.005])
        if pause:
            time.sleep(pause)
        cancel = {"requestId": request_id, "reason": "race"}
        message = json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        proc.stdin.write(message.encode() + b"\n")
        proc.stdin.flush()
    stdout, stderr = proc.communicate(call_line("last", "echo", {"text": "last"}), timeout=30)
    answers = [json.loads(line) for line in stdout.splitlines()]
    ids = [a["id"] for a in answers]
    print(f"{len(ids) - 1} of 200 requests finished before their cancellation arrived")
    assert len(ids) == len(set(ids)), "a request was answered twice"
    assert ids[-1] == "last" and all(a["result"]["content"][0]["text"] == str(a["id"]) for a in answers)
    assert b"Traceback" not in stderr


def test_cancel_racing_completion_never_breaks_the_client() -> None:
    async def main() -> None:
        rng = random.Random(12)
        async with Client(SERVE) as client:
            for index in range(200):
                call = asyncio.ensure_future(client.call_tool("echo", {"text": str(index)}))
                for _ in range(rng.randrange(6)):
                    await asyncio.sleep(0)
                if rng.random() < 0.3:
                    await asyncio.sleep(rng.random() / 1000)
                call.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    assert text(await call) == str(index)
            assert text(await client.call_tool("echo", {"text": "still here"})) == "still here"

    run(main(), 60)


# -- blocking and slow tools --------------------------------------------------------------------------


def test_blocking_sync_tool_does_not_block_other_calls() -> None:
    async def main() -> None:
        async with Client(SERVE) as client:
            blocked = asyncio.ensure_future(client.call_tool("block", {"seconds": 25}))
            await asyncio.sleep(0.2)  # the blocking call has reached the server
            # Were the loop blocked, each echo would wait for the block's end (and answer after it).
            for _ in range(5):
                assert text(await client.call_tool("echo", {"text": "quick"})) == "quick"
                assert not blocked.done()
            blocked.cancel()

    run(main())


def test_per_tool_timeout_stops_an_async_tool() -> None:
    async def main() -> None:
        async with Client(SERVE) as client:
            started = time.monotonic()
            result = await client.call_tool("slow_async")
            assert time.monotonic() - started > 0.9  # not before its time; after it, the machine's pace
            assert result.is_error is True and text(result) == "Tool slow_async timed out after 1 s"
            assert (await client.call_tool("state")).structured_content["async_stopped"] is True  # type: ignore[index]

    run(main())


def test_per_tool_timeout_discards_a_sync_tools_result() -> None:
    async def main() -> None:
        async with Client(SERVE) as client:
            started = time.monotonic()
            result = await client.call_tool("slow_sync")
            assert time.monotonic() - started > 0.9
            assert result.is_error is True and "timed out after 1 s" in text(result)
            # Answered while the thread still runs (it runs until released)...
            assert (await client.call_tool("state")).structured_content["sync_finished"] is False  # type: ignore[index]
            # ...which cannot be killed: it runs to its end, and its result goes nowhere.
            assert text(await client.call_tool("release")) == "released"
            for _ in range(300):
                finished = (await client.call_tool("state")).structured_content["sync_finished"]  # type: ignore[index]
                if finished:
                    break
                await asyncio.sleep(0.1)
            assert finished is True

    run(main())


def test_server_default_tool_timeout() -> None:
    async def main() -> None:
        async with Client(SERVE, env={"TOOL_TIMEOUT": "0.5"}) as client:
            result = await client.call_tool("slow_default")  # 30 s, but for the server's timeout
            assert result.is_error is True and text(result) == "Tool slow_default timed out after 0.5 s"
            slow = await client.call_tool("slow_async")  # the tool's own timeout wins
            assert text(slow) == "Tool slow_async timed out after 1 s"

    run(main())
