"""Tool search: tools/list answers search_tools and call_tool (and the 'always' ones) in place of a
large catalogue; the search ranks the live catalogue with BM25; call_tool calls any listed tool
through the server's own tools/call path (middleware, transforms, visibility, tasks) in both eras,
in process and over real stdio and HTTP."""

from __future__ import annotations

import importlib.util
import itertools
import math
import sys
from collections import Counter
from collections.abc import Generator
from pathlib import Path
from typing import Any, cast

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit import Client, Context, ElicitResult, Server, TextContent
from mcpkit.server import Arg, Call, CallNext
from mcpkit.server._ranking import BM25, _ascii_words, _document, _parts, rank, tokenize
from mcpkit.server._tool_search_api import ToolSearchAPI
from mcpkit.server.tool_search import enable_tool_search

from ..conftest import free_port, http_server
from ._sync import sync

SERVERS = Path(__file__).parent / "servers"
ERAS = ["2025-11-25", "2026-07-28"]


def _catalogue_server() -> Server:
    spec = importlib.util.spec_from_file_location("tool_search_server", SERVERS / "tool_search_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server: Server = module.build()
    return server


def _names(result: Any) -> list[str]:
    assert not result.is_error, result.content
    return [tool["name"] for tool in result.structured_content["tools"]]


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


# -- words and ranking ------------------------------------------------------------------------------


def test_tokenize_splits_names_into_words() -> None:
    assert tokenize("get_weather") == ["get_weather", "get", "weather"]
    assert tokenize("getHTTPResponse2") == ["gethttpresponse2", "get", "http", "response", "2"]
    assert tokenize("weather.forecast-daily") == [
        "weather.forecast-daily",
        "weather",
        "forecast",
        "daily",
    ]
    assert tokenize("Forecasts, (for) cities!") == ["forecast", "for", "citie"]
    assert tokenize("class status") == ["class", "statu"]  # the same cut on both sides
    assert tokenize("  ... ") == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abcXYZ019_.-( ", max_size=24))
def test_the_ascii_shortcut_finds_the_same_words(chunk: str) -> None:
    # ASCII text is split by a regex; any other by a loop over characters: the same words.
    assert _ascii_words().findall(chunk) == _parts(chunk)


def test_non_ascii_words() -> None:
    assert tokenize("météo_Zürich") == ["météo_zürich", "météo", "zürich"]


def test_bm25_matches_the_formula() -> None:
    docs = [Counter({"red": 2, "apple": 1}), Counter({"green": 1, "pear": 1}), Counter({"red": 1})]
    index = BM25(docs)
    avgdl = (3 + 2 + 1) / 3

    def idf(n: int) -> float:
        return math.log(1 + (3 - n + 0.5) / (n + 0.5))

    def term(tf: int, length: int, n: int) -> float:
        return idf(n) * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avgdl))

    scores = index.scores(["red", "apple", "red", "unknown"])  # repeats and unknown words ignored
    assert scores == pytest.approx([term(2, 3, 2) + term(1, 3, 1), 0.0, term(1, 1, 2)])


def test_bm25_word_in_every_document_still_counts() -> None:
    index = BM25([Counter(["tool", "a"]), Counter(["tool", "b"])])
    assert all(score > 0 for score in index.scores(["tool"]))
    assert BM25([]).scores(["x"]) == []


def test_rank_orders_and_filters() -> None:
    tools = [
        {"name": "send_email", "description": "Send an email message."},
        {"name": "read_email", "description": "Read the email inbox."},
        {"name": "get_weather", "title": "Weather", "description": "Current weather for a city."},
        {"name": "weather", "description": "Something unrelated."},
        {"name": "list_files", "description": "List the files of a folder."},
    ]
    assert [t["name"] for t in rank(tools, "weather")][:1] == ["weather"]  # the exact name first
    assert [t["name"] for t in rank(tools, "WEATHER")][:1] == ["weather"]
    assert [t["name"] for t in rank(tools, "city weather")] == ["get_weather", "weather"]
    assert [t["name"] for t in rank(tools, "email")] == ["send_email", "read_email"]  # tie: in order
    assert [t["name"] for t in rank(tools, "email", 1)] == ["send_email"]
    assert rank(tools, "database") == []
    assert rank(tools, "") == []
    assert [t["name"] for t in rank(tools, "sendEmail")][:1] == ["send_email"]


_word = st.text(alphabet="abcdefghij", min_size=1, max_size=6)
_tool_names = st.lists(
    st.builds(lambda a, b: f"{a}_{b}", _word, _word), min_size=1, max_size=25, unique_by=str.lower
)


