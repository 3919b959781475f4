"""Asking the client: elicitation, sampling and roots, one handler for both eras (real stdio)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from typing import Any

import pytest

from mcpkit import Client, MissingClientCapability, RPCError
from mcpkit._versions import SUPPORTED_VERSIONS, has
from mcpkit.types import CreateMessageResult, ElicitResult, Root

from ..conftest import mcpkit_run

pytestmark = pytest.mark.e2e


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


class Helper:
    """The host's side: a user who confirms, a model that suggests, and two roots."""

    def __init__(self, confirm: bool = True) -> None:
        self.confirm = confirm
        self.asked: list[tuple[str, dict[str, Any]]] = []

    async def elicitation(self, params: dict[str, Any]) -> ElicitResult:
        self.asked.append(("elicitation", params))
        return ElicitResult(action="accept", content={"confirm": self.confirm, "travellers": 2})

    async def sampling(self, params: dict[str, Any]) -> CreateMessageResult:
        self.asked.append(("sampling", params))
        return CreateMessageResult(
            role="assistant", content={"type": "text", "text": "see the fjords"}, model="test"
        )

    def client(self, version: str | None, **kwargs: Any) -> Client:
        return Client(
            mcpkit_run("travel.py"),
            protocol_version=version,
            elicitation=self.elicitation,
            sampling=self.sampling,
            roots=[Root(uri="file:///home/me/trips", name="trips")],
            **kwargs,
        )


@pytest.mark.parametrize("version", [v for v in SUPPORTED_VERSIONS if has(v, "elicitation")])
def test_one_tool_asks_in_every_era(version: str) -> None:
    helper = Helper()

    async def main() -> None:
        async with helper.client(version) as client:
            result = await client.call_tool("plan_trip", {"destination": "Oslo"})
            assert result.is_error is not True, result
            assert result.content[0].text == "Trip to Oslo for 2 (medium budget). Idea: see the fjords"  # type: ignore[union-attr]
            assert [kind for kind, _ in helper.asked] == ["elicitation", "sampling"]
            elicit = helper.asked[0][1]
            assert elicit["requestedSchema"]["properties"]["budget"]["enum"] == ["low", "medium", "high"]
            assert ("mode" in elicit) == has(version, "elicitation_url")
            assert (await client.call_tool("where_to_save")).structured_content == {
                "result": ["file:///home/me/trips"]
            }

    run(main())


@pytest.mark.parametrize("version", [v for v in SUPPORTED_VERSIONS if not has(v, "elicitation")])
def test_roots_and_sampling_before_elicitation_existed(version: str) -> None:
    helper = Helper()

    async def main() -> None:
        async with helper.client(version) as client:
            assert (await client.call_tool("where_to_save")).content[0].text == '["file:///home/me/trips"]'  # type: ignore[union-attr]

    run(main())


def test_a_declined_form_is_a_tool_error() -> None:
    async def main() -> None:
        async with Helper(confirm=False).client(None) as client:
            result = await client.call_tool("plan_trip", {"destination": "Rome"})
            assert result.is_error is True and "not confirmed" in result.content[0].text  # type: ignore[union-attr]

    run(main())


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_missing_capability_is_a_clear_error_not_a_hang(version: str) -> None:
    async def main() -> None:
        async with Client(mcpkit_run("travel.py"), protocol_version=version, timeout=60) as client:
            with pytest.raises(MissingClientCapability) as info:
                await client.call_tool("plan_trip", {"destination": "Lima"})
            assert info.value.code == -32021
            assert info.value.data == {"requiredCapabilities": {"elicitation": {}}}

    run(main())


def raw(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    proc = subprocess.run(mcpkit_run("travel.py"), input=data, capture_output=True, timeout=120)
    return [json.loads(line) for line in proc.stdout.splitlines()]


META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
}


def call(request_id: int, **extra: Any) -> dict[str, Any]:
    params = {"_meta": META, "name": "plan_trip", "arguments": {"destination": "Oslo"}, **extra}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_input_required_on_the_wire_and_tampering_is_refused() -> None:
    (first,) = raw([call(1)])
    result = first["result"]
    assert result["resultType"] == "input_required"
    assert list(result["inputRequests"]) == ["elicitation_1"]
    assert result["inputRequests"]["elicitation_1"]["method"] == "elicitation/create"
    state = result["requestState"]
    assert "ttlMs" not in result  # interim results carry no caching hints

    body, mac = state.split(".")
    tampered = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1] + "." + mac
    foreign = call(2, requestState=state)
    foreign["params"]["arguments"] = {"destination": "Paris"}  # the state belongs to another request
    answers = raw([
        call(3, requestState=tampered, inputResponses={"elicitation_1": {"action": "accept", "content": {"confirm": True}}}),
        foreign,
        call(4, requestState="garbage"),
    ])  # fmt: skip
    assert [a["error"]["code"] for a in answers] == [-32602, -32602, -32602]


def test_the_state_is_not_valid_in_another_server_process() -> None:
    (first,) = raw([call(1)])
    state = first["result"]["requestState"]
    (again,) = raw([call(2, requestState=state, inputResponses={"elicitation_1": {"action": "decline"}})])
    assert again["error"]["code"] == -32602  # another process, another key


def test_unrequested_answers_are_ignored() -> None:
    # Answers to questions that were never asked must not pre-fill later ones.
    injected = {
        "elicitation_1": {"action": "accept", "content": {"confirm": True}},
        "sampling_2": {"role": "assistant"},
    }
    (first,) = raw([call(1, inputResponses=injected)])
    assert first["result"]["resultType"] == "input_required"
    assert list(first["result"]["inputRequests"]) == ["elicitation_1"]


def test_a_callback_error_travels_to_the_tool_and_back() -> None:
    # The client's error answer to elicitation/create is raised in the tool; unhandled there, it
    # comes back as the tools/call error (an RPCError is a protocol error, never isError).
    async def broken(params: dict[str, Any]) -> Any:
        raise RPCError(-1, "user closed the dialog")

    async def main() -> None:
        async with Client(
            mcpkit_run("travel.py"), protocol_version="2025-11-25", elicitation=broken
        ) as client:
            with pytest.raises(RPCError, match="user closed the dialog") as info:
                await client.call_tool("plan_trip", {"destination": "Oslo"})
            assert info.value.code == -1

    run(main())
