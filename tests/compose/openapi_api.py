"""A small real HTTP API for the OpenAPI tests: ``python openapi_api.py PORT`` serves it on 127.0.0.1.

It keeps pets in memory, echoes what it was sent (method, path, query, headers, body) so tests can
see exactly what reached it, fails on demand, and streams a body larger than any limit. It also
serves its own descriptions (``/openapi.json``, ``/openapi30.yaml``) with a relative server URL.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

SPECS = Path(__file__).parent / "openapi_specs"

PETS: dict[int, dict[str, Any]] = {
    1: {"id": 1, "name": "Rex", "tag": "dog"},
    2: {"id": 2, "name": "Tom", "tag": "cat"},
}


async def list_pets(request: Request) -> Response:
    limit = int(request.query_params.get("limit", "100"))
    tag = request.query_params.get("tag")
    pets = [p for p in PETS.values() if tag is None or p["tag"] == tag]
    return JSONResponse(pets[:limit])


async def create_pet(request: Request) -> Response:
    body = await request.json()
    if not isinstance(body, dict) or not isinstance(body.get("name"), str):
        return JSONResponse({"error": "name is required"}, status_code=422)
    pet = {"id": max(PETS) + 1, "name": body["name"], "tag": body.get("tag")}
    PETS[pet["id"]] = pet
    return JSONResponse(
        pet, status_code=201, headers={"x-request-id": request.headers.get("x-request-id", "")}
    )


async def get_pet(request: Request) -> Response:
    pet = PETS.get(int(request.path_params["pet_id"]))
    if pet is None:
        return JSONResponse({"error": f"no pet {request.path_params['pet_id']}"}, status_code=404)
    return JSONResponse(pet)


async def echo(request: Request) -> Response:
    raw = await request.body()
    return JSONResponse(
        {
            "method": request.method,
            "path": request.url.path,
            "query": [[k, v] for k, v in request.query_params.multi_items()],
            "headers": {k.lower(): v for k, v in request.headers.items()},
            "body": raw.decode("utf-8", "replace"),
        }
    )


async def fail(request: Request) -> Response:
    return PlainTextResponse("database exploded " + "x" * 5000, status_code=500)


async def huge(request: Request) -> Response:
    """20 MiB, streamed without a Content-Length (or with one, when ?declared=1)."""
    size = 20 * 1024 * 1024
    chunk = b"[" + b"0," * 32767 + b"0]"

    async def body() -> AsyncIterator[bytes]:
        sent = 0
        while sent < size:
            yield chunk
            sent += len(chunk)

    if request.query_params.get("declared"):
        return Response(b"a" * size, media_type="application/json")
    return StreamingResponse(body(), media_type="application/json")


async def text(request: Request) -> Response:
    return PlainTextResponse(f"hello {request.query_params.get('who', 'world')}")


async def spec(request: Request) -> Response:
    document = json.loads((SPECS / "petstore31.json").read_text())
    document["servers"] = [{"url": "/"}]
    return JSONResponse(document)


async def spec30(request: Request) -> Response:
    text = (SPECS / "petstore30.yaml").read_text()
    return Response(text, media_type="application/yaml")


app = Starlette(
    routes=[
        Route("/pets", list_pets, methods=["GET"]),
        Route("/pets", create_pet, methods=["POST"]),
        Route("/pets/{pet_id}", get_pet, methods=["GET"]),
        Route("/echo", echo, methods=["GET", "POST", "PUT", "DELETE"]),
        Route("/echo/{rest:path}", echo, methods=["GET", "POST", "PUT", "DELETE"]),
        Route("/fail", fail),
        Route("/huge", huge),
        Route("/text", text),
        Route("/openapi.json", spec),
        Route("/openapi30.yaml", spec30),
    ]
)

if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="error")
