"""``mcpkit demo``: a client calling the bundled example servers, in both protocol eras.

It spawns ``examples/weather.py`` and ``examples/notes.py`` as real stdio servers, lets the client
negotiate (2026-07-28 through ``server/discover``), then talks to the notes server again through the
``initialize`` handshake of 2025-11-25, and prints what came back.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["main"]


def examples_dir() -> Path:
    """Where the example servers are: ``$MCPKIT_EXAMPLES``; else the copies an installed wheel
    carries (``mcpkit/_examples``); else the repository's ``examples/``."""
    configured = os.environ.get("MCPKIT_EXAMPLES")
    if configured:
        return Path(configured)
    packaged = Path(__file__).resolve().parent / "_examples"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "examples"


def _command(example: str) -> list[str]:
    return [sys.executable, "-m", "mcpkit", "run", str(examples_dir() / example)]


async def _run(console: Any) -> None:
    from rich.table import Table

    from .client import Client
    from .types import TextContent

    def show(title: str, result: Any) -> None:
        texts = [block.text for block in result.content if isinstance(block, TextContent)]
        style = "red" if result.is_error is True else "green"
        console.print(
            f"  [bold]{title}[/bold] →", f"[{style}]" + " | ".join(texts).replace("\n", " · ") + f"[/{style}]"
        )

    async with Client(_command("weather.py")) as weather:
        info = weather.server_info
        console.rule(
            f"[bold]{info.name if info else '?'}[/bold] over stdio, protocol {weather.protocol_version}"
        )
        table = Table("tool", "description", box=None, header_style="bold cyan")
        for tool in await weather.list_tools():
            table.add_row(tool.name, str(tool.description).split("\n")[0])
        console.print(table)
        show("get_weather(Paris)", await weather.call_tool("get_weather", {"location": "Paris"}))
        data = await weather.call_tool("get_weather_data", {"location": "Oslo", "unit": "fahrenheit"})
        show("get_weather_data(Oslo)", data)
        console.print("  structuredContent:", data.structured_content)
        show("forecast(days=12)", await weather.call_tool("forecast", {"location": "Lima", "days": 12}))
        show("get_weather(location=42)", await weather.call_tool("get_weather", {"location": 42}))

    async with Client(_command("notes.py"), protocol_version="2025-11-25") as notes:
        console.rule(
            f"[bold]notes[/bold] over stdio, protocol {notes.protocol_version} (initialize handshake)"
        )
        created = await notes.call_tool("create_notebook", {"title": "groceries"})
        show("create_notebook", created)
        notebook_id = created.structured_content["notebook_id"]  # type: ignore[index]
        for text in ("eggs", "coffee"):
            show(
                f"add_note({text})",
                await notes.call_tool("add_note", {"notebook_id": notebook_id, "text": text}),
            )
        show("list_notes", await notes.call_tool("list_notes", {"notebook_id": notebook_id}))
        show("list_notes(bad handle)", await notes.call_tool("list_notes", {"notebook_id": "nb_nope"}))
        contents = (await notes.read_resource(f"notes://{notebook_id}")).contents[0]
        console.print(f"  [bold]read notes://{notebook_id}[/bold] →", repr(contents.text))
        prompt = await notes.get_prompt("summarize", {"notebook_id": notebook_id})
        console.print("  [bold]prompt summarize[/bold] →", repr(prompt.messages[0].content.text))  # type: ignore[union-attr]

    async def confirm(params: dict[str, Any]) -> dict[str, Any]:
        console.print(f"  [yellow]server asks:[/yellow] {params['message']} → yes, for 2")
        return {"action": "accept", "content": {"confirm": True, "travellers": 2}}

    async def model(params: dict[str, Any]) -> dict[str, Any]:
        console.print(f"  [yellow]server samples:[/yellow] {params['messages'][0]['content']['text']}")
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "walk the old town"},
            "model": "demo",
        }

    for version in (None, "2025-06-18"):
        async with Client(
            _command("travel.py"), protocol_version=version, elicitation=confirm, sampling=model
        ) as travel:
            how = (
                "input_required rounds" if travel.protocol_version >= "2026" else "server-to-client requests"
            )
            console.rule(
                f"[bold]travel[/bold], protocol {travel.protocol_version}: the tool asks back ({how})"
            )
            show("plan_trip(Tallinn)", await travel.call_tool("plan_trip", {"destination": "Tallinn"}))


def main() -> int:
    from rich.console import Console

    console = Console()
    if not (examples_dir() / "weather.py").is_file():
        console.print(f"[red]no example servers in {examples_dir()}; set MCPKIT_EXAMPLES[/red]")
        return 1
    asyncio.run(_run(console))
    console.rule("[bold green]done[/bold green]")
    return 0
