"""The ``mcpkit`` command.

``mcpkit run`` is how a host spawns a server, so this module imports only the standard library until
a subcommand needs more: rich (tables, colour) is loaded for human output only, never for ``run``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["load_server", "main"]


def load_server(spec: str) -> Any:
    """Load the server object named by ``FILE.py[:OBJECT]`` (or ``package.module[:OBJECT]``).

    Without ``:OBJECT`` the module's one ``LowLevelServer`` instance is used (a module-level name
    ``server``, ``mcp`` or ``app`` wins if there are several).

    Raises:
        SystemExit: with a message a person can act on.
    """
    from .lowlevel import LowLevelServer

    location, _, attribute = spec.partition(":")
    if location.endswith(".py") or os.sep in location:
        path = Path(location)
        if not path.is_file():
            raise SystemExit(f"mcpkit: no such file: {location}")
        sys.path.insert(0, str(path.resolve().parent))
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        if module_spec is None or module_spec.loader is None:
            raise SystemExit(f"mcpkit: cannot load {location}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[path.stem] = module
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(location)
    if attribute:
        try:
            return getattr(module, attribute)
        except AttributeError:
            raise SystemExit(f"mcpkit: {location} has no attribute {attribute!r}") from None
    found = {name: obj for name, obj in vars(module).items() if isinstance(obj, LowLevelServer)}
    for preferred in ("server", "mcp", "app"):
        if preferred in found:
            return found[preferred]
    if len(found) == 1:
        return next(iter(found.values()))
    if not found:
        raise SystemExit(f"mcpkit: no Server object in {location}; name one with {location}:OBJECT")
    raise SystemExit(
        f"mcpkit: several servers in {location} ({', '.join(sorted(found))}); name one with :OBJECT"
    )


def _target_command(target: str) -> list[str] | str:
    """A TARGET as a command line (a ``.py`` file is served with ``mcpkit run``), or a URL as is."""
    if target.startswith(("http://", "https://")):
        return target
    parts = shlex.split(target)
    if len(parts) == 1 and parts[0].endswith(".py") and Path(parts[0]).is_file():
        return [sys.executable, "-m", "mcpkit", "run", parts[0]]
    return parts


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is out of range (1-65535)")
    return port


def _positive(kind: type[int] | type[float]) -> Any:
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
        return value

    parse.__name__ = kind.__name__
    return parse


def _cmd_run(args: argparse.Namespace) -> int:
    server = load_server(args.server)
    if args.transport == "http":
        print(f"mcpkit: serving {args.server} at http://{args.host}:{args.port}/mcp", file=sys.stderr)
        server.run(
            "http",
            host=args.host,
            port=args.port,
            allowed_hosts=args.allow_host,
            allowed_origins=args.allow_origin,
            max_header_bytes=args.max_header_bytes,
            header_timeout=args.header_timeout,
            keep_alive_timeout=args.keep_alive_timeout,
            max_body_bytes=args.max_body_bytes,
            body_timeout=args.body_timeout,
            max_sessions=args.max_sessions,
            max_requests_per_session=args.max_requests_per_session,
            stream_queue_limit=args.stream_queue_limit,
        )
    else:
        server.run("stdio")
    return 0


async def _with_client(args: argparse.Namespace, action: Any) -> Any:
    from .client import Client

    async with Client(_target_command(args.target), protocol_version=args.protocol_version) as client:
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

    from .types import TextContent

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


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import main as demo_main

    return demo_main()


def _parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="mcpkit", description="Serve, inspect and call MCP servers.")
    parser.add_argument("--version", action="version", version=f"mcpkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser(
        "run", help="serve a server defined in a Python file", description=load_server.__doc__
    )
    run.add_argument("server", metavar="FILE.py[:OBJECT]")
    run.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    run.add_argument("--host", default="127.0.0.1", help="HTTP: the address to bind (default: 127.0.0.1)")
    run.add_argument("--port", type=_port, default=8000, help="HTTP: the port, 1-65535 (default: 8000)")
    run.add_argument("--allow-host", action="append", default=[], metavar="HOST",
                     help="HTTP: also accept this Host header (localhost always is); repeatable")  # fmt: skip
    run.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                     help="HTTP: also accept this Origin (local ones always are); repeatable")  # fmt: skip
    limits = run.add_argument_group("HTTP limits (see SECURITY.md)")
    for flag, kind, default, text in (
        ("--max-header-bytes", int, 64 * 1024, "bytes of a request head (431 beyond)"),
        ("--header-timeout", float, 10.0, "seconds a request head may take (408 after)"),
        ("--keep-alive-timeout", int, 5, "seconds an idle connection is kept"),
        ("--max-body-bytes", int, 4 * 1024 * 1024, "bytes of a request body (413 beyond)"),
        ("--body-timeout", float, 30.0, "seconds the rest of a request body may take (408 after)"),
        ("--max-sessions", int, 10_000, "handshake-era sessions at once (503 beyond)"),
        ("--max-requests-per-session", int, 256, "requests in flight per session (an error beyond)"),
        ("--stream-queue-limit", int, 1024, "messages queued for an unread stream (it ends beyond)"),
    ):
        limits.add_argument(flag, type=_positive(kind), default=default, help=f"{text} (default: {default})")
    run.set_defaults(handler=_cmd_run)

    def client_command(name: str, help_text: str) -> argparse.ArgumentParser:
        cmd = sub.add_parser(name, help=help_text)
        cmd.add_argument(
            "target", metavar="TARGET", help="a command line that starts a server, or a .py file"
        )
        cmd.add_argument("--json", action="store_true", help="print JSON instead of a table")
        cmd.add_argument("--protocol-version", metavar="REVISION", help="force a protocol revision")
        return cmd

    tools = client_command("tools", "list a server's tools")
    tools.set_defaults(handler=_cmd_tools)
    call = client_command("call", "call one tool and print the result")
    call.add_argument("tool")
    call.add_argument("arguments", nargs="?", default="{}", help="the arguments as a JSON object")
    call.set_defaults(handler=_cmd_call)

    demo = sub.add_parser("demo", help="a client calling the bundled example servers")
    demo.set_defaults(handler=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mcpkit`` command."""
    args = _parser().parse_args(argv)
    from ._errors import MCPError

    try:
        return int(args.handler(args))
    except MCPError as exc:
        print(f"mcpkit: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
