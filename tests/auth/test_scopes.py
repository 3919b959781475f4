"""Per-tool scopes (``@server.tool(scopes=[...])``) on a protected ``mcpkit run`` server: a call
without them answers HTTP 403 ``insufficient_scope`` naming them before the tool runs, in both eras
(a 2025-03-26 batch as a whole); ``tools/list`` shows only what the caller may call; mcpkit's own
OAuth client steps up on the 403 and the retried call succeeds; over stdio nothing is enforced."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcpkit import Client, ClientCredentials, OAuth, TextContent

from ._serve import META, SERVER, call, challenge, protected
from .issuer import TestIssuer

pytestmark = pytest.mark.e2e

ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def url(issuer: TestIssuer) -> Iterator[str]:
    with protected(issuer.url, "--auth-scope", "mcp") as served:
        yield served


def metadata_of(url: str) -> str:
    return url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")


def assert_step_up(answer: httpx.Response, url: str, request_id: Any) -> None:
    assert answer.status_code == 403, answer.text
    params = challenge(answer)
    assert params["error"] == "insufficient_scope"
    assert params["scope"] == "mcp notes:write"  # the server-wide scope and the tool's: one step up
    assert params["resource_metadata"] == metadata_of(url)
    body = answer.json()
    assert body["id"] == request_id and body["error"]["data"]["error"] == "insufficient_scope"


def test_a_stateless_call_without_the_tools_scopes_gets_403(url: str, issuer: TestIssuer) -> None:
    narrow, wide = issuer.mint(url, scope="mcp"), issuer.mint(url, scope="mcp notes:write")
    assert_step_up(call(url, f"Bearer {narrow}", tool="add_note", arguments={"text": "hi"}), url, 7)
    answer = call(url, f"Bearer {wide}", tool="add_note", arguments={"text": "hi"})
    assert (
        answer.json()["result"]["content"][0]["text"]
        == "saved 'hi' for alice via test-client with mcp notes:write"
    )
    assert call(url, f"Bearer {narrow}").status_code == 200  # other tools need only the server's scope


def list_tools(url: str, token: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    headers = {
        "Authorization": f"Bearer {token}",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/list",
        **ACCEPT,
    }
    result: dict[str, Any] = httpx.post(url, json=body, headers=headers, timeout=60).json()["result"]
    return result


def test_the_tool_list_shows_what_the_callers_scopes_allow(url: str, issuer: TestIssuer) -> None:
    narrow = list_tools(url, issuer.mint(url, scope="mcp"))
    assert [t["name"] for t in narrow["tools"]] == ["whoami", "whoami_sync", "peek"]
    assert narrow["cacheScope"] == "private"  # a list for this caller only
    wide = list_tools(url, issuer.mint(url, scope="mcp notes:write"))
    assert [t["name"] for t in wide["tools"]] == ["whoami", "whoami_sync", "add_note", "peek"]


class Session:
    """A handshake-era session driven by raw POSTs, each with the token given."""

    def __init__(self, url: str, token: str, version: str) -> None:
        self.url, self.version = url, version
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
        opened = self.post(token, init, session=False)
        assert opened.json()["result"]["protocolVersion"] == version
        self.id = opened.headers["mcp-session-id"]
        assert self.post(token, {"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202

    def post(self, token: str, body: Any, *, session: bool = True) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}", **ACCEPT}
        if session:
            headers |= {"Mcp-Session-Id": self.id, "MCP-Protocol-Version": self.version}
        return httpx.post(self.url, json=body, headers=headers, timeout=60)


def tools_call(request_id: int, tool: str, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


def test_a_session_call_without_the_tools_scopes_gets_403_and_the_session_goes_on(
    url: str, issuer: TestIssuer
) -> None:
    narrow, wide = issuer.mint(url, scope="mcp"), issuer.mint(url, scope="mcp notes:write", key=issuer.ec)
    session = Session(url, narrow, "2025-11-25")
    assert_step_up(session.post(narrow, tools_call(3, "add_note", text="hi")), url, 3)
    # The client steps up; the same session takes the call with the new token (same subject).
    answer = session.post(wide, tools_call(3, "add_note", text="hi"))
    assert answer.json()["result"]["content"][0]["text"].startswith("saved 'hi'")
    listed = session.post(narrow, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}).json()["result"]
    assert "add_note" not in [t["name"] for t in listed["tools"]]


def test_a_2025_03_26_batch_needing_a_scope_is_refused_whole(url: str, issuer: TestIssuer) -> None:
    narrow, wide = issuer.mint(url, scope="mcp"), issuer.mint(url, scope="mcp notes:write")
    session = Session(url, narrow, "2025-03-26")
    batch = [tools_call(5, "whoami"), tools_call(6, "add_note", text="x")]
    # One challenge for the POST: no member ran, none is answered; id null (the batch has many).
    assert_step_up(session.post(narrow, batch), url, None)
    answers = {a["id"]: a for a in session.post(wide, batch).json()}
    assert answers[5]["result"]["content"][0]["text"] == "alice via test-client with mcp notes:write"
    assert answers[6]["result"]["content"][0]["text"].startswith("saved 'x'")
    assert session.post(narrow, [tools_call(7, "whoami")]).status_code == 200


def test_over_http_sse_the_tool_does_not_run_either(url: str, issuer: TestIssuer) -> None:
    """HTTP+SSE (2024-11-05) answers every POST 202 before the message is handled: the refusal comes
    as the call's JSON-RPC error (-32600, ``data.error`` insufficient_scope), and the tool never runs."""
    token = issuer.mint(url, scope="mcp")
    headers = {"Authorization": f"Bearer {token}"}
    with (
        httpx.Client(timeout=60) as http,
        http.stream("GET", url.replace("/mcp", "/sse"), headers=headers) as stream,
    ):
        lines = stream.iter_lines()
        target = url.replace("/mcp", next(line for line in lines if line.startswith("data: "))[6:])
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
        http.post(target, json=init, headers=headers)
        next(line for line in lines if line.startswith("data: "))
        http.post(target, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        assert http.post(target, json=tools_call(2, "add_note", text="x"), headers=headers).status_code == 202
        answer = json.loads(next(line for line in lines if line.startswith("data: "))[6:])
        assert answer["id"] == 2 and answer["error"]["code"] == -32600
        assert answer["error"]["data"] == {"error": "insufficient_scope", "scope": "notes:write"}


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_the_oauth_client_steps_up_and_the_retried_call_succeeds(
    url: str, issuer: TestIssuer, version: str
) -> None:
    issuer.issued.clear()
    auth = OAuth(
        client_id="machine", client_secret=issuer.clients["machine"], grant=ClientCredentials(), dpop=False
    )

    async def go() -> tuple[str, list[str]]:
        async with Client(url, protocol_version=version, auth=auth) as client:
            listed = [tool.name for tool in await client.list_tools()]
            content = (await client.call_tool("add_note", {"text": "stepped"})).content[0]
            assert isinstance(content, TextContent)
            return content.text, listed

    text, listed = asyncio.run(go())
    assert "add_note" not in listed  # before the step up the token granted "mcp" only
    assert text == "saved 'stepped' for machine via machine with mcp notes:write"
    assert issuer.issued == ["mcp", "mcp notes:write"]  # one token, then one step up


def test_over_stdio_scopes_are_not_enforced() -> None:
    async def go() -> str:
        async with Client([sys.executable, "-m", "mcpkit", "run", str(SERVER)]) as client:
            assert "add_note" in [tool.name for tool in await client.list_tools()]
            content = (await client.call_tool("add_note", {"text": "local"})).content[0]
            assert isinstance(content, TextContent)
            return content.text

    assert asyncio.run(go()) == "saved 'local' for anonymous"
