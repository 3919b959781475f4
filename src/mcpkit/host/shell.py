"""The interactive shell of ``mcpkit host``: list, describe and call the host's tools.

Commands: ``list``, ``status``, ``describe NAME``, ``call NAME [key=value ...]`` (arguments the tool
requires and the line did not give are asked for, one by one, from its input schema), ``resources``,
``read URI``, ``prompts``, ``help``, ``quit``. Lines are read in a worker thread so the servers' connections keep running meanwhile.

Everything it prints (and its prompts) may quote a server: it goes through :func:`_say` (or
:func:`_line`), which on a terminal shows control characters as visible escapes (:mod:`._terminal`).
"""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from typing import Any

import msgspec

from .._errors import MCPError
from ._host import Host
from ._terminal import shown

__all__ = ["shell"]

_HELP = """commands:
  list                       the servers and their tools
  status                     each server's state
  describe NAME              a tool's description and input schema
  call NAME [key=value ...]  call a tool (missing required arguments are asked for)
  resources                  the resources and resource templates
  read URI                   read a resource (routed to the server that has it)
  prompts                    the prompts
  quit                       leave"""


def _say(text: object) -> None:
    print(shown(str(text), sys.stdout))


async def _line(prompt: str) -> str | None:
    try:
        return await asyncio.get_running_loop().run_in_executor(None, input, shown(prompt, sys.stdout))
    except EOFError:
        return None


def _coerce(text: str, field: Any) -> Any:
    if isinstance(field, dict) and field.get("type") == "string":
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


async def _arguments(pairs: list[str], schema: dict[str, Any]) -> dict[str, Any] | None:
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    properties = properties or {}
    arguments: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            _say(f"expected key=value, got {pair!r}")
            return None
        arguments[key] = _coerce(value, properties.get(key))
    for key in schema.get("required", []):
        if key in arguments:
            continue
        field = properties.get(key, {})
        hint = field.get("description") or field.get("type") or "value"
        answer = await _line(f"  {key} ({hint}): ")
        if answer is None:
            return None
        arguments[key] = _coerce(answer, field)
    return arguments


def _print_tools(host: Host) -> None:
    for tool in host.tools():
        _say(
            f"  {tool.name}  {(tool.description or '').splitlines()[0] if tool.description else ''}".rstrip()
        )


async def shell(host: Host, *, ask_yes: bool = False) -> int:
    """Read commands until ``quit`` or end of input; 0 at the end."""
    _say(f"{len(host.tools())} tools from {len(host.status())} servers; 'help' lists the commands")
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
        command, rest = words[0], words[1:]
        if command in ("quit", "exit"):
            return 0
        if command == "help":
            _say(_HELP)
        elif command == "list":
            _print_tools(host)
        elif command == "status":
            for key, status in host.status().items():
                _say(f"  {key}: {status.state}" + (f" ({status.error})" if status.error else ""))
        elif command == "resources":
            for resource in host.resources():
                _say(f"  {resource.uri}  {resource.name}")
            for template in host.resource_templates():
                _say(f"  {template.uri_template}  {template.name} (template)")
        elif command == "prompts":
            for prompt in host.prompts():
                _say(f"  {prompt.name}  {prompt.description or ''}".rstrip())
        elif command == "read" and rest:
            try:
                contents = (await host.read_resource(rest[0])).contents
            except MCPError as exc:
                _say(f"error: {exc}")
                continue
            for item in contents:
                text = getattr(item, "text", None)
                _say(text if text is not None else f"[{item.mime_type or 'binary'} content]")
        elif command in ("describe", "call") and rest:
            tool = next((t for t in host.tools() if t.name == rest[0]), None)
            if tool is None:
                _say(f"no tool {rest[0]!r}")
                continue
            if command == "describe":
                _say(json.dumps(msgspec.to_builtins(tool), indent=2))
                continue
            arguments = await _arguments(rest[1:], tool.input_schema)
            if arguments is None:
                continue
            try:
                result = await host.call_tool(tool.name, arguments)
            except MCPError as exc:
                _say(f"error: {exc}")
                continue
            for block in result.content:
                text = getattr(block, "text", None)
                _say(text if text is not None else json.dumps(msgspec.to_builtins(block)))
        else:
            _say(f"unknown command {line!r}; 'help' lists the commands")
