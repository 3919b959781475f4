"""server.mount(child, namespace=): the child's tools and prompts listed as namespace__name and
routed by it, resources kept unless they collide (then namespace+uri), templates and completions,
nested mounts, live changes, lifespans, middleware, tasks and questions through the parent: in
process, over a real stdio subprocess and over real HTTP, in both eras (and 2024-11-05)."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from mcpkit import (
    Call,
    CallNext,
    Client,
    Context,
    ElicitResult,
    InvalidParams,
    RPCError,
    Server,
)
from mcpkit.compose.proxy import proxy

from ._composed import ERAS, WIRES, connect, serve_http, stdio_command, text
from ._sync import sync

ALL_ERAS = ["2024-11-05", *ERAS]


def family() -> tuple[Server, Server, Server]:
    """a mounts b (namespace b), b mounts c (namespace c); each has a tool, a prompt and data://same."""
    servers = []
    for name in ("a", "b", "c"):
        server = Server(name)

        def tool(x: int, _name: str = name) -> str:
            return f"{_name}:{x}"

        server.add_tool(tool, name=f"{name}_tool")

        def prompt(topic: str, _name: str = name) -> str:
            return f"{_name} on {topic}"

        server.add_prompt(prompt, name=f"{name}_prompt")

        def same(_name: str = name) -> str:
            return f"{_name}'s"

        server.add_resource(same, "data://same")
        servers.append(server)
    a, b, c = servers

    @c.resource("files://{path}")
    def file(path: str) -> str:
        return f"file {path}"

    @c.completion(prompt="c_prompt", argument="topic")
    def topics(value: str, arguments: dict[str, str]) -> list[str]:
        return [t for t in ("maths", "music", "poetry") if t.startswith(value)]

    b.mount(c, namespace="c")
    a.mount(b, namespace="b")
    return a, b, c


@pytest.mark.parametrize("version", ALL_ERAS)
@sync
async def test_namespaced_nested_mounts_in_process(version: str) -> None:
    a, _, _ = family()
    async with Client(a, protocol_version=version) as client:
        assert [t.name for t in await client.list_tools()] == ["a_tool", "b__b_tool", "b__c__c_tool"]
        assert text(await client.call_tool("b__c__c_tool", {"x": 3})) == "c:3"
        assert text(await client.call_tool("b__b_tool", {"x": 2})) == "b:2"
        assert [p.name for p in await client.list_prompts()] == ["a_prompt", "b__b_prompt", "b__c__c_prompt"]
        got = await client.get_prompt("b__c__c_prompt", {"topic": "x"})
        assert got.messages[0].content.text == "c on x"  # type: ignore[union-attr]
        # The first to list a URI keeps it; a later one is prefixed with its namespace. b lists c's
        # as c+data://same, which collides with nothing in a, so a lists it so too.
        uris = [r.uri for r in await client.list_resources()]
        assert uris == ["data://same", "b+data://same", "c+data://same"]
        for uri, owner in zip(uris, "abc", strict=True):
            contents = (await client.read_resource(uri)).contents
            assert [(item.uri, item.text) for item in contents] == [(uri, f"{owner}'s")]
        assert [t.uri_template for t in await client.list_resource_templates()] == ["files://{path}"]
        assert (await client.read_resource("files://x.txt")).contents[0].text == "file x.txt"
        completion = await client.complete({"type": "ref/prompt", "name": "b__c__c_prompt"}, "topic", "m")
        assert completion.values == ["maths", "music"]
        if version == "2024-11-05":  # no structured content, no completions capability yet
            assert (await client.call_tool("a_tool", {"x": 1})).structured_content is None
            assert "completions" not in (client.server_capabilities or {})
        else:
            assert "completions" in (client.server_capabilities or {})


@sync
async def test_a_mounted_resource_is_readable_both_ways() -> None:
    parent, child = Server("parent"), Server("child")

    @child.resource("data://only-child")
    def only() -> str:
        return "child's"

    parent.mount(child, namespace="kid")
    async with Client(parent) as client:
        assert [r.uri for r in await client.list_resources()] == ["data://only-child"]
        assert (await client.read_resource("data://only-child")).contents[0].text == "child's"
        prefixed = await client.read_resource("kid+data://only-child")
        assert [(c.uri, c.text) for c in prefixed.contents] == [("kid+data://only-child", "child's")]
        with pytest.raises(RPCError):
            await client.read_resource("other+data://only-child")


