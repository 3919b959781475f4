"""A client of a server script's own fresh process, over a real stdio pipe or real HTTP on 127.0.0.1.

The script takes the port to listen on as its one argument for HTTP, and speaks stdio without one.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Generator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

from mcpkit import Client

from .conftest import free_port, http_server


@asynccontextmanager
async def served_script(script: Path, transport: str, version: str, **options: Any) -> AsyncIterator[Client]:
    """A ``Client(..., protocol_version=version, **options)`` of a fresh *script* process over
    *transport* (``"stdio"`` or ``"http"``); the process is stopped when the block ends."""
    if transport == "stdio":
        async with Client([sys.executable, str(script)], protocol_version=version, **options) as client:
            yield client
        return
    port = free_port()
    serving = cast(
        Generator[str, None, None], http_server([sys.executable, str(script), str(port)], port, 120)
    )
    url = next(serving)
    try:
        async with Client(url, protocol_version=version, **options) as client:
            yield client
    finally:
        serving.close()
