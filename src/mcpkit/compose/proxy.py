"""Proxies: a :class:`~mcpkit.Server` that mirrors another server, or the servers of a host config.

::

    from mcpkit.compose.proxy import proxy

    remote = proxy("https://mcp.example.com/mcp", headers={"X-Team": "blue"})
    local = proxy(["npx", "-y", "@modelcontextprotocol/server-everything"])
    several = proxy({"mcpServers": {"weather": {"command": "python", "args": ["weather.py"]}}})

    remote.run()                       # serve it over stdio, or mount it, or Client(remote)

A proxy *is* a gateway (:class:`mcpkit.gateway.Gateway`): a server with the gateway's forwarder of
its one upstream mounted without a namespace, so tools and prompts keep their own names (a config
dict mounts one per server under its key, the gateway's ``server__tool`` names). Everything the
gateway relays, the proxy relays: progress,
log lines, cancellation, list changes, resource updates, and the upstream's sampling, elicitation
and roots requests to the caller whose call caused them, between callers and upstreams of any
revision (a 2026-07-28 caller of a 2025-03-26 upstream, and the reverse).

The upstream connection belongs to the proxy's lifespan: opened before the first request is
handled, closed when the server stops serving. Each time the lifespan is entered again (a second
``Client(proxy)`` after the first closed), a new connection is made.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import os
import shlex
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

import msgspec

from .. import _naming as naming
from ..client import Client
from ..client.callbacks import implied_capabilities
from ..gateway.governance import Governance, resolver
from ..host import Host, HostConfig, ServerConfig
from ..host._forward import install
from ..host.audit import AuditLog
from ..host.policy import Policy
from ..server import Server

__all__ = ["ProxyError", "proxy"]

#: Client options the proxy sets itself: it relays these to its callers.
_OWN_OPTIONS: Final = frozenset({"sampling", "elicitation", "roots", "on_notification", "on_log"})

#: Seconds the lifespan waits for a first connection before serving anyway (calls then answer
#: tool errors saying the server is starting, until it is up).
_CONNECT_SECONDS: Final = 120.0


class ProxyError(ValueError):
    """The target of :func:`proxy` cannot be proxied (wrong type, a connected Client, bad options)."""


def proxy(
    target: Any, *, name: str | None = None, server_type: type[Server] = Server, **client_options: Any
) -> Server:
    """A server mirroring *target*'s tools, prompts, resources, templates and completions.

    Args:
        target: what to mirror:

            - a command line (a string split as a shell would, or a list): a stdio server;
            - a URL: Streamable HTTP, falling back to HTTP+SSE as :class:`~mcpkit.Client` does;
            - a :class:`~mcpkit.Client` not connected yet: the proxy connects it when it starts
              serving and closes it when it stops (see below);
            - an mcpkit :class:`~mcpkit.Server`: served in this process, behind the proxy;
            - a host config dict (``{"mcpServers": {...}}``, or any dialect
              :func:`mcpkit.host.parse_config` reads): every server of it, names prefixed
              ``server__tool`` as the gateway names them; its ``mcpkit`` section (policy, rate
              limits, audit, rename, roots) applies, with ``allow`` as the default policy.

            Tools and prompts of a single target keep the upstream's names.
        name: the proxy's ``serverInfo`` name (default: the upstream's, once connected).
        **client_options: keyword arguments of the :class:`~mcpkit.Client` that connects
            (``timeout``, ``headers``, ``auth``, ``env``, ``cwd``, ``protocol_version``...); for a
            config dict, given to every server's client, over the entry's own settings. The
            question callbacks (``sampling``, ``elicitation``, ``roots``) and the notification
            hooks are the proxy's own: it relays them to its callers.

    Raises:
        ProxyError: a target of another type, a Client already connected, an option the proxy
            sets itself or no Client takes.
        mcpkit.host.ConfigError: a config dict that is wrong somewhere (the message says where).

    A single upstream that cannot be started at all (a missing command) stops the proxy's start-up
    with :class:`~mcpkit.lifespan.StartupError`; one that dies later is restarted, and calls made
    meanwhile get a tool error saying so, never a hang. A ``Client`` target is one connection: it is
    not restarted, and a handshake-era upstream behind it cannot put questions to callers (they need
    a session per caller, which only a command line, a URL or a server can make).

    >>> from mcpkit import Client, Server
    >>> inner = Server("inner")
    >>> @inner.tool
    ... def add(a: int, b: int) -> int:
    ...     return a + b
    >>> import asyncio
    >>> async def main() -> str:
    ...     async with Client(proxy(inner)) as client:
    ...         return (await client.call_tool("add", {"a": 2, "b": 3})).content[0].text
    >>> asyncio.run(main())
    '5'
    """
    _check_options(client_options)
    plan = _plan(target, client_options)
    state = _Running(plan, mirror_info=name is None)
    server = state.server = server_type(name or "mcpkit-proxy", lifespan=state.lifespan)
    # The forwarders are mounted now, so the proxy answers (and can be mounted) before it first
    # serves; they read the host of the moment, made anew each time the proxy starts.
    state.host = state.new_host()
    server.add_middleware(Governance(state, resolver(server)), methods=["tools/call"])
    install(server, state, plan.config, prefixed=plan.prefixed)
    return server


# -- what to connect to -----------------------------------------------------------------------------


@dataclass
class _Plan:
    """How the proxy's host is made: its config, the clients' factory, and the host's options."""

    config: HostConfig
    factory: Any
    prefixed: bool = False
    restart: bool = True
    single: bool = True


