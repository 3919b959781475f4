"""What the server tells us while it works, shown on stderr: its log messages and the progress of a call.

On a terminal progress is a rich bar (log lines print above it); otherwise each update is one plain
line, so a log file or CI output reads well. Questions to the user (elicitation) pause the bar.

What the server wrote (log lines, progress messages) is shown on a terminal with its control
characters as visible escapes (:mod:`mcpkit.cli._terminal`); on a pipe it is written as sent.

A call answered over several rounds (a 2026-07-28 ``input_required`` result, retried with the
user's answers) runs the tool again from the top, and the tool reports its progress again: each
round has a new request id and so a new progress token, but it is one call to the user. So the
progress of one call never goes back: an update whose ``progress`` is not beyond the highest
already shown is a replay of what the user saw, and is not shown again (the spec has progress
increase with each notification, so within one round none is dropped).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from typing import Any

from ._terminal import shown, visible

__all__ = ["Feedback", "warn"]


def warn(message: str) -> None:
    """One line on stderr, the way every mcpkit message starts."""
    sys.stderr.write(shown(f"mcpkit: {message}", sys.stderr) + "\n")
    sys.stderr.flush()


class Feedback:
    """The stderr side of a command: server logs, progress, and a place to ask questions from."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self._bar: Any = None  # rich.progress.Progress, once a progress notification arrives
        self._task: Any = None
        self._highest: float | None = None  # the most progress shown for this command's call

    def line(self, text: str) -> None:
        """One line on stderr, above the progress bar if there is one (escaped on a terminal)."""
        if self._bar is not None:
            from rich.text import Text

            self._bar.console.print(Text(visible(text)), highlight=False, soft_wrap=True)
        else:
            sys.stderr.write((visible(text) if self.tty else text) + "\n")
            sys.stderr.flush()

    async def log(self, params: dict[str, Any]) -> None:
        """``notifications/message``: ``server info: text`` (``server info [logger]: ...``)."""
        data = params.get("data")
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        logger = params.get("logger")
        source = f" [{logger}]" if isinstance(logger, str) and logger else ""
        self.line(f"server {params.get('level', 'info')}{source}: {text}")

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """``notifications/progress`` for our call: a bar on a terminal, a line otherwise; a replayed
        update (not beyond what was shown: see the module's docstring) is not shown again."""
        if self._highest is not None and progress <= self._highest:
            return
        self._highest = progress
        if not self.tty:
            amount = f"{progress:g}/{total:g}" if total else f"{progress:g}"
            self.line(f"progress {amount}" + (f": {message}" if message else ""))
            return
        if self._bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("{task.description}", markup=False),  # the server's text, never markup
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._task = self._bar.add_task("working", total=None)
            self._bar.start()
        description = visible(message) if message else "working"
        self._bar.update(self._task, completed=progress, total=total, description=description)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Stop redrawing the bar while the user types."""
        bar = self._bar
        if bar is not None:
            bar.stop()
        try:
            yield
        finally:
            if bar is not None:
                bar.start()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
