"""Operating a fleet: worker processes on one port, readiness, and a shutdown that drains streams."""

from __future__ import annotations

import json
import signal
import time

import httpx

from ..conftest import free_port
from .conftest import start_node, wait_ready
from .test_fleet import message, result_of


def call_whoami(url: str) -> str:
    body, headers = message("tools/call", {"name": "whoami", "arguments": {}})
    with httpx.Client(timeout=10) as fresh:  # a new connection: the kernel picks a worker
        text: str = result_of(fresh.post(url, json=body, headers=headers))["content"][0]["text"]
    return text


def test_workers_share_one_port_and_a_redis_they_start(tmp_path: object) -> None:
    port = free_port()
    proc = start_node(port, "auto", "--workers", "2")
    try:
        wait_ready(port, proc)
        url = f"http://127.0.0.1:{port}/mcp"
        seen = {call_whoami(url) for _ in range(40)}
        assert len(seen) == 2
        # A multi round-trip retry is opened by whichever worker takes it: one key for both.
        body, headers = message("tools/call", {"name": "ask", "arguments": {}})
        with httpx.Client(timeout=10) as fresh:
            first = result_of(fresh.post(url, json=body, headers=headers))
        assert first["resultType"] == "input_required"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0


def test_readyz_fails_while_redis_cannot_be_reached() -> None:
    port, nowhere = free_port(), free_port()
    proc = start_node(port, f"redis://127.0.0.1:{nowhere}/0")
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.1)
        assert health.status_code == 200
        assert httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code == 503
        body, headers = message("tools/call", {"name": "whoami", "arguments": {}})
        refused = httpx.post(f"http://127.0.0.1:{port}/mcp", json=body, headers=headers, timeout=15)
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_shutdown_ends_listen_streams_gracefully(redis_url: str) -> None:
    port = free_port()
    proc = start_node(port, redis_url)
    try:
        wait_ready(port, proc)
        body, headers = message("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        with httpx.stream(
            "POST", f"http://127.0.0.1:{port}/mcp", json=body, headers=headers, timeout=10
        ) as stream:
            lines = stream.iter_lines()
            assert "acknowledged" in next(line for line in lines if line.startswith("data: "))
            proc.send_signal(signal.SIGTERM)
            # Ended by the drain: its graceful answer comes (the shutdown timeout would cancel the
            # handler instead, and the stream would end with no answer).
            final = json.loads(next(line for line in lines if line.startswith("data: "))[6:])
            assert final["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 1
        assert proc.wait(timeout=20) in (0, -signal.SIGTERM)  # uvicorn exits by the signal it caught
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
