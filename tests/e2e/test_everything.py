"""The conformance fixtures of examples/everything.py through mcpkit's own client, over real stdio.

The conformance suite drives them over HTTP; here the same handlers meet a client of each era on
stdio: several questions in one round (``ctx.gather``), named questions over several rounds, a tool
that gathers input and then goes on as a task (``ctx.become_task``), and a hand-written schema.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from typing import Any

import pytest

from mcpkit import Client, MissingClientCapability
from mcpkit.types import CreateMessageResult, ElicitResult, Root

from ..conftest import mcpkit_run

pytestmark = pytest.mark.e2e

ERAS = ["2025-11-25", "2026-07-28"]


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


class Host:
    """Answers every form with the fields it is asked for, and records the questions."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def elicitation(self, params: dict[str, Any]) -> ElicitResult:
        self.asked.append(params["message"])
        fields = params["requestedSchema"].get("properties", {})
        values = {"name": "Ada", "color": "green", "ok": True, "confirm": True, "value": "v"}
        return ElicitResult(action="accept", content={k: values[k] for k in fields if k in values})

    async def sampling(self, params: dict[str, Any]) -> CreateMessageResult:
        self.asked.append("sampling")
        return CreateMessageResult(role="assistant", content={"type": "text", "text": "Hi!"}, model="m")

    def client(self, version: str, **kwargs: Any) -> Client:
        return Client(
            mcpkit_run("everything.py"),
            protocol_version=version,
            elicitation=self.elicitation,
            sampling=self.sampling,
            roots=[Root(uri="file:///tmp", name="tmp")],
            **kwargs,
        )


def text(result: Any) -> str:
    return "".join(block.text for block in result.content)


@pytest.mark.parametrize("version", ERAS)
def test_several_questions_at_once_and_over_rounds(version: str) -> None:
    host = Host()

    async def main() -> None:
        async with host.client(version) as client:
            many = await client.call_tool("test_input_required_result_multiple_inputs")
            assert text(many) == "Name: Ada; Greeting: Hi!; Roots: 1"
            rounds = await client.call_tool("test_input_required_result_multi_round")
            assert text(rounds) == "Multi-round complete for Ada who likes green"

    run(main())
    assert host.asked.count("Step 1: What is your name?") == 1  # each question asked once


def test_a_multi_round_answer_names_its_questions() -> None:
    # 2026-07-28 on the wire: the keys the handler chose, all in one InputRequiredResult.
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}, "roots": {}},
    }
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "test_input_required_result_multiple_inputs", "_meta": meta},
    }
    done = subprocess.run(
        mcpkit_run("everything.py"),
        input=json.dumps(call) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    first = json.loads(done.stdout.splitlines()[0])["result"]
    assert first["resultType"] == "input_required"
    assert set(first["inputRequests"]) == {"user_name", "greeting", "client_roots"}
    assert first["inputRequests"]["client_roots"]["method"] == "roots/list"
    assert isinstance(first["requestState"], str)


@pytest.mark.parametrize("version", ERAS)
def test_a_tool_asks_then_becomes_a_task(version: str) -> None:
    host = Host()

    async def main() -> None:
        async with host.client(version) as client:
            if version == "2025-11-25":  # a required task: the client starts it with params.task
                task = await client.start_task("test_tool_with_task", {})
                result = await client.task_result(task["taskId"])
            else:  # the server answers input_required, then a task; call_tool follows both
                result = await client.call_tool("test_tool_with_task")
            assert text(result) == "Task finished for Ada"

    run(main())


def test_a_required_task_needs_the_extension() -> None:
    async def main() -> None:
        async with Client(mcpkit_run("everything.py"), protocol_version="2026-07-28") as client:
            client.capabilities = {k: v for k, v in client.capabilities.items() if k != "extensions"}
            with pytest.raises(MissingClientCapability):
                await client.call_tool("failing_job")

    run(main())


def test_a_hand_written_schema_is_listed_as_written() -> None:
    async def main() -> None:
        async with Client(mcpkit_run("everything.py")) as client:
            tools = {tool.name: tool for tool in await client.list_tools()}
            schema = tools["json_schema_2020_12_tool"].input_schema
            assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
            assert schema["$defs"]["address"]["$anchor"] == "addressDef"
            assert schema["additionalProperties"] is False and "if" in schema and "allOf" in schema
            called = await client.call_tool("json_schema_2020_12_tool", {"name": "Ada", "email": "a@b"})
            assert text(called) == 'JSON Schema 2020-12 tool called with: {"name": "Ada", "email": "a@b"}'

    run(main())


def test_closing_the_response_stream_is_harmless_on_stdio() -> None:
    async def main() -> None:
        async with Client(mcpkit_run("everything.py"), protocol_version="2025-11-25") as client:
            assert "reconnected" in text(await client.call_tool("test_reconnection"))

    run(main())
