"""``mcpkit run``: serve a server over stdio or HTTP. Hosts spawn this, so it imports nothing heavy.

Hosts spawn ``mcpkit run FILE`` with nothing else on the line, so that form is read without argparse
(:func:`plain_run`): importing argparse and building this parser were a twentieth of a stdio
server's start-up (callgrind). Every option's default is in :data:`_DEFAULTS`, which the parser uses
too, so both readings give the same namespace (a test compares them).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Final

from ._load import load_server

if TYPE_CHECKING:
    import argparse

from ._exits import USAGE, CliError

__all__ = ["plain_run", "register"]

#: The value of every option of ``mcpkit run`` that is not given, by its ``dest``.
_DEFAULTS: Final[dict[str, Any]] = {
    "transport": "stdio",
    "host": "127.0.0.1",
    "port": 8000,
    "allow_host": [],
    "allow_origin": [],
    "cors_origin": [],
    "trusted_proxy": [],
    "redis": None,
    "otel": False,
    "workers": 1,
    "max_header_bytes": 64 * 1024,
    "max_header_count": 100,
    "header_timeout": 10.0,
    "keep_alive_timeout": 5,
    "max_body_bytes": 4 * 1024 * 1024,
    "body_timeout": 30.0,
    "max_sessions": 10_000,
    "max_sessions_per_client": 1_000,
    "max_requests_per_session": 256,
    "stream_queue_limit": 1024,
    "rate_limit": None,
    "auth_issuer": None,
    "auth_audience": None,
    "auth_jwks_uri": None,
    "auth_scope": [],
    "auth_introspection_endpoint": None,
    "auth_introspection_client_id": None,
    "auth_dpop": None,
    "auth_dpop_nonce": False,
    "auth_leeway": 60.0,
    "auth_jwks_cooldown": 30.0,
}


def plain_run(words: Sequence[str]) -> Any | None:
    """``mcpkit run FILE`` (no option) as the parser would read it, or ``None`` for any other line
    (options, ``--help``, another command), which goes to the parser."""
    if len(words) != 2 or words[0] != "run" or words[1].startswith("-"):
        return None
    # Fresh lists, as argparse gives each parse its own copy of an "append" option's default.
    defaults = {dest: list(value) if isinstance(value, list) else value for dest, value in _DEFAULTS.items()}
    return SimpleNamespace(command="run", server=words[1], handler=_cmd_run, **defaults)


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """While the user's module is imported, whatever it prints goes to stderr: over stdio, stdout is
    the protocol's, and one stray line before the first message would corrupt the stream. (Once
    serving, the stdio transport keeps stdout to itself the same way.)"""
    sys.stdout.flush()
    saved_fd, saved_stdout = os.dup(1), sys.stdout
    os.dup2(2, 1)  # C extensions and subprocesses write to fd 1 directly
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved_fd, 1)
        os.close(saved_fd)
        sys.stdout = saved_stdout


def _cmd_run(args: argparse.Namespace) -> int:
    auth = _auth_options(args)  # before the server is loaded: a bad option costs no import
    if args.transport == "stdio":
        with _stdout_to_stderr():
            server = load_server(args.server)
    else:
        server = load_server(args.server)
    if args.otel:
        from ..telemetry import Telemetry

        server.telemetry = Telemetry("server")
    if (args.redis is not None or args.workers > 1) and args.transport != "http":
        raise CliError("--redis and --workers serve over HTTP (--transport http)", USAGE)
    if args.workers > 1 and args.redis is None:
        raise CliError("--workers shares state through Redis: add --redis URL (or --redis auto)", USAGE)
    if args.transport == "http":
        fleet: dict[str, Any] = {"redis": args.redis} if args.redis is not None else {}
        if args.workers > 1:
            fleet["workers"] = args.workers
        from ._common import check_listen

        check_listen(args.host, args.port)
        print(f"mcpkit: serving {args.server} at http://{args.host}:{args.port}/mcp", file=sys.stderr)
        server.run(
            "http",
            host=args.host,
            port=args.port,
            allowed_hosts=args.allow_host,
            allowed_origins=args.allow_origin,
            cors_origins=args.cors_origin,
            trusted_proxies=args.trusted_proxy,
            max_header_bytes=args.max_header_bytes,
            max_header_count=args.max_header_count,
            header_timeout=args.header_timeout,
            keep_alive_timeout=args.keep_alive_timeout,
            max_body_bytes=args.max_body_bytes,
            body_timeout=args.body_timeout,
            max_sessions=args.max_sessions,
            max_sessions_per_client=args.max_sessions_per_client,
            rate_limit=args.rate_limit,
            max_requests_per_session=args.max_requests_per_session,
            stream_queue_limit=args.stream_queue_limit,
            **fleet,
            **auth,
        )
    else:
        server.run("stdio")
    return 0


def _auth_options(args: argparse.Namespace) -> dict[str, Any]:
    """``auth=`` for ``server.run`` when ``--auth-issuer`` is given (the auth package is imported
    only then: a stdio server starts as fast as before)."""
    if args.auth_issuer is None:
        if args.auth_audience or args.auth_jwks_uri or args.auth_scope or args.auth_dpop:
            raise CliError("the --auth-* options need --auth-issuer", USAGE)
        return {}
    if args.transport != "http":
        raise CliError("the --auth-* options protect an HTTP server (--transport http)", USAGE)
    if args.auth_audience is None:
        raise CliError("--auth-issuer needs --auth-audience (this server's canonical URL)", USAGE)
    from ..auth import DPoPPolicy, ResourceServerAuth

    dpop = None
    if args.auth_dpop is not None or args.auth_dpop_nonce:
        dpop = DPoPPolicy(required=args.auth_dpop == "required", nonce=args.auth_dpop_nonce)
    try:
        auth = ResourceServerAuth(
            issuer=args.auth_issuer,
            audience=args.auth_audience,
            jwks_uri=args.auth_jwks_uri,
            required_scopes=args.auth_scope,
            introspection_endpoint=args.auth_introspection_endpoint,
            introspection_client_id=args.auth_introspection_client_id,
            introspection_client_secret=os.environ.get("MCPKIT_AUTH_INTROSPECTION_SECRET"),
            jwks_cooldown=args.auth_jwks_cooldown,
            leeway=args.auth_leeway,
            dpop=dpop,
        )
    except ValueError as exc:
        raise CliError(f"{exc}", USAGE) from None
    return {"auth": auth}


def _rate(text: str) -> str:
    import argparse  # only the parser calls this

    from .._ratelimit import Rate

    try:
        return Rate(text).spec
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: Any) -> None:
    from ._common import port, positive

    run = sub.add_parser(
        "run", help="serve a server defined in a Python file", description=load_server.__doc__
    )
    run.add_argument("server", metavar="FILE.py[:OBJECT]")
    run.add_argument("--transport", choices=["stdio", "http"])
    run.add_argument("--host", help=f"HTTP: the address to bind (default: {_DEFAULTS['host']})")
    run.add_argument("--port", type=port, help=f"HTTP: the port, 1-65535 (default: {_DEFAULTS['port']})")
    run.add_argument("--allow-host", action="append", metavar="HOST",
                     help="HTTP: also accept this Host header (localhost always is); repeatable")  # fmt: skip
    run.add_argument("--allow-origin", action="append", metavar="ORIGIN",
                     help="HTTP: also accept this Origin (local ones always are); repeatable")  # fmt: skip
    run.add_argument("--cors-origin", action="append", metavar="ORIGIN",
                     help="HTTP: let pages of this origin call the server from a browser (CORS; '*' for any); "
                          "repeatable; off by default")  # fmt: skip
    run.add_argument("--trusted-proxy", action="append", metavar="ADDRESS",
                     help="HTTP: believe X-Forwarded-For from this proxy (an address or network, '*' for "
                          "any), so per-client limits count clients; repeatable")  # fmt: skip
    fleet = run.add_argument_group(
        "HTTP fleet (several processes behind a load balancer; see docs/deployment.md)"
    )
    fleet.add_argument("--redis", metavar="URL",
                       help="share state with every server given the same URL (redis://HOST:PORT/DB): "
                            "sessions, tasks, subscriptions, multi round-trip state, resumable streams; "
                            "'auto' starts a local redis-server for --workers; needs mcpkit[redis]")  # fmt: skip
    run.add_argument("--otel", action="store_true",
                     help="record OpenTelemetry traces and metrics of every request (MCP semantic "
                          "conventions; needs mcpkit[otel] and an SDK, e.g. opentelemetry-instrument)")  # fmt: skip
    fleet.add_argument("--workers", type=positive(int), metavar="N",
                       help="serve the port from N processes sharing their state (needs --redis)")  # fmt: skip
    limits = run.add_argument_group("HTTP limits (see SECURITY.md)")
    for flag, kind, text in (
        ("--max-header-bytes", int, "bytes of a request head (431 beyond)"),
        ("--max-header-count", int, "header fields of a request (431 beyond)"),
        ("--header-timeout", float, "seconds a request head may take (408 after)"),
        ("--keep-alive-timeout", int, "seconds an idle connection is kept"),
        ("--max-body-bytes", int, "bytes of a request body (413 beyond)"),
        ("--body-timeout", float, "seconds the rest of a request body may take (408 after)"),
        ("--max-sessions", int, "handshake-era sessions at once (503 beyond)"),
        ("--max-sessions-per-client", int, "of those, from one client address (503 beyond)"),
        ("--max-requests-per-session", int, "requests in flight per session (an error beyond)"),
        ("--stream-queue-limit", int, "messages queued for an unread stream (it ends beyond)"),
    ):
        default = _DEFAULTS[flag.removeprefix("--").replace("-", "_")]
        limits.add_argument(flag, type=positive(kind), help=f"{text} (default: {default})")
    limits.add_argument("--rate-limit", metavar="N/UNIT", type=_rate,
                        help="requests per client address, e.g. 100/s or 1000/m (429 beyond; default: none)")  # fmt: skip
    auth = run.add_argument_group("HTTP authorization (OAuth 2.1 resource server; see docs/authorization.md)")
    auth.add_argument("--auth-issuer", metavar="URL",
                      help="accept access tokens of this authorization server (iss); protects the endpoint")  # fmt: skip
    auth.add_argument("--auth-audience", metavar="URL",
                      help="this server's canonical URL: tokens must name it in aud; the metadata's resource")  # fmt: skip
    auth.add_argument("--auth-jwks-uri", metavar="URL",
                      help="the issuer's key set (default: the jwks_uri of its metadata)")  # fmt: skip
    auth.add_argument("--auth-scope", action="append", metavar="SCOPE",
                      help="a scope every request needs (403 without it); repeatable")  # fmt: skip
    auth.add_argument("--auth-introspection-endpoint", metavar="URL",
                      help="check opaque tokens there (RFC 7662) instead of as JWTs; the secret is read "
                           "from MCPKIT_AUTH_INTROSPECTION_SECRET")  # fmt: skip
    auth.add_argument("--auth-introspection-client-id", metavar="ID",
                      help="the client id this server authenticates to the introspection endpoint with")  # fmt: skip
    auth.add_argument("--auth-dpop", choices=["accepted", "required"],
                      help="accept DPoP-bound tokens (RFC 9449), or accept only them")  # fmt: skip
    auth.add_argument("--auth-dpop-nonce", action="store_true",
                      help="require a server-issued nonce in DPoP proofs")  # fmt: skip
    auth.add_argument("--auth-leeway", type=positive(float), metavar="SECONDS",
                      help="clock skew allowed on exp, nbf and iat (default: 60)")  # fmt: skip
    auth.add_argument("--auth-jwks-cooldown", type=positive(float), metavar="SECONDS",
                      help="at most one refetch of the keys per this many seconds for an unknown kid "
                           "(default: 30)")  # fmt: skip
    # Every default from the one table plain_run() reads too (set_defaults sets each action's default).
    run.set_defaults(handler=_cmd_run, **_DEFAULTS)
