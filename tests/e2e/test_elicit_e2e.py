"""Typed elicitation end to end: ``ctx.elicit(message, Type)`` over real stdio and HTTP, both eras.

The server is a script written to a temporary folder; it asks with a dataclass, a pydantic model and
a hand-written schema dict. The client is mcpkit's ``Client(elicitation=...)`` (the handshake era's
``elicitation/create`` request, the 2026-07-28 ``input_required`` round), and in one case the
official ``mcp`` SDK client.
"""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client
from mcpkit.types import ElicitResult

from ..conftest import free_port, http_server

pytestmark = pytest.mark.e2e

SERVER = textwrap.dedent("""
    import dataclasses
    import datetime
    from typing import Annotated, Literal

    import msgspec
    import pydantic

    from mcpkit import Context, ElicitationContentError, Server, Titles

    server = Server("bookings", "1.0.0")


    @dataclasses.dataclass
    class Booking:
        guests: Annotated[int, msgspec.Meta(ge=1, le=12, description="How many people")]
        day: datetime.date
        seating: Annotated[Literal["inside", "terrace"], Titles(inside="Inside", terrace="On the terrace")] = "inside"
        vegetarian: bool = False


    class Contact(pydantic.BaseModel):
        email: pydantic.EmailStr
        phone: str | None = None


    @server.tool
    async def book(ctx: Context) -> str:
        answer = await ctx.elicit("Book a table?", Booking)
        if not answer.accepted or answer.content is None:
            return answer.action
        b = answer.content
        return f"{type(b).__name__} {b.guests} {b.day.isoformat()} {b.seating} {b.vegetarian}"


    @server.tool
    async def book_checked(ctx: Context) -> str:
        try:
            answer = await ctx.elicit("Book a table?", Booking)
        except ElicitationContentError as exc:
            return f"invalid: {exc}"
        return answer.action


    @server.tool
    async def contact(ctx: Context) -> str:
        answer = await ctx.elicit("How do we reach you?", Contact)
        if answer.content is None:
            return answer.action
        return f"{type(answer.content).__name__} {answer.content.email} {answer.content.phone}"


    @server.tool
    async def by_hand(ctx: Context) -> str:
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
        answer = await ctx.elicit("Fine?", schema)
        return f"{answer.action} {type(answer.content).__name__} {answer.content}"


    if __name__ == "__main__":
        server.run()
""")

BOOKING_SCHEMA = {
    "type": "object",
    "properties": {
        "guests": {"type": "integer", "description": "How many people", "minimum": 1, "maximum": 12},
        "day": {"type": "string", "format": "date"},
        "seating": {
            "type": "string",
            "default": "inside",
            "oneOf": [
                {"const": "inside", "title": "Inside"},
                {"const": "terrace", "title": "On the terrace"},
            ],
        },
        "vegetarian": {"type": "boolean", "default": False},
    },
    "required": ["guests", "day"],
}


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("elicit") / "bookings.py"
    path.write_text(SERVER)
    return path


@pytest.fixture(scope="module")
def http_url(script: Path) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "mcpkit", "run", str(script), "--transport", "http", "--port", str(port)]
    yield from http_server(command, port, startup_seconds=15)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


