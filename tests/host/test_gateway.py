"""The gateway as a real process (stdio and Streamable HTTP), called by clients of every revision.

Consent ``ask`` reaches the caller as elicitation (handshake era) or an ``input_required`` round
(2026-07-28); a caller that cannot be asked is refused; upstream sampling, elicitation and roots
are relayed across eras both ways; a killed backend fails its call clearly and comes back.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, Root, RPCError, TextContent

from ..conftest import free_port, http_server
from ._util import SERVERS, audit_lines, example, run, toolbox

pytestmark = pytest.mark.e2e

ALL_VERSIONS = [None, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]


def _text(result: Any) -> str:
    return " ".join(b.text for b in result.content if isinstance(b, TextContent))


def write_config(tmp_path: Path, servers: dict[str, Any], **mcpkit: Any) -> Path:
    path = tmp_path / "gateway.json"
    policy = {"default": "allow", "rules": [{"tool": "delete_*", "action": "ask"}]}
    extra = {"audit": {"path": str(tmp_path / "audit.jsonl")}, "policy": policy, **mcpkit}
    path.write_text(json.dumps({"mcpServers": servers, "mcpkit": extra}))
    return path


def gateway(path: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "mcpkit", "gateway", str(path), *extra]


class User:
    """The person behind a client: answers consent forms and upstream questions, and says what it saw."""

    def __init__(self, allow: bool = True) -> None:
        self.allow = allow
        self.asked: list[str] = []

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(params["message"])
        if "allow" in json.dumps(params.get("requestedSchema", {})):
            return {"action": "accept", "content": {"allow": self.allow}}
        return {"action": "accept", "content": {"ok": True}}

    async def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append("sampling")
        return {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "test"}


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_stdio_gateway_in_every_revision(tmp_path: Path, version: str | None) -> None:
    path = write_config(
        tmp_path, {"weather": example("weather.py"), "box": toolbox(protocolVersion="2025-06-18")}
    )
    user = User()

    async def main() -> None:
        async with Client(gateway(path), protocol_version=version, elicitation=user.elicit) as client:
            assert client.server_info is not None and client.server_info.name == "mcpkit-gateway"
            names = [tool.name for tool in await client.list_tools()]
            assert names[:3] == ["weather__get_weather", "weather__get_weather_data", "weather__forecast"]
            assert "box__delete_everything" in names
            assert "Paris" in _text(await client.call_tool("weather__get_weather", {"location": "Paris"}))
            consent = await client.call_tool("box__delete_everything")
            if version in ("2025-03-26", "2024-11-05"):  # no elicitation in the revision: refused, said so
                assert consent.is_error and "cannot be asked" in _text(consent)
                assert not user.asked
            else:
                assert _text(consent) == "deleted"
                assert "delete_everything" in user.asked[0]

    run(main())
    decisions = [line["decision"] for line in audit_lines(tmp_path)]
    assert decisions[-1] == ("ask:unavailable" if version in ("2025-03-26", "2024-11-05") else "ask:yes")


@pytest.mark.parametrize("version", [None, "2025-11-25"])
def test_consent_declined_and_caller_without_elicitation(tmp_path: Path, version: str | None) -> None:
    path = write_config(tmp_path, {"box": toolbox()})

    async def main() -> None:
        async with Client(
            gateway(path), protocol_version=version, elicitation=User(allow=False).elicit
        ) as client:
            declined = await client.call_tool("box__delete_everything")
            assert declined.is_error and "did not allow" in _text(declined)
        async with Client(gateway(path), protocol_version=version) as client:  # declares no elicitation
            refused = await client.call_tool("box__delete_everything")
            assert refused.is_error and "cannot be asked" in _text(refused)

    run(main())
    assert [line["decision"] for line in audit_lines(tmp_path)] == ["ask:no", "ask:unavailable"]


@pytest.mark.parametrize(
    ("upstream", "caller"),
    [
        ("2025-06-18", None),  # handshake upstream, stateless caller: requests become input_required rounds
        ("2025-11-25", "2025-11-25"),  # handshake both sides: requests relayed as requests
        (None, "2025-06-18"),  # stateless upstream's rounds answered by relaying requests to the caller
        (None, None),  # stateless both sides: rounds relayed as rounds
    ],
)
def test_upstream_questions_are_relayed_across_eras(
    tmp_path: Path, upstream: str | None, caller: str | None
) -> None:
    entry = toolbox(protocolVersion=upstream) if upstream else toolbox()
    path = write_config(tmp_path, {"box": entry})
    user = User()

    async def main() -> None:
        async with Client(
            gateway(path),
            protocol_version=caller,
            elicitation=user.elicit,
            sampling=user.sample,
            roots=[Root(uri="file:///work/project", name="project")],
        ) as client:
            result = await client.call_tool("box__ask_user")
            assert _text(result) == "accept:True|hello|file:///work/project", _text(result)
            assert user.asked == ["Go ahead?", "sampling"]

    run(main())


def test_caller_that_cannot_sample_gets_a_clear_error(tmp_path: Path) -> None:
    path = write_config(tmp_path, {"box": toolbox(protocolVersion="2025-06-18")})

    async def main() -> None:
        async with Client(gateway(path), protocol_version="2025-11-25", elicitation=User().elicit) as client:
            # the upstream tool's sampling request is refused with the caller's missing capability
            # (-32021), and the upstream's failed call reaches the caller with that code and message
            with pytest.raises(RPCError, match="sampling") as raised:
                await client.call_tool("box__ask_user")
            assert raised.value.code == -32021

    run(main())


@pytest.fixture
def http_gateway(tmp_path: Path) -> Iterator[str]:
    path = write_config(
        tmp_path, {"weather": example("weather.py"), "box": toolbox(protocolVersion="2025-06-18")}
    )
    port = free_port()
    yield from http_server(gateway(path, "--transport", "http", "--port", str(port)), port, 30)


@pytest.mark.parametrize("version", [None, "2025-11-25", "2025-03-26"])
def test_http_gateway(http_gateway: str, version: str | None) -> None:
    user = User()

    async def main() -> None:
        deadline = time.monotonic() + 30
        while True:  # the port accepts before the servers behind it are connected
            async with Client(
                http_gateway, protocol_version=version, elicitation=user.elicit, sampling=user.sample
            ) as client:
                names = [tool.name for tool in await client.list_tools()]
                if "box__ask_user" in names and "weather__forecast" in names:
                    break
            assert time.monotonic() < deadline, names
            await asyncio.sleep(0.2)
        async with Client(
            http_gateway, protocol_version=version, elicitation=user.elicit, sampling=user.sample
        ) as client:
            assert "Quito" in _text(await client.call_tool("weather__get_weather", {"location": "Quito"}))
            if version != "2025-03-26":  # elicitation exists from 2025-06-18
                assert _text(await client.call_tool("box__delete_everything")) == "deleted"

    run(main())


def test_official_sdk_client_through_the_gateway(tmp_path: Path) -> None:
    path = write_config(
        tmp_path,
        {
            "weather": example("weather.py"),
            "sdk": {"command": sys.executable, "args": [str(SERVERS / "sdk_server.py")]},
        },
    )
    client = Path(__file__).parents[1] / "interop" / "peers" / "official_client.py"
    for mode in ("auto", "legacy"):
        proc = subprocess.run(
            [sys.executable, str(client), "--mode", mode, "--call", "sdk__shout", '{"text": "hi"}',
             "--call", "weather__get_weather", '{"location": "Kyiv"}', "--", *gateway(path)],
            capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
        out = json.loads(proc.stdout)
        assert "error" not in out, out
        assert out["serverInfo"]["name"] == "mcpkit-gateway", mode
        assert {"sdk__shout", "weather__get_weather"} <= {t["name"] for t in out["tools"]}, (
            mode,
            proc.stderr,
        )
        assert out["calls"]["sdk__shout"]["content"][0]["text"] == "HI"
        assert "Kyiv" in out["calls"]["weather__get_weather"]["content"][0]["text"]
        assert out["protocolVersion"] == ("2026-07-28" if mode == "auto" else "2025-11-25")


def test_list_changes_and_a_killed_backend_through_the_gateway(tmp_path: Path) -> None:
    path = write_config(tmp_path, {"box": toolbox(), "weather": example("weather.py")})
    told: list[str] = []
    changed = asyncio.Event()

    async def notified(method: str, params: dict[str, Any]) -> None:
        told.append(method)
        if method == "notifications/tools/list_changed":
            changed.set()

    async def main() -> None:
        async with Client(gateway(path), protocol_version="2025-11-25", on_notification=notified) as client:
            await client.call_tool("box__add_tool", {"name": "fresh"})
            await asyncio.wait_for(changed.wait(), 20)
            assert "box__fresh" in [t.name for t in await client.list_tools()]
            pid = int(_text(await client.call_tool("box__pid")))
            started = asyncio.Event()

            async def progress(done: float, total: float | None, message: str | None) -> None:
                started.set()  # the upstream's progress came through the gateway: the call is running

            slow = asyncio.ensure_future(client.call_tool("box__wait", {"seconds": 60}, on_progress=progress))
            await asyncio.wait_for(started.wait(), 20)
            os.kill(pid, signal.SIGKILL)
            failed = await slow
            assert failed.is_error and "server 'box' failed during the call" in _text(failed)
            assert "Oslo" in _text(await client.call_tool("weather__get_weather", {"location": "Oslo"}))
            deadline = time.monotonic() + 30
            while True:
                result = await client.call_tool("box__pid")
                if not result.is_error:
                    break
                assert "box" in _text(result)
                assert time.monotonic() < deadline, _text(result)
                await asyncio.sleep(0.1)
            assert int(_text(result)) != pid

    run(main(), 90)


@pytest.mark.parametrize("version", [None, "2025-06-18"])
def test_logs_flow_to_the_caller_and_cancellation_flows_upstream(tmp_path: Path, version: str | None) -> None:
    path = write_config(tmp_path, {"box": toolbox()})
    logs: list[Any] = []
    logged = asyncio.Event()

    async def on_log(params: dict[str, Any]) -> None:
        logs.append(params)
        logged.set()

    async def main() -> None:
        async with Client(gateway(path), protocol_version=version, on_log=on_log) as client:
            await client.set_logging_level("info")
            slow = asyncio.ensure_future(client.call_tool("box__wait", {"seconds": 60}))
            await asyncio.wait_for(logged.wait(), 20)
            assert logs[0]["data"] == "waiting 60.0 s" and logs[0]["level"] == "info"
            slow.cancel()  # the client sends notifications/cancelled (or drops its request)
            with pytest.raises(asyncio.CancelledError):
                await slow
            deadline = time.monotonic() + 20
            while not any(line["outcome"] == "cancelled" for line in audit_lines(tmp_path)):
                assert time.monotonic() < deadline, audit_lines(tmp_path)
                await asyncio.sleep(0.05)
            # the gateway and the box serve on
            assert _text(await client.call_tool("box__echo", {"text": "still here"})) == "still here"

    run(main())


def test_official_sdk_clients_of_other_transports_and_versions(tmp_path: Path) -> None:
    """mcp 1.30.0 over stdio and Streamable HTTP, 2.3.0 over HTTP+SSE and Streamable HTTP; ``rename`` gives the
    gateway's weather tool the plain name these clients call."""
    from ..interop.venvs import ensure_venv

    mcp1 = ensure_venv("mcp1", "mcp==1.30.0")
    peers = Path(__file__).parents[1] / "interop" / "peers"
    path = write_config(
        tmp_path, {"weather": example("weather.py")}, rename={"weather__get_weather": "get_weather"}
    )
    stdio = subprocess.run(
        [str(mcp1), str(peers / "official_client.py"), "--call", "get_weather", '{"location": "Oslo"}', "--", *gateway(path)],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    out = json.loads(stdio.stdout)
    assert "error" not in out, out
    assert out["protocolVersion"] == "2025-06-18" or out["protocolVersion"].startswith("2025")
    assert "Oslo" in out["calls"]["get_weather"]["content"][0]["text"]
    port = free_port()
    for url in http_server(gateway(path, "--transport", "http", "--port", str(port)), port, 30):
        base = url.removesuffix("/mcp")
        for python, args in ((mcp1, [url]), (sys.executable, ["--sse", f"{base}/sse"])):
            proc = subprocess.run(
                [str(python), str(peers / "official_http_client.py"), *args],
                capture_output=True, text=True, timeout=180, check=False,
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr[-2000:]
            lines = proc.stdout.splitlines()
            assert lines[0].endswith("mcpkit-gateway") and lines[1] == "Current weather in Rome:"
        # and 2.3.0's own client over Streamable HTTP, in 2026-07-28
        modern = subprocess.run(
            [sys.executable, str(peers / "official_client.py"), "--call", "get_weather", '{"location": "Oslo"}', "--", url],
            capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
        out = json.loads(modern.stdout)
        assert out["protocolVersion"] == "2026-07-28", out
        assert "Oslo" in out["calls"]["get_weather"]["content"][0]["text"]


def test_a_stateless_caller_hears_list_changes_on_its_listen_stream(tmp_path: Path) -> None:
    path = write_config(tmp_path, {"box": toolbox(protocolVersion="2025-06-18")})

    async def main() -> None:
        async with Client(gateway(path)) as client:
            assert client.protocol_version == "2026-07-28"
            subscription = await client.listen(tools=True)
            await client.call_tool("box__add_tool", {"name": "later"})
            method, _ = await asyncio.wait_for(subscription.__anext__(), 20)
            assert method == "notifications/tools/list_changed"
            assert "box__later" in [t.name for t in await client.list_tools()]
            await subscription.close()

    run(main())


@pytest.mark.parametrize("caller", [None, "2025-11-25"])
def test_resource_subscriptions_pass_through(tmp_path: Path, caller: str | None) -> None:
    path = write_config(tmp_path, {"notes": example("notes.py", protocolVersion="2025-11-25")})
    updated = asyncio.Event()

    async def main() -> None:
        async with Client(gateway(path), protocol_version=caller) as client:
            created = await client.call_tool("notes__create_notebook", {"title": "t"})
            uri = f"notes://{created.structured_content['notebook_id']}"  # type: ignore[index]
            subscription = await client.listen(uris=[uri])

            async def first() -> None:
                async for method, params in subscription:
                    if method == "notifications/resources/updated" and params.get("uri") == uri:
                        updated.set()
                        return

            listening = asyncio.ensure_future(first())
            notebook = uri.removeprefix("notes://")
            await client.call_tool("notes__add_note", {"notebook_id": notebook, "text": "milk"})
            await asyncio.wait_for(updated.wait(), 20)
            await listening
            await subscription.close()

    run(main())


def test_two_callers_questions_run_at_once_and_never_cross(http_gateway: str) -> None:
    """Two callers of a handshake-era upstream that asks back each get an upstream session of their
    own: both elicitations are outstanding at once, and each question reaches its own caller."""
    events: list[str] = []
    asked = {"A": asyncio.Event(), "B": asyncio.Event()}

    def user(name: str) -> tuple[Any, Any]:
        async def elicit(params: dict[str, Any]) -> dict[str, Any]:
            events.append(f"{name} asked")
            asked[name].set()
            # neither answers before the other has been asked: the calls run concurrently
            await asyncio.wait_for(asked["B" if name == "A" else "A"].wait(), 30)
            return {"action": "accept", "content": {"ok": True}}

        async def sample(params: dict[str, Any]) -> dict[str, Any]:
            events.append(f"{name} sampled")
            return {"role": "assistant", "content": {"type": "text", "text": name}, "model": "m"}

        return elicit, sample

    async def call(name: str) -> tuple[str, str]:
        elicit, sample = user(name)
        roots = [Root(uri=f"file:///{name}", name=name)]
        async with Client(
            http_gateway, protocol_version="2025-11-25", elicitation=elicit, sampling=sample, roots=roots
        ) as client:
            deadline = time.monotonic() + 30
            while "box__ask_user" not in [t.name for t in await client.list_tools()]:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.2)
            answer = _text(await client.call_tool("box__ask_user"))
            # the caller's next calls reuse its session: its own upstream process, not the other's
            pids = {_text(await client.call_tool("box__pid")) for _ in range(2)}
            assert _text(await client.call_tool("box__ask_user")) == answer  # asked again, at once
            assert len(pids) == 1
            return answer, pids.pop()

    async def main() -> None:
        (a, a_pid), (b, b_pid) = await asyncio.gather(call("A"), call("B"))
        assert a == "accept:True|A|file:///A"
        assert b == "accept:True|B|file:///B"
        assert a_pid != b_pid
        assert events.index("A asked") < events.index("B sampled")
        assert events.index("B asked") < events.index("A sampled")
        assert events.count("A asked") == events.count("B sampled") == 2

    run(main(), 90)


def test_a_2026_http_callers_call_gets_a_session_of_its_own(http_gateway: str) -> None:
    """A 2026-07-28 caller over HTTP has no session to own one by: each of its calls that the
    handshake-era upstream may ask questions runs on an upstream session of its own, closed after."""
    user = User()

    async def main() -> None:
        async with Client(http_gateway) as plain:  # cannot be asked: the shared session
            deadline = time.monotonic() + 30
            while "box__pid" not in [t.name for t in await plain.list_tools()]:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.2)
            shared = {_text(await plain.call_tool("box__pid")) for _ in range(2)}
            assert len(shared) == 1
        roots = [Root(uri="file:///r", name="r")]
        async with Client(http_gateway, elicitation=user.elicit, sampling=user.sample, roots=roots) as client:
            assert client.protocol_version == "2026-07-28"
            own = [_text(await client.call_tool("box__pid")) for _ in range(2)]
            assert len(set(own) | shared) == 3
            assert _text(await client.call_tool("box__ask_user")) == "accept:True|hello|file:///r"
            assert user.asked == ["Go ahead?", "sampling"]

    run(main(), 90)


@pytest.mark.parametrize("upstream", ["2025-06-18", None])
def test_a_stateless_callers_rounds_do_not_run_the_upstream_tool_again(
    tmp_path: Path, upstream: str | None
) -> None:
    """The call waits, parked, for each retry: a handshake-era upstream's tool runs once however
    many rounds; a 2026-07-28 upstream replays its own tool each round, as it would for any caller."""
    path = write_config(tmp_path, {"box": toolbox(protocolVersion=upstream) if upstream else toolbox()})
    user = User()

    async def main() -> None:
        async with Client(gateway(path), elicitation=user.elicit, sampling=user.sample) as client:
            assert client.protocol_version == "2026-07-28"
            runs = 1 if upstream else 3  # 2026-07-28 upstream: the first run, and one per answered round
            assert _text(await client.call_tool("box__ask_then_count")) == str(runs)
            assert user.asked == ["First?", "sampling"]
            # (a handshake-era upstream: the second call reuses this stdio caller's own session)
            assert _text(await client.call_tool("box__ask_then_count")) == str(2 * runs)

    run(main())
    assert [(line["decision"], line["outcome"]) for line in audit_lines(tmp_path)] == [("allow", "ok")] * 2


@pytest.mark.parametrize("caller", [None, "2025-06-18"])
def test_prompts_completion_and_resources_through_the_gateway(tmp_path: Path, caller: str | None) -> None:
    path = write_config(tmp_path, {"notes": example("notes.py"), "weather": example("weather.py")})

    async def main() -> None:
        async with Client(gateway(path), protocol_version=caller) as client:
            assert [p.name for p in await client.list_prompts()] == ["notes__summarize"]
            completion = await client.complete(
                {"type": "ref/prompt", "name": "notes__summarize"}, "style", "s"
            )
            assert completion.values == ["short"]
            assert "notes://about" in [r.uri for r in await client.list_resources()]
            templates = [t.uri_template for t in await client.list_resource_templates()]
            assert "notes://{notebook_id}" in templates
            created = await client.call_tool("notes__create_notebook", {"title": "t"})
            notebook = created.structured_content["notebook_id"]  # type: ignore[index]
            await client.call_tool("notes__add_note", {"notebook_id": notebook, "text": "tea"})
            prompt = await client.get_prompt(
                "notes__summarize", {"notebook_id": notebook, "style": "detailed"}
            )
            assert prompt.messages[0].content.text.startswith("Summarize these notes (detailed)")  # type: ignore[union-attr]
            assert "tea" in prompt.messages[0].content.text  # type: ignore[union-attr]
            with pytest.raises(RPCError) as missing:
                await client.read_resource("nowhere://x")
            assert missing.value.code == (-32602 if caller is None else -32002)

    run(main())


def test_two_questions_at_once_reach_a_stateless_caller_round_by_round(tmp_path: Path) -> None:
    path = write_config(tmp_path, {"box": toolbox(protocolVersion="2025-11-25")})
    user = User()

    async def main() -> None:
        async with Client(gateway(path), elicitation=user.elicit, sampling=user.sample) as client:
            assert _text(await client.call_tool("box__ask_both")) == "accept|hello"
            assert sorted(user.asked) == ["Both?", "sampling"]

    run(main())
