"""What the OpenAPI tests share: the real API in a subprocess, the spec files, and serving over HTTP."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from ..conftest import STARTUP_SECONDS, free_port, http_server

HERE = Path(__file__).parent
SPEC31 = HERE / "openapi_specs" / "petstore31.json"
SPEC30 = HERE / "openapi_specs" / "petstore30.yaml"
STDIO_SCRIPT = HERE / "openapi_stdio.py"
ERAS = ("2025-11-25", "2026-07-28")


def run(coro: Any) -> Any:
    """Run *coro* with a bound that only a hang reaches."""
    return asyncio.run(asyncio.wait_for(coro, 120))


def start_api() -> Iterator[str]:
    """The test API (``openapi_api.py``) on a free port of 127.0.0.1; yields its base URL."""
    port = free_port()
    serving = http_server([sys.executable, str(HERE / "openapi_api.py"), str(port)], port, STARTUP_SECONDS)
    url = next(serving)
    try:
        yield url.removesuffix("/mcp")  # the helper names the MCP path; the API is at the root
    finally:
        serving.close()


@asynccontextmanager
async def served_over_http(app: Any) -> AsyncIterator[str]:
    """*app* (an ASGI app) under uvicorn on 127.0.0.1 in this loop; yields its ``/mcp`` URL."""
    import uvicorn

    port = free_port()
    web = uvicorn.Server(uvicorn.Config(app, port=port, log_level="error", lifespan="on"))
    serving = asyncio.ensure_future(web.serve())
    while not web.started:  # uvicorn offers no event for it
        if serving.done():
            serving.result()
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        web.should_exit = True
        await serving


@pytest.fixture(scope="module")
def api() -> Iterator[str]:
    """The base URL of a real HTTP API on 127.0.0.1 (a subprocess), one per test module."""
    yield from start_api()


def structured(result: Any) -> dict[str, Any]:
    """A tool result's ``structuredContent``, which must be there."""
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


def text(result: Any) -> str:
    """The text of a result's first content block (a tool result or a resource's contents)."""
    blocks = getattr(result, "content", None) or getattr(result, "contents", None)
    assert blocks and isinstance(blocks[0].text, str), result
    return blocks[0].text