def _check_options(options: Mapping[str, Any]) -> None:
    own = sorted(_OWN_OPTIONS.intersection(options))
    if own:
        raise ProxyError(
            f"proxy(): {', '.join(own)} cannot be given: the proxy relays what the upstream asks and"
            " tells to its own callers"
        )
    accepted = inspect.signature(Client).parameters
    unknown = sorted(key for key in options if key not in accepted)
    if unknown:
        raise ProxyError(f"proxy(): unknown Client option(s): {', '.join(unknown)}")


def _plan(target: Any, options: dict[str, Any]) -> _Plan:
    if isinstance(target, Client):
        return _client_plan(target, options)
    if isinstance(target, Mapping):
        return _config_plan(target, options)
    if isinstance(target, str) and target.startswith(("http://", "https://")):
        host = urlsplit(target).hostname or ""
        single = ServerConfig(key=_key(host), name=host or target, transport="http", url=target)
    elif isinstance(target, str) or _is_command(target):
        command = tuple(shlex.split(target) if isinstance(target, str) else target)
        if not command:
            raise ProxyError("proxy(): the command line is empty")
        program = os.path.basename(command[0])
        single = ServerConfig(key=_key(program), name=program, transport="stdio", command=command)
    elif hasattr(target, "serve") and hasattr(target, "start_serving"):  # a server, in process
        label = str(getattr(getattr(target, "info", None), "name", "") or "server")
        single = ServerConfig(key=_key(label), name=label, transport="stdio")
    else:
        raise ProxyError(
            "proxy(): the target must be a command line (str or list), a URL, a Client, a server"
            f" or a host config dict, not {type(target).__name__}"
        )

    def connect(config: ServerConfig, host_options: dict[str, Any]) -> Client:
        return Client(target, **{**host_options, **options})

    return _Plan(config=_one_server(single), factory=connect)


def _is_command(target: Any) -> bool:
    return isinstance(target, Sequence) and all(isinstance(part, str) for part in target)


def _key(label: str) -> str:
    return naming.normalise_key(label) or "upstream"


def _one_server(server: ServerConfig) -> HostConfig:
    # A proxy forwards every call: consent is its callers' business (allow), nothing is audited.
    return HostConfig({server.key: server}, policy=Policy(default="allow"), source="proxy")


