"""Running the protected test server as a real ``mcpkit run`` process, and talking to it raw."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from ..conftest import free_port, http_server

SERVER = Path(__file__).with_name("protected_server.py")

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


@contextmanager
def protected(issuer: str, *flags: str, port: int | None = None) -> Iterator[str]:
    """``mcpkit run protected_server.py --transport http --auth-issuer ISSUER ...``: its endpoint URL,
    which is also the audience tokens must name."""
    port = port or free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    command = [sys.executable, "-m", "mcpkit", "run", str(SERVER), "--transport", "http", "--port", str(port),
               "--auth-issuer", issuer, "--auth-audience", url, *flags]  # fmt: skip
    yield from http_server(command, port, 15)


def call(url: str, authorization: str | None, *, tool: str = "whoami", arguments: dict[str, Any] | None = None,
         headers: dict[str, str] | None = None, session: str | None = None) -> httpx.Response:  # fmt: skip
    """A 2026-07-28 ``tools/call`` POST; or, given a handshake-era *session* (:func:`open_session`),
    the same call as a POST of that 2025-11-25 session."""
    params: dict[str, Any] = {"name": tool, "arguments": arguments or {}}
    if session is None:
        params["_meta"] = META
        era = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
    else:
        era = {"MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": session}
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    sent = {**era, "Accept": "application/json, text/event-stream", **(headers or {})}
    if authorization is not None:
        sent["Authorization"] = authorization
    return httpx.post(url, json=body, headers=sent, timeout=60)


def open_session(url: str, authorization: str) -> str:
    """A 2025-11-25 session opened (and initialized) with *authorization*: its id."""
    accept = {"Accept": "application/json, text/event-stream", "Authorization": authorization}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    opened = httpx.post(url, json=init, headers=accept, timeout=60)
    session = opened.headers["mcp-session-id"]
    headers = {**accept, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    done = httpx.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers, timeout=60
    )
    assert done.status_code == 202
    return session


def challenge(response: httpx.Response, scheme: str = "Bearer") -> dict[str, str]:
    """The parameters of the *scheme* challenge of a response's ``WWW-Authenticate`` headers."""
    for value in response.headers.get_list("www-authenticate"):
        name, _, rest = value.partition(" ")
        if name == scheme:
            return _params(rest)
    raise AssertionError(f"no {scheme} challenge in {response.headers.get_list('www-authenticate')}")


def _params(text: str) -> dict[str, str]:
    params: dict[str, str] = {}
    i = 0
    while i < len(text):
        eq = text.index("=", i)
        key = text[i:eq].strip(" ,")
        assert text[eq + 1] == '"'
        j, value = eq + 2, []
        while text[j] != '"':
            if text[j] == "\\":
                j += 1
            value.append(text[j])
            j += 1
        params[key] = "".join(value)
        i = j + 1
    return params
