"""Servers built from OpenAPI documents, called in process (``Client(server)``) against a real API.

The API is a real HTTP server on 127.0.0.1 (``openapi_api.py``, in a subprocess) that echoes what it
was sent, so each test sees the request a tool call made. Over real stdio and HTTP in both eras:
``test_openapi_wire.py``.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit import Client, InvalidParams, ResourceNotFound
from mcpkit.compose.openapi import RouteMap, fallback_name, from_openapi

from ._openapi_util import SPEC30, SPEC31, api, run

pytestmark = pytest.mark.e2e
__all__ = ["api"]  # the fixture, imported for the tests of this module

TOOL_NAME_CHARS = set(string.ascii_letters + string.digits + "_-.")


def spec31() -> dict[str, Any]:
    return json.loads(SPEC31.read_text())  # type: ignore[no-any-return]


async def call(server: Any, tool: str, arguments: dict[str, Any] | None = None) -> Any:
    async with Client(server) as client:
        return await client.call_tool(tool, arguments or {})


# -- the tools and their schemas ---------------------------------------------------------------------


def test_one_tool_per_operation_named_by_operation_id_or_a_fallback(api: str) -> None:
    server = from_openapi(SPEC31, base_url=api)
    names = [t.name for t in server.tools]
    assert names == [
        "listPets", "createPet", "getPet", "echo_headers", "post_echo_id", "putList", "deleteEcho",
        "fail", "huge", "hello",
    ]  # fmt: skip
    assert server.info.name == "Pet Store" and server.info.version == "2.1.0"
    assert server.instructions == "Pets, and an echo of what the API was sent."
    tools = {t.name: t for t in server.tools}
    assert tools["listPets"].title == "List pets"
    assert tools["listPets"].description == "List pets\n\nEvery pet, optionally of one tag."
    assert tools["listPets"].annotations is not None and tools["listPets"].annotations.read_only_hint
    assert tools["createPet"].annotations is None


def test_refs_are_resolved_into_the_input_schema(api: str) -> None:
    tools = {t.name: t for t in from_openapi(SPEC31, base_url=api).tools}
    # A parameter $ref whose schema is a $ref; the parameter's description joins it.
    assert tools["listPets"].input_schema["properties"]["limit"] == {
        "type": "integer", "minimum": 1, "description": "At most this many",
    }  # fmt: skip
    # The body (a $ref) is flattened; readOnly id is the API's to set, so it is not an argument.
    create = tools["createPet"].input_schema
    assert list(create["properties"]) == ["X-Request-Id", "name", "tag"]
    assert create["required"] == ["name"] and create["additionalProperties"] is False
    # A path item's parameters reach its operations.
    assert tools["getPet"].input_schema["required"] == ["petId"]


def test_name_clashes_between_places_get_suffixes(api: str) -> None:
    tools = {t.name: t for t in from_openapi(SPEC31, base_url=api).tools}
    schema = tools["post_echo_id"].input_schema
    assert list(schema["properties"]) == ["id", "id_query", "X-Trace", "session", "id_body", "note"]
    assert schema["required"] == ["id"]
    # Authorization (and Accept, Content-Type) header parameters are ignored, as OpenAPI says.
    assert list(tools["echo_headers"].input_schema["properties"]) == ["flags", "X-Api-Key"]
    # A body that is not an object is one argument.
    assert tools["putList"].input_schema["properties"]["body"] == {
        "type": "array",
        "items": {"type": "integer"},
    }


def test_path_query_header_cookie_and_body_arguments_reach_the_api(api: str) -> None:
    server = from_openapi(SPEC31, base_url=api)
    arguments = {
        "id": "a b/c",
        "id_query": 7,
        "X-Trace": "t-1",
        "session": "s1",
        "id_body": "B",
        "note": "hi",
    }
    result = run(call(server, "post_echo_id", arguments))
    assert not result.is_error
    seen = result.structured_content
    assert seen["method"] == "POST" and seen["path"] == "/echo/a b/c"  # sent as /echo/a%20b%2Fc
    assert seen["query"] == [["id", "7"]]
    assert seen["headers"]["x-trace"] == "t-1" and seen["headers"]["cookie"] == "session=s1"
    assert seen["headers"]["content-type"] == "application/json"
    assert json.loads(seen["body"]) == {"id": "B", "note": "hi"}
    assert json.loads(result.content[0].text) == seen  # the same JSON as text


def test_arrays_and_booleans_in_the_query_and_a_whole_body(api: str) -> None:
    server = from_openapi(SPEC31, base_url=api)
    seen = run(call(server, "echo_headers", {"flags": [True, False]})).structured_content
    assert seen["query"] == [["flags", "true"], ["flags", "false"]]
    seen = run(call(server, "putList", {"id": "x", "body": [1, 2, 3]})).structured_content
    assert seen["method"] == "PUT" and json.loads(seen["body"]) == [1, 2, 3]


def test_a_json_array_is_structured_content_under_result(api: str) -> None:
    result = run(call(from_openapi(SPEC31, base_url=api), "listPets", {"tag": "cat"}))
    assert result.structured_content == {"result": [{"id": 2, "name": "Tom", "tag": "cat"}]}
    assert json.loads(result.content[0].text) == [{"id": 2, "name": "Tom", "tag": "cat"}]


def test_a_text_response_is_text(api: str) -> None:
    result = run(call(from_openapi(SPEC31, base_url=api), "hello", {"who": "Ada"}))
    assert result.structured_content is None and result.content[0].text == "hello Ada"


def test_a_created_pet_comes_back(api: str) -> None:
    server = from_openapi(SPEC31, base_url=api)
    result = run(call(server, "createPet", {"name": "Nemo", "tag": None, "X-Request-Id": "r-9"}))
    assert not result.is_error
    assert result.structured_content["name"] == "Nemo" and isinstance(result.structured_content["id"], int)


def test_bad_arguments_are_tool_errors_and_nothing_is_sent(api: str) -> None:
    server = from_openapi(SPEC31, base_url=api)
    result = run(call(server, "getPet", {}))
    assert result.is_error and "missing required argument(s): 'petId'" in result.content[0].text
    result = run(call(server, "getPet", {"petId": 1, "color": "red"}))
    assert result.is_error and "unknown argument(s) 'color'; accepted: petId" in result.content[0].text


# -- errors from the API -----------------------------------------------------------------------------


def test_a_404_is_a_tool_error_naming_the_status_and_the_body(api: str) -> None:
    result = run(call(from_openapi(SPEC31, base_url=api), "getPet", {"petId": 404}))
    assert result.is_error
    assert result.content[0].text == 'GET /pets/{petId} answered HTTP 404 Not Found: {"error":"no pet 404"}'


def test_a_500_is_a_tool_error_with_a_bounded_excerpt(api: str) -> None:
    result = run(call(from_openapi(SPEC31, base_url=api), "fail"))
    text = result.content[0].text
    assert result.is_error and text.startswith(
        "GET /fail answered HTTP 500 Internal Server Error: database exploded"
    )
    assert len(text) < 600 and text.endswith("…")


@pytest.mark.parametrize("declared", [False, True], ids=["streamed", "content-length"])
def test_an_oversize_response_is_a_tool_error(api: str, declared: bool) -> None:
    server = from_openapi(SPEC31, base_url=api, max_response_bytes=1024 * 1024)
    result = run(call(server, "huge", {"declared": True} if declared else {}))
    assert result.is_error
    assert "the response is larger than the limit of 1048576 bytes" in result.content[0].text


def test_an_unreachable_api_is_a_tool_error() -> None:
    from ..conftest import free_port

    server = from_openapi(SPEC31, base_url=f"http://127.0.0.1:{free_port()}")
    result = run(call(server, "listPets"))
    assert result.is_error and result.content[0].text.startswith("GET /pets failed: ConnectError")


# -- credentials ---------------------------------------------------------------------------------------


def test_static_headers_are_sent_and_win_over_header_arguments(api: str) -> None:
    server = from_openapi(SPEC31, base_url=api, headers={"X-Api-Key": "configured"})
    seen = run(call(server, "echo_headers", {"X-Api-Key": "from the model"})).structured_content
    assert seen["headers"]["x-api-key"] == "configured"
    assert "authorization" not in seen["headers"]


# -- loading and $ref ----------------------------------------------------------------------------------


def test_a_document_by_url_with_a_relative_server(api: str) -> None:
    server = from_openapi(f"{api}/openapi.json")  # servers: [{"url": "/"}], taken against the URL
    result = run(call(server, "getPet", {"petId": 1}))
    assert result.structured_content == {"id": 1, "name": "Rex", "tag": "dog"}


def test_openapi_30_yaml(api: str, tmp_path: Path) -> None:
    server = from_openapi(SPEC30, base_url=api)
    tools = {t.name: t for t in server.tools}
    # 3.0's nullable and boolean exclusiveMinimum, as JSON Schema 2020-12.
    assert tools["listPets"].input_schema["properties"]["limit"] == {"type": "integer", "exclusiveMinimum": 0}
    assert tools["createPet"].input_schema["properties"]["tag"] == {"type": ["string", "null"]}
    assert run(call(server, "getPet", {"petId": 2})).structured_content["name"] == "Tom"
    by_url = from_openapi(f"{api}/openapi30.yaml", base_url=api)
    assert [t.name for t in by_url.tools] == ["listPets", "createPet", "getPet"]


def document(paths: dict[str, Any], **components: Any) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": paths,
        "components": components,
    }


def test_a_reference_cycle_is_refused_naming_it() -> None:
    node = {"$ref": "#/components/schemas/Node"}
    schemas = {
        "Node": {"type": "object", "properties": {"next": {"$ref": "#/components/schemas/Link"}}},
        "Link": {"type": "object", "properties": {"node": node}},
    }
    body = {"content": {"application/json": {"schema": node}}}
    spec = document({"/n": {"post": {"operationId": "add", "requestBody": body}}}, schemas=schemas)
    with pytest.raises(ValueError, match=r"\$ref cycle .*: #/components/schemas/Node -> "
                       r"#/components/schemas/Link -> #/components/schemas/Node"):  # fmt: skip
        from_openapi(spec, base_url="http://x")
    # A recursive schema that no operation uses is no obstacle.
    assert from_openapi(SPEC31, base_url="http://x").tools[0].name == "listPets"


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        (
            "other.yaml#/components/schemas/Pet",
            "external \\$ref 'other.yaml#/components/schemas/Pet' at paths./p",
        ),
        ("#/components/schemas/Nope", "points at nothing \\(no 'Nope' there\\)"),
    ],
)
def test_external_and_dangling_refs_are_refused(ref: str, message: str) -> None:
    spec = document({"/p": {"get": {"parameters": [{"$ref": ref}]}}}, schemas={})
    with pytest.raises(ValueError, match=message):
        from_openapi(spec, base_url="http://x")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"swagger": "2.0", "paths": {}}, "Swagger 2.0 is not supported"),
        ({"openapi": "4.0.0", "paths": {}}, "OpenAPI 4.0.0 is not supported"),
        ({"paths": {}}, "no 'openapi' field"),
        ("/nonexistent/spec.yaml", "cannot read the OpenAPI document '/nonexistent/spec.yaml'"),
        ({"openapi": "3.1.0", "paths": {}}, "no base URL"),
    ],
)
def test_unusable_documents_are_refused_clearly(spec: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        from_openapi(spec)


def test_invalid_yaml_and_json_say_where(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("openapi: 3.1.0\npaths: [unclosed\n")
    with pytest.raises(ValueError, match=r"bad\.yaml: invalid YAML"):
        from_openapi(bad)
    bad.write_text('{"openapi": ')
    with pytest.raises(ValueError, match=r"bad\.yaml: invalid JSON"):
        from_openapi(bad)


def test_two_operations_of_one_name_are_refused() -> None:
    spec = document({"/a": {"get": {"operationId": "x"}}, "/b": {"get": {"operationId": "x"}}})
    with pytest.raises(ValueError, match="two operations are named 'x': GET /a and GET /b"):
        from_openapi(spec, base_url="http://x")


# -- route maps ----------------------------------------------------------------------------------------

MAPS = [
    RouteMap(tags={"internal"}, kind="exclude"),
    RouteMap(methods="DELETE", kind="exclude"),
    RouteMap(methods={"GET"}, pattern=r"^/pets/\{petId\}$", kind="template"),
    RouteMap(methods={"get"}, pattern=r"^/pets$", kind="resource"),
]


def test_route_maps_choose_tools_resources_templates_and_exclusions(api: str) -> None:
    server = from_openapi(SPEC31, base_url=api, route_maps=MAPS)
    assert [t.name for t in server.tools] == ["createPet", "echo_headers", "post_echo_id", "putList", "hello"]

    async def main() -> None:
        async with Client(server) as client:
            (resource,) = await client.list_resources()
            assert resource.uri == "openapi://pet-store/pets" and resource.name == "listPets"
            assert resource.mime_type == "application/json"
            (template,) = await client.list_resource_templates()
            assert template.uri_template == "openapi://pet-store/pets/{petId}"
            pets = (await client.read_resource("openapi://pet-store/pets")).contents[0]
            assert [p["name"] for p in json.loads(pets.text)][:2] == ["Rex", "Tom"]  # type: ignore[arg-type]
            pet = (await client.read_resource("openapi://pet-store/pets/2")).contents[0]
            assert pet.uri == "openapi://pet-store/pets/2" and json.loads(pet.text)["name"] == "Tom"  # type: ignore[arg-type]
            missing = InvalidParams if client.protocol_version >= "2026-07-28" else ResourceNotFound
            with pytest.raises(missing, match="answered HTTP 404"):
                await client.read_resource("openapi://pet-store/pets/99")

    run(main())


def test_a_template_takes_query_parameters(api: str) -> None:
    maps = [RouteMap(methods={"GET"}, pattern="^/pets$", kind="template")]
    server = from_openapi(SPEC31, base_url=api, route_maps=maps, name="shop")

    async def main() -> None:
        async with Client(server) as client:
            (template,) = await client.list_resource_templates()
            assert template.uri_template == "openapi://shop/pets{?limit,tag}"
            pets = (await client.read_resource("openapi://shop/pets?tag=dog")).contents[0]
            assert [p["name"] for p in json.loads(pets.text)] == ["Rex"]  # type: ignore[arg-type]
            with pytest.raises(InvalidParams):
                await client.read_resource("openapi://shop/pets/../../etc")

    run(main())


@pytest.mark.parametrize(
    ("route", "message"),
    [
        (RouteMap(methods={"POST"}, pattern="^/pets$", kind="resource"), "POST /pets cannot be a resource"),
        (RouteMap(pattern=r"\{petId\}", kind="resource"), r"GET /pets/\{petId\} needs arguments \(petId\)"),
    ],
)
def test_a_route_map_that_does_not_fit_is_refused(route: RouteMap, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        from_openapi(SPEC31, base_url="http://x", route_maps=[route])


def test_route_map_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="kind must be one of"):
        RouteMap(kind="prompt")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="is not a regular expression"):
        RouteMap(pattern="(")


def test_tools_carry_the_operations_tags_for_filters(api: str) -> None:
    server = from_openapi(SPEC31, base_url=api)
    assert server._tools["listPets"].tags == frozenset({"pets"})


# -- the fallback name ---------------------------------------------------------------------------------


def test_the_fallback_name_of_a_few_paths() -> None:
    assert fallback_name("GET", "/pets/{petId}") == "get_pets_petId"
    assert fallback_name("delete", "/v1/users/{user-id}/keys.json") == "delete_v1_users_user-id_keys.json"
    assert fallback_name("POST", "/") == "post_root"
    assert fallback_name("get", "/ünïcode/✓") == "get_n_code"
    long = fallback_name("get", "/x" * 200)
    assert len(long) == 128 and long == fallback_name("get", "/x" * 200)
    assert long != fallback_name("get", "/x" * 201)


@given(st.sampled_from(["get", "put", "post", "delete", "patch", "head", "options", "trace"]), st.text())
def test_the_fallback_name_is_a_valid_stable_tool_name(method: str, path: str) -> None:
    name = fallback_name(method, path)
    assert 0 < len(name) <= 128 and set(name) <= TOOL_NAME_CHARS
    assert name == fallback_name(method.upper(), path)  # stable, whatever the method's case
    assert name.startswith(method + "_")


def test_the_docstring_examples_run() -> None:
    import doctest

    from mcpkit.compose.openapi import _build, _operations, routes

    for module in (_build, _operations, routes):
        failed, attempted = doctest.testmod(module)
        assert attempted > 0 and failed == 0, module.__name__
