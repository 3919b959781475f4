"""Connecting to tests/framework/servers/composed_server.py over real stdio and real HTTP."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mcpkit import CallToolResult, Client, TextContent

from ..conftest import free_port, http_server

SERVER = Path(__file__).parent / "servers" / "composed_server.py"
ERAS = ["2025-11-25", "2026-07-28"]
WIRES = [(transport, era) for transport in ("stdio", "http") for era in ERAS]


def stdio_command(*extra: str) -> list[str]:
    return [sys.executable, str(SERVER), *extra]


def serve_http(*extra: str) -> Iterator[str]:
    """The composed server over Streamable HTTP on 127.0.0.1; its endpoint."""
    port = free_port()
    yield from http_server([*stdio_command(*extra), "--port", str(port)], port, 120)


@asynccontextmanager
async def connect(transport: str, url: str | None, version: str, **options: Any) -> AsyncIterator[Client]:
    """A client of the composed server: a stdio subprocess of its own, or the HTTP server at *url*."""
    target: Any = url if transport == "http" else stdio_command()
    if transport == "http" and url is None:
        pytest.fail("an HTTP test needs the server's URL")
    async with Client(target, protocol_version=version, timeout=120, probe_timeout=60, **options) as client:
        yield client


def text(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))