@sync
async def test_mount_without_namespace_keeps_names_and_refuses_clashes() -> None:
    parent, child, clash = Server("parent"), Server("child"), Server("clash")

    @parent.tool
    def own() -> str:
        return "own"

    @child.tool
    def theirs() -> str:
        return "theirs"

    @clash.tool(name="own")
    def other_own() -> str:
        return "other"

    parent.mount(child)
    with pytest.raises(ValueError, match="'own' is taken"):
        parent.mount(clash)
    async with Client(parent) as client:
        assert [t.name for t in await client.list_tools()] == ["own", "theirs"]
        assert text(await client.call_tool("theirs", {})) == "theirs"
        assert text(await client.call_tool("own", {})) == "own"


@pytest.mark.parametrize("namespace", ["", "a__b", "_a", "a_", "with space", "ünï", "a/b"])
def test_bad_namespaces_are_refused(namespace: str) -> None:
    parent, child = Server("parent"), Server("child")
    with pytest.raises(ValueError, match="invalid namespace"):
        parent.mount(child, namespace=namespace)
    assert not parent._mounts  # nothing half-mounted


def test_a_namespace_twice_and_mount_cycles_are_refused() -> None:
    a, b = Server("a"), Server("b")
    a.mount(b, namespace="b")
    with pytest.raises(ValueError, match="already mounted"):
        a.mount(Server("c"), namespace="b")
    with pytest.raises(ValueError, match="cannot mount itself"):
        b.mount(a, namespace="a")
    with pytest.raises(ValueError, match="cannot mount itself"):
        a.mount(a, namespace="self")


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_live_changes_of_a_child_reach_the_parent_in_process(version: str) -> None:
    parent, child = Server("parent"), Server("child")

    @child.tool
    def first() -> str:
        return "first"

    @child.resource("data://watched")
    def watched() -> str:
        return "w"

    @child.prompt
    def hello() -> str:
        return "hello"

    parent.mount(child, namespace="kid")
    async with Client(parent, protocol_version=version) as client:
        changes = await client.listen(tools=True, prompts=True, uris=["data://watched"])
        child.add_tool(lambda: "late", name="late")
        method, _ = await asyncio.wait_for(changes.__anext__(), 30)
        assert method == "notifications/tools/list_changed"
        assert [t.name for t in await client.list_tools()] == ["kid__first", "kid__late"]
        assert text(await client.call_tool("kid__late", {})) == "late"
        child.remove_tool("late")
        method, _ = await asyncio.wait_for(changes.__anext__(), 30)
        assert method == "notifications/tools/list_changed"
        assert [t.name for t in await client.list_tools()] == ["kid__first"]
        with pytest.raises(InvalidParams):
            await client.call_tool("kid__late", {})
        child.add_prompt(lambda: "p", name="fresh")
        method, _ = await asyncio.wait_for(changes.__anext__(), 30)
        assert method == "notifications/prompts/list_changed"
        assert [p.name for p in await client.list_prompts()] == ["kid__hello", "kid__fresh"]
        await child.resource_updated("data://watched")
        method, params = await asyncio.wait_for(changes.__anext__(), 30)
        assert (method, params["uri"]) == ("notifications/resources/updated", "data://watched")
        await changes.close()


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_lifespans_middleware_and_tasks_of_a_child_in_process(version: str) -> None:
    entered: list[str] = []

    def lifespan(value: str) -> Any:
        @asynccontextmanager
        async def run(server: Server) -> AsyncIterator[str]:
            entered.append(f"enter {value}")
            yield value
            entered.append(f"exit {value}")

        return run

    parent, child = Server("parent", lifespan=lifespan("P")), Server("child", lifespan=lifespan("C"))
    trail: list[str] = []

    @parent.middleware
    async def outer(call: Call, call_next: CallNext) -> Any:
        trail.append(f"parent>{call.method}")
        return await call_next(call)

    @child.middleware("tools/call")
    async def inner(call: Call, call_next: CallNext) -> Any:
        trail.append(f"child>{call.params['name']}")
        return await call_next(call)

    @parent.tool
    def parent_value(ctx: Context) -> str:
        return str(ctx.lifespan)

    @child.tool
    def child_value(ctx: Context) -> str:
        return str(ctx.lifespan)

    @child.tool(task_support="optional")
    async def slow(n: int) -> int:
        await asyncio.sleep(0.05)
        return n + 1

    parent.mount(child, namespace="kid")
    async with Client(parent, protocol_version=version) as client:
        assert sorted(entered) == ["enter C", "enter P"]
        trail.clear()
        assert text(await client.call_tool("kid__child_value", {})) == "C"
        assert trail == ["parent>tools/call", "child>child_value"]  # the child's runs inside
        assert text(await client.call_tool("parent_value", {})) == "P"
        if version == "2025-11-25":
            assert "tasks" in (client.server_capabilities or {})
            task = await client.start_task("kid__slow", {"n": 1})
            assert (await client.get_task(task["taskId"]))["taskId"] == task["taskId"]
            assert (await client.task_result(task["taskId"])).structured_content == {"result": 2}
            assert task["taskId"] in [t["taskId"] for t in await client.list_tasks()]
        else:
            assert (await client.call_tool("kid__slow", {"n": 1})).structured_content == {"result": 2}
    assert sorted(entered) == ["enter C", "enter P", "exit C", "exit P"]


