"""``mcpkit demo``: a host over the bundled example servers, governed, and served as one gateway.

It starts ``examples/weather.py`` (2026-07-28), ``examples/notes.py`` (the 2025-11-25 handshake)
and ``examples/travel.py`` (2025-06-18) at once under the embedded config :data:`CONFIG`, shows
their tools under the host's names with the policy's decision for each, calls a few (one denied by a
rule), then serves the lot as one MCP server and calls the travel agent through it from a
2026-07-28 client and a 2025-11-25 one: the consent question and the server's own questions reach
each caller in its era (``input_required`` rounds, or requests). The audit log goes to a temporary
folder and its lines are shown at the end.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

__all__ = ["CONFIG", "main"]


def examples_dir() -> Path:
    """Where the example servers are: ``$MCPKIT_EXAMPLES``; else the copies an installed wheel
    carries (``mcpkit/_examples``); else the repository's ``examples/``."""
    configured = os.environ.get("MCPKIT_EXAMPLES")
    if configured:
        return Path(configured)
    packaged = Path(__file__).resolve().parent / "_examples"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "examples"


#: The demo's host config (``mcpServers`` with an ``mcpkit`` section); ``{run}`` and ``{examples}``
#: are filled in with this Python's ``-m mcpkit run`` and :func:`examples_dir`.
CONFIG: Final = """{
  "mcpServers": {
    "weather": {"command": "{python}", "args": ["-m", "mcpkit", "run", "{examples}/weather.py"]},
    "notes": {"command": "{python}", "args": ["-m", "mcpkit", "run", "{examples}/notes.py"],
              "protocolVersion": "2025-11-25"},
    "travel": {"command": "{python}", "args": ["-m", "mcpkit", "run", "{examples}/travel.py"],
               "protocolVersion": "2025-06-18", "tools": {"deny": ["where_to_save"]}}
  },
  "mcpkit": {
    "policy": {"default": "ask", "rules": [
      {"annotations": {"readOnlyHint": true}, "action": "allow"},
      {"server": "notes", "tool": "delete_*", "action": "deny"},
      {"server": "notes", "action": "allow"},
      {"server": "weather", "action": "allow"}
    ]},
    "rateLimits": [{"server": "weather", "rate": "20/s"}],
    "rename": {"weather__get_weather": "weather"}
  }
}"""


def _config(audit: Path) -> Any:
    from .host import AuditConfig, parse_config

    text = CONFIG.replace("{python}", json.dumps(sys.executable)[1:-1])
    text = text.replace("{examples}", json.dumps(str(examples_dir()))[1:-1])
    config = parse_config(json.loads(text))
    config.audit = AuditConfig(audit)
    return config


async def _run(console: Any, audit: Path) -> None:
    from rich.table import Table

    from .client import Client
    from .gateway import Gateway
    from .transports.memory import memory_pair
    from .types import TextContent

    def show(title: str, result: Any) -> None:
        texts = [block.text for block in result.content if isinstance(block, TextContent)]
        style = "red" if result.is_error is True else "green"
        joined = " | ".join(texts).replace("\n", " · ")
        console.print(f"  [bold]{title}[/bold] →", f"[{style}]{joined}[/{style}]")

    began = time.monotonic()
    gateway = Gateway(_config(audit), name="mcpkit-demo-gateway", stderr=subprocess.DEVNULL)
    async with gateway:
        host = gateway.host
        console.rule(
            f"[bold]host[/bold]: {len(host.upstreams)} servers connected at once in {time.monotonic() - began:.1f} s"
        )
        table = Table("tool (host name)", "server", "protocol", "policy", box=None, header_style="bold cyan")
        for tool in host.tools():
            routed = host.route(tool.name)
            decision, rule = host.decision(tool.name)
            colour = {"allow": "green", "deny": "red", "ask": "yellow"}[decision]
            version = host.status()[routed.server].protocol_version
            table.add_row(tool.name, routed.server, version, f"[{colour}]{decision}[/{colour}] ({rule})")
        console.print(table)

        console.rule("[bold]calls through the host[/bold], each routed to its server")
        show("weather(Paris)", await host.call_tool("weather", {"location": "Paris"}))
        show(
            "weather__forecast(days=12)",
            await host.call_tool("weather__forecast", {"location": "Lima", "days": 12}),
        )
        created = await host.call_tool("notes__create_notebook", {"title": "groceries"})
        show("notes__create_notebook", created)
        notebook = created.structured_content["notebook_id"]  # type: ignore[index]
        added = await host.call_tool("notes__add_note", {"notebook_id": notebook, "text": "eggs"})
        show("notes__add_note(eggs)", added)
        note_id = added.structured_content["note_id"]  # type: ignore[index]
        show(
            "notes__delete_note",
            await host.call_tool("notes__delete_note", {"notebook_id": notebook, "note_id": note_id}),
        )
        read = (await host.read_resource(f"notes://{notebook}")).contents[0]
        console.print(
            f"  [bold]read notes://{notebook}[/bold] → routed to notes →", repr(getattr(read, "text", ""))
        )

        async def confirm(params: dict[str, Any]) -> dict[str, Any]:
            message = params["message"]
            if "allow" in json.dumps(params.get("requestedSchema", {})):
                console.print(f"    [yellow]consent asked:[/yellow] {message} → yes")
                return {"action": "accept", "content": {"allow": True}}
            console.print(f"    [yellow]the travel server asks:[/yellow] {message} → yes, for 2")
            return {"action": "accept", "content": {"confirm": True, "travellers": 2}}

        async def model(params: dict[str, Any]) -> dict[str, Any]:
            console.print(
                f"    [yellow]the travel server samples:[/yellow] {params['messages'][0]['content']['text']}"
            )
            return {
                "role": "assistant",
                "content": {"type": "text", "text": "walk the old town"},
                "model": "demo",
            }

        for revision in (None, "2025-11-25"):
            ours, theirs = memory_pair()
            serving = asyncio.ensure_future(gateway.server.serve(theirs))
            async with Client(ours, protocol_version=revision, elicitation=confirm, sampling=model) as client:
                how = "input_required rounds" if client.protocol_version >= "2026" else "requests"
                console.rule(
                    f"[bold]gateway[/bold] to a {client.protocol_version} caller: questions travel as {how}"
                )
                tools = await client.list_tools()
                console.print(
                    f"  {len(tools)} tools in one server: " + ", ".join(t.name for t in tools[:4]) + ", ..."
                )
                show(
                    "travel__plan_trip(Tallinn)",
                    await client.call_tool("travel__plan_trip", {"destination": "Tallinn"}),
                )
            await serving


def _show_audit(console: Any, audit: Path) -> None:
    console.rule(f"[bold]audit log[/bold] ({audit.name}, one JSON line per call)")
    for line in audit.read_text().splitlines():
        entry = json.loads(line)
        console.print(
            f"  {entry['name']:<28} {entry['decision']:<9} {entry['outcome']:<14} {entry['caller']}"
        )


def main() -> int:
    from rich.console import Console

    console = Console()
    if not (examples_dir() / "weather.py").is_file():
        console.print(f"[red]no example servers in {examples_dir()}; set MCPKIT_EXAMPLES[/red]")
        return 1
    with tempfile.TemporaryDirectory() as folder:
        audit = Path(folder) / "audit.jsonl"
        asyncio.run(_run(console, audit))
        _show_audit(console, audit)
    console.rule("[bold green]done[/bold green]")
    return 0
