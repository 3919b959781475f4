"""MCP Apps end to end: ``examples/apps.py`` over real stdio, Streamable HTTP and HTTP+SSE, in both
eras, for clients with and without the ``io.modelcontextprotocol/ui`` extension, and with the
official ``mcp`` SDK client as the peer (declaring the extension with its ``advertise``, and not).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from mcpkit import APP_MIME_TYPE, UI_EXTENSION, Client

from ..conftest import free_port, http_server, mcpkit_run

pytestmark = pytest.mark.e2e

VIEW = "ui://forecast/view.html"
CELLS = [
    ("stdio", "2024-11-05"),
    ("stdio", "2025-11-25"),
    ("stdio", "2026-07-28"),
    ("http", "2025-11-25"),
    ("http", "2026-07-28"),
    ("sse", "2024-11-05"),  # the 2024-11-05 HTTP+SSE transport of the same server
]


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = free_port()
    yield from http_server(mcpkit_run("apps.py", "--transport", "http", "--port", str(port)), port, 15)


def target(transport: str, request: pytest.FixtureRequest) -> Any:
    if transport == "stdio":
        return mcpkit_run("apps.py")
    url: str = request.getfixturevalue("http_url")
    return url if transport == "http" else url.removesuffix("/mcp") + "/sse"


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


@pytest.mark.parametrize(("transport", "version"), CELLS)
def test_a_host_of_apps_sees_the_view_and_the_app_tools(
    transport: str, version: str, request: pytest.FixtureRequest
) -> None:
    async def main() -> None:
        async with Client(target(transport, request), protocol_version=version, ui=True) as client:
            assert client.protocol_version == version
            assert client.server_capabilities["extensions"][UI_EXTENSION] == {}
            tools = {tool.name: tool for tool in await client.list_tools()}
            assert set(tools) == {"forecast", "forecast_day"}
            assert tools["forecast"].meta == {"ui": {"resourceUri": VIEW}, "ui/resourceUri": VIEW}
            assert tools["forecast_day"].meta is not None
            assert tools["forecast_day"].meta["ui"] == {"resourceUri": VIEW, "visibility": ["app"]}
            # What the host does: read the view the tool names, then call the tool.
            (page,) = (await client.read_resource(VIEW)).contents
            assert page.mime_type == APP_MIME_TYPE and page.meta == {"ui": {"prefersBorder": True}}
            assert page.text is not None and page.text.startswith("<!DOCTYPE html>")
            assert "ui/initialize" in page.text and "<script src" not in page.text  # self-contained
            result = await client.call_tool("forecast", {"city": "Paris"})
            assert result.content[0].text.endswith("(Shown in the forecast view.)")  # type: ignore[union-attr]
            if version >= "2025-06-18":
                assert result.structured_content is not None
                assert result.structured_content["city"] == "Paris"
            # The view's button: the app-only tool, called back through the host.
            later = await client.call_tool("forecast_day", {"city": "Paris", "day": 2})
            assert later.is_error is False and "in 2 days" in later.content[0].text  # type: ignore[union-attr]

    run(main())


@pytest.mark.parametrize(("transport", "version"), CELLS)
def test_a_client_without_apps_gets_text_and_no_app_tools(
    transport: str, version: str, request: pytest.FixtureRequest
) -> None:
    async def main() -> None:
        async with Client(target(transport, request), protocol_version=version) as client:
            assert [tool.name for tool in await client.list_tools()] == ["forecast"]
            result = await client.call_tool("forecast", {"city": "Oslo"})
            text = result.content[0].text  # type: ignore[union-attr]
            assert text.startswith("Oslo today: ") and "°C" in text and "view" not in text

    run(main())


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("declares", [True, False])
def test_the_official_sdk_client_as_the_host(mode: str, declares: bool) -> None:
    """The official ``mcp`` client: 2026-07-28 (``auto``) and the handshake (``legacy``)."""
    from mcp import Client as OfficialClient
    from mcp import StdioServerParameters
    from mcp.client.extension import advertise

    extensions = [advertise(UI_EXTENSION, {"mimeTypes": [APP_MIME_TYPE]})] if declares else None

    async def main() -> dict[str, Any]:
        command = mcpkit_run("apps.py")
        server = StdioServerParameters(command=command[0], args=command[1:])
        async with OfficialClient(server, mode=mode, extensions=extensions) as client:
            tools = await client.list_tools()
            result = await client.call_tool("forecast", {"city": "Lima"})
            read = await client.read_resource(VIEW)
            return {
                "tools": {t.name: t.meta for t in tools.tools},
                "text": result.content[0].text,  # type: ignore[union-attr]
                "read": [c.model_dump(by_alias=True, exclude_none=True) for c in read.contents],
            }

    seen = run(main())
    expected_tools = {"forecast", "forecast_day"} if declares else {"forecast"}
    assert set(seen["tools"]) == expected_tools
    assert seen["tools"]["forecast"]["ui"] == {"resourceUri": VIEW}
    assert seen["text"].startswith("Lima today: ")
    assert seen["text"].endswith("(Shown in the forecast view.)") is declares
    (content,) = seen["read"]
    assert content["mimeType"] == APP_MIME_TYPE and content["_meta"] == {"ui": {"prefersBorder": True}}