async def _answer(params: dict[str, Any]) -> ElicitResult[Any]:
    return ElicitResult(action="accept", content={"name": "Ada"})


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_a_question_of_a_mounted_tool_is_answered_through_the_parent(version: str) -> None:
    parent, child = Server("parent"), Server("child")
    runs: list[int] = []

    @child.tool
    async def ask(ctx: Context) -> str:
        runs.append(1)
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"hello {answer.content['name'] if answer.content else '?'}"

    parent.mount(child, namespace="kid")
    async with Client(parent, protocol_version=version, elicitation=_answer) as client:
        assert text(await client.call_tool("kid__ask", {})) == "hello Ada"
    assert len(runs) == (2 if version == "2026-07-28" else 1)  # 2026-07-28: asked, then retried


# -- over the wire -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    yield from serve_http()


def _url(transport: str, request: pytest.FixtureRequest) -> str | None:
    return request.getfixturevalue("http_url") if transport == "http" else None


@pytest.mark.parametrize(("transport", "version"), WIRES)
@sync
async def test_mounted_over_the_wire(transport: str, version: str, request: pytest.FixtureRequest) -> None:
    async with connect(transport, _url(transport, request), version, elicitation=_answer) as client:
        names = [t.name for t in await client.list_tools()]
        assert {"kid__life", "kid__ask", "kid__slow", "triple", "wrapped_shout", "find"} <= set(names)
        assert not {"kid__shout", "search", "kid__deep__triple"} & set(names)  # listed transformed
        await client.call_tool("trail", {})
        assert text(await client.call_tool("kid__life", {})) == "kid-lifespan"
        assert text(await client.call_tool("parent_life_value", {})) == "parent-lifespan"
        assert (await client.call_tool("trail", {})).structured_content == {
            "result": ["parent:kid__life", "kid:life", "parent:parent_life_value", "parent:trail"]
        }
        assert text(await client.call_tool("kid__ask", {})) == "hello Ada"
        assert [p.name for p in await client.list_prompts()] == ["kid__greet"]
        got = await client.get_prompt("kid__greet", {"name": "Ada"})
        assert got.messages[0].content.text == "Hello Ada"  # type: ignore[union-attr]
        completion = await client.complete({"type": "ref/prompt", "name": "kid__greet"}, "name", "a")
        assert completion.values == ["ada", "alan"]
        uris = [r.uri for r in await client.list_resources()]
        assert uris == ["data://shared", "kid+data://shared", "data://kid-only"]
        assert (await client.read_resource("data://shared")).contents[0].text == "parent's"
        assert (await client.read_resource("kid+data://shared")).contents[0].text == "kid's"
        assert (await client.read_resource("data://kid-only")).contents[0].text == "only the kid's"
        assert [t.uri_template for t in await client.list_resource_templates()] == ["notes://{id}"]
        assert (await client.read_resource("notes://7")).contents[0].text == "note 7"
        if version == "2025-11-25":
            task = await client.start_task("kid__slow", {"n": 4})
            assert (await client.get_task(task["taskId"]))["taskId"] == task["taskId"]
            assert (await client.task_result(task["taskId"])).structured_content == {"result": 5}


