"""What several subcommands share: turning TARGET into something to connect to, argument types, and
the options every client command takes. Standard library only: ``mcpkit run`` imports this module, so
what only the client commands use (shlex) is imported where it is used, and files are read with
``open`` and ``os.path`` (pathlib costs a server's start-up some 3 % of its instructions)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from typing import Any

from ._exits import CANNOT_CONNECT, USAGE, CliError

__all__ = [
    "CLIENT_SECRET_ENV",
    "LOG_LEVELS",
    "add_target_options",
    "check_listen",
    "file_part",
    "is_url",
    "oauth_from",
    "parse_env",
    "parse_headers",
    "port",
    "positive",
    "protocol_revision",
    "target_command",
]

#: Where ``--auth-client-secret`` comes from: the environment, never the command line (which any
#: user of the machine can read in the process list), as ``mcpkit run`` takes its introspection secret.
CLIENT_SECRET_ENV = "MCPKIT_AUTH_CLIENT_SECRET"

#: The syslog levels of ``logging/setLevel``, most verbose first.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def is_url(target: str) -> bool:
    return target.startswith(("http://", "https://"))


def target_command(target: str) -> list[str] | str:
    """A TARGET as a command line (a ``FILE.py[:OBJECT]`` is served with ``mcpkit run``), or a URL as is.

    A TARGET that names an existing file is that file, spaces and all (``"my servers/weather app.py"``);
    anything else is split as a shell would split it (``"uv run server.py --debug"``).

    Raises:
        CliError: TARGET names a ``.py`` file that does not exist, or is not a command line.
    """
    if is_url(target):
        return target
    location = file_part(target)
    if os.path.isfile(location):
        if location.endswith(".py"):
            return [sys.executable, "-m", "mcpkit", "run", target]
        return [location]  # an executable file; its own path may hold spaces
    import shlex

    try:
        parts = shlex.split(target)
    except ValueError as exc:  # an unclosed quote
        raise CliError(f"cannot split the command line {target!r}: {exc}", USAGE) from None
    if not parts:
        raise CliError("TARGET is empty: give a .py file, a command line or a URL", USAGE)
    if len(parts) == 1 and file_part(parts[0]).endswith(".py"):
        if not os.path.isfile(file_part(parts[0])):
            raise CliError(f"no such file: {file_part(parts[0])}", USAGE)
        return [sys.executable, "-m", "mcpkit", "run", parts[0]]
    if location.endswith(".py") and not _startable(parts[0]):
        # "my servers/app.py" with a typo: a missing file, not a program called "my".
        raise CliError(f"no such file: {location}", USAGE)
    return parts


def file_part(target: str) -> str:
    """The file of ``FILE.py:OBJECT`` (the whole of anything else): ``:OBJECT`` is a Python name."""
    location, colon, attribute = target.rpartition(":")
    return location if colon and location and attribute.isidentifier() else target


def _startable(program: str) -> bool:
    """Whether *program* names a file or a command on ``PATH``."""
    import shutil

    return os.path.exists(program) or shutil.which(program) is not None


def protocol_revision(text: str) -> str:
    """``--protocol-version``: a revision mcpkit speaks, or one line listing those it does."""
    from .._versions import SUPPORTED_VERSIONS

    if text not in SUPPORTED_VERSIONS:
        raise argparse.ArgumentTypeError(
            f"unknown protocol revision {text!r}; mcpkit speaks {', '.join(SUPPORTED_VERSIONS)}"
        )
    return text


def parse_headers(values: list[str]) -> dict[str, str]:
    """``--header 'Name: value'`` options as a dict (a later one of the same name wins)."""
    headers: dict[str, str] = {}
    for value in values:
        name, colon, content = value.partition(":")
        if not colon or not name.strip() or any(c.isspace() for c in name.strip()):
            raise CliError(f"--header {value!r} is not 'Name: value'", USAGE)
        headers[name.strip()] = content.strip()
    return headers


def parse_env(values: list[str], files: list[str]) -> dict[str, str]:
    """``--env-file`` files (in order), then ``--env K=V`` options, as one environment."""
    env: dict[str, str] = {}
    for file in files:
        try:
            with open(file, encoding="utf-8") as stream:
                lines = stream.read().splitlines()
        except OSError as exc:
            raise CliError(f"cannot read --env-file {file}: {exc.strerror or exc}", USAGE) from None
        for number, line in enumerate(lines, start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, value = _assignment(line.removeprefix("export ").strip(), f"{file}, line {number}")
            env[key] = _unquoted(value.strip())
    for value in values:
        key, text = _assignment(value, f"--env {value!r}")
        env[key] = text
    return env


def _assignment(text: str, where: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    key = key.strip()
    if (
        not equals
        or not key
        or not (key[0].isalpha() or key[0] == "_")
        or not key.replace("_", "a").isalnum()
    ):
        raise CliError(f"{where}: expected NAME=VALUE", USAGE)
    return key, value


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def add_target_options(cmd: argparse.ArgumentParser) -> Any:
    """TARGET and the options every client command takes; returns the "output" group, for more."""
    cmd.add_argument(
        "target",
        metavar="TARGET",
        help="a server: FILE.py[:OBJECT], a command line in quotes, or an http(s):// URL",
    )
    out = cmd.add_argument_group("output")
    out.add_argument("--json", action="store_true", help="print the server's answer as JSON (keys sorted)")
    conn = cmd.add_argument_group("connection")
    conn.add_argument("--protocol-version", metavar="REVISION", type=protocol_revision,
                      help="use this protocol revision instead of negotiating one")  # fmt: skip
    conn.add_argument("--timeout", type=non_negative, default=60.0, metavar="SECONDS",
                      help="give up after this long without an answer or progress; 0 waits for ever "
                           "(default: 60)")  # fmt: skip
    conn.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                      help="URL targets: send this HTTP header with every request; repeatable")  # fmt: skip
    conn.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                      help="spawned servers: set this environment variable; repeatable")  # fmt: skip
    conn.add_argument("--env-file", action="append", default=[], metavar="FILE",
                      help="spawned servers: NAME=VALUE lines to set (before --env); repeatable")  # fmt: skip
    conn.add_argument("--server-stderr", action="store_true",
                      help="spawned servers: show their stderr as it comes (default: only its end, "
                           "when the command fails)")  # fmt: skip
    conn.add_argument("--log-level", choices=LOG_LEVELS, metavar="LEVEL",
                      help=f"ask the server for log messages at LEVEL and above ({', '.join(LOG_LEVELS)})")  # fmt: skip
    auth = cmd.add_argument_group("authorization (URL targets: OAuth 2.1, see docs/authorization.md)")
    auth.add_argument("--auth", action="store_true",
                      help="sign in when the server asks (HTTP 401): open the browser on the "
                           "authorization server's page and take the redirect on a loopback port")  # fmt: skip
    auth.add_argument("--auth-headless", action="store_true",
                      help="as --auth, but print the URL to open (on stderr) instead of starting a browser")  # fmt: skip
    auth.add_argument("--auth-client-id", metavar="ID",
                      help=f"a pre-registered client id (default: register one); its secret, if any, "
                           f"is read from {CLIENT_SECRET_ENV}")  # fmt: skip
    auth.add_argument("--auth-grant", choices=["authorization_code", "client_credentials"],
                      help="authorization_code (a user signs in: the default) or client_credentials "
                           "(the client on its own behalf: needs --auth-client-id and the secret)")  # fmt: skip
    auth.add_argument("--auth-scope", action="append", default=[], metavar="SCOPE",
                      help="a scope to ask for (default: what the server's challenge or metadata names); "
                           "repeatable")  # fmt: skip
    auth.add_argument("--auth-token-store", metavar="PATH",
                      help="keep tokens and registrations in this file (0600), or 'memory' for none "
                           "(default: mcpkit/oauth.json in the user's configuration folder)")  # fmt: skip
    auth.add_argument("--auth-redirect-port", type=port, metavar="PORT",
                      help="take the redirect on this loopback port (default: any free one)")  # fmt: skip
    asks = cmd.add_argument_group("answering the server")
    asks.add_argument("--sampling-command", metavar="CMD",
                      help="answer sampling requests with this shell command: the request's params as "
                           "JSON on its stdin, its stdout the reply (default: refuse)")  # fmt: skip
    asks.add_argument("--root", action="append", default=[], metavar="DIR",
                      help="offer this directory as a root (roots/list); repeatable")  # fmt: skip
    return out


def oauth_from(args: argparse.Namespace, environ: Mapping[str, str]) -> Any | None:
    """The :class:`~mcpkit.client.auth.OAuth` the ``--auth*`` options describe, or ``None`` when none
    is given (httpx and the OAuth client are imported only then).

    Raises:
        CliError: options that do not go together (exit status 2).
    """
    given = [
        name
        for name in ("auth_client_id", "auth_grant", "auth_token_store", "auth_redirect_port")
        if getattr(args, name) is not None
    ]
    if args.auth_scope:
        given.append("auth_scope")
    if not (args.auth or args.auth_headless or given):
        return None
    if not is_url(args.target):
        raise CliError("the --auth options authorize to URL targets; TARGET starts a process", USAGE)
    secret = environ.get(CLIENT_SECRET_ENV) or None
    machine = args.auth_grant == "client_credentials"
    if machine and (args.auth_client_id is None or secret is None):
        raise CliError(
            f"--auth-grant client_credentials needs --auth-client-id and the secret in {CLIENT_SECRET_ENV}",
            USAGE,
        )
    if machine and (args.auth_headless or args.auth_redirect_port is not None):
        raise CliError("--auth-headless and --auth-redirect-port are for a user signing in, not "
                       "--auth-grant client_credentials", USAGE)  # fmt: skip
    from ..client.auth import ClientCredentials, FileTokenStore, MemoryTokenStore, OAuth, TokenStore

    store: TokenStore = (
        MemoryTokenStore() if args.auth_token_store == "memory" else FileTokenStore(args.auth_token_store)
    )
    port_ = args.auth_redirect_port
    return OAuth(
        client_id=args.auth_client_id,
        client_secret=secret if args.auth_client_id is not None else None,
        client_name="mcpkit command line",
        scope=args.auth_scope or None,
        grant=ClientCredentials() if machine else None,
        redirect_uri=f"http://127.0.0.1:{port_}/callback" if port_ is not None else None,
        open_browser=not args.auth_headless,
        store=store,
    )


def port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is out of range (1-65535)")
    return port


def check_listen(host: str, port: int) -> None:
    """Refuse, in one line and with status 3, an address ``run`` or ``gateway`` cannot listen on
    (uvicorn would log its own ``ERROR: [Errno 98] ...`` after the command said it was serving).

    Checked by binding a socket the way uvicorn will and closing it again: a server started in the
    instant between is still reported, by uvicorn.
    """
    import errno
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
            probe.bind(address)
    except OSError as exc:
        hint = (
            " (is another server running there? choose another --port)"
            if exc.errno == errno.EADDRINUSE
            else ""
        )
        raise CliError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}{hint}", CANNOT_CONNECT
        ) from None


def positive(kind: type[int] | type[float]) -> Any:
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
        return value

    parse.__name__ = kind.__name__
    return parse


def non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if value < 0 or value != value:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text!r}")
    return value
