"""A gateway served over HTTP in the caller's own loop stops cleanly when its task is cancelled:
uvicorn shuts down as on SIGINT, so its listening socket and accepted connections are closed then,
not left for the garbage collector (whose ResourceWarning would fail some later test)."""

from __future__ import annotations

import asyncio
import gc
import socket
import time
import warnings
from pathlib import Path

import pytest

from mcpkit import Client
from mcpkit._errors import MCPError
from mcpkit.gateway import Gateway
from mcpkit.transports.http.server.serving import serve_here

from ..conftest import free_port
from ._util import config, run, toolbox

pytestmark = pytest.mark.e2e


def _refused(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_cancelling_the_served_gateway_closes_its_sockets(tmp_path: Path, revision: str) -> None:
    cfg = config({"box": toolbox()}, tmp_path)

    async def main() -> None:
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        async with Gateway(cfg) as gateway:
            serving = asyncio.ensure_future(
                serve_here(gateway.server.http_app(), host="127.0.0.1", port=port)
            )
            deadline = time.monotonic() + 60
            while True:  # uvicorn starts in this loop, after the first attempt
                try:
                    async with Client(url, protocol_version=revision) as client:
                        assert "box__pid" in [t.name for t in await client.list_tools()]
                        break
                except MCPError:
                    assert time.monotonic() < deadline
                    await asyncio.sleep(0.2)
            # A connection the client holds open while the server stops: uvicorn closes it.
            held = await asyncio.open_connection("127.0.0.1", port)
            serving.cancel()
            with pytest.raises(asyncio.CancelledError):
                await serving
            assert _refused(port)  # the listening socket is closed, not merely idle
            assert await asyncio.wait_for(held[0].read(), 30) == b""  # and the held one sees EOF
            held[1].close()
            await held[1].wait_closed()

    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        run(main(), 120)
        gc.collect()  # what is left unclosed warns here, in this test, not in a later one
