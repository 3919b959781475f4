"""``from_fastapi(app)``: a real FastAPI app's operations as tools, called in process over ASGI.

The server is exercised in process (``Client(server)``) and served over real HTTP in both eras; the
FastAPI app itself is never on a socket: its requests go through ``httpx.ASGITransport``.
"""

from __future__ import annotations

import asyncio

import pytest

from mcpkit import Client
from mcpkit.compose.openapi import RouteMap, from_fastapi

from ._openapi_util import ERAS, run, served_over_http, structured, text

pytest.importorskip("fastapi")

from ._fastapi_app import make_app  # only once fastapi is known to be there

pytestmark = pytest.mark.e2e


def test_tools_from_a_fastapi_app_in_process() -> None:
    server = from_fastapi(make_app(), headers={"X-Api-Key": "k"})
    assert server.info.name == "Inventory" and server.info.version == "3.2.1"
    tools = {t.name: t for t in server.tools}
    assert list(tools) == ["get_item", "add_item", "list_items", "headers"]
    # The pydantic model's schema is a $ref into components: resolved and flattened.
    add = tools["add_item"].input_schema
    assert set(add["properties"]) == {"x-batch", "name", "price", "tags"}
    assert set(add["required"]) == {"name", "price"}

    async def main() -> None:
        async with Client(server) as client:
            got = await client.call_tool("get_item", {"item_id": 1, "currency": "USD"})
            assert got.structured_content == {
                "id": 1, "currency": "USD", "name": "hammer", "price": 9.5, "tags": ["tools"],
            }  # fmt: skip
            added = await client.call_tool("add_item", {"name": "saw", "price": 12, "x-batch": "b7"})
            assert structured(added)["batch"] == "b7" and structured(added)["id"] == 2
            names = await client.call_tool("list_items")
            assert names.structured_content == {"result": ["hammer", "saw"]}
            missing = await client.call_tool("get_item", {"item_id": 9})
            assert missing.is_error
            assert text(missing) == 'GET /items/{item_id} answered HTTP 404 Not Found: {"detail":"no item 9"}'
            invalid = await client.call_tool("get_item", {"item_id": "nine"})
            assert invalid.is_error and "answered HTTP 422" in text(invalid)
            seen = structured(await client.call_tool("headers"))
            assert seen["x-api-key"] == "k" and seen["host"] == "fastapi"

    run(main())


def test_the_apps_lifespan_runs_inside_the_servers() -> None:
    events: list[str] = []
    server = from_fastapi(make_app(events))

    async def main() -> None:
        async with Client(server) as client:
            assert events == ["startup"]
            assert (await client.call_tool("list_items")).structured_content == {"result": ["hammer"]}
        assert events == ["startup", "shutdown"]

    run(main())


@pytest.mark.parametrize("version", ERAS)
def test_a_fastapi_server_over_http(version: str) -> None:
    maps = [RouteMap(methods={"GET"}, pattern=r"\{", kind="template")]
    server = from_fastapi(make_app(), route_maps=maps, name="inventory")

    async def main() -> None:
        async with (
            served_over_http(server.http_app()) as url,
            Client(url, protocol_version=version, headers={"Authorization": "Bearer mcp"}) as client,
        ):
            (template,) = await client.list_resource_templates()
            assert template.uri_template == "openapi://inventory/items/{item_id}{?currency}"
            read = await client.read_resource("openapi://inventory/items/1?currency=NOK")
            assert '"currency":"NOK"' in text(read)
            seen = structured(await client.call_tool("headers"))
            assert "authorization" not in seen

    run(main())


def test_concurrent_calls_all_answer() -> None:
    server = from_fastapi(make_app())

    async def main() -> None:
        async with Client(server) as client:
            results = await asyncio.gather(*(client.call_tool("get_item", {"item_id": 1}) for _ in range(20)))
            assert all(structured(r)["name"] == "hammer" for r in results)

    run(main())
