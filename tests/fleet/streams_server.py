"""The server of ``test_streams_return``: tools that change what a listener hears about, one
notification each, so that a test can count every one."""

from __future__ import annotations

import os

from mcpkit import Server

server = Server("streams", "1.0.0")


@server.tool
async def change_tools() -> str:
    """Announce that the tool list changed (once)."""
    await server.notify_list_changed("tools")
    return str(os.getpid())


@server.tool
async def change_prompts() -> str:
    """Announce that the prompt list changed (once): the test's last word on a stream."""
    await server.notify_list_changed("prompts")
    return str(os.getpid())


@server.tool
async def update(uri: str) -> str:
    """Announce that *uri* changed (once)."""
    await server.notify_resource_updated(uri)
    return str(os.getpid())


@server.prompt
def greet() -> str:
    """A prompt, so that prompt list changes are declared."""
    return "hello"


@server.resource("note://{name}")
def note(name: str) -> str:
    """A note."""
    return f"note {name}"