@pytest.mark.parametrize(("transport", "version"), WIRES)
@sync
async def test_live_changes_over_the_wire(
    transport: str, version: str, request: pytest.FixtureRequest
) -> None:
    name = f"late_{uuid.uuid4().hex[:8]}"
    async with connect(transport, _url(transport, request), version) as client:
        await client.list_resources()  # the parent learns which URIs collide
        changes = await client.listen(tools=True, uris=["data://kid-only", "kid+data://shared"])
        await client.call_tool("add_kid_tool", {"name": name})
        await _next_change(changes, "notifications/tools/list_changed")
        assert f"kid__{name}" in [t.name for t in await client.list_tools()]
        assert text(await client.call_tool(f"kid__{name}", {})) == name
        await client.call_tool("remove_kid_tool", {"name": name})
        await _next_change(changes, "notifications/tools/list_changed")
        assert f"kid__{name}" not in [t.name for t in await client.list_tools()]
        await client.call_tool("touch_kid_resource", {"uri": "data://kid-only"})
        _, params = await _next_change(changes, "notifications/resources/updated")
        assert params["uri"] == "data://kid-only"
        await client.call_tool("touch_kid_resource", {"uri": "data://shared"})  # the kid's, listed prefixed
        _, params = await _next_change(changes, "notifications/resources/updated")
        assert params["uri"] == "kid+data://shared"
        await changes.close()


async def _next_change(changes: Any, method: str) -> tuple[str, dict[str, Any]]:
    """The next notification *method* (others, such as a list change of another kind, skipped)."""
    while True:
        found, params = await asyncio.wait_for(changes.__anext__(), 60)
        if found == method:
            return found, params


@sync
async def test_2024_11_05_over_stdio() -> None:
    async with Client(
        stdio_command(), protocol_version="2024-11-05", timeout=120, probe_timeout=60
    ) as client:
        assert "completions" not in (client.server_capabilities or {})
        assert text(await client.call_tool("triple", {})) == "21"
        assert [p.name for p in await client.list_prompts()] == ["kid__greet"]
        listed = {t.name: t for t in await client.list_tools()}
        assert listed["wrapped_shout"].title is None  # titles came in 2025-06-18


# -- a proxy mounted --------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ERAS)
@sync
async def test_a_proxy_of_a_stdio_server_mounted_in_process(version: str) -> None:
    weather = proxy([sys.executable, "-m", "mcpkit", "run", "examples/weather.py"], timeout=120)
    parent = Server("parent")
    parent.mount(weather, namespace="weather")
    async with Client(parent, protocol_version=version) as client:
        names = [t.name for t in await client.list_tools()]
        assert {"weather__get_weather", "weather__get_weather_data"} <= set(names)
        assert "Lima" in text(await client.call_tool("weather__get_weather", {"location": "Lima"}))


@pytest.fixture(scope="module")
def http_weather_url() -> Iterator[str]:
    yield from serve_http("--weather")


@pytest.mark.parametrize(("transport", "version"), WIRES)
@sync
async def test_a_mounted_proxy_over_the_wire(
    transport: str, version: str, request: pytest.FixtureRequest
) -> None:
    target: Any = (
        request.getfixturevalue("http_weather_url") if transport == "http" else stdio_command("--weather")
    )
    async with Client(target, protocol_version=version, timeout=120, probe_timeout=60) as client:
        listed = {t.name: t for t in await client.list_tools()}
        assert "weather__get_weather" not in listed  # transformed: listed as weather_in
        assert list(listed["weather_in"].input_schema["properties"]) == ["city"]
        assert "Lima" in text(await client.call_tool("weather_in", {"city": "Lima"}))
        data = await client.call_tool("weather__get_weather_data", {"location": "Oslo", "unit": "celsius"})
        assert data.structured_content is not None and data.structured_content["location"] == "Oslo"
