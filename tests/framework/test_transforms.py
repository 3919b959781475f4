"""server.transform_tool: a tool renamed, re-described, its arguments renamed, defaulted or hidden
behind a fixed value, or its call wrapped; on the server's own tools, mounted ones and proxied
ones; listed as each revision spells tools; and the listed schema and the arguments mapped back
agree for any schema (hypothesis)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mcpkit import Client, InvalidParams, Server
from mcpkit.compose.proxy import proxy
from mcpkit.server import Arg, Forward, ToolTransform

from ._composed import WIRES, connect, serve_http, text
from ._sync import sync

ALL_ERAS = ["2024-11-05", "2025-11-25", "2026-07-28"]


def searcher() -> tuple[Server, list[dict[str, Any]]]:
    server = Server("search")
    calls: list[dict[str, Any]] = []

    @server.tool
    def search(query: str, limit: int = 10, api_key: str = "") -> str:
        """Search the index."""
        calls.append({"query": query, "limit": limit, "api_key": api_key})
        return f"{query}/{limit}"

    return server, calls


def transformed(server: Server) -> None:
    server.transform_tool(
        "search",
        name="find",
        title="Find",
        description="Find things.",
        arguments={
            "query": Arg(name="q", description="What to look for"),
            "limit": Arg(default=3),
            "api_key": Arg(hide=True, default="secret"),
        },
    )


@pytest.mark.parametrize("version", ALL_ERAS)
@sync
async def test_an_own_tool_transformed(version: str) -> None:
    server, calls = searcher()
    transformed(server)
    async with Client(server, protocol_version=version) as client:
        (tool,) = await client.list_tools()
        assert tool.name == "find" and tool.description == "Find things."
        assert tool.title == (None if version == "2024-11-05" else "Find")
        assert tool.input_schema == {
            "type": "object",
            "properties": {
                "q": {"type": "string", "description": "What to look for"},
                "limit": {"type": "integer", "default": 3},
            },
            "required": ["q"],
        }
        assert text(await client.call_tool("find", {"q": "cats"})) == "cats/3"
        assert text(await client.call_tool("find", {"q": "dogs", "limit": 5})) == "dogs/5"
        assert calls == [
            {"query": "cats", "limit": 3, "api_key": "secret"},
            {"query": "dogs", "limit": 5, "api_key": "secret"},
        ]
        # The fixed value cannot be set, nor an argument reached by the name it had.
        refused = await client.call_tool("find", {"q": "x", "api_key": "mine"})
        assert refused.is_error and "'api_key'" in text(refused) and "fixed" in text(refused)
        refused = await client.call_tool("find", {"query": "x"})
        assert refused.is_error and "called 'q'" in text(refused)
        with pytest.raises(InvalidParams, match="Unknown tool: search"):
            await client.call_tool("search", {"query": "x"})
        assert len(calls) == 2  # nothing refused ran


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
@sync
async def test_wrap_with_forward(version: str) -> None:
    server, calls = searcher()

    async def audited(arguments: dict[str, Any], forward: Forward) -> Any:
        if arguments["query"] == "forbidden":
            return "not allowed"  # the tool is not called
        result = await forward({**arguments, "query": arguments["query"].lower()})
        return f"[{text(result)}]"

    server.transform_tool("search", wrap=audited, arguments={"limit": Arg(hide=True, default=1)})
    async with Client(server, protocol_version=version) as client:
        (tool,) = await client.list_tools()
        assert tool.name == "search" and tool.output_schema is None
        assert text(await client.call_tool("search", {"query": "CATS"})) == "[cats/1]"
        assert text(await client.call_tool("search", {"query": "forbidden"})) == "not allowed"
        assert [call["query"] for call in calls] == ["cats"]


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
@sync
async def test_mounted_and_proxied_tools_transformed(version: str) -> None:
    inner, calls = searcher()
    parent = Server("parent")
    parent.mount(inner, namespace="inner")
    parent.mount(proxy(searcher()[0]), namespace="far")
    transformed_names = {"inner__search": "find", "far__search": "find_far"}
    for source, name in transformed_names.items():
        parent.transform_tool(source, name=name, arguments={"query": Arg(name="q"), "limit": Arg(default=2)})
    async with Client(parent, protocol_version=version) as client:
        assert [t.name for t in await client.list_tools()] == ["find", "find_far"]
        assert text(await client.call_tool("find", {"q": "a"})) == "a/2"
        assert text(await client.call_tool("find_far", {"q": "b", "limit": 4})) == "b/4"
        assert calls == [{"query": "a", "limit": 2, "api_key": ""}]


def test_bad_transforms_are_refused() -> None:
    server, _ = searcher()
    with pytest.raises(ValueError, match="needs a default"):
        Arg(hide=True)
    with pytest.raises(ValueError, match="twice"):
        server.transform_tool("search", arguments={"query": Arg(name="x"), "limit": Arg(name="x")})
    server.transform_tool("search", name="find")
    server.add_tool(lambda: "", name="other")
    with pytest.raises(ValueError, match="already listed as 'find'"):
        server.transform_tool("other", name="find")


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    yield from serve_http()


@pytest.mark.parametrize(("transport", "version"), WIRES)
@sync
async def test_transforms_over_the_wire(transport: str, version: str, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("http_url") if transport == "http" else None
    async with connect(transport, url, version) as client:
        listed = {t.name: t for t in await client.list_tools()}
        assert listed["find"].description == "Find things."
        assert listed["find"].input_schema["required"] == ["q"]
        assert list(listed["find"].input_schema["properties"]) == ["q", "limit"]
        assert listed["wrapped_shout"].title == "Shout, wrapped"
        found = await client.call_tool("find", {"q": "x"})
        assert found.structured_content == {"query": "x", "limit": 10, "api_key": "k"}
        assert (await client.call_tool("find", {"q": "x", "api_key": "mine"})).is_error
        assert text(await client.call_tool("triple", {})) == "21"  # a nested mount's, defaulted
        assert text(await client.call_tool("triple", {"x": 2})) == "6"
        assert text(await client.call_tool("wrapped_shout", {"word": " hey "})) == "HEY!"


# -- the listed schema and the arguments mapped back agree -------------------------------------------

NAMES = st.text(alphabet="abcdefgh", min_size=1, max_size=3)


@st.composite
def schemas_and_transforms(draw: st.DrawFn) -> tuple[dict[str, Any], ToolTransform]:
    properties = draw(st.lists(NAMES, min_size=1, max_size=6, unique=True))
    required = [name for name in properties if draw(st.booleans())]
    schema: dict[str, Any] = {"type": "object", "properties": {n: {"type": "string"} for n in properties}}
    if required:
        schema["required"] = required
    changed = draw(st.lists(st.sampled_from(properties), unique=True))
    untouched = set(properties) - set(changed)
    args: dict[str, Arg] = {}
    taken = set(untouched)
    for own in changed:
        hide = draw(st.booleans())
        default = draw(st.one_of(st.none(), st.text(max_size=2))) if hide or draw(st.booleans()) else None
        name = None if hide else draw(st.one_of(st.none(), NAMES.filter(lambda n: n not in taken)))
        shown = name or own
        if not hide:
            if shown in taken:
                name, shown = None, own  # no untouched argument has its own name
                assume(shown not in taken)  # but an argument renamed before it may: a clash, refused
            taken.add(shown)
        if hide or default is not None:
            args[own] = Arg(name=name, hide=hide, default=default)
        else:
            args[own] = Arg(name=name)
    return schema, ToolTransform("t", "t2", arguments=args)


@settings(max_examples=300, deadline=None)
@given(schemas_and_transforms(), st.data())
def test_listed_schema_and_arguments_back_round_trip(
    case: tuple[dict[str, Any], ToolTransform], data: st.DataObject
) -> None:
    schema, transform = case
    listed = transform.listed({"name": "t", "inputSchema": schema})
    assert listed["name"] == "t2"
    shown = listed["inputSchema"]
    properties, required = shown["properties"], shown.get("required", [])
    hidden = {own for own, arg in transform.arguments.items() if arg.hide}
    assert set(required) <= set(properties)
    assert len(properties) == len(schema["properties"]) - len(hidden)
    # A call that fills what is listed (required, and any optional ones) maps back to the tool's names.
    sent = {name: f"v-{name}" for name in properties if name in required or data.draw(st.booleans())}
    back = transform.arguments_back(sent)
    for own in schema["properties"]:
        arg = transform.arguments.get(own)
        name = (arg.name or own) if arg is not None else own
        if arg is not None and arg.hide:
            assert back[own] == arg.default
        elif name in sent:
            assert back[own] == sent[name]
        elif own in schema.get("required", []):
            assert arg is not None and own in back  # listed optional only because it got a default
            assert back[own] == arg.default
    assert set(back) <= set(schema["properties"])
    # Sending a hidden argument is refused, unless another argument is listed under its name.
    for own in hidden - set(properties):
        with pytest.raises(ValueError, match="fixed"):
            transform.arguments_back({**sent, own: "x"})
