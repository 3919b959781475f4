"""Security defaults (issue 12, item 6): resource templates refuse path traversal unless told
otherwise, errors reach the peer without tracebacks (or, with ``mask_errors``, without detail) while
the server's log gets the whole story, and tools can be rate limited."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, InvalidParams, LowLevelServer, RPCError, Server, TextContent, ToolError
from mcpkit._resources import unsafe_reason
from mcpkit.server._base import RateLimit
from mcpkit.transports.memory import memory_pair

_serving: set[asyncio.Future[None]] = set()
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


async def connect(server: LowLevelServer, version: str | None = None) -> Client:
    ours, theirs = memory_pair()
    _serving.add(asyncio.ensure_future(server.serve(theirs)))
    client = Client(ours, protocol_version=version)
    await client.connect()
    return client


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


# -- resource templates refuse path traversal ---------------------------------------------------------


def files_server(calls: list[str]) -> Server:
    server = Server("files")

    @server.resource("files://{path}")
    def by_name(path: str) -> str:
        calls.append(path)
        return f"contents of {path}"

    @server.resource("tree:///{+path}")
    def by_path(path: str) -> str:
        calls.append(path)
        return f"contents of {path}"

    @server.resource("raw://{path}", allow_traversal=True)
    def unchecked(path: str) -> str:
        calls.append(path)
        return f"contents of {path}"

    return server


REFUSED = [
    "files://..%2F..%2Fetc%2Fpasswd",  # ../../etc/passwd
    "files://%2e%2e%2fsecret",  # ../secret, every character encoded
    "files://%2E%2E",
    "files://..",
    "files://%2Fetc%2Fpasswd",  # an absolute path
    "files://a%5C..%5Cb",  # a\..\b
    "files://a%00.txt",  # NUL
    "tree:///../../etc/passwd",
    "tree:///docs/../../etc/passwd",
    "tree:////etc/passwd",
    "tree:///docs/%2e%2e/%2e%2e/etc/passwd",
]


@pytest.mark.parametrize("version", [None, "2025-11-25", "2024-11-05"])
@pytest.mark.parametrize("uri", REFUSED)
def test_traversal_is_refused_before_the_handler_runs(uri: str, version: str | None) -> None:
    async def main() -> None:
        calls: list[str] = []
        client = await connect(files_server(calls), version)
        with pytest.raises(InvalidParams) as info:
            await client.read_resource(uri)
        assert info.value.code == -32602 and "refuses" in str(info.value)
        assert calls == []

    run(main())


def test_traversal_is_refused_over_stdio(tmp_path: Path) -> None:
    path = tmp_path / "server.py"
    path.write_text(
        textwrap.dedent("""
        from mcpkit import Server
        server = Server("t")
        @server.resource("files://{path}")
        def read(path: str) -> str:
            raise SystemExit("the handler ran")
        """)
    )
    lines = b"".join(
        json.dumps(
            {"jsonrpc": "2.0", "id": index, "method": "resources/read", "params": {"uri": uri, "_meta": META}}
        ).encode()
        + b"\n"
        for index, uri in enumerate(["files://..%2F..%2Fetc%2Fpasswd", "files://%2e%2e%2f", "files://%2Fetc"])
    )
    proc = subprocess.run(
        [sys.executable, "-m", "mcpkit", "run", str(path)], input=lines, capture_output=True, timeout=30
    )
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["error"]["code"] for a in answers] == [-32602] * 3
    assert proc.returncode == 0 and b"the handler ran" not in proc.stderr


@pytest.mark.parametrize(
    ("uri", "value"),
    [
        ("files://notes.txt", "notes.txt"),
        ("files://a..b", "a..b"),  # dots inside a name are not a segment
        ("files://...", "..."),
        ("tree:///docs/2026/a.txt", "docs/2026/a.txt"),
        ("tree:///docs/./a.txt", "docs/./a.txt"),
        ("raw://..%2F..%2Fetc%2Fpasswd", "../../etc/passwd"),  # opted out: the handler decides
        ("raw://%2Fetc%2Fpasswd", "/etc/passwd"),
    ],
)
def test_safe_values_and_opted_out_templates_reach_the_handler(uri: str, value: str) -> None:
    async def main() -> None:
        calls: list[str] = []
        client = await connect(files_server(calls))
        contents = await client.read_resource(uri)
        assert calls == [value]
        assert contents.contents[0].text == f"contents of {value}"

    run(main())


def test_exploded_segments_are_checked_one_by_one() -> None:
    server = Server("segments")

    @server.resource("seg://x{/parts*}")
    def parts(parts: list[str]) -> str:
        return "/".join(parts)

    async def main() -> None:
        client = await connect(server)
        assert (await client.read_resource("seg://x/a/b")).contents[0].text == "a/b"
        with pytest.raises(InvalidParams):
            await client.read_resource("seg://x/a/../b")

    run(main())


@pytest.mark.parametrize(
    ("value", "reason"),
    [("..", "'..'"), ("a/../b", "'..'"), ("/abs", "absolute"), ("a\\b", "backslash"), ("a\0", "NUL"),
     ("ok", None), ("a..b", None), ("", None)],
)  # fmt: skip
def test_unsafe_reason(value: str, reason: str | None) -> None:
    found = unsafe_reason(value)
    assert found is None if reason is None else (found is not None and reason in found)


# -- what errors tell the peer, and what the log gets -------------------------------------------------


def failing_server(**options: Any) -> Server:
    server = Server("failing", **options)

    @server.tool
    async def boom() -> str:
        raise RuntimeError("kaboom")

    @server.tool
    def sync_boom() -> str:
        raise OSError(2, "No such file or directory", "/srv/secret/config.toml")

    @server.tool
    async def refuse() -> str:
        raise ToolError("not today")

    @server.resource("broken://{name}")
    def broken(name: str) -> str:
        raise ValueError(f"cannot parse {name}")

    return server


def test_tool_exceptions_reach_the_peer_as_one_line_and_the_log_with_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> None:
        client = await connect(failing_server())
        result = await client.call_tool("boom")
        assert result.is_error is True and text(result) == "Error executing tool boom: RuntimeError: kaboom"
        assert text(await client.call_tool("refuse")) == "not today"

    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        run(main())
    (record,) = [r for r in caplog.records if r.name == "mcpkit.server"]
    assert record.exc_info is not None and "boom" in record.getMessage()
    assert "Traceback" in caplog.text and 'raise RuntimeError("kaboom")' in caplog.text


def test_mask_errors_sends_the_tool_name_only() -> None:
    async def main() -> None:
        client = await connect(failing_server(mask_errors=True))
        for tool in ("boom", "sync_boom"):
            result = await client.call_tool(tool)
            assert result.is_error is True and text(result) == f"Error executing tool {tool}"
        assert text(await client.call_tool("refuse")) == "not today"  # a ToolError is meant for the peer
        with pytest.raises(RPCError) as info:
            await client.read_resource("broken://x")
        assert (info.value.code, str(info.value)) == (-32603, "Internal error")

    run(main())


def test_unmasked_resource_errors_carry_no_traceback() -> None:
    async def main() -> None:
        client = await connect(failing_server())
        with pytest.raises(RPCError) as info:
            await client.read_resource("broken://x")
        assert info.value.code == -32603 and "cannot parse x" in str(info.value)
        assert "Traceback" not in str(info.value) and ".py" not in str(info.value)

    run(main())


def test_stdio_server_logs_the_traceback_to_stderr_and_keeps_stdout_clean(tmp_path: Path) -> None:
    path = tmp_path / "server.py"
    path.write_text(
        textwrap.dedent("""
        from mcpkit import Server
        server = Server("t")
        @server.tool
        async def boom() -> str:
            raise RuntimeError("kaboom")
        """)
    )
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "boom", "_meta": meta}}
    proc = subprocess.run(
        [sys.executable, "-m", "mcpkit", "run", str(path)],
        input=json.dumps(call).encode() + b"\n",
        capture_output=True,
        timeout=30,
    )
    (line,) = proc.stdout.splitlines()
    answer = json.loads(line)
    assert answer["result"]["content"][0]["text"] == "Error executing tool boom: RuntimeError: kaboom"
    assert b"Traceback" not in proc.stdout
    stderr = proc.stderr.decode()
    assert "Traceback (most recent call last)" in stderr and "RuntimeError: kaboom" in stderr


# -- timeouts and rate limits: options checked at registration ----------------------------------------


def test_bad_timeouts_and_rate_limits_are_refused_at_registration() -> None:
    server = Server("t")
    with pytest.raises(ValueError, match="timeout"):
        server.add_tool(lambda: None, name="a", timeout=0)
    with pytest.raises(ValueError, match="rate limit"):
        server.add_tool(lambda: None, name="b", rate_limit="lots")
    with pytest.raises(ValueError, match="tool_timeout"):
        Server("t", tool_timeout=-1)
    assert Server("t").tool_timeout is None and Server("t").mask_errors is False


@pytest.mark.parametrize(
    ("spec", "capacity", "per_second"),
    [
        ("10/s", 10, 10.0),
        ("100/m", 100, 100 / 60),
        ("5/10s", 5, 0.5),
        ("3600/h", 3600, 1.0),
        ("2 / 0.5 s", 2, 4.0),
    ],
)
def test_rate_limit_specs(spec: str, capacity: int, per_second: float) -> None:
    limit = RateLimit(spec)
    assert limit.rate.capacity == capacity and limit.rate.per_second == pytest.approx(per_second)


def test_rate_limit_per_client_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    import mcpkit.server._base as base

    # The buckets read the clock of mcpkit.server._base: the test's, moved by hand, so how long
    # the calls take on a busy machine refills nothing (3 calls slower than 0.1 s got a 4th).
    now = [1000.0]
    monkeypatch.setattr(base, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    server = Server("limited")

    @server.tool(rate_limit="3/0.3s")
    async def ping() -> str:
        return "pong"

    @server.tool
    async def free() -> str:
        return "free"

    async def main() -> None:
        first = await connect(server, "2025-11-25")
        second = await connect(server, "2025-11-25")
        for _ in range(3):
            assert text(await first.call_tool("ping")) == "pong"
        refused = await first.call_tool("ping")
        assert refused.is_error is True
        assert text(refused) == "Rate limit exceeded for tool ping (3/0.3s); try again later"
        assert text(await first.call_tool("free")) == "free"  # other tools are not limited
        assert text(await second.call_tool("ping")) == "pong"  # another client has its own bucket
        now[0] += 0.15  # the bucket refills at 10 a second
        assert text(await first.call_tool("ping")) == "pong"

    run(main())


# -- SECURITY.md names a real test for every row ------------------------------------------------------

ROOT = Path(__file__).parent.parent


def test_every_row_of_security_md_names_tests_that_exist() -> None:
    rows = [line for line in (ROOT / "SECURITY.md").read_text().splitlines() if line.startswith("| ")][2:]
    assert len(rows) >= 20
    for row in rows:
        cited = row.rstrip(" |").rsplit("|", 1)[-1]
        names = re.findall(r"`([^`]*::[^`]+)`", cited)
        assert names, f"a row without a test: {row[:60]}"
        path: Path | None = None
        for name in names:
            file, _, function = name.rpartition("::")
            path = ROOT / file if file else path
            assert path is not None and path.is_file(), name
            assert re.search(rf"^(async )?def {function}\(", path.read_text(), re.MULTILINE), name
