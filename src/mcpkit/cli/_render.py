"""Printing what servers answer: for people on a terminal (rich), as plain lines on a pipe, or as JSON.

On a pipe nothing is wrapped, coloured or padded: one item per line, so ``grep`` and ``cut`` work and
URLs stay whole. ``--json`` prints the result exactly as the server sent it, keys sorted, two-space
indent, UTF-8 (stable across runs, so outputs can be diffed). Binary content (images, audio, blobs)
is summarised as ``[image: image/png, 12.3 kB]``, and written to files with ``--save DIR``.

On a terminal the server's text is shown with its control characters as visible escapes
(:mod:`mcpkit.cli._terminal`), and never read as rich markup: text reaches the terminal only
through :meth:`Output._terminal_text`, JSON only through ``visible_json``.
"""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
import sys
from pathlib import Path
from typing import Any

from ._exits import USAGE, CliError
from ._terminal import visible, visible_json

__all__ = ["Output", "first_line", "signature", "size_text"]


#: Types common in MCP results that some systems' mimetypes tables lack.
_EXTENSIONS = {"audio/wav": ".wav", "audio/mpeg": ".mp3", "audio/ogg": ".ogg", "image/webp": ".webp"}


def size_text(size: int) -> str:
    """``123 B``, ``12.3 kB``, ``4.5 MB`` (powers of 1000, as file managers show them)."""
    if size < 1000:
        return f"{size} B"
    if size < 1_000_000:
        return f"{size / 1000:.1f} kB"
    return f"{size / 1_000_000:.1f} MB"


def first_line(text: Any) -> str:
    return text.strip().split("\n")[0].strip() if isinstance(text, str) else ""


def signature(schema: Any) -> str:
    """A tool's arguments as ``order: Order{item: str, qty: int ≥1}, note?: str`` (``?``: optional;
    nested objects spelled out two levels deep): :mod:`mcpkit._schema_view` reads the schema."""
    from .._schema_view import arguments_text, read_schema

    return arguments_text(read_schema(schema)) if isinstance(schema, dict) else ""


