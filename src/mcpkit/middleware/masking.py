"""ErrorMasking: what went wrong stays in the server's log; the client reads a fixed sentence.

A tool's exception already reaches the client as one line (``Error executing tool add: KeyError:
'x'``, or less with ``Server(mask_errors=True)``) and its traceback goes to the server's log; a
tool's own ``ToolError`` message goes to the client as written. Behind a public endpoint even one
line can say too much (a path, a host name, a SQL fragment). This middleware replaces:

* a ``tools/call`` result with ``isError``: by its *message* (``{name}`` is the tool's name), its
  content and structured content dropped. ``tool_errors="unexpected"`` replaces only the results of
  exceptions the tool did not mean (those the server words ``Error executing tool NAME``), and
  leaves a tool's own ``ToolError`` text and argument errors to the client;
* an exception other than an ``MCPError`` escaping any other method: by an ``InternalError``
  (-32603) with *message*, its traceback logged;
* with ``protocol_errors=True``, an ``MCPError``'s message and data too: the client still gets the
  error's code (``-32602`` still means bad params), with *protocol_message*.

Every replaced original is logged on *logger* (at ``WARNING``; an exception's traceback at
``ERROR``). Nothing of it reaches the client.
"""

from __future__ import annotations

import logging
from typing import Any, Final, Literal

from .._errors import InternalError, RPCError
from .._middleware import Call, CallNext
from ..types import CallToolResult, TextContent
from .timing import subject_of

__all__ = ["ErrorMasking"]

DEFAULT_MESSAGE: Final = "The request failed; the server logged what went wrong"


def _text(result: CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))


class ErrorMasking:
    """Replace error details by a fixed message, and log the originals on the server.

    Args:
        message: what the client reads instead; ``{name}`` becomes the tool's name (or the method's).
        tool_errors: ``"all"`` (every ``isError`` result), ``"unexpected"`` (only those of a tool's
            unexpected exceptions) or ``"none"``.
        protocol_errors: also replace the message and data of JSON-RPC errors, keeping the code.
        protocol_message: the message of those, ``{name}`` as above.
        logger: where the originals go (a :class:`logging.Logger` or its name).

    Raises:
        ValueError: for a *message* with a ``{field}`` other than ``{name}``, or an unknown
            *tool_errors*.

    Example::

        >>> from mcpkit import Server
        >>> from mcpkit.middleware import ErrorMasking
        >>> server = Server("demo")
        >>> server.add_middleware(ErrorMasking("tool {name} failed", tool_errors="unexpected"))
    """

    __slots__ = ("logger", "message", "protocol_errors", "protocol_message", "tool_errors")

    def __init__(
        self,
        message: str = DEFAULT_MESSAGE,
        *,
        tool_errors: Literal["all", "unexpected", "none"] = "all",
        protocol_errors: bool = False,
        protocol_message: str = DEFAULT_MESSAGE,
        logger: logging.Logger | str = "mcpkit.errors",
    ) -> None:
        for text in (message, protocol_message):
            try:
                text.format(name="x")
            except (KeyError, IndexError, ValueError) as exc:
                raise ValueError(
                    f"ErrorMasking: {text!r} may use {{name}} and no other field ({exc})"
                ) from None
        if tool_errors not in ("all", "unexpected", "none"):
            raise ValueError(
                f"ErrorMasking: tool_errors must be 'all', 'unexpected' or 'none', not {tool_errors!r}"
            )
        self.message = message
        self.tool_errors = tool_errors
        self.protocol_errors = protocol_errors
        self.protocol_message = protocol_message
        self.logger = logger if isinstance(logger, logging.Logger) else logging.getLogger(logger)

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        name = subject_of(call) or call.method
        try:
            result = await call_next(call)
        except RPCError as exc:
            if not self.protocol_errors:
                raise
            self.logger.warning("%s %s: masked %r", call.method, name, exc)
            raise RPCError(exc.code, self.protocol_message.format(name=name)) from None
        except Exception as exc:  # (a 2026-07-28 question, InputRequired, is no Exception: it passes)
            self.logger.error("%s %s raised %s", call.method, name, type(exc).__name__, exc_info=exc)
            raise InternalError(self.message.format(name=name)) from None
        if isinstance(result, CallToolResult) and result.is_error and self._masks(result, name):
            self.logger.warning("tools/call %s: masked tool error: %s", name, _text(result))
            return CallToolResult(content=[TextContent(text=self.message.format(name=name))], is_error=True)
        return result

    def _masks(self, result: CallToolResult, name: str) -> bool:
        if self.tool_errors == "all":
            return True
        if self.tool_errors == "none":
            return False
        # The server words a tool's unexpected exception so (server/_results.py: tool_failed).
        return _text(result).startswith(f"Error executing tool {name}")
