"""The gateway's governance as ``tools/call`` middleware, in process over ``Client(gateway.server)``
against a real stdio toolbox, in a handshake-era revision and in 2026-07-28: consent asked of the
caller (a request, or a round), refusals that never reach the upstream nor the middleware inside,
rate limits charged once per call, and one audit line per call with the host's decisions."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, TextContent
from mcpkit.gateway import Gateway

from ._util import audit_lines, config, run, toolbox

pytestmark = pytest.mark.e2e

ERAS = ["2025-11-25", "2026-07-28"]


def _text(result: Any) -> str:
    return " ".join(b.text for b in result.content if isinstance(b, TextContent))


def _gateway(tmp_path: Path, upstream: str | None = None, **mcpkit: Any) -> Gateway:
    policy = {
        "default": "allow",
        "rules": [
            {"tool": "delete_*", "action": "ask"},
            {"annotations": {"readOnlyHint": True}, "action": "deny"},
        ],
    }
    box = toolbox(protocolVersion=upstream) if upstream else toolbox()
    return Gateway(config({"box": box}, tmp_path, policy=policy, **mcpkit))


@pytest.mark.parametrize("version", ERAS)
def test_consent_denial_and_audit_as_middleware(tmp_path: Path, version: str) -> None:
    gateway = _gateway(tmp_path)
    inner: list[str] = []

    @gateway.server.middleware("tools/call")
    async def seen(call: Any, call_next: Any) -> Any:  # registered after: runs inside governance
        inner.append(call.params["name"])
        return await call_next(call)

    answers = iter([True, False])
    asked: list[str] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"allow": next(answers)}}

    async def main() -> None:
        async with gateway, Client(gateway.server, protocol_version=version, elicitation=elicit) as client:
            await gateway.host.wait_ready()
            assert _text(await client.call_tool("box__echo", {"text": "hi"})) == "hi"
            assert _text(await client.call_tool("box__delete_everything")) == "deleted"
            declined = await client.call_tool("box__delete_everything")
            assert declined.is_error and "did not allow" in _text(declined)
            denied = await client.call_tool("box__look")  # read-only: denied by the annotation rule
            assert denied.is_error and "denied by the host's policy (rule 2)" in _text(denied)

    run(main())
    assert len(asked) == 2 and "'delete_everything' of server 'box'" in asked[0]
    # refusals never reached the middleware inside, nor the upstream
    assert inner == ["box__echo", "box__delete_everything"]
    lines = audit_lines(tmp_path)
    assert [(line["tool"], line["decision"], line["outcome"]) for line in lines] == [
        ("echo", "allow", "ok"),
        ("delete_everything", "ask:yes", "ok"),
        ("delete_everything", "ask:no", "refused"),
        ("look", "deny", "refused"),
    ]
    assert {line["caller"] for line in lines} == {f"mcpkit ({version})"}
    assert [line["rule"] for line in lines] == ["default", "rule 1", "rule 1", "rule 2"]


@pytest.mark.parametrize("version", ERAS)
def test_rate_limits_are_charged_once_per_call(tmp_path: Path, version: str) -> None:
    """Two calls pass a 2/m limit and the third is refused, even though the first asks the caller
    a question upstream (a 2026-07-28 caller answers in rounds: still one call, one token)."""
    limits = [{"server": "box", "tool": "ask_*", "rate": "2/m"}]
    gateway = _gateway(tmp_path, upstream="2025-06-18", rateLimits=limits)
    asked: list[str] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"ok": True}}

    async def sample(params: dict[str, Any]) -> dict[str, Any]:
        asked.append("sampling")
        return {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}

    async def main() -> None:
        async with (
            gateway,
            Client(gateway.server, protocol_version=version, elicitation=elicit, sampling=sample) as client,
        ):
            await gateway.host.wait_ready()
            for _ in range(2):
                result = await client.call_tool("box__ask_then_count")
                assert not result.is_error and _text(result).isdigit(), _text(result)
            assert asked == ["First?", "sampling"] * 2
            limited = await client.call_tool("box__ask_then_count")
            assert limited.is_error and "Rate limit 2/m reached for box__ask_then_count" in _text(limited)

    run(main())
    outcomes = [(line["decision"], line["outcome"]) for line in audit_lines(tmp_path)]
    assert outcomes == [("allow", "ok"), ("allow", "ok"), ("rate-limited", "refused")]


def test_a_call_that_fails_upstream_is_audited_as_an_error(tmp_path: Path) -> None:
    """The caller reads a tool error; the audit line says ``error`` and why."""
    gateway = _gateway(tmp_path)

    async def main() -> None:
        async with gateway, Client(gateway.server, protocol_version="2026-07-28") as client:
            await gateway.host.wait_ready()
            pid = int(_text(await client.call_tool("box__pid")))
            os.kill(pid, signal.SIGKILL)
            failed = await client.call_tool("box__wait", {"seconds": 30})
            assert failed.is_error and "box" in _text(failed)

    run(main())
    last = audit_lines(tmp_path)[-1]
    assert (last["tool"], last["decision"], last["outcome"]) == ("wait", "allow", "error")
    assert "box" in last["error"]
    json.dumps(last)  # a plain JSON line
