"""A server for the gateway tests with a bit of everything, named by ``SHELF`` (two can run at once):
tools, a prompt with a completion, a fixed resource every shelf lists at the same URI, a template."""

from __future__ import annotations

import os

from mcpkit import Server

NAME = os.environ.get("SHELF", "shelf")
server = Server(f"shelf-{NAME}", "1.0.0")


@server.tool
def whoami() -> str:
    """Which shelf this is."""
    return NAME


@server.tool
def secret() -> str:
    """A tool the gateway tests filter out."""
    return "hidden"


@server.prompt
def greet(name: str) -> str:
    """A greeting from this shelf."""
    return f"{NAME} says hello to {name}."


@server.resource("shelf://motto")
def motto() -> str:
    """The same URI on every shelf: the gateway lists the first server's only."""
    return f"motto of {NAME}"


@server.resource("shelf://books/{title}")
def book(title: str) -> str:
    """A book of this shelf."""
    return f"{title} from {NAME}"


@server.tool
async def touch() -> str:
    """Tell the motto's subscribers it changed."""
    await server.resource_updated("shelf://motto")
    return "touched"


@server.completion(argument="name", prompt="greet")
def names(value: str, arguments: dict[str, str]) -> list[str]:
    return [n for n in ("Ann", "Bob") if n.lower().startswith(value.lower())]


if __name__ == "__main__":
    server.run()