def _config_plan(document: Mapping[str, Any], options: dict[str, Any]) -> _Plan:
    from ..host import parse_config
    from ..host.config import detect_dialect

    dialect = detect_dialect(document)
    config = parse_config(dict(document), dialect=dialect, source="proxy config")
    extra = document.get("mcpkit")
    policy = extra.get("policy") if isinstance(extra, Mapping) else None
    if not (isinstance(policy, Mapping) and "default" in policy):
        config.policy.default = "allow"  # the gateway asks by default; a proxy forwards

    def connect(server: ServerConfig, host_options: dict[str, Any]) -> Client:
        return Client(server.target, **{**host_options, **options})

    return _Plan(config=config, factory=connect, prefixed=True, single=False)


def _client_plan(client: Client, options: dict[str, Any]) -> _Plan:
    if client.protocol_version:
        raise ProxyError(
            "proxy(): the Client is connected already; pass it before connecting: the proxy"
            " connects it when it starts serving and closes it when it stops"
        )
    if options:
        raise ProxyError("proxy(): options are set on the Client itself when the target is a Client")
    # One connection, so no per-caller sessions (max_sessions=0) and no restarts.
    single = ServerConfig(key="upstream", name="upstream", transport="stdio", max_sessions=0)

    def adopt(config: ServerConfig, host_options: dict[str, Any]) -> Client:
        # The proxy's relays replace the Client's own callbacks, and say so in its capabilities.
        for option in ("sampling", "elicitation", "roots", "on_notification"):
            if option in host_options:
                setattr(client, option, host_options[option])
        implied = implied_capabilities(
            sampling=client.sampling, elicitation=client.elicitation, roots=client.roots
        )
        client.capabilities = {
            **client.capabilities,
            **{k: v for k, v in implied.items() if k != "extensions"},
        }
        return client

    return _Plan(config=_one_server(single), factory=adopt, restart=False)


# -- serving ----------------------------------------------------------------------------------------


class _Discard(io.StringIO):
    """An audit stream that keeps nothing: a proxy of one server writes no audit log."""

    def write(self, text: str) -> int:
        return len(text)


class _Running:
    """The proxy's host of the moment, and the lifespan that starts and stops it."""

    server: Server

    def __init__(self, plan: _Plan, *, mirror_info: bool) -> None:
        self.plan = plan
        self.mirror_info = mirror_info
        #: The forwarders' link (:mod:`mcpkit.host._forward`): the host of the moment, served
        #: through the proxy's server (made with the server, before any request).
        self.host: Host | None = None
        self.used = False

    def new_host(self) -> Host:  # one run's: the proxy's server has its forwarders already
        plan = self.plan
        options: dict[str, Any] = {
            "prefixed": plan.prefixed,
            "client_factory": plan.factory,
            "restart": plan.restart,
            "connect_timeout": _CONNECT_SECONDS,
        }
        if plan.config.audit is None:
            options["audit"] = AuditLog(_Discard())
        return Host(plan.config, caller="gateway", server=self.server, mounted=True, **options)

    @contextlib.asynccontextmanager
    async def lifespan(self, server: Server) -> AsyncIterator[None]:
        host = self.host if self.host is not None and not self.used else self.new_host()
        self.host, self.used = host, True
        async with host:
            if self.plan.single:
                self._started(host)
            yield None

    def _started(self, host: Host) -> None:
        """A lone upstream that failed for good stops start-up; one that is up lends its identity."""
        ((key, upstream),) = host.upstreams.items()
        status = upstream.status
        if status.state == "failed":
            raise RuntimeError(f"cannot connect to the upstream server {key!r}: {status.error}")
        client = upstream.client
        if client is None:
            return  # still starting or restarting: calls say so until it is up
        if client.instructions is not None:
            self.server.instructions = client.instructions
        if self.mirror_info and client.server_info is not None:
            info = client.server_info
            self.server.info = msgspec.structs.replace(
                self.server.info, name=info.name, version=info.version, title=info.title
            )