class User:
    """Answers every form with *answer*, recording what it was asked."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer = answer
        self.asked: list[dict[str, Any]] = []

    async def __call__(self, params: dict[str, Any]) -> ElicitResult[Any]:
        self.asked.append(params)
        return ElicitResult(**self.answer)


CELLS = [
    ("stdio", "2025-06-18"),
    ("stdio", "2025-11-25"),
    ("stdio", "2026-07-28"),
    ("http", "2025-11-25"),
    ("http", "2026-07-28"),
]


def target(transport: str, script: Path, request: pytest.FixtureRequest) -> Any:
    if transport == "http":
        return request.getfixturevalue("http_url")
    return [sys.executable, "-m", "mcpkit", "run", str(script)]


def text(result: Any) -> str:
    return str(result.content[0].text)


@pytest.mark.parametrize(("transport", "version"), CELLS)
def test_a_dataclass_form_comes_back_as_the_dataclass(
    transport: str, version: str, script: Path, request: pytest.FixtureRequest
) -> None:
    user = User({"action": "accept", "content": {"guests": 4, "day": "2026-12-24"}})

    async def main() -> None:
        async with Client(
            target(transport, script, request), protocol_version=version, elicitation=user
        ) as c:
            result = await c.call_tool("book")
            assert result.is_error is False, result
            # Defaults fill what the user left out (the client's SEP-1034 defaults, or the type's).
            assert text(result) == "Booking 4 2026-12-24 inside False"

    run(main())
    (asked,) = user.asked  # once, also in 2026-07-28 where the tool runs again with the answer
    expected = BOOKING_SCHEMA
    if version == "2025-06-18":  # defaults only on booleans there, and titles as enumNames
        expected = {**BOOKING_SCHEMA, "properties": {**BOOKING_SCHEMA["properties"]}}
        expected["properties"]["seating"] = {
            "type": "string",
            "enum": ["inside", "terrace"],
            "enumNames": ["Inside", "On the terrace"],
        }
    assert asked["requestedSchema"] == expected
    assert asked["message"] == "Book a table?"


@pytest.mark.parametrize(("transport", "version"), [CELLS[1], CELLS[2], CELLS[4]])
@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_declined_or_cancelled_has_no_content(
    transport: str, version: str, action: str, script: Path, request: pytest.FixtureRequest
) -> None:
    async def main() -> None:
        user = User({"action": action})
        async with Client(
            target(transport, script, request), protocol_version=version, elicitation=user
        ) as c:
            assert text(await c.call_tool("book")) == action

    run(main())


@pytest.mark.parametrize(("transport", "version"), [CELLS[1], CELLS[2], CELLS[3], CELLS[4]])
def test_content_that_does_not_fit_is_an_error_naming_the_field(
    transport: str, version: str, script: Path, request: pytest.FixtureRequest
) -> None:
    async def main() -> None:
        bad = User({"action": "accept", "content": {"guests": "four", "day": "2026-12-24"}})
        async with Client(target(transport, script, request), protocol_version=version, elicitation=bad) as c:
            uncaught = await c.call_tool("book")
            assert uncaught.is_error is True
            assert "guests" in text(uncaught) and "does not fit" in text(uncaught)
            caught = await c.call_tool("book_checked")
            assert caught.is_error is False and text(caught).startswith("invalid: ")
            assert "$.guests" in text(caught)

    run(main())


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_pydantic_model_and_schema_dict(version: str, script: Path, request: pytest.FixtureRequest) -> None:
    async def main() -> None:
        user = User({"action": "accept", "content": {"email": "ada@example.com"}})
        async with Client(target("stdio", script, request), protocol_version=version, elicitation=user) as c:
            assert text(await c.call_tool("contact")) == "Contact ada@example.com None"
        assert user.asked[0]["requestedSchema"]["properties"]["email"] == {
            "format": "email",
            "type": "string",
        }
        assert user.asked[0]["requestedSchema"]["required"] == ["email"]
        bad = User({"action": "accept", "content": {"email": "not an address"}})
        async with Client(target("stdio", script, request), protocol_version=version, elicitation=bad) as c:
            result = await c.call_tool("contact")
            assert result.is_error is True and "email" in text(result)
        dict_user = User({"action": "accept", "content": {"ok": True}})
        async with Client(
            target("stdio", script, request), protocol_version=version, elicitation=dict_user
        ) as c:
            assert text(await c.call_tool("by_hand")) == "accept dict {'ok': True}"

    run(main())


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_official_sdk_client_answers_a_typed_form(mode: str, script: Path) -> None:
    """The official ``mcp`` client as the peer: 2026-07-28 (``auto``) and the handshake (``legacy``)."""
    import mcp_types
    from mcp import Client as OfficialClient
    from mcp import StdioServerParameters

    asked: list[dict[str, Any]] = []

    async def elicit(context: Any, params: Any) -> mcp_types.ElicitResult:
        asked.append(params.requested_schema)
        return mcp_types.ElicitResult(
            action="accept", content={"guests": 2, "day": "2027-01-01", "vegetarian": True}
        )

    async def main() -> str:
        server = StdioServerParameters(command=sys.executable, args=["-m", "mcpkit", "run", str(script)])
        async with OfficialClient(server, mode=mode, elicitation_callback=elicit) as client:
            result = await client.call_tool("book", {})
            assert result.is_error is False
            return str(result.content[0].text)  # type: ignore[union-attr]

    assert run(main()) == "Booking 2 2027-01-01 inside True"
    assert asked and asked[0]["properties"]["guests"]["maximum"] == 12
