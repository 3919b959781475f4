"""Answering ``elicitation/create``: the server's form, asked field by field on the terminal.

Every field type of the spec's restricted schema is handled: strings (with length bounds), numbers
and integers (with bounds), booleans, single-choice enums (``enum``, ``oneOf`` with titles, legacy
``enumNames``) and multiple-choice arrays. Enter keeps a field's default; an optional field without
one is left out; a required one is asked again. Ctrl-D cancels the whole form.

A form is first offered (``Answer? [Y/n]``: no declines it), except a form of one yes/no field,
such as a gateway's consent question (``Allow this call (yes/no) [no]:``): that field is the whole
question, so it is asked at once and Enter gives its default, rather than asking twice.

The server's message, titles, descriptions and choices are shown with their control characters as
visible escapes (:mod:`mcpkit.cli._terminal`): they are written to the terminal the user types on.

When stdin is not a terminal nobody can answer: the request is cancelled at once (the spec's
``cancel``, "dismissed without making an explicit choice", not ``decline``, which is a person's
no), with one line on stderr saying so, rather than leaving the server waiting. A gateway asking
for consent tells the two apart: nobody could be asked, or the user said no.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from ._feedback import Feedback, warn
from ._terminal import shown

__all__ = ["Elicitor", "Form", "read_line"]

_YES = frozenset({"y", "yes", "true", "1", "on"})
_NO = frozenset({"n", "no", "false", "0", "off"})


class _Cancelled(Exception):
    """The user ended input (Ctrl-D)."""


async def read_line() -> str | None:
    """One line typed on the terminal (stdin), without blocking the event loop; ``None`` at EOF.

    The event loop watches fd 0 rather than a thread reading ``sys.stdin``, so Ctrl-C leaves no thread
    blocked on a read behind it.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[str | None] = loop.create_future()
    buffer = bytearray()

    def readable() -> None:
        try:
            chunk = os.read(0, 4096)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            if not done.done():
                done.set_result(buffer.decode(errors="replace") if buffer else None)
            return
        buffer.extend(chunk)
        if b"\n" in buffer and not done.done():
            done.set_result(buffer.decode(errors="replace").split("\n", 1)[0].rstrip("\r"))

    loop.add_reader(0, readable)
    try:
        return await done
    finally:
        loop.remove_reader(0)


def _choices(field: dict[str, Any]) -> list[tuple[Any, str]] | None:
    """(value, label) pairs of a single-choice field, or ``None`` if it is not one."""
    if isinstance(field.get("enum"), list):
        names = field.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(field["enum"]) else field["enum"]
        return [(value, str(label)) for value, label in zip(field["enum"], labels, strict=True)]
    for key in ("oneOf", "anyOf"):
        options = field.get(key)
        if isinstance(options, list) and all(isinstance(o, dict) and "const" in o for o in options):
            return [(o["const"], str(o.get("title", o["const"]))) for o in options]
    return None


class Form:
    """One form: asks its fields through *ask* (``async fn(prompt) -> line or None``), *say* prints."""

    def __init__(self, ask: Callable[[str], Awaitable[str | None]], say: Callable[[str], None]) -> None:
        self.ask = ask
        self.say = say

    async def _line(self, prompt: str) -> str:
        line = await self.ask(prompt)
        if line is None:
            raise _Cancelled
        return line.strip()

    async def run(self, message: str, schema: Any) -> dict[str, Any]:
        """The ``ElicitResult`` for *message* and *schema*."""
        self.say(f"The server asks: {message}")
        properties = schema.get("properties") if isinstance(schema, dict) else None
        required = schema.get("required", []) if isinstance(schema, dict) else []
        try:
            if not _one_yes_no(properties) and (await self._line("Answer? [Y/n] ")).lower() in _NO:
                return {"action": "decline"}
            content: dict[str, Any] = {}
            for name, field in (properties or {}).items():
                value = await self.field(name, field if isinstance(field, dict) else {}, name in required)
                if value is not _SKIP:
                    content[name] = value
        except _Cancelled:
            self.say("")
            return {"action": "cancel"}
        return {"action": "accept", "content": content}

    async def field(self, name: str, field: dict[str, Any], required: bool) -> Any:
        """Ask one field until the answer fits it."""
        label = str(field.get("title") or name)
        description = field.get("description")
        choices = _choices(field)
        items = field.get("items") if isinstance(field.get("items"), dict) else None
        multi = _choices(items) if field.get("type") == "array" and items is not None else None
        hint = _hint(field, choices or multi, multi is not None)
        default = field.get("default")
        shown_default = f" [{_show(default)}]" if "default" in field else (" (required)" if required else "")
        prompt = f"  {label}" + (f" - {description}" if description else "") + f" ({hint}){shown_default}: "
        while True:
            text = await self._line(prompt)
            if not text:
                if "default" in field:
                    return default
                if not required:
                    return _SKIP
                self.say("    an answer is required")
                continue
            try:
                return _parse(text, field, choices, multi)
            except ValueError as exc:
                self.say(f"    {exc}")