class Output:
    """Where a command's answer goes: stdout, shaped for a terminal, a pipe, or ``--json``."""

    def __init__(self, *, as_json: bool = False, save: str | None = None) -> None:
        self.as_json = as_json
        self.save_dir = Path(save) if save else None
        self.tty = sys.stdout.isatty()
        self._saved = 0
        self._console: Any = None

    @property
    def console(self) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(soft_wrap=True, highlight=False)
        return self._console

    # -- plain pieces ------------------------------------------------------------------------------

    def json(self, value: Any) -> None:
        """``--json``: on a pipe byte for byte what the server sent (keys sorted); on a terminal the
        same document with its control characters as ``\\u`` escapes (it parses to the same value)."""
        text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
        sys.stdout.write((visible_json(text) if self.tty else text) + "\n")

    def _terminal_text(self, text: str, style: str | None = None) -> Any:
        """A server's *text* as the terminal should show it: control characters escaped, and a
        rich ``Text`` (not a string), so that ``[bold]`` or ``[link=...]`` in it is never markup."""
        from rich.text import Text

        return Text(visible(text), style=style or "")

    def text(self, text: str, *, error: bool = False, dim: bool = False) -> None:
        if self.tty:
            style = "bold red" if error else ("dim" if dim else None)
            self.console.print(self._terminal_text(text, style), highlight=False)
        else:
            sys.stdout.write(text + ("" if text.endswith("\n") else "\n"))

    def data(self, value: Any) -> None:
        """A JSON value for people: a string as text, anything else indented."""
        if isinstance(value, str):
            self.text(value)
        elif self.tty:
            from rich.highlighter import JSONHighlighter
            from rich.text import Text

            # Highlighted as rich.json.JSON would, from the escaped text: JSON() would parse the
            # document again and write the server's characters back raw.
            shown = Text(visible_json(json.dumps(value, indent=2, ensure_ascii=False)))
            self.console.print(JSONHighlighter()(shown))
        else:
            self.text(json.dumps(value, indent=2, ensure_ascii=False))

    def table(self, title: str, columns: list[str], rows: list[list[str]]) -> None:
        """A rich table on a terminal; on a pipe, each row as one line, cells joined by two spaces
        (the first cell and the second joined as ``name(arguments)`` when the second is arguments)."""
        if self.tty:
            from rich.table import Table

            table = Table(title=self._terminal_text(title), title_justify="left")
            for index, column in enumerate(columns):
                style = "bold cyan" if index == 0 else ("green" if column == "arguments" else None)
                table.add_column(column, style=style, no_wrap=index == 0)
            for row in rows:
                table.add_row(*(self._terminal_text(cell) for cell in row))
            self.console.print(table)
            return
        for row in rows:
            if len(columns) > 1 and columns[1] == "arguments":
                row = [f"{row[0]}({row[1]})", *row[2:]]
            sys.stdout.write("  ".join(cell for cell in row if cell) + "\n")

    def detail(self, item: dict[str, Any]) -> None:
        """One tool or prompt in full: its description, each argument, the output schema, hints."""
        title = item.get("title")
        self.text(str(item.get("name")) + (f" ({title})" if isinstance(title, str) and title else ""))
        if isinstance(item.get("inputSchema"), dict):
            self.text(f"{item.get('name')}({signature(item['inputSchema'])})")
        if isinstance(item.get("description"), str) and item["description"].strip():
            self.text(item["description"].strip())
        self.text("arguments:" if _arguments_of(item) else "arguments: none")
        for line in _arguments_of(item):
            self.text(f"  {line}")
        if isinstance(item.get("outputSchema"), dict):
            self.text("output schema:")
            self.data(item["outputSchema"])
        hints = item.get("annotations")
        if isinstance(hints, dict) and hints:
            self.text("annotations: " + ", ".join(f"{k}={json.dumps(v)}" for k, v in hints.items()))

    # -- binary content ----------------------------------------------------------------------------

    def binary(self, kind: str, data: Any, mime: Any, name: str | None = None) -> None:
        """``[image: image/png, 12.3 kB]``, and the bytes written under ``--save DIR``."""
        mime_text = mime if isinstance(mime, str) and mime else "application/octet-stream"
        raw = data if isinstance(data, str) else ""
        try:
            payload = base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            self.text(f"[{kind}: {mime_text}, not valid base64]", dim=True)
            return
        summary = f"{kind}: {mime_text}, {size_text(len(payload))}"
        if self.save_dir is not None:
            path = self._save(kind, payload, mime_text, name)
            summary += f", saved to {path}"
        self.text(f"[{summary}]", dim=True)

    def _save(self, kind: str, payload: bytes, mime: str, name: str | None) -> Path:
        assert self.save_dir is not None
        self._saved += 1
        base = mime.split(";")[0].strip().lower()
        extension = mimetypes.guess_extension(base) or _EXTENSIONS.get(base, ".bin")
        stem = Path(name).name if name else ""
        filename = stem if stem and "." in stem else f"{stem or kind}-{self._saved}{extension}"
        try:
            self.save_dir.mkdir(parents=True, exist_ok=True)
            path = self.save_dir / filename
            path.write_bytes(payload)
        except OSError as exc:
            raise CliError(f"cannot save to {self.save_dir}: {exc.strerror or exc}", USAGE) from None
        return path

    # -- results -----------------------------------------------------------------------------------

    def blocks(self, blocks: Any, *, error: bool = False, skip: int | None = None) -> None:
        """Content blocks (tool results, prompt messages), one after the other."""
        for index, block in enumerate(blocks if isinstance(blocks, list) else []):
            if index != skip:
                self.block(block, error=error)

    def block(self, block: Any, *, error: bool = False) -> None:
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(block, dict):
            self.data(block)
        elif kind == "text":
            self.text(str(block.get("text", "")), error=error)
        elif kind in ("image", "audio"):
            self.binary(kind, block.get("data"), block.get("mimeType"))
        elif kind == "resource_link":
            parts = [
                str(block.get("uri", "")),
                block.get("title") or block.get("name"),
                block.get("mimeType"),
            ]
            self.text(f"[resource link: {', '.join(str(p) for p in parts if p)}]", dim=True)
        elif kind == "resource":
            self.contents([block.get("resource")], header=True)
        else:
            self.data(block)

    def contents(self, contents: Any, *, header: bool = False) -> None:
        """Resource contents: text as is, blobs summarised (or saved)."""
        for item in contents if isinstance(contents, list) else []:
            if not isinstance(item, dict):
                continue
            uri = str(item.get("uri", ""))
            if "blob" in item:
                self.binary("blob", item.get("blob"), item.get("mimeType"), _uri_name(uri))
                continue
            if header:
                mime = item.get("mimeType")
                self.text(f"[resource: {uri}{', ' + mime if isinstance(mime, str) else ''}]", dim=True)
            self.text(str(item.get("text", "")))

    def tool_result(self, result: dict[str, Any]) -> None:
        """A ``tools/call`` result: its content, and its ``structuredContent`` printed once (not again
        when a text block only repeats it, as results for older clients do)."""
        error = result.get("isError") is True
        content = result.get("content") if isinstance(result.get("content"), list) else []
        assert isinstance(content, list)
        if "structuredContent" not in result:
            self.blocks(content, error=error)
            return
        structured = result["structuredContent"]
        repeat = _repeating_block(content, structured)
        if repeat is None:
            self.blocks(content, error=error)
            if content:
                self.text("structured content:", dim=True)
            self.data(structured)
            return
        # The text block is the structured content serialised: show the value once, readably.
        for index, block in enumerate(content):
            if index == repeat:
                value = _unwrapped(structured)
                self.data(value) if not error else self.text(str(block.get("text")), error=True)
            else:
                self.block(block, error=error)


def _arguments_of(item: dict[str, Any]) -> list[str]:
    """``name: type (required) = default - description`` for each argument of a tool (its nested
    fields indented below it) or prompt."""
    from .._schema_view import field_lines, read_schema

    schema = item.get("inputSchema")
    lines = field_lines(read_schema(schema)) if isinstance(schema, dict) else []
    for argument in item.get("arguments") or [] if "inputSchema" not in item else []:
        if isinstance(argument, dict):
            line = f"{argument.get('name')}" + (" (required)" if argument.get("required") else "")
            if isinstance(argument.get("description"), str):
                line += f" - {argument['description']}"
            lines.append(line)
    return lines


def _unwrapped(structured: Any) -> Any:
    """What a ``{"result": value}`` wrapper (for tools that return no object) wraps."""
    if isinstance(structured, dict) and list(structured) == ["result"]:
        return structured["result"]
    return structured


def _repeating_block(content: list[Any], structured: Any) -> int | None:
    """The index of the text block that only repeats *structured* (as JSON, or as the wrapped string)."""
    for index, block in enumerate(content):
        if (
            not isinstance(block, dict)
            or block.get("type") != "text"
            or not isinstance(block.get("text"), str)
        ):
            continue
        text = block["text"]
        if text == _unwrapped(structured):
            return index
        try:
            parsed = json.loads(text)
        except ValueError:
            continue
        if parsed == structured or parsed == _unwrapped(structured):
            return index
    return None


def _uri_name(uri: str) -> str | None:
    tail = uri.rstrip("/").rsplit("/", 1)[-1]
    return tail if tail and ":" not in tail else None
