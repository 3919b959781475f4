"""Answering ``sampling/createMessage`` with a command the user names (``--sampling-command CMD``).

The command runs through the shell once per request, gets the request's params as JSON on its stdin,
and its stdout (stripped) is the assistant's reply text; its stderr passes through to ours. A command
that exits non-zero refuses the request with its exit status, so the server hears why.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any

from ._feedback import warn

__all__ = ["SamplingCommand"]


class SamplingCommand:
    """The client's ``sampling`` callback: ``await SamplingCommand("llm -m mini")(params)``."""

    def __init__(
        self,
        command: str,
        hold_clocks: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext,
    ) -> None:
        self.command = command
        #: A context in which the caller's request timers stand still (a model may take a while).
        self.hold_clocks = hold_clocks

    async def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        from .._errors import RPCError

        with self.hold_clocks():
            process = await asyncio.create_subprocess_shell(
                self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
            )
            out, _ = await process.communicate(json.dumps(params, ensure_ascii=False).encode())
        if process.returncode != 0:
            why = f"the sampling command {self.command!r} failed (exit code {process.returncode})"
            warn(why)
            # -1: the code the spec's examples use for a sampling request the user did not allow.
            raise RPCError(-1, why)
        return {
            "role": "assistant",
            "content": {"type": "text", "text": out.decode(errors="replace").strip()},
            "model": self.command.split()[0] if self.command.split() else "command",
            "stopReason": "endTurn",
        }
