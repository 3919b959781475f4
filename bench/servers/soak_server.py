"""The benchmark's mcpkit server plus one tool that reports what the process holds, for the soak.

``bench/soak.py`` calls ``soak_stats`` at each sample to count the event loop's tasks (the one
figure the operating system cannot see), so a task leaked per session or per call shows.
"""

from __future__ import annotations

import asyncio
import threading

from mcpkit_server import server  # this folder is on sys.path when mcpkit run loads a file


@server.tool
async def soak_stats() -> dict[str, int]:
    """Live asyncio tasks (this call's own included) and Python threads."""
    return {"tasks": len(asyncio.all_tasks()), "threads": threading.active_count()}
