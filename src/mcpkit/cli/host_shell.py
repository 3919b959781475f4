"""The interactive shell of ``mcpkit host``: list, describe and call the host's tools, read, prompt.

Commands: ``list``, ``status``, ``describe NAME``, ``call NAME [key=value ...]``, ``resources``,
``read URI``, ``prompts``, ``prompt NAME [key=value ...]``, ``help``, ``quit``. Arguments are read
as ``mcpkit call`` reads them (:mod:`mcpkit._schema_words`: dotted keys for nested fields, JSON for
any non-string field), and required ones the line did not give, nested ones too, are asked for one
by one. A name the host does not have, tool, prompt or command, gets a "did you mean". A call's
progress is shown while it runs (one line, redrawn, on a terminal; a line per report elsewhere).
Lines are read in a worker thread so the servers' connections keep running meanwhile.

Everything it prints (and its prompts) may quote a server: it goes through :func:`_say` (or
:func:`_line`), which on a terminal shows control characters as visible escapes (:mod:`._terminal`).
"""

from __future__ import annotations

import asyncio
import difflib
import json
import shlex
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from .._errors import MCPError
from .._schema_view import field_lines, find_field, read_schema, signature, type_text
from .._schema_words import WordsError, arguments_from_words, missing, suggest
from ..host import Host
from ._terminal import shown

__all__ = ["shell"]

_HELP = """commands:
  list (or tools)              the servers and their tools
  status                       each server's state
  describe NAME                a tool's signature, description and arguments
  call NAME [key=value ...]    call a tool (missing required arguments are asked for)
  resources                    the resources and resource templates
  read URI                     read a resource (routed to the server that has it)
  prompts                      the prompts
  prompt NAME [key=value ...]  fill in a prompt and show its messages
  quit                         leave
arguments: key=value, a.b=value for a nested field, key=JSON for any non-string field"""


def _say(text: object) -> None:
    print(shown(str(text), sys.stdout))


async def _line(prompt: str) -> str | None:
    try:
        return await asyncio.get_running_loop().run_in_executor(None, input, shown(prompt, sys.stdout))
    except EOFError:
        return None


async def _arguments(words: list[str], schema: Any, what: str) -> dict[str, Any] | None:
    """The arguments *words* give, then each required field they leave out, asked for (``None``:
    the input ended). A bad word is said and nothing is called."""
    try:
        arguments = arguments_from_words(words, schema, what)
    except WordsError as exc:
        _say(exc)
        return None
    root = read_schema(schema)
    while left := missing(arguments, schema):
        path = left[0]
        field = find_field(root, path) or {}
        if field.get("kind") == "object" and field.get("fields"):
            # A typed argument left out: ask for its fields one by one, not for a JSON object.
            arguments = arguments_from_words([f"{path}={{}}"], schema, what, base=arguments)
            continue
        hint = field.get("description") or type_text(field)
        answer = await _line(f"  {path} ({hint}): ")
        if answer is None:
            return None
        try:
            arguments = arguments_from_words([f"{path}={answer}"], schema, what, base=arguments)
        except WordsError as exc:
            _say(f"  {exc}")  # and the same field is asked again
    return arguments


def _print_tools(host: Host) -> None:
    for tool in host.tools():
        _say(
            f"  {tool.name}  {(tool.description or '').splitlines()[0] if tool.description else ''}".rstrip()
        )


class _Progress:
    """A call's progress reports: one line redrawn on a terminal, a line each elsewhere."""

    def __init__(self) -> None:
        self.tty = sys.stdout.isatty()
        self.drawn = False

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        amount = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        text = shown(f"  [{amount}]" + (f" {message}" if message else ""), sys.stdout)
        if self.tty:
            sys.stdout.write("\r\x1b[K" + text)
            sys.stdout.flush()
            self.drawn = True
        else:
            print(text, flush=True)

    def done(self) -> None:
        if self.drawn:
            sys.stdout.write("\r\x1b[K")
            sys.stdout.flush()


def _show_blocks(blocks: list[Any]) -> None:
    for block in blocks:
        text = getattr(block, "text", None)
        _say(text if text is not None else json.dumps(msgspec.to_builtins(block)))


