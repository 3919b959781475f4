"""Opening a connection to what the inspector inspects: the dev file, a command line, or a URL.

Each target becomes a real transport wrapped in a :class:`~.recording.RecordingTransport`, so the
traffic panel sees every message. A spawned server's stderr is read line by line for the events
panel instead of going to the terminal that runs ``mcpkit dev``.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .._transport import Transport
from ..client.connect import is_url
from ..transports.stdio import StdioClientTransport

__all__ = ["Target", "dev_command", "spawn"]


@dataclass(frozen=True, slots=True)
class Target:
    """What to connect to: ``kind`` is ``"dev"``, ``"command"`` or ``"url"``."""

    kind: str
    value: str

    @staticmethod
    def parse(data: object, dev: list[str] | None) -> Target:
        """The target a browser asked for. Raises ``ValueError`` with a message for the page."""
        if not isinstance(data, dict):
            raise ValueError("target must be an object")
        kind, value = data.get("kind"), str(data.get("value") or "").strip()
        if kind == "dev":
            if dev is None:
                raise ValueError("mcpkit dev was started without a server file")
            return Target("dev", "")
        if kind == "url":
            if not is_url(value):
                raise ValueError("a URL target starts with http:// or https://")
            return Target("url", value)
        if kind == "command":
            if not value:
                raise ValueError("the command line is empty")
            return Target("command", value)
        raise ValueError(f"unknown target kind {kind!r}")

    def command(self, dev: list[str] | None) -> list[str]:
        """The command line that starts this (non-URL) target's server."""
        if self.kind == "dev":
            assert dev is not None
            return dev
        parts = shlex.split(self.value)
        if len(parts) == 1 and parts[0].endswith(".py") and Path(parts[0]).is_file():
            return [sys.executable, "-m", "mcpkit", "run", parts[0]]
        return parts


def dev_command(spec: str) -> list[str]:
    """How the dev server ``FILE.py[:OBJECT]`` is started: ``mcpkit run`` over stdio, with this Python.

    The file is named by its absolute path, so that the command works from anywhere (copied into a
    host's config, say)."""
    path, colon, name = spec.partition(":")
    return [sys.executable, "-m", "mcpkit", "run", f"{Path(path).resolve()}{colon}{name}"]


async def spawn(
    command: list[str], on_stderr: Callable[[str], None], env: dict[str, str] | None = None
) -> Transport:
    """Start *command* over stdio (with *env* added to the inspector's environment), handing each
    line of its stderr to *on_stderr*."""
    transport = await StdioClientTransport.spawn(command, env=env or None, stderr=asyncio.subprocess.PIPE)
    stream = transport.process.stderr
    if stream is not None:
        task = asyncio.ensure_future(_pump(stream, on_stderr))
        _PUMPS.add(task)
        task.add_done_callback(_PUMPS.discard)
    return transport


#: Running stderr readers (a task nobody references can be collected before it ends).
_PUMPS: set[asyncio.Task[None]] = set()


async def _pump(stream: asyncio.StreamReader, on_stderr: Callable[[str], None]) -> None:
    """Read in chunks, not lines: a huge line must not stop the reading (a full pipe would block
    the server). Lines longer than 4 KiB are cut."""
    pending = b""
    with contextlib.suppress(Exception):
        while chunk := await stream.read(65536):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                on_stderr(line[:4096].decode(errors="replace"))
            pending = pending[-4096:]
    if pending:
        on_stderr(pending.decode(errors="replace"))
