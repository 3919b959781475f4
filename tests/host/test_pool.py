"""The gateway's per-caller upstream sessions (mcpkit.host.pool), over real server processes.

A caller that can be asked gets upstream sessions of its own from a handshake-era server: opened
lazily, capped per server, never handed to another caller, closed when the caller goes or idles
out; a session that dies is reported and replaced. Callers are in-process clients over memory
streams, so the test can look into the pool; the servers are real processes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, TextContent
from mcpkit.gateway import Gateway
from mcpkit.transports.memory import memory_pair

from ._util import config, run, toolbox

pytestmark = pytest.mark.e2e


def _text(result: Any) -> str:
    return " ".join(b.text for b in result.content if isinstance(b, TextContent))


async def _ok(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"ok": True}}


class Caller:
    """A handshake-era client of the gateway over memory streams, one that can be asked."""

    def __init__(self, gateway: Gateway, **options: Any) -> None:
        ours, theirs = memory_pair()
        self.serving = asyncio.ensure_future(gateway.server.serve(theirs))
        self.client = Client(ours, protocol_version="2025-11-25", elicitation=_ok, **options)

    async def __aenter__(self) -> Client:
        return await self.client.__aenter__()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.client.__aexit__(*exc_info)
        await asyncio.wait_for(self.serving, 60)


async def _until(check: Any, seconds: float = 60) -> None:
    async with asyncio.timeout(seconds):
        while not check():  # noqa: ASYNC110 (what is awaited is a process's end, seen by polling)
            await asyncio.sleep(0.05)


def test_many_callers_come_and_go_and_the_pool_ends_empty(tmp_path: Path) -> None:
    """Twelve callers at once, at most three sessions: each caller's calls run on sessions no
    other caller ever had, and once the callers are gone no session (nor process) is left."""
    servers = {"box": toolbox(protocolVersion="2025-06-18", maxSessions=3)}
    gateway = Gateway(config(servers, tmp_path))
    peak = 0

    async def caller(n: int) -> set[str]:
        async with Caller(gateway) as client:
            return {_text(await client.call_tool("box__pid")) for _ in range(2)}

    async def main() -> None:
        nonlocal peak
        async with gateway:
            pool = gateway.host.upstreams["box"].pool

            async def watch() -> None:
                nonlocal peak
                while True:
                    peak = max(peak, len(pool))
                    await asyncio.sleep(0.01)

            watching = asyncio.ensure_future(watch())
            pids = await asyncio.gather(*(caller(n) for n in range(12)))
            watching.cancel()
            # A caller's idle session may be closed to make room for another caller's (then its
            # next call opens another), but no session ever served two callers.
            every = set().union(*pids)
            assert len(every) == sum(len(mine) for mine in pids) >= 12
            await _until(lambda: len(pool) == 0)
            await _until(lambda: not pool._closing)  # every session's client closed
            await _until(lambda: not any(_alive(int(pid)) for pid in every))
        assert 1 <= peak <= 3

    run(main(), 240)


def test_a_session_idles_out_and_a_dead_one_is_reported_and_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    servers = {"box": toolbox(protocolVersion="2025-06-18", sessionIdleTimeout=2.0)}
    gateway = Gateway(config(servers, tmp_path))

    async def main() -> None:
        async with gateway, Caller(gateway) as client:
            pool = gateway.host.upstreams["box"].pool
            first = int(_text(await client.call_tool("box__pid")))
            assert len(pool) == 1  # (2 s idle: not yet, however slowly the answer came back)
            await _until(lambda: len(pool) == 0)  # unused for 2 s: closed
            await _until(lambda: not _alive(first))
            second = int(_text(await client.call_tool("box__pid")))  # a new one, lazily
            assert second != first

            # killed between calls: dropped at once (not left half-alive), replaced on the next call
            os.kill(second, signal.SIGKILL)
            await _until(lambda: len(pool) == 0)
            third = int(_text(await client.call_tool("box__pid")))
            assert third not in (first, second)

            # killed during a call: the call fails clearly, the caller's next call gets a new session
            started = asyncio.Event()

            async def progress(done: float, total: float | None, message: str | None) -> None:
                started.set()

            waiting = asyncio.ensure_future(
                client.call_tool("box__wait", {"seconds": 30}, on_progress=progress)
            )
            await asyncio.wait_for(started.wait(), 60)
            os.kill(third, signal.SIGKILL)
            failed = await asyncio.wait_for(waiting, 60)
            assert failed.is_error and "failed during the call" in _text(failed), _text(failed)
            assert "this caller's session is closed" in _text(failed)
            fourth = int(_text(await client.call_tool("box__pid")))
            assert fourth not in (first, second, third)
            # the shared session never noticed: the server is ready for everyone
            assert gateway.host.status()["box"].state == "ready"

    with caplog.at_level(logging.WARNING, logger="mcpkit.host"):
        run(main(), 240)
    reported = [r.getMessage() for r in caplog.records if "caller's session" in r.getMessage()]
    assert len(reported) >= 2, reported  # the kill between calls and the kill during one


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie not yet reaped counts as gone
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][:1] != "Z"
    except OSError:
        return False


def test_a_full_pool_makes_a_caller_wait_then_says_busy(tmp_path: Path) -> None:
    servers = {"box": toolbox(protocolVersion="2025-06-18", maxSessions=1)}
    gateway = Gateway(config(servers, tmp_path))

    async def main() -> None:
        async with gateway, Caller(gateway) as a, Caller(gateway) as b:
            pool = gateway.host.upstreams["box"].pool
            started = asyncio.Event()

            async def progress(done: float, total: float | None, message: str | None) -> None:
                started.set()

            # a holds the one session for 15 s: b's 0.5 s wait, and its answer's way back, end well
            # within it however busy the machine.
            holding = asyncio.ensure_future(a.call_tool("box__wait", {"seconds": 15}, on_progress=progress))
            await asyncio.wait_for(started.wait(), 60)
            # Only now (a holds the one session): a slow start of b's session under load must not
            # make a's own call give up after 0.5 s.
            pool.wait_seconds = 0.5  # (the server's timeout, else 120 s)
            busy = await b.call_tool("box__pid")
            assert busy.is_error and "its 1 caller sessions stayed in use for 0.5 s" in _text(busy), _text(
                busy
            )
            assert not holding.done()
            assert _text(await holding) == "waited 15.0"
            pool.wait_seconds = 120  # room is made by closing a's session and starting b's: slow under load
            assert _text(await b.call_tool("box__pid")).isdigit()  # a's idle session made room
            assert len(pool) == 1  # b's own; a's was closed to make room

    run(main(), 240)
