"""Servers built from OpenAPI documents, served over real stdio and real HTTP, in both eras.

The API is a real HTTP server on 127.0.0.1 (``openapi_api.py``, a subprocess). Over stdio the MCP
server is a subprocess too (``openapi_stdio.py``); over HTTP it is ``server.http_app()`` under
uvicorn on 127.0.0.1.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from mcpkit import Client, InvalidParams, ResourceNotFound
from mcpkit.compose.openapi import from_openapi

from ._openapi_util import ERAS, SPEC30, SPEC31, STDIO_SCRIPT, api, run, served_over_http, structured, text

pytestmark = pytest.mark.e2e
__all__ = ["api"]  # the fixture, imported for the tests of this module


async def exercise_tools(client: Client) -> None:
    """What every transport and era must do alike: arguments of each place, JSON, text, errors."""
    names = [t.name for t in await client.list_tools()]
    assert names[:3] == ["listPets", "createPet", "getPet"]
    pet = await client.call_tool("getPet", {"petId": 1})
    assert pet.structured_content == {"id": 1, "name": "Rex", "tag": "dog"}
    arguments = {"id": "p q", "id_query": 3, "X-Trace": "t", "note": "n"}
    seen = structured(await client.call_tool("post_echo_id", arguments))
    assert seen["path"] == "/echo/p q" and seen["query"] == [["id", "3"]]
    assert seen["headers"]["x-trace"] == "t" and json.loads(seen["body"]) == {"note": "n"}
    greeting = await client.call_tool("hello", {"who": "stdio"})
    assert text(greeting) == "hello stdio" and greeting.structured_content is None
    missing = await client.call_tool("getPet", {"petId": 77})
    assert missing.is_error and "answered HTTP 404 Not Found" in text(missing)
    failed = await client.call_tool("fail")
    assert failed.is_error and "answered HTTP 500" in text(failed)


@pytest.mark.parametrize("version", ERAS)
def test_tools_over_stdio(api: str, version: str) -> None:
    async def main() -> None:
        command = [sys.executable, str(STDIO_SCRIPT), str(SPEC31), api]
        async with Client(command, protocol_version=version) as client:
            assert client.protocol_version == version
            await exercise_tools(client)
            seen = structured(await client.call_tool("echo_headers"))
            assert seen["headers"]["x-api-key"] == "configured"

    run(main())


@pytest.mark.parametrize("version", ERAS)
def test_route_maps_over_stdio(api: str, version: str) -> None:
    async def main() -> None:
        command = [sys.executable, str(STDIO_SCRIPT), str(SPEC31), api, "maps"]
        async with Client(command, protocol_version=version) as client:
            names = [t.name for t in await client.list_tools()]
            assert "fail" not in names and "huge" not in names and "getPet" not in names
            assert [r.uri for r in await client.list_resources()] == ["openapi://pet-store/pets"]
            (template,) = await client.list_resource_templates()
            assert template.uri_template == "openapi://pet-store/pets/{petId}"
            assert json.loads(text(await client.read_resource("openapi://pet-store/pets/1"))) == {
                "id": 1,
                "name": "Rex",
                "tag": "dog",
            }
            expected = InvalidParams if version >= "2026-07-28" else ResourceNotFound
            with pytest.raises(expected, match="answered HTTP 404"):
                await client.read_resource("openapi://pet-store/pets/55")

    run(main())


@pytest.mark.parametrize("version", ERAS)
def test_openapi_30_over_stdio(api: str, version: str) -> None:
    async def main() -> None:
        command = [sys.executable, str(STDIO_SCRIPT), str(SPEC30), api]
        async with Client(command, protocol_version=version) as client:
            result = await client.call_tool("listPets", {"limit": 1})
            assert result.structured_content == {"result": [{"id": 1, "name": "Rex", "tag": "dog"}]}

    run(main())


@pytest.mark.parametrize("version", ERAS)
def test_tools_over_http(api: str, version: str) -> None:
    server = from_openapi(SPEC31, base_url=api)

    async def main() -> None:
        async with (
            served_over_http(server.http_app()) as url,
            Client(url, protocol_version=version) as client,
        ):
            assert client.protocol_version == version
            await exercise_tools(client)
            big = await client.call_tool("huge")
            assert big.is_error and "larger than the limit of 4194304 bytes" in text(big)

    run(main())


@pytest.mark.parametrize("version", ERAS)
def test_the_callers_credentials_never_reach_the_api(api: str, version: str) -> None:
    """The MCP client's Authorization (and any other header it sends) stays with the MCP server: the
    API, which echoes what it got, sees only the configured static header."""
    server = from_openapi(SPEC31, base_url=api, headers={"X-Api-Key": "configured"})
    secret = "Bearer mcp-caller-secret"

    async def main() -> dict[str, Any]:
        async with (
            served_over_http(server.http_app()) as url,
            Client(
                url, protocol_version=version, headers={"Authorization": secret, "X-Tenant": "t1"}
            ) as client,
        ):
            result = await client.call_tool("echo_headers", {"X-Api-Key": "from the model"})
            assert not result.is_error
            return structured(result)

    seen = run(main())
    assert "authorization" not in seen["headers"] and "x-tenant" not in seen["headers"]
    assert secret not in json.dumps(seen)
    assert seen["headers"]["x-api-key"] == "configured"
    assert not any(name.startswith("mcp-") for name in seen["headers"])


@pytest.mark.parametrize("version", ERAS)
def test_named_headers_are_forwarded_and_only_those(api: str, version: str) -> None:
    """forward_headers=["X-Tenant", "Authorization"]: the API gets those two of the MCP request's
    headers (the configured static one still wins), and nothing else of the caller's."""
    server = from_openapi(
        SPEC31,
        base_url=api,
        headers={"X-Api-Key": "configured"},
        forward_headers=["X-Tenant", "Authorization"],
    )
    secret = "Bearer passed-on-on-purpose"

    async def main() -> dict[str, Any]:
        async with (
            served_over_http(server.http_app()) as url,
            Client(
                url,
                protocol_version=version,
                headers={
                    "Authorization": secret,
                    "X-Tenant": "t1",
                    "X-Other": "kept",
                    "X-Api-Key": "caller's",
                },
            ) as client,
        ):
            result = await client.call_tool("echo_headers", {})
            assert not result.is_error
            return structured(result)

    seen = run(main())["headers"]
    assert seen["x-tenant"] == "t1" and seen["authorization"] == secret
    assert seen["x-api-key"] == "configured" and "x-other" not in seen


