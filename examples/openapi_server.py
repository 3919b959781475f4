"""An MCP server built from an OpenAPI document: ``petstore.yaml``, beside this file.

::

    python examples/openapi_server.py                    # stdio, with the pet store running inside
    python examples/openapi_server.py --http 8000        # Streamable HTTP at http://127.0.0.1:8000/mcp
    python examples/openapi_server.py --api URL          # the tools call the API at URL instead

Each operation of the document is a tool (``listPets``, ``addPet``, ``adoptPet``), except
``getPet``, which a route map makes a resource template: ``openapi://pet-store/pets/{petId}``.
Calling a tool performs the HTTP request and returns the API's JSON as structured content.

Without ``--api`` the example starts the pet store the document describes (a small Starlette app in
memory) on a free port of 127.0.0.1, in a thread of this process, so there is something real to call.
"""

from __future__ import annotations

import argparse
import socket
import threading
import time
from pathlib import Path
from typing import Any

from mcpkit.compose.openapi import RouteMap, from_openapi

SPEC = Path(__file__).with_name("petstore.yaml")

ROUTES = [RouteMap(methods={"GET"}, pattern=r"^/pets/\{petId\}$", kind="template")]


def pet_store() -> Any:
    """The API of ``petstore.yaml``: pets in a dict, lost when the process ends."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    pets: dict[int, dict[str, Any]] = {
        1: {"id": 1, "name": "Whiskers", "species": "cat", "age": 3},
        2: {"id": 2, "name": "Rex", "species": "dog", "age": 5},
        3: {"id": 3, "name": "Clover", "species": "rabbit", "age": 1},
    }

    async def list_pets(request: Request) -> JSONResponse:
        species = request.query_params.get("species")
        limit = int(request.query_params.get("limit", "20"))
        return JSONResponse([p for p in pets.values() if species in (None, p["species"])][:limit])

    async def add_pet(request: Request) -> JSONResponse:
        body = await request.json()
        if (
            not isinstance(body, dict)
            or not body.get("name")
            or body.get("species") not in ("cat", "dog", "rabbit")
        ):
            return JSONResponse({"error": "a pet needs a name and a species (cat, dog or rabbit)"}, 422)
        pet = {
            "id": max(pets, default=0) + 1,
            **{k: body[k] for k in ("name", "species", "age") if k in body},
        }
        pets[pet["id"]] = pet
        return JSONResponse(pet, 201)

    async def one_pet(request: Request) -> JSONResponse:
        pet_id = int(request.path_params["pet_id"])
        if pet_id not in pets:
            return JSONResponse({"error": f"no pet {pet_id}"}, 404)
        return JSONResponse(pets.pop(pet_id) if request.method == "DELETE" else pets[pet_id])

    return Starlette(
        routes=[
            Route("/pets", list_pets, methods=["GET"]),
            Route("/pets", add_pet, methods=["POST"]),
            Route("/pets/{pet_id:int}", one_pet, methods=["GET", "DELETE"]),
        ]
    )


def start_pet_store() -> str:
    """Serve :func:`pet_store` on a free port of 127.0.0.1 in a daemon thread; its base URL."""
    import uvicorn

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    web = uvicorn.Server(uvicorn.Config(pet_store(), host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=web.run, daemon=True).start()
    while not web.started:  # a fraction of a second; uvicorn offers no event to wait on
        time.sleep(0.01)
    return f"http://127.0.0.1:{port}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api", help="the API's base URL (default: run the pet store here)")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on this port")
    args = parser.parse_args()
    server = from_openapi(SPEC, base_url=args.api or start_pet_store(), route_maps=ROUTES)
    if args.http:
        server.run("http", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