_SKIP = object()


def _one_yes_no(properties: Any) -> bool:
    """Whether a form's fields are one boolean: its answer says yes or no, and nothing else."""
    if not isinstance(properties, dict) or len(properties) != 1:
        return False
    (field,) = properties.values()
    return isinstance(field, dict) and field.get("type") == "boolean"


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _hint(field: dict[str, Any], choices: list[tuple[Any, str]] | None, multi: bool) -> str:
    if choices is not None:
        listed = ", ".join(
            f"{n}) {label}" if label == str(value) else f"{n}) {label} [{value}]"
            for n, (value, label) in enumerate(choices, start=1)
        )
        return ("several of: " if multi else "one of: ") + listed
    kind = field.get("type")
    if kind == "boolean":
        return "yes/no"
    bounds = [f"min {field[k]}" for k in ("minimum", "minLength") if k in field]
    bounds += [f"max {field[k]}" for k in ("maximum", "maxLength") if k in field]
    if isinstance(field.get("format"), str):
        bounds.append(field["format"])
    return ", ".join([str(kind or "text"), *bounds])


def _pick(text: str, choices: list[tuple[Any, str]]) -> Any:
    if text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1][0]
    for value, label in choices:
        if text == str(value) or text.lower() == label.lower():
            return value
    raise ValueError(f"choose one of {', '.join(str(v) for v, _ in choices)} (or its number)")


def _parse(text: str, field: dict[str, Any], choices: Any, multi: Any) -> Any:
    """*text* as the field's value. Raises ValueError saying what fits."""
    if multi is not None:
        picked = [_pick(part.strip(), multi) for part in text.split(",") if part.strip()]
        low, high = field.get("minItems"), field.get("maxItems")
        if (isinstance(low, int) and len(picked) < low) or (isinstance(high, int) and len(picked) > high):
            raise ValueError(f"choose between {low or 0} and {high or len(multi)} of them, comma-separated")
        return picked
    if choices is not None:
        return _pick(text, choices)
    kind = field.get("type")
    if kind == "boolean":
        if text.lower() in _YES | _NO:
            return text.lower() in _YES
        raise ValueError("answer yes or no")
    if kind in ("integer", "number"):
        try:
            number: float = int(text) if kind == "integer" else float(text)
        except ValueError:
            raise ValueError(f"type {'a whole number' if kind == 'integer' else 'a number'}") from None
        _check_bounds(number, field.get("minimum"), field.get("maximum"), "")
        return number
    _check_bounds(len(text), field.get("minLength"), field.get("maxLength"), " characters")
    return text


def _check_bounds(value: float, low: Any, high: Any, unit: str) -> None:
    if isinstance(low, (int, float)) and value < low:
        raise ValueError(f"at least {low}{unit}")
    if isinstance(high, (int, float)) and value > high:
        raise ValueError(f"at most {high}{unit}")


class Elicitor:
    """The client's ``elicitation`` callback for the command line.

    *hold_clocks* gives a context in which the caller's request timers stand still: the time a
    person takes to type is not the server being silent.
    """

    def __init__(
        self,
        feedback: Feedback,
        hold_clocks: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext,
    ) -> None:
        self.feedback = feedback
        self.interactive = sys.stdin.isatty()
        self.hold_clocks = hold_clocks
        self._lock = asyncio.Lock()  # one question at a time on one terminal

    async def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        message = str(params.get("message", ""))
        if not self.interactive:
            warn(
                f"left the server's question {message!r} unanswered: stdin is not a terminal "
                "(run the command in a terminal to answer it)"
            )
            return {"action": "cancel"}
        async with self._lock:
            with self.feedback.paused(), self.hold_clocks():
                if params.get("mode") == "url":
                    return await self._url(message, str(params.get("url", "")))
                return await Form(self._ask, self._say).run(message, params.get("requestedSchema"))

    async def _url(self, message: str, url: str) -> dict[str, Any]:
        self._say(f"The server asks: {message}")
        self._say(f"  open {url}")
        line = await self._ask("Done? [Y/n] ")
        if line is None:
            return {"action": "cancel"}
        return {"action": "decline" if line.strip().lower() in _NO else "accept"}

    async def _ask(self, prompt: str) -> str | None:
        sys.stderr.write(shown(prompt, sys.stderr))
        sys.stderr.flush()
        return await read_line()

    def _say(self, text: str) -> None:
        sys.stderr.write(shown(text, sys.stderr) + "\n")
        sys.stderr.flush()
