"""The framework's examples, run as users run them: ``examples/notes_sqlite.py`` (a lifespan holding a
SQLite connection, middleware) and ``examples/composite.py`` (a mounted server, a proxied stdio
server, a transform), each as a real stdio subprocess in 2025-11-25 and 2026-07-28, once over real
HTTP on 127.0.0.1 (a client of each era against the one process), and through ``mcpkit tools``."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, RPCError

from ..conftest import EXAMPLES, free_port, http_server

pytestmark = pytest.mark.e2e

ERAS = ["2025-11-25", "2026-07-28"]
NOTES = [sys.executable, str(EXAMPLES / "notes_sqlite.py")]
COMPOSITE = [sys.executable, str(EXAMPLES / "composite.py")]


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    # Generous: the composite starts a second interpreter for its proxied server.
    return asyncio.run(asyncio.wait_for(coro, 240))


def text(result: Any) -> str:
    return str(result.content[0].text)


def serve_http(example: str) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "mcpkit", "run", str(EXAMPLES / example), "--transport", "http"]
    yield from http_server([*command, "--port", str(port)], port, startup_seconds=120)


# -- notes_sqlite.py --------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ERAS)
def test_notes_persist_across_two_sessions_of_one_database_over_stdio(tmp_path: Path, version: str) -> None:
    db = tmp_path / "data" / "notes.db"  # the folder is made by the server
    env = {"NOTES_DB": str(db)}

    async def first_session() -> None:
        async with Client(NOTES, env=env, protocol_version=version) as client:
            assert client.protocol_version == version
            assert client.server_info is not None and client.server_info.name == "notes-sqlite"
            milk = await client.call_tool(
                "add_note", {"title": "Milk", "body": "2 litres, whole", "tags": ["Shop"]}
            )
            assert milk.structured_content is not None
            assert milk.structured_content["id"] == 1 and milk.structured_content["tags"] == ["shop"]
            await client.call_tool("add_note", {"title": "Call Ada", "body": "about 100% of the plan"})
            bad = await client.call_tool("add_note", {"title": "", "body": "x"})  # checked before running
            assert bad.is_error

    async def second_session() -> None:
        async with Client(NOTES, env=env, protocol_version=version) as client:
            listed = await client.call_tool("list_notes", {})
            assert listed.structured_content is not None
            assert [n["title"] for n in listed.structured_content["result"]] == ["Call Ada", "Milk"]
            tagged = await client.call_tool("list_notes", {"tag": "shop"})
            assert [n["title"] for n in tagged.structured_content["result"]] == ["Milk"]  # type: ignore[index]
            # LIKE's wildcards in the words are literal: "_" (any one character to LIKE) finds none.
            found = await client.call_tool("search_notes", {"query": "100%"})
            assert [n["title"] for n in found.structured_content["result"]] == ["Call Ada"]  # type: ignore[index]
            nothing = await client.call_tool("search_notes", {"query": "_"})
            assert nothing.structured_content == {"result": []}
            read = await client.read_resource("notes://1")
            assert read.contents[0].text == "# Milk\n\n2 litres, whole\n\ntags: shop\n"
            assert text(await client.call_tool("delete_note", {"note_id": 2})) == "note 2 deleted"
            missing = await client.call_tool("delete_note", {"note_id": 2})
            assert missing.is_error and text(missing) == "there is no note 2; list_notes shows the ids"

    run(first_session())
    run(second_session())
    # The lifespan closed the connection: the file is a complete database anyone can read.
    with contextlib.closing(sqlite3.connect(db)) as direct:
        assert direct.execute("SELECT id, title FROM notes").fetchall() == [(1, "Milk")]


@pytest.mark.parametrize("version", ERAS)
def test_the_read_only_middleware_refuses_changes_before_they_run(tmp_path: Path, version: str) -> None:
    db = tmp_path / "notes.db"

    async def main() -> None:
        async with Client(NOTES, env={"NOTES_DB": str(db)}, protocol_version=version) as client:
            await client.call_tool("add_note", {"title": "kept", "body": "."})
        async with Client(
            NOTES, env={"NOTES_DB": str(db), "NOTES_READ_ONLY": "1"}, protocol_version=version
        ) as client:
            for name, arguments in (
                ("add_note", {"title": "new", "body": "."}),
                ("delete_note", {"note_id": 1}),
            ):
                refused = await client.call_tool(name, arguments)
                assert refused.is_error
                assert (
                    text(refused) == f"{name} changes notes, and this server is read-only (NOTES_READ_ONLY=1)"
                )
            listed = await client.call_tool("list_notes", {})
            assert [n["title"] for n in listed.structured_content["result"]] == ["kept"]  # type: ignore[index]

    run(main())


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"not a database at all\n" * 10, "file is not a database"),
        (None, "holds tables of another application: users"),
    ],
    ids=["not-sqlite", "another-apps-database"],
)
def test_a_database_that_is_not_ours_stops_the_start_in_one_line_and_is_left_alone(
    tmp_path: Path, content: bytes | None, reason: str
) -> None:
    db = tmp_path / "other.db"
    if content is None:
        with contextlib.closing(sqlite3.connect(db)) as other:
            other.execute("CREATE TABLE users (name TEXT)")
            other.execute("INSERT INTO users VALUES ('ada')")
            other.commit()
    else:
        db.write_bytes(content)
    before = db.read_bytes()
    done = subprocess.run(
        NOTES, env={**os.environ, "NOTES_DB": str(db)}, input=b"", capture_output=True, timeout=120
    )
    assert done.returncode == 1
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("mcpkit: server 'notes-sqlite' failed to start: its lifespan raised ")
    assert reason in lines[0] and str(db) in lines[0]
    assert db.read_bytes() == before


def test_notes_over_http_in_both_eras(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOTES_DB", str(tmp_path / "notes.db"))  # the server process inherits it
    serving = serve_http("notes_sqlite.py")
    url = next(serving)
    try:

        async def main() -> None:
            async with Client(url, protocol_version="2026-07-28") as modern:
                added = await modern.call_tool(
                    "add_note", {"title": "over HTTP", "body": "stateless", "tags": ["web"]}
                )
                assert not added.is_error
            async with Client(url, protocol_version="2025-11-25") as session:
                listed = await session.call_tool("list_notes", {"tag": "web"})
                assert [n["body"] for n in listed.structured_content["result"]] == ["stateless"]  # type: ignore[index]
                read = await session.read_resource("notes://1")
                assert read.contents[0].text.startswith("# over HTTP")  # type: ignore[union-attr]

        run(main())
    finally:
        with contextlib.suppress(StopIteration):
            next(serving)  # SIGTERM: the lifespan closes the database
    with contextlib.closing(sqlite3.connect(tmp_path / "notes.db")) as direct:
        assert direct.execute("SELECT title FROM notes").fetchall() == [("over HTTP",)]


# -- composite.py -----------------------------------------------------------------------------------

COMPOSITE_TOOLS = [
    "current_weather",
    "weather__get_weather_data",
    "weather__forecast",
    "notes__create_notebook",
    "notes__add_note",
    "notes__list_notes",
    "notes__delete_note",
    "notes__export",
]


async def check_composite(client: Client) -> None:
    """What every transport and era must show of examples/composite.py."""
    tools = {tool.name: tool for tool in await client.list_tools()}
    assert list(tools) == COMPOSITE_TOOLS
    # The transform: renamed, re-described, the argument listed under its new name.
    renamed = tools["current_weather"]
    assert renamed.description == "The weather in a city right now: temperature, conditions and humidity."
    assert list(renamed.input_schema["properties"]) == ["city"]
    assert text(await client.call_tool("current_weather", {"city": "Paris"})).startswith(
        "Current weather in Paris:"
    )
    old_name = await client.call_tool("current_weather", {"location": "Paris"})
    assert old_name.is_error  # the first name is not a way around the transform
    with pytest.raises(RPCError, match="Unknown tool"):
        await client.call_tool("weather__get_weather", {"location": "Paris"})
    # The mounted weather server.
    forecast = await client.call_tool("weather__forecast", {"location": "Lima", "days": 2})
    assert forecast.structured_content is not None and len(forecast.structured_content["result"]) == 2
    data = await client.call_tool("weather__get_weather_data", {"location": "Oslo", "unit": "fahrenheit"})
    assert data.structured_content is not None and data.structured_content["unit"] == "fahrenheit"
    # The proxied notes server, a child process: a notebook made, written and read back.
    made = await client.call_tool("notes__create_notebook", {"title": "trip"})
    assert made.structured_content is not None
    notebook = made.structured_content["notebook_id"]
    await client.call_tool("notes__add_note", {"notebook_id": notebook, "text": "pack an umbrella"})
    listed = await client.call_tool("notes__list_notes", {"notebook_id": notebook})
    assert [n["text"] for n in listed.structured_content["result"]] == ["pack an umbrella"]  # type: ignore[index]
    about = await client.read_resource("notes://about")  # resources keep their URIs
    assert about.contents
    prompt = await client.get_prompt("notes__summarize", {"notebook_id": notebook})
    assert "pack an umbrella" in str(prompt.messages)


@pytest.mark.parametrize("version", ERAS)
def test_the_composite_lists_and_calls_both_children_over_stdio(version: str) -> None:
    async def main() -> None:
        async with Client(COMPOSITE, protocol_version=version) as client:
            assert client.protocol_version == version
            assert client.server_info is not None and client.server_info.name == "composite"
            await check_composite(client)

    run(main())


def test_the_composite_over_http_in_both_eras() -> None:
    serving = serve_http("composite.py")
    url = next(serving)
    try:

        async def main() -> None:
            for version in ERAS:
                async with Client(url, protocol_version=version) as client:
                    await check_composite(client)

        run(main())
    finally:
        with contextlib.suppress(StopIteration):
            next(serving)


def test_mcpkit_tools_lists_both_examples(tmp_path: Path) -> None:
    env = {**os.environ, "NOTES_DB": str(tmp_path / "notes.db")}
    for example, first in (
        ("notes_sqlite.py", "add_note("),
        ("composite.py", "current_weather(city: str)"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "mcpkit", "tools", str(EXAMPLES / example)],
            env=env, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[0].startswith(first), done.stdout