@st.composite
def _catalogues(draw: st.DrawFn) -> list[dict[str, Any]]:
    names = draw(_tool_names)
    return [{"name": name, "description": " ".join(draw(st.lists(_word, max_size=12)))} for name in names]


@settings(max_examples=150, deadline=None)
@given(_catalogues(), st.lists(_word, max_size=6))
def test_scores_are_never_negative(tools: list[dict[str, Any]], query: list[str]) -> None:
    scores = BM25([_document(tool) for tool in tools]).scores(query)
    assert len(scores) == len(tools) and all(score >= 0.0 for score in scores)


@settings(max_examples=150, deadline=None)
@given(_catalogues(), st.data())
def test_an_exact_name_ranks_its_tool_first(tools: list[dict[str, Any]], data: st.DataObject) -> None:
    chosen = data.draw(st.sampled_from(tools))
    assert rank(tools, chosen["name"])[0] is chosen


@settings(max_examples=150, deadline=None)
@given(_catalogues(), st.lists(_word, min_size=1, max_size=4))
def test_ranking_is_stable(tools: list[dict[str, Any]], words: list[str]) -> None:
    query = " ".join(words)
    first = rank(tools, query)
    assert rank(tools, query) == first  # the same answer every time
    scores = BM25([_document(tool) for tool in tools]).scores(tokenize(query))
    positions = [tools.index(tool) for tool in first]
    exact = [p for p in positions if tools[p]["name"].lower() == query.strip().lower()]
    ranked = [p for p in positions if p not in exact]
    # best first; equal scores in catalogue order; nothing scoring 0 returned
    assert all(scores[p] > 0 for p in ranked)
    for a, b in itertools.pairwise(ranked):
        assert scores[a] > scores[b] or (scores[a] == scores[b] and a < b)
    assert len(ranked) == sum(1 for i, s in enumerate(scores) if s > 0 and i not in exact)


