"""The client commands: list (``tools``, ``resources``, ``templates``, ``prompts``), ``call``, ``read``,
``prompt``. Each connects through :mod:`._session` and prints through :mod:`._render`; nothing heavy
is imported until a command runs."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from ._common import add_target_options
from ._exits import FAILED, OK, USAGE, CliError
from .host import add_config_option, call_on_config, list_config_tools

__all__ = ["register"]

#: command -> (list method, result key, capability, what one item is called)
_LISTS = {
    "tools": ("tools/list", "tools", "tools", "tool"),
    "resources": ("resources/list", "resources", "resources", "resource"),
    "templates": ("resources/templates/list", "resourceTemplates", "resources", "resource template"),
    "prompts": ("prompts/list", "prompts", "prompts", "prompt"),
}


def _server_name(client: Any, args: argparse.Namespace) -> str:
    info = client.server_info
    return str(info.name) if info is not None and info.name else str(args.target)


async def _list(client: Any, method: str, key: str) -> list[Any]:
    from ..client.exchange import list_all

    return [item for item in await list_all(client.request, method, key) if isinstance(item, dict)]


def _require(client: Any, args: argparse.Namespace, capability: str) -> None:
    """A usage error when the server does not offer *capability* at all (rather than its -32601)."""
    if capability not in client.server_capabilities:
        raise CliError(f"{_server_name(client, args)} offers no {capability}", USAGE)


def _cmd_list(args: argparse.Namespace) -> int:
    from ._render import Output, first_line, signature
    from ._session import run_client

    method, key, capability, noun = _LISTS[args.command]
    out = Output(as_json=args.json)

    async def action(client: Any, _: Any) -> int:
        if capability not in client.server_capabilities:
            from ._feedback import warn

            warn(f"{_server_name(client, args)} offers no {capability}")
            items: list[Any] = []
        else:
            items = await _list(client, method, key)
        name = getattr(args, "name", None)
        if name is not None:
            from ._arguments import check_name

            check_name(name, [str(i.get("name")) for i in items], noun, _server_name(client, args))
            item = next(i for i in items if i.get("name") == name)
            out.json(item) if out.as_json else out.detail(item)
            return OK
        if out.as_json:
            out.json(items)
            return OK
        title = f"{_server_name(client, args)} · protocol {client.protocol_version}"
        if args.command in ("tools", "prompts"):
            rows = [
                [str(i.get("name")), _arguments_text(args.command, i), first_line(i.get("description"))]
                for i in items
            ]
            out.table(title, [noun, "arguments", "description"], rows)
        else:
            address = "uri" if args.command == "resources" else "uriTemplate"
            rows = [
                [
                    str(i.get(address)),
                    str(i.get("title") or i.get("name") or ""),
                    str(i.get("mimeType") or ""),
                    first_line(i.get("description")),
                ]
                for i in items
            ]
            out.table(title, [noun, "name", "type", "description"], rows)
        if not items and out.tty:
            out.text(f"(no {args.command})", dim=True)
        return OK

    def _arguments_text(command: str, item: dict[str, Any]) -> str:
        if command == "tools":
            return signature(item.get("inputSchema"))
        arguments = item.get("arguments")
        arguments = arguments if isinstance(arguments, list) else []
        return ", ".join(
            f"{a.get('name')}{'' if a.get('required') else '?'}" for a in arguments if isinstance(a, dict)
        )

    return run_client(args, action)


def _cmd_info(args: argparse.Namespace) -> int:
    from ._render import Output
    from ._session import run_client

    out = Output(as_json=args.json)

    async def action(client: Any, _: Any) -> int:
        info = client.server_info
        described = {
            "protocolVersion": client.protocol_version,
            "supportedVersions": client.supported_versions,
            "serverInfo": {"name": info.name, "version": info.version} if info is not None else None,
            "capabilities": client.server_capabilities,
            "instructions": client.instructions,
        }
        if out.as_json:
            out.json(described)
            return OK
        name = f"{info.name} {info.version}" if info is not None else "(it did not say)"
        out.text(f"server: {name}")
        others = [v for v in client.supported_versions if v != client.protocol_version]
        also = f" (it also speaks {', '.join(others)})" if others else ""
        out.text(f"protocol: {client.protocol_version}{also}")
        out.text(f"capabilities: {', '.join(sorted(client.server_capabilities)) or 'none'}")
        if client.instructions:
            out.text(f"instructions: {client.instructions}")
        return OK

    return run_client(args, action)


def _cmd_call(args: argparse.Namespace) -> int:
    from .._errors import InvalidParams
    from ._arguments import arguments_from_words, check_name
    from ._render import Output
    from ._session import run_client

    out = Output(as_json=args.json, save=args.save)

    async def action(client: Any, feedback: Any) -> int:
        _require(client, args, "tools")
        tools = await client.list_tools()  # also what the HTTP transport mirrors into Mcp-Param-* headers
        by_name = {tool.name: tool for tool in tools}
        where = _server_name(client, args)
        # A protected server lists only the tools the token's scopes allow: with --auth an unlisted
        # tool is called all the same, so that its 403 makes the client ask for more scope.
        hidden = args.tool not in by_name and getattr(args, "oauth", None) is not None
        if not hidden:
            check_name(args.tool, list(by_name), "tool", where)
        schema = by_name[args.tool].input_schema if not hidden else {}
        arguments = arguments_from_words(args.arguments, schema, f"tool {args.tool}")
        params = {"name": args.tool, "arguments": arguments}
        try:
            result = await client.request("tools/call", params, on_progress=feedback.progress)
        except InvalidParams as exc:
            if hidden and "unknown tool" in str(exc).lower():  # not hidden: the server has none
                check_name(args.tool, list(by_name), "tool", where)
            raise
        feedback.close()
        if not isinstance(result, dict):
            raise CliError(f"the server answered tools/call with {type(result).__name__}, not a result")
        if out.as_json:
            out.json(result)
        else:
            out.tool_result(result)
        return FAILED if result.get("isError") is True else OK

    return run_client(args, action)


def _cmd_read(args: argparse.Namespace) -> int:
    from .._errors import RPCError
    from ._render import Output
    from ._session import run_client

    out = Output(as_json=args.json, save=args.save)

    async def action(client: Any, feedback: Any) -> int:
        _require(client, args, "resources")
        try:
            result = await client.request("resources/read", {"uri": args.uri}, on_progress=feedback.progress)
        except RPCError as exc:
            if exc.code not in (-32002, -32602):
                raise
            raise await _unknown_resource(client, args, exc) from None
        feedback.close()
        if out.as_json:
            out.json(result)
        else:
            out.contents(result.get("contents") if isinstance(result, dict) else None)
        return OK

    return run_client(args, action)


async def _unknown_resource(client: Any, args: argparse.Namespace, exc: Any) -> CliError:
    """A resource the server does not have: "did you mean" among its resources, unless a template
    matches the URI (then the server's own message says what is missing)."""
    from .._uritemplate import UriTemplate
    from ._arguments import suggest

    resources = await _list(client, "resources/list", "resources")
    templates = await _list(client, "resources/templates/list", "resourceTemplates")
    for template in templates:
        with contextlib.suppress(Exception):  # a template mcpkit cannot parse matches nothing
            if UriTemplate(str(template.get("uriTemplate"))).match(args.uri) is not None:
                return CliError(f"{args.uri}: {exc}", FAILED)  # the server says what is missing
    known = [str(r.get("uri")) for r in resources] + [str(t.get("uriTemplate")) for t in templates]
    return CliError(suggest(args.uri, known, "resource", _server_name(client, args)), USAGE)


def _cmd_prompt(args: argparse.Namespace) -> int:
    from ._arguments import arguments_from_words, check_name
    from ._render import Output
    from ._session import run_client

    out = Output(as_json=args.json, save=args.save)

    async def action(client: Any, feedback: Any) -> int:
        _require(client, args, "prompts")
        prompts = {str(p.get("name")): p for p in await _list(client, "prompts/list", "prompts")}
        check_name(args.name, list(prompts), "prompt", _server_name(client, args))
        declared = [a for a in prompts[args.name].get("arguments") or [] if isinstance(a, dict)]
        schema = {
            "properties": {str(a.get("name")): {"type": "string"} for a in declared},
            "required": [str(a.get("name")) for a in declared if a.get("required")],
        }
        arguments = arguments_from_words(args.arguments, schema, f"prompt {args.name}")
        if any(not isinstance(v, str) for v in arguments.values()):
            raise CliError("prompt arguments are strings: quote numbers and the like in the JSON", USAGE)
        params = {"name": args.name, "arguments": arguments}
        result = await client.request("prompts/get", params, on_progress=feedback.progress)
        feedback.close()
        if out.as_json:
            out.json(result)
            return OK
        messages = result.get("messages") if isinstance(result, dict) else None
        for message in messages if isinstance(messages, list) else []:
            if isinstance(message, dict):
                out.text(f"[{message.get('role')}]", dim=True)
                out.block(message.get("content"))
        return OK

    return run_client(args, action)


_CALL_EXAMPLES = """\
examples:
  mcpkit call examples/weather.py get_weather location=Paris
  mcpkit call examples/weather.py forecast location=Oslo days=2 --json
  mcpkit call http://127.0.0.1:8000/mcp forecast '{"location": "Oslo", "days": 2}'
  mcpkit call examples/travel.py plan_trip destination=Rome --sampling-command 'llm'
"""


def register(sub: Any) -> None:
    info = sub.add_parser(
        "info",
        help="what a server says about itself",
        description="Connect and show the server's name and version, the protocol revision agreed on "
        "(and the others it speaks), its capabilities and its instructions.",
    )
    add_target_options(info)
    info.set_defaults(handler=_cmd_info)
    helps = {
        "tools": "list a server's tools",
        "resources": "list a server's resources",
        "templates": "list a server's resource templates",
        "prompts": "list a server's prompts",
    }
    for name, text in helps.items():
        cmd = sub.add_parser(name, help=text, description=f"{text[0].upper()}{text[1:]}.")
        add_target_options(cmd)
        if name in ("tools", "prompts"):
            cmd.add_argument("name", nargs="?", metavar="NAME", help=f"show this one {name[:-1]} in full")
        cmd.set_defaults(handler=_cmd_list)
        if name == "tools":  # mcpkit tools --config CONFIG [SERVER [NAME]]: a host config's tools
            add_config_option(cmd, _cmd_list, list_config_tools)
    call = sub.add_parser(
        "call",
        help="call one tool and print the result",
        description="Call a tool and print its result.\n\n"
        "Arguments are key=value words typed by the tool's input schema (a string property takes the\n"
        "text as is; numbers, booleans, arrays and objects are read as JSON; key:=JSON is always\n"
        "JSON), after an optional JSON object (- reads it from stdin) whose keys they override.",
        epilog=_CALL_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    output = add_target_options(call)
    call.add_argument("tool", metavar="TOOL", help="the tool's name")
    call.add_argument(
        "arguments",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="arguments, after an optional JSON object (or -: one from stdin)",
    )
    output.add_argument("--save", metavar="DIR", help="write images, audio and blobs to files in DIR")
    call.set_defaults(handler=_cmd_call)
    add_config_option(call, _cmd_call, call_on_config, call=True)  # mcpkit call --config CONFIG ...
    read = sub.add_parser("read", help="read a resource", description="Read a resource and print it.")
    output = add_target_options(read)
    read.add_argument("uri", metavar="URI", help="the resource's URI")
    output.add_argument("--save", metavar="DIR", help="write blobs to files in DIR")
    read.set_defaults(handler=_cmd_read)
    prompt = sub.add_parser(
        "prompt", help="get a prompt", description="Fill in a prompt and print its messages."
    )
    output = add_target_options(prompt)
    prompt.add_argument("name", metavar="NAME", help="the prompt's name")
    prompt.add_argument(
        "arguments",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="arguments, after an optional JSON object (or -: one from stdin)",
    )
    output.add_argument("--save", metavar="DIR", help="write images, audio and blobs to files in DIR")
    prompt.set_defaults(handler=_cmd_prompt)
