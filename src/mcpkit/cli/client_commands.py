"""The client commands: ``mcpkit tools`` and ``mcpkit call``."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from ._common import add_target_options, target_command

__all__ = ["register"]


async def _with_client(args: argparse.Namespace, action: Any) -> Any:
    from ..client import Client

    async with Client(target_command(args.target), protocol_version=args.protocol_version) as client:
        return client, await action(client)


def _cmd_tools(args: argparse.Namespace) -> int:
    import msgspec

    async def action(client: Any) -> Any:
        return await client.list_tools()

    client, tools = asyncio.run(_with_client(args, action))
    if args.json:
        print(json.dumps([msgspec.to_builtins(t) for t in tools], indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    info = client.server_info
    table = Table(
        title=f"{info.name if info else 'server'} · protocol {client.protocol_version}", title_justify="left"
    )
    table.add_column("tool", style="bold cyan", no_wrap=True)
    table.add_column("arguments", style="green")
    table.add_column("description")
    for tool in tools:
        props = tool.input_schema.get("properties", {})
        required = set(tool.input_schema.get("required", []))
        arguments = ", ".join(f"{name}{'' if name in required else '?'}" for name in props)
        description = tool.description if isinstance(tool.description, str) else ""
        table.add_row(tool.name, arguments, description.split("\n")[0])
    Console().print(table)
    return 0


def _cmd_call(args: argparse.Namespace) -> int:
    import msgspec

    try:
        arguments = json.loads(args.arguments) if args.arguments else {}
    except json.JSONDecodeError as exc:
        print(f"mcpkit: the arguments are not valid JSON: {exc}", file=sys.stderr)
        return 2
    if not isinstance(arguments, dict):
        print("mcpkit: the arguments must be a JSON object", file=sys.stderr)
        return 2

    async def action(client: Any) -> Any:
        return await client.call_tool(args.tool, arguments)

    _, result = asyncio.run(_with_client(args, action))
    if args.json:
        print(json.dumps(msgspec.to_builtins(result), indent=2))
        return 1 if result.is_error is True else 0
    from rich.console import Console

    console = Console()
    _print_result(console, result)
    return 1 if result.is_error is True else 0


def _print_result(console: Any, result: Any) -> None:
    import msgspec
    from rich.json import JSON

    from ..types import TextContent

    style = "bold red" if result.is_error is True else None
    for block in result.content:
        if isinstance(block, TextContent):
            console.print(block.text, style=style, markup=False, highlight=False)
        else:
            console.print(JSON.from_data(msgspec.to_builtins(block)))
    structured = result.structured_content
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    if structured is not msgspec.UNSET and structured != {"result": texts[0] if texts else None}:
        # Shown unless it only repeats the text (a tool annotated -> str).
        console.print("[dim]structured:[/dim]", JSON.from_data(structured))


def register(sub: Any) -> None:
    tools = sub.add_parser("tools", help="list a server's tools")
    add_target_options(tools)
    tools.set_defaults(handler=_cmd_tools)
    call = sub.add_parser("call", help="call one tool and print the result")
    add_target_options(call)
    call.add_argument("tool")
    call.add_argument("arguments", nargs="?", default="{}", help="the arguments as a JSON object")
    call.set_defaults(handler=_cmd_call)
