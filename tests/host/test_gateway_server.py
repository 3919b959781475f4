"""The gateway as a plain ``Server`` with one forwarder per configured server mounted under its key:
the config's renames (a tool, a prompt), tool filters, a resource URI two servers list, templates
they share, completion, and what a user may now do to ``gateway.server`` (transform, disable) with
the governance still applied. In process over ``Client(gateway.server)`` and over the wire (a real
``mcpkit gateway`` over stdio and over HTTP on 127.0.0.1), in 2025-11-25 and 2026-07-28."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, MCPError, Server, TextContent
from mcpkit.gateway import Gateway

from ._util import SERVERS, audit_lines, check_over_http, config, run

pytestmark = pytest.mark.e2e

ERAS = ["2025-11-25", "2026-07-28"]


def _shelf(name: str, **extra: Any) -> dict[str, Any]:
    command = [sys.executable, "-m", "mcpkit", "run", str(SERVERS / "shelf.py")]
    return {"command": command[0], "args": command[1:], "env": {"SHELF": name}, **extra}


SERVERS_OF_TWO = {"a": _shelf("a"), "b": _shelf("b", tools={"deny": ["secret"]})}
RENAME = {"a__whoami": "who", "b__greet": "hello"}


def _text(result: Any) -> str:
    return " ".join(b.text for b in result.content if isinstance(b, TextContent))


async def _check_catalogue(client: Client) -> None:
    """What a caller of the two-shelf gateway sees, whichever way it is reached."""
    assert {t.name for t in await client.list_tools()} == {
        "who",
        "a__secret",
        "a__touch",
        "b__whoami",
        "b__touch",
    }
    assert _text(await client.call_tool("who")) == "a"
    assert _text(await client.call_tool("b__whoami")) == "b"
    for refused in ("a__whoami", "b__secret"):  # renamed away, filtered out
        with pytest.raises(MCPError, match=f"Unknown tool: {refused}"):
            await client.call_tool(refused)
    assert {p.name for p in await client.list_prompts()} == {"a__greet", "hello"}
    hello = await client.get_prompt("hello", {"name": "Ann"})
    assert getattr(hello.messages[0].content, "text", "") == "b says hello to Ann."
    with pytest.raises(MCPError, match="Unknown prompt: b__greet"):
        await client.get_prompt("b__greet", {"name": "Ann"})
    completion = await client.complete({"type": "ref/prompt", "name": "hello"}, "name", "a")
    assert completion.values == ["Ann"]
    # One URI, two servers: listed once, read from the first in config order.
    assert [r.uri for r in await client.list_resources()] == ["shelf://motto"]
    motto = await client.read_resource("shelf://motto")
    assert getattr(motto.contents[0], "text", "") == "motto of a"
    # One template, two servers: the second's is listed (and read) under b+.
    templates = [t.uri_template for t in await client.list_resource_templates()]
    assert templates == ["shelf://books/{title}", "b+shelf://books/{title}"]
    first = await client.read_resource("shelf://books/dune")
    second = await client.read_resource("b+shelf://books/dune")
    assert getattr(first.contents[0], "text", "") == "dune from a"
    assert getattr(second.contents[0], "text", "") == "dune from b"
    assert second.contents[0].uri == "b+shelf://books/dune"


@pytest.mark.parametrize("version", ERAS)
def test_renames_filters_and_shared_uris_in_process(tmp_path: Path, version: str) -> None:
    gateway = Gateway(config(SERVERS_OF_TWO, tmp_path, rename=RENAME))
    assert type(gateway.server) is Server
    mounted = [(m.namespace, getattr(m.server, "key", None)) for m in gateway.server._mounts]
    assert mounted == [("a", "a"), ("b", "b")]  # one forwarder per server, under its key

    async def main() -> None:
        async with gateway, Client(gateway.server, protocol_version=version) as client:
            await gateway.host.wait_ready()
            await _check_catalogue(client)
            conflicts = gateway.conflicts()
            assert any("shelf://motto" in c and "'b'" in c for c in conflicts), conflicts

    run(main())


@pytest.mark.parametrize("version", ERAS)
def test_transforms_and_visibility_on_the_gateway_keep_its_governance(tmp_path: Path, version: str) -> None:
    policy = {"default": "allow", "rules": [{"server": "a", "tool": "whoami", "action": "deny"}]}
    gateway = Gateway(config({"a": _shelf("a")}, tmp_path, policy=policy))
    gateway.server.transform_tool("a__whoami", name="me", description="Who answers.")
    gateway.server.disable(names=["a__secret"])

    async def main() -> None:
        async with gateway, Client(gateway.server, protocol_version=version) as client:
            await gateway.host.wait_ready()
            tools = {t.name: t for t in await client.list_tools()}
            assert set(tools) == {"me", "a__touch"}
            assert tools["me"].description == "Who answers."
            refused = await client.call_tool("me")  # the policy's rule names the server's own tool
            assert refused.is_error
            assert "denied by the host's policy" in _text(refused)
            with pytest.raises(MCPError, match="Unknown tool: a__secret"):
                await client.call_tool("a__secret")
            gateway.server.enable(names=["a__secret"])
            assert _text(await client.call_tool("a__secret")) == "hidden"
        lines = audit_lines(tmp_path)
        assert [(line["tool"], line["decision"]) for line in lines] == [
            ("whoami", "deny"),
            ("secret", "allow"),
        ]

    run(main())


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "gateway.json"
    extra = {
        "audit": {"path": str(tmp_path / "audit.jsonl")},
        "policy": {"default": "allow"},
        "rename": RENAME,
    }
    path.write_text(json.dumps({"mcpServers": SERVERS_OF_TWO, "mcpkit": extra}))
    return path


@pytest.mark.parametrize("version", ERAS)
def test_renames_filters_and_shared_uris_over_stdio(tmp_path: Path, version: str) -> None:
    command = [sys.executable, "-m", "mcpkit", "gateway", str(_write(tmp_path))]

    async def main() -> None:
        async with Client(command, protocol_version=version, timeout=120) as client:
            await _check_catalogue(client)

    run(main(), 240)


def test_renames_filters_and_shared_uris_over_http(tmp_path: Path) -> None:
    check_over_http(
        [sys.executable, "-m", "mcpkit", "gateway", str(_write(tmp_path))], _check_catalogue, ERAS
    )
