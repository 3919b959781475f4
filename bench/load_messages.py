"""The benchmark's JSON-RPC messages in both eras, pre-encoded calls, and the checks of their answers."""

from __future__ import annotations

from typing import Any

import orjson

HANDSHAKE = "handshake"
MODERN = "modern"
HANDSHAKE_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
CLIENT_INFO = {"name": "mcpkit-bench", "version": "1.0.0"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}
ECHO_TEXT = "hello, benchmark"


class BenchError(Exception):
    """A server answered wrongly, or not at all."""


def request(
    rid: int, method: str, params: dict[str, Any] | None, era: str, meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A request of *era*; in 2026-07-28 its ``_meta`` is *meta*, or else :data:`MODERN_META`."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if era == MODERN:
        params = {**(params or {}), "_meta": MODERN_META if meta is None else meta}
    if params is not None:
        message["params"] = params
    return message


def initialize(rid: int = 0) -> dict[str, Any]:
    params = {"protocolVersion": HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}


INITIALIZED = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})


class CallTemplate:
    """Pre-encoded ``tools/call echo`` requests (or another tool taking ``text``): only the id changes."""

    def __init__(self, era: str, tool: str = "echo", meta: dict[str, Any] | None = None) -> None:
        sample = request(1234567, "tools/call", {"name": tool, "arguments": {"text": ECHO_TEXT}}, era, meta)
        head, tail = orjson.dumps(sample).split(b"1234567", 1)
        self._fmt = head.replace(b"%", b"%%") + b"%d" + tail.replace(b"%", b"%%")

    def encode(self, rid: int) -> bytes:
        return self._fmt % rid


def check_answers(answers: dict[str, Any]) -> None:
    """The answers to ``tools/list``, ``echo`` and ``add`` are those the benchmark expects."""
    names = sorted(tool["name"] for tool in answers["tools/list"]["tools"])
    if not {"add", "echo"} <= set(names):
        raise BenchError(f"tools/list lacks echo or add: {names}")
    echo = answers["echo"]
    if echo.get("isError") or echo["content"][0]["text"] != ECHO_TEXT:
        raise BenchError(f"echo answered {echo!r}")
    add = answers["add"]
    if add.get("isError") or add["content"][0]["text"] not in ("5", "5.0"):
        raise BenchError(f"add(2, 3) answered {add!r}")


def result_of(answer: dict[str, Any], what: str) -> Any:
    """The ``result`` of *answer*, or :class:`BenchError` naming *what* was asked."""
    if "result" not in answer:
        raise BenchError(f"{what}: {answer.get('error', answer)!r}")
    return answer["result"]
