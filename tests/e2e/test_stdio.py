"""End to end over real stdio: mcpkit's client spawning mcpkit servers, in every revision."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, ConnectionClosed, Era, InvalidParams, MethodNotFound, RPCError, TextContent
from mcpkit._versions import SUPPORTED_VERSIONS

from ..conftest import mcpkit_run

pytestmark = pytest.mark.e2e


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


@pytest.mark.parametrize("version", [None, *SUPPORTED_VERSIONS])
def test_weather_in_every_revision(version: str | None) -> None:
    async def main() -> None:
        async with Client(mcpkit_run("weather.py"), protocol_version=version) as client:
            assert client.protocol_version == (version or "2026-07-28")
            assert client.server_info is not None and client.server_info.name == "weather"
            names = [tool.name for tool in await client.list_tools()]
            assert names == ["get_weather", "get_weather_data", "forecast"]
            result = await client.call_tool("get_weather", {"location": "Paris"})
            assert result.is_error is not True
            assert isinstance(result.content[0], TextContent) and "Paris" in result.content[0].text
            data = await client.call_tool("get_weather_data", {"location": "Oslo", "unit": "fahrenheit"})
            if client.protocol_version >= "2025-06-18":
                assert data.structured_content["unit"] == "fahrenheit"  # type: ignore[index]
            else:  # structuredContent does not exist before 2025-06-18; the text carries the JSON
                assert isinstance(data.content[0], TextContent)
                assert json.loads(data.content[0].text)["unit"] == "fahrenheit"
            bad = await client.call_tool("get_weather", {"location": 42})
            assert bad.is_error is True and "location" in bad.content[0].text  # type: ignore[union-attr]

    run(main())


def test_unknown_tool_is_invalid_params() -> None:
    async def main() -> None:
        async with Client(mcpkit_run("weather.py")) as client:
            with pytest.raises(InvalidParams):
                await client.call_tool("no_such_tool", {})
            with pytest.raises(MethodNotFound):
                await client.request("prompts/list")

    run(main())


def test_notes_handles_survive_across_calls() -> None:
    async def main() -> None:
        async with Client(mcpkit_run("notes.py"), protocol_version="2025-03-26") as client:
            created = await client.call_tool("create_notebook", {"title": "t"})
            notebook = json.loads(created.content[0].text)["notebook_id"]  # type: ignore[union-attr]
            await client.call_tool("add_note", {"notebook_id": notebook, "text": "milk"})
            listed = await client.call_tool("list_notes", {"notebook_id": notebook})
            assert "milk" in listed.content[0].text  # type: ignore[union-attr]
            expired = await client.call_tool("list_notes", {"notebook_id": "nb_unknown"})
            assert expired.is_error is True and "create_notebook" in expired.content[0].text  # type: ignore[union-attr]

    run(main())


def write_server(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "server.py"
    path.write_text("from mcpkit import Server\nserver = Server('t')\n" + textwrap.dedent(body))
    return [sys.executable, "-m", "mcpkit", "run", str(path)]


def test_stray_print_goes_to_stderr(tmp_path: Path) -> None:
    command = write_server(
        tmp_path,
        """
        import os
        print("hello from import time")
        @server.tool
        def noisy() -> str:
            print("hello from a tool")
            os.write(1, b"raw bytes on fd 1\\n")
            return "ok"
        """,
    )

    async def main() -> None:
        async with Client(command) as client:
            result = await client.call_tool("noisy")
            assert result.content[0].text == "ok"  # type: ignore[union-attr]

    run(main())


def test_crashed_server_fails_pending_requests(tmp_path: Path) -> None:
    command = write_server(
        tmp_path,
        """
        import os
        @server.tool
        async def crash() -> str:
            os._exit(3)
        """,
    )

    async def main() -> None:
        async with Client(command) as client:
            with pytest.raises(ConnectionClosed, match="exit code 3"):
                await client.call_tool("crash")

    run(main())


def test_slow_sync_tool_does_not_block_others(tmp_path: Path) -> None:
    command = write_server(
        tmp_path,
        """
        import threading
        gate = threading.Event()
        @server.tool
        def wait_for_gate() -> str:
            return "opened" if gate.wait(20) else "timed out"
        @server.tool
        async def open_gate() -> str:
            gate.set()
            return "set"
        """,
    )

    async def main() -> None:
        async with Client(command) as client:
            waiting = asyncio.ensure_future(client.call_tool("wait_for_gate"))
            await asyncio.sleep(0)
            assert (await client.call_tool("open_gate")).content[0].text == "set"  # type: ignore[union-attr]
            assert (await waiting).content[0].text == "opened"  # type: ignore[union-attr]

    run(main())


def raw_session(command: list[str], lines: list[bytes]) -> list[dict[str, Any]]:
    """Send raw lines to a server, close stdin, and return every message it wrote."""
    proc = subprocess.run(command, input=b"".join(lines), capture_output=True, timeout=120)
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_bad_input_is_answered_and_serving_continues() -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    good = json.dumps({"jsonrpc": "2.0", "id": "last", "method": "tools/list", "params": {"_meta": meta}})
    answers = raw_session(
        mcpkit_run("weather.py"),
        [
            b"{not json\n",
            b'{"jsonrpc": "2.0", "id": null, "method": "tools/list"}\n',
            b'{"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": [1]}\n',
            b"\xff\xfe\n",
            b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}\n',
            b'[{"jsonrpc": "2.0", "id": 6, "method": "ping"}]\n',
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 7,
                    "method": "tools/list",
                    "params": {"_meta": {**meta, "io.modelcontextprotocol/protocolVersion": "1900-01-01"}},
                }
            ).encode()
            + b"\n",
            b'{"jsonrpc": "2.0", "id": 8, "method": "server/discover", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}\n',
            good.encode() + b"\n",
        ],
    )
    by_id = {a.get("id"): a for a in answers}
    codes = [a["error"]["code"] for a in answers if a.get("id") is None]
    assert codes == [-32700, -32600, -32700, -32600]  # the last: a batch outside 2025-03-26
    assert by_id[4]["error"]["code"] == -32600
    assert by_id[5]["error"]["code"] == -32602
    assert by_id[7]["error"]["code"] == -32022
    assert by_id[7]["error"]["data"]["requested"] == "1900-01-01"
    assert by_id[8]["error"]["code"] == -32602
    assert by_id["last"]["result"]["resultType"] == "complete"
    assert by_id["last"]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "weather"
    assert len(answers) == 9


def test_oversize_line_is_refused_and_serving_continues() -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    huge = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"pad": "'
        + b"x" * (17 * 2**20)
        + b'"}}\n'
    )
    good = (
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}}).encode()
        + b"\n"
    )
    answers = raw_session(mcpkit_run("weather.py"), [huge, good])
    assert answers[0]["error"]["code"] == -32600 and answers[0]["id"] is None
    assert answers[1]["id"] == 2 and "tools" in answers[1]["result"]


def test_stdin_eof_ends_the_server_promptly() -> None:
    proc = subprocess.Popen(mcpkit_run("weather.py"), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out, _ = proc.communicate(b"", timeout=120)  # start-up included: generous
    assert (proc.returncode, out) == (0, b"")


@pytest.mark.parametrize("stdin", ["devnull", "pipe"])
def test_a_server_with_stdout_on_dev_null_serves_and_exits_cleanly(stdin: str) -> None:
    # /dev/null is a character device that cannot be polled: treated as a pipe, uvloop aborted.
    hello = json.dumps(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    ).encode() + b"\n"  # fmt: skip
    with open(os.devnull, "wb") as null:
        if stdin == "devnull":
            with open(os.devnull, "rb") as empty:
                code = subprocess.run(
                    mcpkit_run("weather.py"), stdin=empty, stdout=null, timeout=30
                ).returncode
        else:
            code = subprocess.run(mcpkit_run("weather.py"), input=hello, stdout=null, timeout=30).returncode
    assert code == 0


def test_client_kills_a_server_that_ignores_eof(tmp_path: Path) -> None:
    script = tmp_path / "stubborn.py"
    script.write_text(
        textwrap.dedent("""
        import json, signal, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for line in sys.stdin:
            msg = json.loads(line)
            if msg.get("method") == "initialize":
                print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": "2025-11-25",
                      "capabilities": {}, "serverInfo": {"name": "stubborn", "version": "0"}}}), flush=True)
            elif "id" in msg:
                print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}), flush=True)
        while True:
            time.sleep(1)
    """)
    )

    async def main() -> int | None:
        client = Client([sys.executable, str(script)], probe_timeout=5)
        await client.connect()
        assert client.era is Era.HANDSHAKE  # the discover probe got -32601: a legacy server
        transport: Any = client._transport
        await client.aclose()
        return transport.process.returncode

    assert run(main()) == -signal.SIGKILL


def test_probe_timeout_falls_back_to_initialize(tmp_path: Path) -> None:
    script = tmp_path / "silent.py"
    script.write_text(
        textwrap.dedent("""
        import json, sys
        for line in sys.stdin:
            msg = json.loads(line)
            if msg.get("method") == "initialize":
                print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": "2025-06-18",
                      "capabilities": {"tools": {}}, "serverInfo": {"name": "silent", "version": "0"}}}), flush=True)
            elif msg.get("method") == "tools/list":
                print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": []}}), flush=True)
    """)
    )

    async def main() -> None:
        async with Client([sys.executable, str(script)], probe_timeout=0.5) as client:
            assert client.protocol_version == "2025-06-18"
            assert await client.list_tools() == []

    run(main())


def test_cli_tools_and_call() -> None:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    target = str(Path(mcpkit_run("weather.py")[-1]))
    listed = subprocess.run(
        [sys.executable, "-m", "mcpkit", "tools", target, "--json"], capture_output=True, env=env, timeout=30
    )
    assert listed.returncode == 0, listed.stderr
    assert [t["name"] for t in json.loads(listed.stdout)] == ["get_weather", "get_weather_data", "forecast"]
    called = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcpkit",
            "call",
            target,
            "get_weather_data",
            '{"location": "Rome"}',
            "--json",
        ],
        capture_output=True,
        env=env,
        timeout=30,
    )
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["structuredContent"]["location"] == "Rome"
    table = subprocess.run(
        [sys.executable, "-m", "mcpkit", "tools", target], capture_output=True, env=env, timeout=30
    )
    assert b"get_weather_data" in table.stdout and b"location" in table.stdout
    failed = subprocess.run(
        [sys.executable, "-m", "mcpkit", "call", target, "forecast", '{"location": "x", "days": 9}'],
        capture_output=True,
        env=env,
        timeout=30,
    )
    assert failed.returncode == 1 and b"days must be between 1 and 7" in failed.stdout
    bad_json = subprocess.run(
        [sys.executable, "-m", "mcpkit", "call", target, "forecast", "{oops"], capture_output=True, timeout=30
    )
    assert bad_json.returncode == 2 and b"not valid JSON" in bad_json.stderr


def test_rpc_error_from_a_low_level_handler(tmp_path: Path) -> None:
    path = tmp_path / "low.py"
    path.write_text(
        textwrap.dedent("""
        from mcpkit import LowLevelServer, RPCError
        server = LowLevelServer("low")
        @server.handler("tools/list")
        async def list_tools(params, ctx):
            raise RPCError(-31999, "custom failure", {"why": "testing"})
    """)
    )

    async def main() -> None:
        async with Client([sys.executable, "-m", "mcpkit", "run", str(path)]) as client:
            with pytest.raises(RPCError) as info:
                await client.list_tools()
            assert (info.value.code, info.value.data) == (-31999, {"why": "testing"})

    run(main())


def test_batches_are_answered_as_batches_in_2025_03_26() -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-03-26",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    batch = [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "forecast", "arguments": {"location": "x", "days": 2}},
        },
        {"jsonrpc": "2.0", "id": 3, "method": "no/such/method"},
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
    ]
    proc = subprocess.run(
        mcpkit_run("weather.py"),
        input=(json.dumps(init) + "\n" + json.dumps(batch) + "\n").encode(),
        capture_output=True,
        timeout=30,
    )
    first, second = proc.stdout.splitlines()
    assert json.loads(first)["result"]["protocolVersion"] == "2025-03-26"
    answers = json.loads(second)
    assert isinstance(answers, list)
    by_id = {a["id"]: a for a in answers}
    assert by_id[1]["result"] == {}
    assert "day 1" in by_id[2]["result"]["content"][0]["text"]
    assert by_id[3]["error"]["code"] == -32601
    assert by_id[None]["error"]["code"] == -32600
    assert len(answers) == 4  # the notification gets no answer


def test_eof_ends_the_server_promptly_even_with_a_listen_stream_open() -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    listen = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "subscriptions/listen",
        "params": {"_meta": meta, "notifications": {"toolsListChanged": True}},
    }
    proc = subprocess.Popen(mcpkit_run("notes.py"), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(listen) + "\n").encode())
    proc.stdin.flush()
    ack = json.loads(proc.stdout.readline())
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 1
    started = time.monotonic()
    proc.stdin.close()
    assert proc.wait(timeout=10) == 0
    proc.stdout.close()
    assert time.monotonic() - started < 4.5  # not the 5 s grace for unfinished requests


def test_hostile_nesting_and_unencodable_results_are_errors_not_crashes(tmp_path: Path) -> None:
    path = tmp_path / "odd.py"
    path.write_text(
        textwrap.dedent("""
        from mcpkit import LowLevelServer
        server = LowLevelServer("odd")
        @server.handler("tools/list")
        async def list_tools(params, ctx):
            return {"tools": [object()]}
    """)
    )
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    deep = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"a": '
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}}\n"
    )
    odd = (
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}}).encode()
        + b"\n"
    )
    answers = raw_session(
        [sys.executable, "-m", "mcpkit", "run", str(path)], [deep, odd, odd.replace(b'"id": 2', b'"id": 3')]
    )
    assert [(a["id"], a["error"]["code"]) for a in answers] == [(None, -32700), (2, -32603), (3, -32603)]


def test_requests_in_flight_are_capped_and_serving_continues(tmp_path: Path) -> None:
    """``max_in_flight``: beyond it a request is refused at once (-32000), not queued without bound;
    the requests already running finish."""
    command = write_server(
        tmp_path,
        """
        import asyncio
        from mcpkit import Server
        server = Server("busy", max_in_flight=2)

        @server.tool
        async def slow() -> str:
            # Still running when calls 3 and 4 are read however busy the machine, and done well within
            # the 5 s that stdin's end leaves requests in flight.
            await asyncio.sleep(2)
            return "done"
        """,
    )
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    calls = [
        json.dumps(
            {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "slow", "_meta": meta}}
        ).encode()
        + b"\n"
        for n in range(1, 5)
    ]
    answers = {a["id"]: a for a in raw_session(command, calls)}
    assert sorted(answers) == [1, 2, 3, 4]
    assert [answers[n]["result"]["content"][0]["text"] for n in (1, 2)] == ["done", "done"]
    assert [answers[n]["error"]["code"] for n in (3, 4)] == [-32000, -32000]