class _Shell:
    """One session of the shell: its commands, each a ``do_`` method taking the line's other words."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.commands: dict[str, Callable[[list[str]], Awaitable[None]]] = {
            "list": self.do_list,
            "tools": self.do_list,  # what a newcomer types first
            "status": self.do_status,
            "describe": self.do_describe,
            "call": self.do_call,
            "resources": self.do_resources,
            "read": self.do_read,
            "prompts": self.do_prompts,
            "prompt": self.do_prompt,
            "help": self.do_help,
        }

    async def run(self, words: list[str]) -> None:
        command, rest = words[0], words[1:]
        handler = self.commands.get(command)
        if handler is None:
            close = difflib.get_close_matches(command, [*self.commands, "quit"], n=2, cutoff=0.6)
            guess = f"; did you mean {' or '.join(close)}?" if close else ""
            _say(f"unknown command {command!r}{guess} ('help' lists the commands)")
            return
        await handler(rest)

    async def do_help(self, rest: list[str]) -> None:
        _say(_HELP)

    async def do_list(self, rest: list[str]) -> None:
        _print_tools(self.host)

    async def do_status(self, rest: list[str]) -> None:
        for key, status in self.host.status().items():
            _say(f"  {key}: {status.state}" + (f" ({status.error})" if status.error else ""))

    async def do_resources(self, rest: list[str]) -> None:
        for resource in self.host.resources():
            _say(f"  {resource.uri}  {resource.name}")
        for template in self.host.resource_templates():
            _say(f"  {template.uri_template}  {template.name} (template)")

    async def do_prompts(self, rest: list[str]) -> None:
        for prompt in self.host.prompts():
            names = ", ".join(a.name + ("" if a.required else "?") for a in prompt.arguments or [])
            _say(f"  {prompt.name}({names})  {prompt.description or ''}".rstrip())

    async def do_read(self, rest: list[str]) -> None:
        if not rest:
            _say("read what? read URI")
            return
        try:
            contents = (await self.host.read_resource(rest[0])).contents
        except MCPError as exc:
            _say(f"error: {exc}")
            return
        for item in contents:
            text = getattr(item, "text", None)
            _say(text if text is not None else f"[{item.mime_type or 'binary'} content]")

    def _tool(self, name: str | None, command: str) -> Any:
        if name is None:
            _say(f"{command} what? {command} NAME (list shows the tools)")
            return None
        tool = next((t for t in self.host.tools() if t.name == name), None)
        if tool is None:
            _say(suggest(name, [t.name for t in self.host.tools()], "tool", "the host"))
        return tool

    async def do_describe(self, rest: list[str]) -> None:
        tool = self._tool(rest[0] if rest else None, "describe")
        if tool is None:
            return
        _say(signature(tool.name, tool.input_schema))
        if tool.description:
            _say(tool.description.strip())
        lines = field_lines(read_schema(tool.input_schema))
        _say("arguments:" if lines else "arguments: none")
        for line in lines:
            _say(f"  {line}")

    async def do_call(self, rest: list[str]) -> None:
        tool = self._tool(rest[0] if rest else None, "call")
        if tool is None:
            return
        arguments = await _arguments(rest[1:], tool.input_schema, f"tool {tool.name}")
        if arguments is None:
            return
        progress = _Progress()
        try:
            result = await self.host.call_tool(tool.name, arguments, on_progress=progress)
        except MCPError as exc:
            progress.done()
            _say(f"error: {exc}")
            return
        progress.done()
        _show_blocks(list(result.content))

    async def do_prompt(self, rest: list[str]) -> None:
        if not rest:
            _say("prompt what? prompt NAME [key=value ...] (prompts lists them)")
            return
        found = next((p for p in self.host.prompts() if p.name == rest[0]), None)
        if found is None:
            _say(suggest(rest[0], [p.name for p in self.host.prompts()], "prompt", "the host"))
            return
        declared = list(found.arguments or [])
        schema = {
            "type": "object",
            "properties": {
                a.name: {"type": "string", **({"description": a.description} if a.description else {})}
                for a in declared
            },
            "required": [a.name for a in declared if a.required],
        }
        arguments = await _arguments(rest[1:], schema, f"prompt {found.name}")
        if arguments is None:
            return
        try:
            result = await self.host.get_prompt(found.name, {k: str(v) for k, v in arguments.items()})
        except MCPError as exc:
            _say(f"error: {exc}")
            return
        for message in result.messages:
            _say(f"[{message.role}]")
            _show_blocks([message.content])


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


async def shell(host: Host, *, ask_yes: bool = False) -> int:
    """Read commands until ``quit`` or end of input; 0 at the end."""
    tools, servers = len(host.tools()), len(host.status())
    _say(f"{_count(tools, 'tool')} from {_count(servers, 'server')}; 'help' lists the commands")
    session = _Shell(host)
    while True:
        line = await _line("mcp> ")
        if line is None:
            return 0
        try:
            words = shlex.split(line)
        except ValueError as exc:
            _say(exc)
            continue
        if not words:
            continue
        if words[0] in ("quit", "exit"):
            return 0
        await session.run(words)
