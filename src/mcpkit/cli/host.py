"""``mcpkit host CONFIG``: a shell over every server of a host config, with consent prompts.

``mcpkit host CONFIG --list`` prints the servers and the tools, ``--call SERVER__TOOL key=value...``
calls one; without either, an interactive shell (``list``, ``status``, ``describe``, ``call``). The
config is any host application's file, or ``--from claude-desktop|...`` for its usual location.
Only the standard library is imported here; the host is imported inside the handler.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from ._exits import CANNOT_CONNECT, FAILED, OK, USAGE, CliError

__all__ = [
    "add_config_arguments",
    "add_config_option",
    "call_on_config",
    "list_config_tools",
    "parse_pairs",
    "read_config",
    "register",
]

FROM_CHOICES = ("claude-desktop", "claude-code", "cursor", "vscode", "windsurf", "zed", "goose")


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", nargs="?", help="a host config file (mcpServers JSON, VS Code, Zed, Goose)")
    parser.add_argument(
        "--from", dest="from_host", choices=FROM_CHOICES, help="read this application's own config file"
    )
    parser.add_argument(
        "--dialect", choices=("mcpServers", "vscode", "zed", "goose"), help="(default: detected)"
    )


def _ask_input(input_id: str, description: str, password: bool) -> str | None:
    """A VS Code ``${input:id}`` answered at the terminal; None when there is no terminal."""
    if not sys.stdin.isatty():
        return None
    import getpass

    prompt = f"{description or input_id}: "
    return getpass.getpass(prompt) if password else input(prompt)


def read_config(args: argparse.Namespace) -> Any:
    """The :class:`~mcpkit.host.HostConfig` that CONFIG or ``--from`` names."""
    from ..host import ConfigError, load_config

    if (args.config is None) == (args.from_host is None):
        raise CliError("give a config file or --from APPLICATION (one of them)", USAGE)
    path: Path
    if args.from_host == "claude-code":
        return _claude_code(args)
    if args.from_host is not None:
        from ._hosts import HOSTS

        path = HOSTS[args.from_host].file("user", Path.cwd())
        if not path.is_file():
            raise CliError(f"no {HOSTS[args.from_host].title} config at {path}", USAGE)
    else:
        path = Path(args.config)
    try:
        return load_config(path, dialect=args.dialect, ask_input=_ask_input)
    except ConfigError as exc:
        raise CliError(str(exc), USAGE) from None


def _claude_code(args: argparse.Namespace) -> Any:
    """Claude Code's servers of all three scopes, as it merges them: user (``~/.claude.json``),
    project (``.mcp.json`` here) and local (``~/.claude.json``'s entry for this folder), the
    narrower scope winning a name both have."""
    from ..host import ConfigError, parse_config
    from ..host._read import loads_jsonc
    from ._hosts import HOSTS

    project = Path.cwd()
    user_file = HOSTS["claude-code"].file("user", project)
    project_file = project / ".mcp.json"
    found = [path for path in (user_file, project_file) if path.is_file()]
    if not found:
        raise CliError(f"no Claude Code config at {user_file} or {project_file}", USAGE)
    try:
        user = (
            loads_jsonc(user_file.read_text(encoding="utf-8"), str(user_file)) if user_file.is_file() else {}
        )
        shared = (
            loads_jsonc(project_file.read_text(encoding="utf-8"), str(project_file))
            if project_file.is_file()
            else {}
        )
        local = ((user.get("projects") or {}).get(str(project)) or {}) if isinstance(user, dict) else {}
        servers: dict[str, Any] = {}
        for document in (user, shared, local):
            if isinstance(document, dict) and isinstance(document.get("mcpServers"), dict):
                servers.update(document["mcpServers"])
        merged: dict[str, Any] = {"mcpServers": servers}
        for document in (user, shared):
            if isinstance(document, dict) and "mcpkit" in document:
                merged["mcpkit"] = document["mcpkit"]
        return parse_config(merged, source=" + ".join(map(str, found)), workspace=str(project), base=project)
    except ConfigError as exc:
        raise CliError(str(exc), USAGE) from None


def parse_pairs(pairs: list[str], schema: dict[str, Any]) -> dict[str, Any]:
    """``key=value`` arguments: a value is JSON when the schema says it is not a string (or says
    nothing and it parses), else the text as written."""
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    arguments: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CliError(f"expected key=value, got {pair!r}", USAGE)
        arguments[key] = _value(value, (properties or {}).get(key))
    return arguments


def _value(text: str, field: Any) -> Any:
    wanted = field.get("type") if isinstance(field, dict) else None
    if wanted == "string":
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _log_to_terminal() -> None:
    """Python logging's warnings on stderr, as its last-resort handler writes them (the message
    alone), but escaped on a terminal: the host's clients log what servers send them
    (``notifications/message``) and the host logs their errors, both a server's text."""
    import logging

    from ._terminal import shown

    class Escaping(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            return shown(super().format(record), sys.stderr)

    root = logging.getLogger()
    if not root.handlers:  # the application's own logging, if configured, is left as it is
        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(logging.WARNING)
        handler.setFormatter(Escaping("%(message)s"))
        root.addHandler(handler)


def _say(text: str) -> None:
    """One line on stdout: what servers said, shown on a terminal with control characters escaped."""
    from ._terminal import shown

    print(shown(text, sys.stdout))


def _show_result(result: Any) -> int:
    for block in result.content:
        text = getattr(block, "text", None)
        _say(text if text is not None else json.dumps(_builtins(block)))
    return FAILED if result.is_error else OK


def _builtins(value: Any) -> Any:
    import msgspec

    return msgspec.to_builtins(value)


def _print_list(host: Any) -> None:
    for key, status in host.status().items():
        extra = f" ({status.error})" if status.error else ""
        _say(f"{key}: {status.state} {status.protocol_version}{extra}")
    for tool in host.tools():
        description = (tool.description or "").split("\n")[0]
        decision, _ = host.decision(tool.name)
        _say(f"  {tool.name}  [{decision}]  {description}".rstrip())


async def _terminal_consent(request: Any) -> bool | None:
    """The user's answer at the terminal; None (nobody could be asked) when stdin is no terminal."""
    from ._terminal import shown

    if not sys.stdin.isatty():
        from ._feedback import warn

        warn(f"{request.name} needs your consent, and stdin is not a terminal to ask it on "
             "(run the command in a terminal, or allow every call with --yes)")  # fmt: skip
        return None
    loop = asyncio.get_running_loop()
    arguments = json.dumps(request.arguments, ensure_ascii=False)
    prompt = shown(f"allow {request.name} {arguments}? [y/N] ", sys.stdout)
    answer = await loop.run_in_executor(None, input, prompt)
    return answer.strip().lower() in ("y", "yes")


async def _yes(request: Any) -> bool:
    return True


async def _run(args: argparse.Namespace) -> int:
    import getpass

    from ..host import Host
    from ..host.audit import AuditLog

    config = read_config(args)
    audit = AuditLog(Path(args.audit), config.audit.redact if config.audit else ()) if args.audit else None
    ask = _yes if args.yes else _terminal_consent
    _log_to_terminal()
    async with Host(config, ask=ask, audit=audit, caller=f"mcpkit host ({getpass.getuser()})") as host:
        if not any(s.state == "ready" for s in host.status().values()) and host.status():
            _print_list(host)
            raise CliError("no server could be reached", CANNOT_CONNECT)
        if args.list:
            _print_list(host)
            return OK
        if args.call:
            name, *pairs = args.call
            tool = next((t for t in host.tools() if t.name == name), None)
            if tool is None:
                raise CliError(f"no tool {name!r} (see --list)", USAGE)
            return _show_result(await host.call_tool(name, parse_pairs(pairs, tool.input_schema)))
        from .host_shell import shell

        return await shell(host, ask_yes=args.yes)


def _cmd_host(args: argparse.Namespace) -> int:
    return asyncio.run(_run(args))


# -- mcpkit tools|call --config CONFIG ------------------------------------------------------------


def add_config_option(
    cmd: argparse.ArgumentParser, handler: Any, on_config: Any, *, call: bool = False
) -> None:
    """``--config CONFIG`` on a client command: TARGET then names a server of the config, or is left
    out (``mcpkit tools --config mcp.json``), and *on_config* runs instead of *handler*. For
    ``call``, ``--yes`` as ``mcpkit host`` has it."""
    cmd.add_argument(
        "--config",
        metavar="CONFIG",
        help="work on a host config instead: TARGET is then one of its servers (or, for call, "
        "SERVER__TOOL), and the host's consent policy and audit log apply (see docs/host.md)",
    )
    for action in cmd._actions:  # TARGET (and call's TOOL) may be left out with --config
        if action.dest == "target" or (call and action.dest == "tool"):
            action.nargs, action.required = "?", False
    if call:
        cmd.add_argument(
            "--yes", action="store_true", help="with --config: answer yes to every consent question"
        )
        cmd.add_argument(
            "--audit",
            metavar="PATH",
            help="with --config: the audit log (default: the config's, else the state dir)",
        )

    def dispatch(args: argparse.Namespace) -> int:
        if args.config is not None:
            return int(on_config(args))
        missing = [n.upper() for n in ("target", "tool") if n in vars(args) and getattr(args, n) is None]
        if missing:  # as argparse says it when they cannot be left out
            cmd.error(f"the following arguments are required: {', '.join(missing)}")
        return int(handler(args))

    cmd.set_defaults(handler=dispatch)


def _config_of(args: argparse.Namespace) -> Any:
    return read_config(argparse.Namespace(config=args.config, from_host=None, dialect=None))


def _with_only(config: Any, key: str | None) -> Any:
    """The config with only server *key* (a call need not start the others); all without one."""
    import dataclasses

    if key is None:
        return config
    return dataclasses.replace(config, servers={key: config.servers[key]})


def _server_key(config: Any, name: str) -> str | None:
    """The key of the server *name* means (its config name, or its key), if it is one."""
    from .. import _naming as naming

    if name in config.servers:
        return name
    key = naming.normalise_key(name)
    return key if key in config.servers else None


async def _started(config: Any, args: argparse.Namespace, key: str | None, ask: Any = None) -> Any:
    import getpass

    from ..host import Host
    from ..host.audit import AuditLog

    command = "call" if ask is not None else "tools"
    _log_to_terminal()
    path = getattr(args, "audit", None)
    audit = AuditLog(Path(path), config.audit.redact if config.audit else ()) if path else None
    host = Host(config, ask=ask, audit=audit, caller=f"mcpkit {command} ({getpass.getuser()})")
    await host.start()
    down = [s for k, s in host.status().items() if s.state != "ready" and (key is None or k == key)]
    if down and (key is not None or len(down) == len(host.status())):
        detail = "; ".join(f"{s.key}: {s.state}" + (f" ({s.error})" if s.error else "") for s in down)
        await host.aclose()
        raise CliError(f"cannot reach {detail}", CANNOT_CONNECT)
    return host


def list_config_tools(args: argparse.Namespace) -> int:
    """``mcpkit tools --config CONFIG [SERVER [NAME]]``: the host's tools (named ``SERVER__TOOL``), or
    one server's (under its own names), with what the consent policy says of each."""
    from ._arguments import check_name, suggest
    from ._render import Output, first_line, signature

    config = _config_of(args)
    key = None
    if args.target is not None:
        key = _server_key(config, args.target)
        if key is None:
            raise CliError(suggest(args.target, list(config.servers), "server", str(args.config)), USAGE)
    out = Output(as_json=args.json)

    async def main() -> int:
        host = await _started(_with_only(config, key), args, key)
        try:
            rows: list[tuple[str, Any, str]] = []
            for tool in host.tools():
                routed = host.route(tool.name)
                shown = routed.name if key is not None else tool.name
                rows.append((shown, tool, host.decision(tool.name)[0]))
        finally:
            await host.aclose()
        where = key or str(args.config)
        items = {shown: {**_builtins(tool), "name": shown} for shown, tool, _ in rows}
        if args.name is not None:
            check_name(args.name, list(items), "tool", where)
            out.json(items[args.name]) if out.as_json else out.detail(items[args.name])
            return OK
        if out.as_json:
            out.json(list(items.values()))
            return OK
        table = [[shown, signature(items[shown].get("inputSchema")), decision, first_line(tool.description)]
                 for shown, tool, decision in rows]  # fmt: skip
        out.table(f"{where} · {len(rows)} tools", ["tool", "arguments", "policy", "description"], table)
        return OK

    return asyncio.run(main())


def call_on_config(args: argparse.Namespace) -> int:
    """``mcpkit call --config CONFIG SERVER TOOL [args]`` or ``... SERVER__TOOL [args]``: one call
    through the host, its consent policy (``--yes``, else asked at a terminal, else no) and audit log."""
    from .. import _naming as naming
    from ._arguments import arguments_from_words, check_name, suggest
    from ._render import Output

    config = _config_of(args)
    words = list(args.arguments)
    if args.target is None:
        raise CliError(
            "name the tool: SERVER TOOL, or SERVER__TOOL as 'mcpkit tools --config' lists it", USAGE
        )
    key = _server_key(config, args.target)
    if key is not None:  # SERVER TOOL
        if args.tool is None:
            raise CliError(f"name a tool of {key} (see mcpkit tools --config {args.config} {key})", USAGE)
        name = None
    else:  # SERVER__TOOL: what TOOL took is the first argument
        name = args.target
        words = ([args.tool] if args.tool is not None else []) + words
        original = {new: old for old, new in config.rename.items()}.get(name, name)
        parts = naming.split(original)
        if parts is None or parts[0] not in config.servers:
            known = list(config.servers)
            raise CliError(suggest(args.target, known, "server or SERVER__TOOL", str(args.config)), USAGE)
        key = parts[0]
    out = Output(as_json=args.json, save=args.save)
    ask = _yes if args.yes else _terminal_consent

    async def main() -> int:
        host = await _started(_with_only(config, key), args, key, ask)
        try:
            tools = {tool.name: tool for tool in host.tools()}
            chosen = name
            if chosen is None:
                local = {host.route(n).name: n for n in tools}
                check_name(args.tool, list(local), "tool", key)
                chosen = local[args.tool]
            check_name(chosen, list(tools), "tool", str(args.config))
            arguments = arguments_from_words(words, tools[chosen].input_schema, f"tool {chosen}")
            result = _builtins(await host.call_tool(chosen, arguments))
        finally:
            await host.aclose()
        out.json(result) if out.as_json else out.tool_result(result)
        return FAILED if result.get("isError") is True else OK

    return asyncio.run(main())


def register(sub: Any) -> None:
    parser = sub.add_parser("host", help="connect to every server of a host config: list, call, consent")
    add_config_arguments(parser)
    parser.add_argument("--list", action="store_true", help="print the servers and their tools, then exit")
    parser.add_argument(
        "--call", nargs="+", metavar="ARG", help="SERVER__TOOL [key=value ...]: call one tool"
    )
    parser.add_argument("--yes", action="store_true", help="answer yes to every consent question")
    parser.add_argument(
        "--audit", metavar="PATH", help="the audit log (default: the config's, else the state dir)"
    )
    parser.set_defaults(handler=_cmd_host)
