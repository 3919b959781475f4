"""MCP Apps on the server (``io.modelcontextprotocol/ui``, SEP-1865): the API, and the wire shapes
the ext-apps spec (2026-01-26) gives for tools, UI resources and capabilities.

In memory here, over one client per era; real stdio and HTTP, and the official SDK client as the
peer, in ``tests/e2e/test_apps_e2e.py``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from mcpkit import APP_MIME_TYPE, UI_EXTENSION, Client, Context, LowLevelServer, Server, supports_ui
from mcpkit.server.apps import tool_ui_meta
from mcpkit.transports.memory import memory_pair

_tasks: set[asyncio.Future[None]] = set()

ERAS = ["2025-06-18", "2025-11-25", "2026-07-28"]
PAGE = "<!DOCTYPE html><html><body><p>view</p></body></html>"


async def connect(server: LowLevelServer, **kwargs: Any) -> Client:
    ours, theirs = memory_pair()
    _tasks.add(asyncio.ensure_future(server.serve(theirs)))
    client = Client(ours, **kwargs)
    await client.connect()
    return client


def make_server(tmp_path: Path | None = None) -> Server:
    server = Server("apps")

    @server.tool(ui="ui://demo/view.html")
    def show(n: int, ctx: Context) -> str:
        """Show a number."""
        return f"number {n}" + (" (in the view)" if ctx.supports_ui else "")

    @server.tool(ui="ui://demo/view.html", visibility=["app"])
    def bump(n: int) -> int:
        return n + 1

    @server.tool
    def plain() -> str:
        return "plain"

    server.ui_resource(
        "ui://demo/view.html",
        PAGE,
        title="Demo view",
        csp={"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://cdn.example.com"]},
        permissions=["clipboardWrite"],
        domain="demo.example.com",
        prefers_border=False,
    )
    return server


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


RESOURCE_UI = {
    "csp": {"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://cdn.example.com"]},
    "permissions": {"clipboardWrite": {}},
    "domain": "demo.example.com",
    "prefersBorder": False,
}


@pytest.mark.parametrize("version", ERAS)
def test_listing_and_resource_shapes(version: str) -> None:
    async def main() -> None:
        client = await connect(make_server(), protocol_version=version, ui=True)
        try:
            # The server declares the extension in both eras.
            assert client.server_capabilities["extensions"][UI_EXTENSION] == {}
            tools = {t["name"]: t for t in (await client.request("tools/list", {}))["tools"]}
            assert tools["show"]["_meta"] == {
                "ui": {"resourceUri": "ui://demo/view.html"},
                "ui/resourceUri": "ui://demo/view.html",  # the deprecated flat key, for older hosts
            }
            assert tools["bump"]["_meta"]["ui"] == {
                "resourceUri": "ui://demo/view.html",
                "visibility": ["app"],
            }
            assert "_meta" not in tools["plain"]
            (listed,) = (await client.request("resources/list", {}))["resources"]
            expected = {"uri": "ui://demo/view.html", "name": "view.html", "mimeType": APP_MIME_TYPE}
            expected["_meta"] = {"ui": RESOURCE_UI}
            if version >= "2025-06-18":
                expected["title"] = "Demo view"
            assert listed == expected
            read = await client.request("resources/read", {"uri": "ui://demo/view.html"})
            assert read["contents"] == [
                {
                    "uri": "ui://demo/view.html",
                    "mimeType": APP_MIME_TYPE,
                    "text": PAGE,
                    "_meta": {"ui": RESOURCE_UI},
                }
            ]
        finally:
            await client.aclose()

    run(main())


@pytest.mark.parametrize("version", ERAS)
def test_clients_without_the_extension(version: str) -> None:
    async def main() -> None:
        client = await connect(make_server(), protocol_version=version)
        try:
            # Declared all the same: the server's side of the negotiation does not depend on the client's.
            assert UI_EXTENSION in client.server_capabilities["extensions"]
            # The app-only tool is not offered to a client that has no views to call it from...
            assert [t.name for t in await client.list_tools()] == ["show", "plain"]
            # ...the UI tool answers in words...
            result = await client.call_tool("show", {"n": 3})
            assert result.is_error is False and result.content[0].text == "number 3"  # type: ignore[union-attr]
            # ...and the app-only one is still callable by name.
            assert (await client.call_tool("bump", {"n": 3})).content[0].text == "4"  # type: ignore[union-attr]
        finally:
            await client.aclose()

    run(main())


@pytest.mark.parametrize("version", ERAS)
def test_a_handler_knows_the_client_shows_views(version: str) -> None:
    async def main() -> None:
        client = await connect(make_server(), protocol_version=version, ui=True)
        try:
            assert client.capabilities["extensions"][UI_EXTENSION] == {"mimeTypes": [APP_MIME_TYPE]}
            assert [t.name for t in await client.list_tools()] == ["show", "bump", "plain"]
            text = (await client.call_tool("show", {"n": 1})).content[0].text  # type: ignore[union-attr]
            assert text == "number 1 (in the view)"
        finally:
            await client.aclose()

    run(main())


def test_extensions_argument_and_an_extension_without_html() -> None:
    async def main() -> None:
        # Declaring the extension without text/html;profile=mcp-app is not declaring views.
        client = await connect(make_server(), extensions={UI_EXTENSION: {"mimeTypes": ["text/x-other"]}})
        try:
            assert [t.name for t in await client.list_tools()] == ["show", "plain"]
        finally:
            await client.aclose()
        client = await connect(make_server(), extensions={UI_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}})
        try:
            assert len(await client.list_tools()) == 3
        finally:
            await client.aclose()

    run(main())


def test_a_server_without_apps_declares_nothing() -> None:
    async def main() -> None:
        server = Server("plain")
        server.add_tool(lambda: "x", name="x")
        client = await connect(server, ui=True)
        try:
            assert UI_EXTENSION not in client.server_capabilities.get("extensions", {})
        finally:
            await client.aclose()

    run(main())


def test_pages_from_a_function_or_a_file(tmp_path: Path) -> None:
    page = tmp_path / "view.html"
    page.write_text(PAGE, encoding="utf-8")
    server = Server("pages")
    server.ui_resource("ui://pages/file.html", page)

    @server.ui_resource("ui://pages/made.html", name="made")
    async def made(ctx: Context) -> str:
        return f"<!DOCTYPE html><p>{ctx.supports_ui}</p>"

    async def main() -> None:
        client = await connect(server, ui=True)
        try:
            assert (await client.read_resource("ui://pages/file.html")).contents[0].text == PAGE
            page.write_text("<!DOCTYPE html><p>edited</p>", encoding="utf-8")  # read on each request
            assert "edited" in str((await client.read_resource("ui://pages/file.html")).contents[0].text)
            made_page = (await client.read_resource("ui://pages/made.html")).contents[0]
            assert made_page.text == "<!DOCTYPE html><p>True</p>" and made_page.mime_type == APP_MIME_TYPE
            assert made_page.meta is None  # no _meta.ui asked for
        finally:
            await client.aclose()

    run(main())


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.ui_resource("https://example.com/x.html", PAGE), "starts with ui://"),
        (lambda s: s.ui_resource("ui://x/y.html", PAGE, csp={"scriptDomains": []}), "csp takes the keys"),
        (lambda s: s.ui_resource("ui://x/y.html", PAGE, permissions=["usb"]), "permissions are among"),
        (lambda s: s.ui_resource("ui://x/y.html", PAGE, border=True), "unknown ui_resource option"),
        (lambda s: s.ui_resource("ui://x/y.html", "view.html"), "pass a pathlib.Path"),
        (lambda s: s.add_tool(lambda: 1, name="t", ui="view.html"), "starts with ui://"),
        (lambda s: s.add_tool(lambda: 1, name="t", visibility=[]), "visibility must list"),
        (lambda s: s.add_tool(lambda: 1, name="t", visibility=["user"]), "visibility must list"),
    ],
)
def test_mistakes_are_refused_at_registration(call: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call(Server("bad"))


def test_tool_meta_keeps_what_the_user_gave() -> None:
    meta = tool_ui_meta({"com.example/x": 1, "ui": {"extra": True}}, "ui://a/b", None)
    assert meta == {
        "com.example/x": 1,
        "ui": {"extra": True, "resourceUri": "ui://a/b"},
        "ui/resourceUri": "ui://a/b",
    }
    assert tool_ui_meta(None, None, None) is None


def test_supports_ui() -> None:
    assert supports_ui({"extensions": {UI_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}})
    assert not supports_ui({"extensions": {UI_EXTENSION: {}}})  # mimeTypes is required
    assert not supports_ui({"extensions": []})
    assert not supports_ui({})


def test_handshake_initialize_carries_extensions_but_not_the_tasks_extension() -> None:
    seen: list[dict[str, Any]] = []

    async def main() -> None:
        server = make_server()
        original = server.capabilities

        def spy(scope: Any) -> dict[str, Any]:
            seen.append(scope.client_capabilities)
            return original(scope)

        server.capabilities = spy  # type: ignore[method-assign]
        for kwargs in ({"ui": True}, {}):
            client = await connect(server, protocol_version="2025-11-25", **kwargs)
            await client.aclose()

    run(main())
    with_ui, without = seen[0], seen[-1]
    assert with_ui["extensions"] == {UI_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}
    assert "extensions" not in without  # a plain client's handshake is as before


def test_a_tool_naming_a_view_nobody_serves_is_warned_about_once(caplog: pytest.LogCaptureFixture) -> None:
    server = Server("forgetful")
    server.add_tool(lambda: "x", name="shown", ui="ui://forgetful/missing.html")
    server.ui_resource("ui://forgetful/other.html", PAGE)

    async def main() -> None:
        for _ in range(2):
            client = await connect(server, ui=True)
            await client.aclose()

    with caplog.at_level("WARNING", logger="mcpkit.server"):
        run(main())
    warnings = [r.getMessage() for r in caplog.records if "no resource serves" in r.getMessage()]
    assert warnings == ["tool 'shown' names the view ui://forgetful/missing.html, which no resource serves"]