# -- in process ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_three_hundred_tools_in_process(version: str) -> None:
    server = _catalogue_server()
    async with Client(server, protocol_version=version) as client:
        listed = [tool.name for tool in await client.list_tools()]
        assert listed == ["search_tools", "call_tool", "weather_op_2"]

        found = await client.call_tool("search_tools", {"query": "payroll operation 178"})
        assert _names(found)[0] == "payroll_op_178" and len(_names(found)) == 3  # max_results
        definition = found.structured_content["tools"][0]  # type: ignore[index]
        assert set(definition) == {"name", "description", "inputSchema"}
        assert definition["inputSchema"]["required"] == ["value"]
        assert msgspec.json.decode(_text(found)) == found.structured_content  # the same as text

        assert _names(await client.call_tool("search_tools", {"query": "shipping_op_299", "limit": 1})) == [
            "shipping_op_299"
        ]
        assert len(_names(await client.call_tool("search_tools", {"query": "calendar", "limit": 50}))) == 50
        none = await client.call_tool("search_tools", {"query": "quantum teleportation"})
        assert not none.is_error and none.structured_content == {"tools": []}
        assert "No tool matches" in _text(none)

        called = await client.call_tool("call_tool", {"name": "payroll_op_178", "arguments": {"value": 2}})
        assert not called.is_error and called.structured_content == {"result": 2178}
        direct = await client.call_tool("payroll_op_178", {"value": 3})  # still callable by name
        assert direct.structured_content == {"result": 3178}

        # the mounted child's tools are in the catalogue, and call_tool reaches them
        assert _names(await client.call_tool("search_tools", {"query": "street address latitude"}))[0] == (
            "maps__geocode"
        )
        geo = await client.call_tool(
            "call_tool", {"name": "maps__geocode", "arguments": {"address": "Main St"}}
        )
        assert _text(geo) == "Main St: 59.91,10.75"

        # the middleware sees the real tool: a policy on names is not walked around
        refused = await client.call_tool("call_tool", {"name": "delete_everything", "arguments": {}})
        assert refused.is_error and _text(refused) == "delete_everything is refused by policy"


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_the_catalogue_is_live_and_hidden_tools_never_appear(version: str) -> None:
    server = Server("live")

    @server.tool(tags=["admin"])
    def reset_database() -> str:
        """Reset the database to its first state."""
        return "reset"

    enable_tool_search(server)
    async with Client(server, protocol_version=version) as client:
        assert _names(await client.call_tool("search_tools", {"query": "database"})) == ["reset_database"]

        @server.tool
        def backup_database() -> str:
            """Back the database up."""
            return "backed up"

        assert _names(await client.call_tool("search_tools", {"query": "database backup"})) == [
            "backup_database",
            "reset_database",
        ]
        server.disable(tags=["admin"])
        assert _names(await client.call_tool("search_tools", {"query": "reset database"})) == [
            "backup_database"
        ]
        refused = await client.call_tool("call_tool", {"name": "reset_database"})
        assert refused.is_error and "Unknown tool: reset_database" in _text(refused)
        server.disable(names=["call_tool"])  # the meta-tools obey visibility too
        assert [tool.name for tool in await client.list_tools()] == ["search_tools"]
        server.remove_tool("backup_database")
        assert _names(await client.call_tool("search_tools", {"query": "database"})) == []


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_a_session_hides_tools_from_its_own_searches(version: str) -> None:
    server = Server("sessions")

    @server.tool
    def secret_report() -> str:
        """A report on secret matters."""
        return "secret"

    @server.tool
    async def hide_secrets(ctx: Context) -> str:
        """Hide the secret report from this session."""
        await ctx.disable(names=["secret_report"])
        return "hidden"

    enable_tool_search(server)
    async with Client(server, protocol_version=version) as client:
        assert "secret_report" in _names(await client.call_tool("search_tools", {"query": "secret report"}))
        await client.call_tool("call_tool", {"name": "hide_secrets"})
        assert "secret_report" not in _names(
            await client.call_tool("search_tools", {"query": "secret report"})
        )
        refused = await client.call_tool("call_tool", {"name": "secret_report"})
        assert refused.is_error and "Unknown tool: secret_report" in _text(refused)
    async with Client(server, protocol_version=version) as other:  # another session sees it
        assert "secret_report" in _names(await other.call_tool("search_tools", {"query": "secret report"}))


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_transformed_and_mounted_tools_through_call_tool(version: str) -> None:
    child = Server("weather")

    @child.tool
    def get_forecast(q: str, units: str = "imperial") -> str:
        """The forecast for a place."""
        return f"{q} in {units}"

    parent = Server("parent")
    parent.mount(child, namespace="weather")
    parent.transform_tool(
        "weather__get_forecast",
        name="forecast",
        description="Tomorrow's weather in a city.",
        arguments={"q": Arg(name="city"), "units": Arg(hide=True, default="metric")},
    )
    enable_tool_search(parent, always=["forecast"])
    async with Client(parent, protocol_version=version) as client:
        listed = {tool.name: tool for tool in await client.list_tools()}
        assert list(listed) == ["search_tools", "call_tool", "forecast"]
        found = await client.call_tool("search_tools", {"query": "tomorrow weather city"})
        assert _names(found) == ["forecast"]
        schema = found.structured_content["tools"][0]["inputSchema"]  # type: ignore[index]
        assert list(schema["properties"]) == ["city"]  # the hidden argument is not shown
        called = await client.call_tool("call_tool", {"name": "forecast", "arguments": {"city": "Oslo"}})
        assert _text(called) == "Oslo in metric"
        old = await client.call_tool("call_tool", {"name": "weather__get_forecast", "arguments": {"q": "x"}})
        assert old.is_error  # listed under its new name only


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_middleware_runs_around_both_calls(version: str) -> None:
    server = Server("traced")
    trail: list[str] = []

    @server.middleware("tools/call")
    async def record(call: Call, call_next: CallNext) -> Any:
        trail.append(str(call.params.get("name")))
        return await call_next(call)

    @server.tool
    def echo(text: str) -> str:
        return text

    enable_tool_search(server)
    async with Client(server, protocol_version=version) as client:
        result = await client.call_tool("call_tool", {"name": "echo", "arguments": {"text": "hi"}})
        assert _text(result) == "hi"
        assert trail == ["call_tool", "echo"]


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_a_tool_asking_a_question_through_call_tool(version: str) -> None:
    server = Server("asking")
    runs: list[str] = []

    @server.tool
    async def greet(ctx: Context) -> str:
        """Greet the user by name."""
        runs.append("greet")
        answer = await ctx.elicit(
            "Your name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"hello {answer.content['name'] if answer.content else '?'}"

    async def answer(params: dict[str, Any]) -> ElicitResult[Any]:
        return ElicitResult(action="accept", content={"name": "Ada"})

    enable_tool_search(server)
    async with Client(server, protocol_version=version, elicitation=answer) as client:
        result = await client.call_tool("call_tool", {"name": "greet"})
        assert _text(result) == "hello Ada"
    assert runs == (["greet", "greet"] if version == "2026-07-28" else ["greet"])  # a retry, or one run


@sync
async def test_a_tool_run_as_a_task_through_call_tool() -> None:
    server = Server("tasks")

    @server.tool(task_support="optional")
    async def crunch(n: int) -> int:
        """Crunch a number slowly."""
        return n * 2

    enable_tool_search(server)
    async with Client(server, protocol_version="2025-11-25") as client:
        listed = {tool.name: tool for tool in await client.list_tools()}
        assert listed["call_tool"].execution == {"taskSupport": "optional"}
        task = await client.start_task("call_tool", {"name": "crunch", "arguments": {"n": 21}})
        result = await client.task_result(task["taskId"])
        assert result.structured_content == {"result": 42}


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_bad_input_gets_clear_errors(version: str) -> None:
    server = Server("strict")

    @server.tool
    def ping_host(host: str) -> str:
        """Ping a host."""
        return f"pong {host}"

    enable_tool_search(server, max_results=2)
    async with Client(server, protocol_version=version) as client:
        cases: list[tuple[str, dict[str, Any], str]] = [
            ("search_tools", {}, "search_tools needs query: a string"),
            ("search_tools", {"query": 3}, "search_tools needs query: a string"),
            ("search_tools", {"query": "x", "limit": 0}, "limit must be an integer from 1 to 50"),
            ("search_tools", {"query": "x", "limit": True}, "limit must be an integer from 1 to 50"),
            ("call_tool", {}, "call_tool needs name: a tool's name"),
            ("call_tool", {"name": "ping_host", "arguments": [1]}, "arguments must be an object"),
            ("call_tool", {"name": "call_tool"}, "call_tool calls the tools search_tools finds"),
            ("call_tool", {"name": "nope"}, "Unknown tool: nope. Use search_tools"),
        ]
        for tool, arguments, message in cases:
            result = await client.call_tool(tool, arguments)
            assert result.is_error and message in _text(result), (tool, arguments, _text(result))
        bad_arguments = await client.call_tool("call_tool", {"name": "ping_host", "arguments": {"host": 1}})
        assert bad_arguments.is_error  # the tool's own validation answers
        ok = await client.call_tool("call_tool", {"name": "ping_host", "arguments": {"host": "a"}})
        assert _text(ok) == "pong a"  # nothing lost: the server still answers


def test_enabling_refuses_bad_options() -> None:
    server = Server("options")

    @server.tool
    def search_tools() -> str:
        return "mine"

    with pytest.raises(ValueError, match="already has a tool named 'search_tools'"):
        enable_tool_search(server)
    with pytest.raises(ValueError, match="max_results"):
        enable_tool_search(server, search_name="find", max_results=0)
    with pytest.raises(ValueError, match="invalid tool name"):
        enable_tool_search(server, search_name="find tools")
    with pytest.raises(ValueError, match="must differ"):
        enable_tool_search(server, search_name="x", call_name="x")
    with pytest.raises(ValueError, match="not a string"):
        enable_tool_search(server, search_name="find", always="search_tools")
    enable_tool_search(server, search_name="find")
    with pytest.raises(ValueError, match="already enabled"):
        enable_tool_search(server, search_name="find2")


@sync
async def test_add_tool_search_method() -> None:
    searchable: type[Server] = (
        Server if issubclass(Server, ToolSearchAPI) else type("Searchable", (Server, ToolSearchAPI), {})
    )
    server = searchable("method")

    @server.tool
    def hello() -> str:
        """Say hello."""
        return "hello"

    server.add_tool_search(search_name="find", call_name="run")  # type: ignore[attr-defined]
    async with Client(server) as client:
        assert [tool.name for tool in await client.list_tools()] == ["find", "run"]
        assert _names(await client.call_tool("find", {"query": "hello"})) == ["hello"]
        assert _text(await client.call_tool("run", {"name": "hello"})) == "hello"


# -- over the wire ------------------------------------------------------------------------------------


async def _exercise(client: Client) -> None:
    assert [tool.name for tool in await client.list_tools()] == ["search_tools", "call_tool", "weather_op_2"]
    found = await client.call_tool("search_tools", {"query": "inventory operation european 153"})
    assert _names(found)[0] == "inventory_op_153"
    called = await client.call_tool("call_tool", {"name": "inventory_op_153", "arguments": {"value": 7}})
    assert called.structured_content == {"result": 7153}
    geo = await client.call_tool("call_tool", {"name": "maps__geocode", "arguments": {"address": "Quay"}})
    assert _text(geo) == "Quay: 59.91,10.75"
    refused = await client.call_tool("call_tool", {"name": "delete_everything"})
    assert refused.is_error and _text(refused) == "delete_everything is refused by policy"


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_over_stdio(version: str) -> None:
    async with Client(
        [sys.executable, str(SERVERS / "tool_search_server.py")], protocol_version=version
    ) as client:
        await _exercise(client)


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_over_http(version: str) -> None:
    port = free_port()
    command = [sys.executable, str(SERVERS / "tool_search_server.py"), str(port)]
    serving = cast(Generator[str, None, None], http_server(command, port, 120))
    url = next(serving)
    try:
        async with Client(url, protocol_version=version) as client:
            await _exercise(client)
    finally:
        serving.close()