def test_forwarding_over_stdio_forwards_nothing(api: str) -> None:
    """A request that came over stdio has no headers: nothing is forwarded, nothing fails."""
    server = from_openapi(SPEC31, base_url=api, forward_headers=["X-Tenant"])

    async def main() -> dict[str, Any]:
        async with Client(server) as client:
            result = await client.call_tool("echo_headers", {})
            assert not result.is_error
            return structured(result)

    assert "x-tenant" not in run(main())["headers"]


@pytest.mark.parametrize("version", ERAS)
def test_the_example_serves_its_pet_store_over_stdio(version: str) -> None:
    """``python examples/openapi_server.py``: the document beside it, the API it starts itself."""
    from ..conftest import EXAMPLES

    async def main() -> None:
        command = [sys.executable, str(EXAMPLES / "openapi_server.py")]
        async with Client(command, protocol_version=version) as client:
            assert [t.name for t in await client.list_tools()] == ["listPets", "addPet", "adoptPet"]
            cats = structured(await client.call_tool("listPets", {"species": "cat"}))
            assert cats == {"result": [{"id": 1, "name": "Whiskers", "species": "cat", "age": 3}]}
            added = structured(await client.call_tool("addPet", {"name": "Nibbles", "species": "rabbit"}))
            read = await client.read_resource(f"openapi://pet-store/pets/{added['id']}")
            assert json.loads(text(read))["name"] == "Nibbles"
            refused = await client.call_tool("addPet", {"name": "Nemo", "species": "fish"})
            assert refused.is_error and "answered HTTP 422" in text(refused)

    run(main())
