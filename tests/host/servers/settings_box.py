"""A server for the audit tests: one tool taking any JSON object, so a caller can send nested secrets."""

from __future__ import annotations

from typing import Any

from mcpkit import Server

server = Server("settings-box", "1.0.0")


@server.tool
def save(settings: dict[str, Any]) -> str:
    """Pretend to save *settings*; say how many top-level entries there were."""
    return f"saved {len(settings)}"
