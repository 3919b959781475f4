"""``mcpkit install HOST FILE|URL``: add a server to a host application's MCP configuration.

The entry is written in the host's own format into its own file (or printed with ``--print``),
leaving every other server, setting and comment of that file as it was. See ``docs/install.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._hosts._launch import Launch

from ._exits import FAILED, USAGE, CliError

__all__ = ["register"]


def _launch(args: argparse.Namespace) -> Launch:
    from ._hosts._launch import missing_imports, parse_env, read_env_file, remote, stdio

    if args.target.startswith(("http://", "https://")):
        if args.env or args.env_file or args.packages:
            raise CliError("--env, --env-file and --with apply to a server file, not to a URL", USAGE)
        return remote(args.target, args.name, args.header)
    if args.header:
        raise CliError("--header applies to a URL, not to a server file (use --env for those)", USAGE)
    env = read_env_file(args.env_file) if args.env_file else {}
    env |= parse_env(args.env)  # --env wins over the file, as the more specific of the two
    launch = stdio(args.target, args.name, env, args.packages)
    missing = [] if args.packages else missing_imports(args.target)
    if missing:
        print(
            f"mcpkit: warning: {args.target} imports {', '.join(missing)}, which {sys.executable} cannot "
            "find; the host would fail to start it: install them there, or pass --with for each",
            file=sys.stderr,
        )
    return launch


def _cmd_install(args: argparse.Namespace) -> int:
    from ._hosts import HOSTS
    from ._hosts._edit import Unchanged, editor, nest
    from ._hosts._files import replace_file
    from ._hosts._jsonc import JSONCError
    from ._hosts._yamledit import YAMLEditError

    host = HOSTS[args.host]
    scope = args.scope or ("project" if args.project else host.scopes[0])
    if scope not in host.scopes:
        raise CliError(f"{host.title} has no {scope} configuration (it has: {', '.join(host.scopes)})", USAGE)
    project = Path(args.project or ".").resolve()
    launch = _launch(args)
    entry, key, section = host.entry(launch), host.key(launch.name), host.section(scope, project)
    path = Path(args.config).expanduser() if args.config else host.file(scope, project)
    if args.print:
        nested = nest(section, key, entry)
        if host.yaml:
            from ._hosts._yamledit import dumps

            sys.stdout.write(dumps(nested))
        else:
            print(json.dumps(nested, indent=2, ensure_ascii=False))
        print(f"mcpkit: nothing written; this entry belongs in {path}", file=sys.stderr)
        return 0
    try:
        _, backup = replace_file(path, editor(host, section, key, entry, args.force, path))
    except Unchanged:
        print(f"{host.title} already has this {key!r} entry in {path}; nothing to do")
        return 0
    except (JSONCError, YAMLEditError) as exc:
        raise CliError(f"cannot edit {path}: {exc}; the file was left as it was", FAILED) from None
    except UnicodeDecodeError:
        raise CliError(
            f"cannot edit {path}: it is not UTF-8 text; the file was left as it was", FAILED
        ) from None
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}", FAILED) from None
    print(f"Added {key!r} to {host.title}'s configuration: {path}")
    if backup is not None:
        print(f"The previous file is saved as {backup}")
    print(f"Restart {host.title} (or reload its MCP servers) to start it.")
    return 0


# The keys of ``_hosts.HOSTS``, spelled out so that building the parser (for ``mcpkit run`` too, the
# command hosts spawn) does not import the host tables.
HOST_NAMES = ("claude-code", "claude-desktop", "cursor", "goose", "vscode", "windsurf", "zed")


def register(sub: Any) -> None:
    cmd = sub.add_parser(
        "install",
        help="add a server to Claude, Cursor, VS Code, Windsurf, Zed or Goose",
        description=(
            "Write a server's entry into a host application's MCP configuration, in that host's "
            "format, keeping the file's other servers, settings and comments."
        ),
    )
    cmd.add_argument("host", metavar="HOST", choices=HOST_NAMES, help=", ".join(HOST_NAMES))
    cmd.add_argument(
        "target", metavar="FILE.py[:OBJECT]|URL", help="a server file, or the URL of a running server"
    )
    cmd.add_argument(
        "--name", help="the server's name in the host (default: Server's name in the file, or the URL's host)"
    )
    cmd.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                     help="an environment variable for the server; repeatable")  # fmt: skip
    cmd.add_argument(
        "--env-file", metavar="FILE", help="environment variables from a dotenv file (--env wins)"
    )
    cmd.add_argument("--with", dest="packages", action="append", default=[], metavar="PKG",
                     help="a package the server needs, added with uv when the host starts it; repeatable")  # fmt: skip
    cmd.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                     help="an HTTP header sent to a URL target (Authorization, say); repeatable")  # fmt: skip
    cmd.add_argument("--scope", choices=["user", "project", "local"],
                     help="user (default), project (a file in the project), or local (Claude Code only)")  # fmt: skip
    cmd.add_argument(
        "--project", metavar="DIR", help="the project folder for --scope project/local (default: .)"
    )
    cmd.add_argument("--config", metavar="PATH", help="edit this file instead of the host's usual one")
    cmd.add_argument("--force", action="store_true", help="replace a server of the same name")
    cmd.add_argument("--print", action="store_true", help="print the entry instead of writing it")
    cmd.set_defaults(handler=_cmd_install)
