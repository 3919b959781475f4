"""One client command's connection: the Client built from the options, connected, used, closed, and every
way that can fail turned into one line and an exit code (:mod:`._exits`).

A spawned server's stderr goes to a temporary file (unless ``--server-stderr``), and its last lines
are shown when the command fails, since that is where a crashing server says why.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from ._common import is_url, oauth_from, parse_env, parse_headers, target_command
from ._elicit import Elicitor
from ._exits import AUTH_FAILED, CANNOT_CONNECT, FAILED, INTERRUPTED, TIMED_OUT, USAGE, CliError
from ._feedback import Feedback, warn

__all__ = ["Action", "run_client"]

#: ``async fn(client, feedback) -> exit code``: what a command does once connected.
Action = Callable[[Any, Feedback], Awaitable[int]]

_TAIL_LINES = 20


def run_client(args: argparse.Namespace, action: Action) -> int:
    """Connect as *args* say, run *action*, close; the exit code, or :class:`CliError`."""
    target = target_command(args.target)
    headers = parse_headers(args.header)
    env = parse_env(args.env, args.env_file)
    url = isinstance(target, str)
    if url and (args.env or args.env_file):
        raise CliError("--env and --env-file set a spawned server's environment; TARGET is a URL", USAGE)
    if url and args.server_stderr:
        raise CliError("--server-stderr shows a spawned server's stderr; TARGET is a URL", USAGE)
    if not url and headers:
        raise CliError("--header is sent to URL targets; TARGET starts a process", USAGE)
    args.oauth = oauth_from(args, os.environ)  # None without --auth options
    with contextlib.ExitStack() as stack:
        capture = None if url or args.server_stderr else stack.enter_context(tempfile.TemporaryFile())
        try:
            return asyncio.run(_session(args, target, headers, env, capture, action))
        except CliError as exc:
            if capture is not None and exc.code not in (USAGE, INTERRUPTED):
                exc.detail = exc.detail or _tail(capture)
            raise


def _tail(capture: IO[bytes]) -> str:
    capture.seek(0)
    lines = capture.read().decode(errors="replace").rstrip().splitlines()
    if not lines:
        return ""
    shown = lines[-_TAIL_LINES:]
    head = "the server's stderr" + (f" (last {len(shown)} lines)" if len(lines) > len(shown) else "") + ":"
    return "\n".join([head, *(f"  {line}" for line in shown)])


def _client(
    args: argparse.Namespace, target: Any, headers: Any, env: Any, capture: Any, feedback: Feedback
) -> Any:
    from .. import __version__
    from ..client import Client
    from ..types import Implementation, Root
    from ._sampling import SamplingCommand

    holder: list[Any] = []

    def hold() -> contextlib.AbstractContextManager[None]:
        return _clocks_held(holder)

    roots = [Root(uri=Path(d).resolve().as_uri(), name=Path(d).resolve().name) for d in args.root]
    oauth = getattr(args, "oauth", None)
    if oauth is not None:  # the user in the browser for a step up is not the server being silent
        oauth.waiting_for_user = hold
    try:
        client = Client(
            target,
            protocol_version=args.protocol_version,
            client_info=Implementation(name="mcpkit-cli", version=__version__),
            timeout=args.timeout or None,
            max_timeout=None,  # progress keeps a long call alive; Ctrl-C is the way out
            on_log=feedback.log,
            elicitation=Elicitor(feedback, hold_clocks=hold),
            sampling=SamplingCommand(args.sampling_command, hold) if args.sampling_command else None,
            roots=roots or None,
            env=env or None,
            stderr=capture,
            headers=headers or None,
            auth=getattr(args, "oauth", None),
        )
    except ValueError as exc:  # a protocol header given with --header
        raise CliError(str(exc).replace(" in headers=", " with --header"), USAGE) from None
    holder.append(client)
    return client


@contextlib.contextmanager
def _clocks_held(holder: list[Any]) -> Iterator[None]:
    """While a person answers a handshake-era question, the call it belongs to stays pending, and the
    time they take to type is not the server being silent: keep restarting the call's silence timer
    (as a progress notification does) until they have answered."""
    loop = asyncio.get_running_loop()

    def restart() -> None:
        if holder:
            holder[0].restart_timeouts()

    async def keep() -> None:
        while True:
            restart()
            await asyncio.sleep(0.5)

    keeper = loop.create_task(keep())
    try:
        yield
    finally:
        keeper.cancel()
        restart()


async def _session(
    args: argparse.Namespace, target: Any, headers: Any, env: Any, capture: Any, action: Action
) -> int:
    from .._errors import ConnectionClosed, MCPError, RequestTimeout, RPCError

    feedback = Feedback()
    client = _client(args, target, headers, env, capture, feedback)
    try:
        try:
            try:
                await client.connect()
            except (MCPError, OSError) as exc:
                raise _auth_failure(args, exc) or await _cannot_connect(
                    exc, args.target, headers, args.timeout
                ) from None
            if args.log_level:
                await _set_log_level(client, args.log_level)
            return await action(client, feedback)
        except Exception as exc:
            failure = None if isinstance(exc, CliError) else _auth_failure(args, exc)
            if failure is None:
                raise
            raise failure from None
    except RequestTimeout:
        raise CliError(
            f"no answer from the server within {args.timeout:g} s (wait longer with --timeout)", TIMED_OUT
        ) from None
    except ConnectionClosed as exc:
        raise CliError(f"lost the server: {exc}", CANNOT_CONNECT) from None
    except RPCError as exc:
        raise CliError(describe_rpc_error(exc), FAILED) from None
    except asyncio.CancelledError:
        raise KeyboardInterrupt from None
    finally:
        feedback.close()
        with contextlib.suppress(Exception):
            await client.aclose()


async def _set_log_level(client: Any, level: str) -> None:
    from .._errors import RPCError

    try:
        await client.set_logging_level(level)
    except RPCError as exc:
        warn(f"the server does not take a log level ({exc}); --log-level ignored")


def _auth_failure(args: argparse.Namespace, exc: BaseException) -> CliError | None:
    """Exit status 5 and one line, when ``--auth`` was used and *exc* is its failure: the OAuth flow
    failed (``OAuthError``, raised or carried by the transport's error), or the server still refused
    the token it obtained (HTTP 401 or 403)."""
    if getattr(args, "oauth", None) is None:
        return None
    from .._errors import RPCError

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if type(current).__name__ == "OAuthError":
            return CliError(f"authorization failed: {current}", AUTH_FAILED)
        if isinstance(current, RPCError) and isinstance(current.data, dict):
            if current.data.get("cause") == "OAuthError":
                return CliError(f"authorization failed: {current.message}", AUTH_FAILED)
            if current.data.get("httpStatus") in (401, 403):
                status = current.data["httpStatus"]
                return CliError(
                    f"authorization failed: the server refused the token (HTTP {status}): {current.message}",
                    AUTH_FAILED,
                )
        current = current.__cause__ or current.__context__
    return None


def describe_rpc_error(exc: Any) -> str:
    """One line for a server's JSON-RPC error, with a hint for the ones an option fixes."""
    from .._errors import MissingClientCapability

    text = f"the server answered with an error: {exc} (code {exc.code})"
    if isinstance(exc, MissingClientCapability) or exc.code == -32021:
        data = exc.data if isinstance(exc.data, dict) else {}
        required = data.get("requiredCapabilities")
        names = set(required) if isinstance(required, dict) else set()
        if "sampling" in names or "sampling" in str(exc):
            text += "; answer sampling requests with --sampling-command CMD"
        if "roots" in names or "roots" in str(exc):
            text += "; offer roots with --root DIR"
    return text


async def _cannot_connect(exc: BaseException, target: str, headers: Any, timeout: float) -> CliError:
    """The one line for a failed connection, asking the URL again over plain HTTP if need be."""
    from .._errors import ConnectionClosed, RequestTimeout, RPCError, TransportError

    if is_url(target):
        found = await _diagnose_url(target, headers)
        if found is not None:
            return CliError(found, CANNOT_CONNECT)
        return CliError(f"cannot connect to {target}: {exc}", CANNOT_CONNECT)
    if isinstance(exc, ConnectionClosed):
        how = re.search(r"\(([^()]*)\)$", str(exc))  # "the server closed the connection (exit code 1)"
        return CliError(f"the server stopped during startup ({how[1] if how else exc})", CANNOT_CONNECT)
    if isinstance(exc, TransportError):
        return CliError(_cannot_start(exc, target), CANNOT_CONNECT)
    if isinstance(exc, RequestTimeout):
        return CliError(f"the server did not answer within {timeout:g} s of starting", CANNOT_CONNECT)
    if isinstance(exc, RPCError):
        return CliError(f"the server refused the connection: {exc} (code {exc.code})", CANNOT_CONNECT)
    return CliError(f"cannot connect: {exc}", CANNOT_CONNECT)


def _cannot_start(exc: BaseException, target: str) -> str:
    """Why *target*'s command did not start, naming the whole TARGET: a word that is no program
    may be the first piece of a path with spaces, so the hint says how to quote one."""
    import shlex

    missing = _caused_by(exc, FileNotFoundError)
    refused = _caused_by(exc, PermissionError)
    if not (missing or refused):
        return f"cannot start the server {target!r}: {exc}"
    try:
        words = shlex.split(target)
    except ValueError:
        words = [target]
    program = words[0] if words else target
    why = f"no program {program!r}" if missing else f"{program!r} is not executable"
    if missing and len(words) > 1 and "/" in target and not any(c.isspace() for c in program):
        hint = (
            "TARGET is split at spaces, so quote a path with spaces inside it, "
            "as in \"'my servers/server' --flag\", or give a .py file's whole path"
        )
    elif missing:
        hint = "is it installed and on PATH?"
    else:
        hint = "make it executable (chmod +x), or start it through its interpreter"
    return f"cannot start {target!r}: {why} ({hint})"


async def _diagnose_url(url: str, headers: Any) -> str | None:
    """Why *url* is no MCP endpoint, found with one plain POST: nothing listening, 404, 401/403."""
    import httpx

    body = {"jsonrpc": "2.0", "id": 0, "method": "ping"}
    try:
        async with httpx.AsyncClient(headers=headers, timeout=10.0) as http:
            reply = await http.post(url, json=body, headers={"Accept": "application/json, text/event-stream"})
    except httpx.ConnectError as exc:
        refused = _caused_by(exc, ConnectionRefusedError)
        why = "connection refused (is the server running?)" if refused else str(exc) or type(exc).__name__
        return f"cannot connect to {url}: {why}"
    except httpx.HTTPError as exc:
        return f"cannot connect to {url}: {type(exc).__name__}: {exc}"
    path = urlsplit(url).path or "/"
    if reply.status_code == 404:
        return f"{url}: HTTP 404 for {path}: not an MCP endpoint (check the path; mcpkit serves /mcp)"
    if reply.status_code in (401, 403):
        if not any(name.lower() == "authorization" for name in headers or {}):
            return f"{url}: HTTP {reply.status_code}: the server wants authorization (sign in with --auth)"
        return (
            f"{url}: HTTP {reply.status_code}: the server wants credentials (--header 'Authorization: ...')"
        )
    status = f"HTTP {reply.status_code} {reply.reason_phrase}".rstrip()
    if reply.status_code in (405, 501):
        return f"{url}: {status}: it takes no POST, so it is not an MCP endpoint"
    if reply.status_code >= 500:
        return f"{url}: {status}: the server failed"
    kind = reply.headers.get("content-type", "").split(";")[0].strip()
    if kind not in ("application/json", "text/event-stream"):
        # A web page, say: something answers HTTP there, but not MCP.
        return f"{url}: {status} with {kind or 'no content type'}: not an MCP endpoint"
    return None


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
