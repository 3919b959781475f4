"""ResponseLimit: a tool result too large for the client is refused, not sent.

A tool that returns a whole table or file can answer with megabytes: more than a model's context
holds, and more than some clients or proxies accept in one message. Past *max_bytes* (the result's
size as JSON, content, structured content and ``_meta`` together) the result is replaced by a tool
error that names the size and the limit, so the model can ask for less (a page, a filter).

A tool error rather than the text cut at the limit: a truncated result would be read as a complete
one, a cut JSON text or structured value no longer parses or matches the tool's output schema, and
an image cannot be cut at all. A tool that can answer in part knows best where to cut; it should.
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec

from .._middleware import Call, CallNext
from ..types import CallToolResult, TextContent
from .timing import subject_of

__all__ = ["ResponseLimit"]

logger = logging.getLogger("mcpkit.middleware")


class ResponseLimit:
    """Refuse ``tools/call`` results over *max_bytes* of JSON with a tool error saying the limit.

    Other methods, and a call started as a task (whose creation result is small), pass untouched.

    Args:
        max_bytes: the largest result let through, in bytes of its JSON.
        message: the tool error's text; ``{name}``, ``{size}`` and ``{limit}`` are filled in.

    Raises:
        ValueError: *max_bytes* below 1, or a *message* with another field.

    Example::

        >>> from mcpkit import Server
        >>> from mcpkit.middleware import ResponseLimit
        >>> server = Server("demo")
        >>> server.add_middleware(ResponseLimit(1_000_000), methods=["tools/call"])
    """

    __slots__ = ("max_bytes", "message")

    def __init__(
        self,
        max_bytes: int,
        *,
        message: str = (
            "The result of tool {name} is {size} bytes, over this server's limit of {limit} bytes; "
            "ask for less (a page, a filter)"
        ),
    ) -> None:
        if max_bytes < 1:
            raise ValueError(f"ResponseLimit: max_bytes must be at least 1, not {max_bytes}")
        try:
            message.format(name="x", size=2, limit=1)
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(
                f"ResponseLimit: {message!r} may use {{name}}, {{size}}, {{limit}} ({exc})"
            ) from None
        self.max_bytes = max_bytes
        self.message = message

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        result = await call_next(call)
        if not isinstance(result, CallToolResult):
            return result
        size = len(msgspec.json.encode(result))
        if size <= self.max_bytes:
            return result
        name = subject_of(call) or "?"
        logger.warning("tools/call %s: result of %d bytes refused (limit %d)", name, size, self.max_bytes)
        text = self.message.format(name=name, size=size, limit=self.max_bytes)
        return CallToolResult(content=[TextContent(text=text)], is_error=True)
