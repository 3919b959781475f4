"""Timing and Logging: what each request was, how long it took and how it ended.

Both wrap the rest of the chain with one clock reading before and one after, and describe the
request as a :class:`CallRecord`: the method, the tool or prompt name (or the resource URI), the
seconds it took, and its outcome:

* ``ok``: answered;
* ``tool-error``: a ``tools/call`` answered with ``isError`` (the tool's own error, or a refusal by
  middleware inside this one);
* ``error``: answered with a JSON-RPC error (``error`` says which: ``InvalidParams -32602``), or an
  exception other than an ``MCPError`` (``error`` is its class name);
* ``input-required``: a 2026-07-28 round that asked the client for input (the retry is a request of
  its own, with a record of its own);
* ``cancelled``: the client cancelled it, or its connection went.

Argument values are never recorded unless asked (``arguments=True``), and then as the middleware
sees them: wrap it in :class:`~mcpkit.middleware.RedactArguments` to hide secrets.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, Final

import msgspec

from .._errors import RPCError
from .._middleware import Call, CallNext
from .._mrtr import InputRequired
from ..types import CallToolResult

__all__ = ["CallRecord", "Logging", "Timing", "subject_of"]

# The parameter that names what a request is about, per method: it goes in the record beside it.
_SUBJECT_PARAM: Final = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "resources/subscribe": "uri",
    "resources/unsubscribe": "uri",
}
_ARGUMENTS_CHARS: Final = 2000


def subject_of(call: Call) -> str | None:
    """The tool or prompt name, or the resource URI, that *call* is about (``None`` for others)."""
    key = _SUBJECT_PARAM.get(call.method)
    value = call.params.get(key) if key is not None else None
    return value if isinstance(value, str) else None


class CallRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One request as :class:`Timing` and :class:`Logging` saw it."""

    method: str
    #: What the request was about: the tool or prompt name, the resource URI; else ``None``.
    name: str | None
    seconds: float
    #: ``ok``, ``tool-error``, ``error``, ``input-required`` or ``cancelled``.
    outcome: str
    #: For ``error``: the error's kind (``InvalidParams -32602``, ``ValueError``); else ``None``.
    error: str | None = None
    #: The request's ``arguments`` when the middleware was asked to record them, else ``None``.
    arguments: dict[str, Any] | None = None


def _kind(exc: BaseException) -> str:
    if isinstance(exc, RPCError):
        return f"{type(exc).__name__} {exc.code}"
    return type(exc).__name__


async def _observe(
    call: Call,
    call_next: CallNext,
    clock: Callable[[], float],
    with_arguments: bool,
    report: Callable[[CallRecord, BaseException | None], None],
) -> Any:
    """Run *call* on, and hand *report* its :class:`CallRecord` (and the exception, if one ended it)."""
    arguments = call.params.get("arguments") if with_arguments else None
    started = clock()
    outcome, error, failure = "ok", None, None
    try:
        result = await call_next(call)
    except (asyncio.CancelledError, InputRequired) as exc:
        outcome = "cancelled" if isinstance(exc, asyncio.CancelledError) else "input-required"
        raise
    except Exception as exc:
        outcome, error, failure = "error", _kind(exc), exc
        raise
    else:
        if isinstance(result, CallToolResult) and result.is_error:
            outcome = "tool-error"
        return result
    finally:
        record = CallRecord(
            method=call.method,
            name=subject_of(call),
            seconds=clock() - started,
            outcome=outcome,
            error=error,
            arguments=arguments if isinstance(arguments, dict) else None,
        )
        report(record, failure)


def _logger(logger: logging.Logger | str) -> logging.Logger:
    return logger if isinstance(logger, logging.Logger) else logging.getLogger(logger)


class Timing:
    """How long each request took, to *callback* and/or a logger.

    Args:
        callback: called with each :class:`CallRecord` (metrics, a histogram); it must not block.
        logger: where a line per request goes (a :class:`logging.Logger` or its name), at
            *level*; ``None`` logs nothing (give a callback then).
        level: the level of those lines (``DEBUG``: timings are for when one looks).
        clock: seconds as a float (``time.perf_counter``); tests give their own.

    Example::

        >>> from mcpkit import Server
        >>> from mcpkit.middleware import Timing
        >>> seen = []
        >>> server = Server("demo")
        >>> server.add_middleware(Timing(seen.append))
    """

    __slots__ = ("callback", "clock", "level", "logger")

    def __init__(
        self,
        callback: Callable[[CallRecord], object] | None = None,
        *,
        logger: logging.Logger | str | None = "mcpkit.timing",
        level: int = logging.DEBUG,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.callback = callback
        self.logger = _logger(logger) if logger is not None else None
        self.level = level
        self.clock = clock

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        return await _observe(call, call_next, self.clock, False, self._report)

    def _report(self, record: CallRecord, failure: BaseException | None) -> None:
        if self.callback is not None:
            self.callback(record)
        if self.logger is not None and self.logger.isEnabledFor(self.level):
            self.logger.log(
                self.level,
                "%s%s %.3f ms %s",
                record.method,
                f" {record.name}" if record.name is not None else "",
                record.seconds * 1000,
                record.outcome if record.error is None else f"{record.outcome} ({record.error})",
                extra={"mcp_call": record},
            )


class Logging:
    """A log line per request: what it was, how it ended and how long it took.

    ``tools/call add ok 0.412 ms``; a request answered with an error logs at *error_level* with the
    error's kind (``resources/read file:///x error (ResourceNotFound -32002) 0.2 ms: ...``). The
    line's record is on the log record as ``mcp_call`` (a :class:`CallRecord`), for structured
    handlers.

    Args:
        logger: a :class:`logging.Logger` or its name.
        level: the level of requests that were answered (a tool error included).
        error_level: the level of requests that ended in an error.
        arguments: also log the request's ``arguments`` (JSON, cut at 2,000 characters). Off by
            default; wrap the middleware in :class:`~mcpkit.middleware.RedactArguments` to hide
            secret ones.
        clock: seconds as a float; tests give their own.
    """

    __slots__ = ("arguments", "clock", "error_level", "level", "logger")

    def __init__(
        self,
        logger: logging.Logger | str = "mcpkit.requests",
        *,
        level: int = logging.INFO,
        error_level: int = logging.WARNING,
        arguments: bool = False,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.logger = _logger(logger)
        self.level = level
        self.error_level = error_level
        self.arguments = arguments
        self.clock = clock

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        return await _observe(call, call_next, self.clock, self.arguments, self._report)

    def _report(self, record: CallRecord, failure: BaseException | None) -> None:
        level = self.error_level if record.outcome == "error" else self.level
        if not self.logger.isEnabledFor(level):
            return
        line = record.method if record.name is None else f"{record.method} {record.name}"
        line += f" {record.outcome}"
        if record.error is not None:
            line += f" ({record.error})"
        line += f" {record.seconds * 1000:.3f} ms"
        if failure is not None:
            line += f": {failure}"
        if record.arguments is not None:
            text = msgspec.json.encode(record.arguments).decode()
            if len(text) > _ARGUMENTS_CHARS:
                text = text[:_ARGUMENTS_CHARS] + "..."
            line += f" arguments={text}"
        self.logger.log(level, "%s", line, extra={"mcp_call": record})
