"""One server of the host: its connection, kept alive by a supervisor, and what it lists.

The supervisor connects (any transport, any revision: :class:`~mcpkit.Client` negotiates), lists the
server's tools, resources, templates and prompts, then waits for the connection to end. A stdio
server that exits, or a remote one whose requests fail with a closed connection, is reconnected
after a backoff, or given up on (:mod:`.restarts`). Meanwhile its status says so, and a call to it
fails at once with :class:`Unavailable` naming the server and the reason: a dead server is never
left half-alive, and no call waits on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar

from .._errors import ConnectionClosed, MCPError, MethodNotFound, RPCError, TransportError
from ..client import Client
from ..types import Prompt, Resource, ResourceTemplate, Tool
from .model import ServerConfig
from .pool import Lease, PooledSession, SessionPool, bind
from .restarts import MAX_RESTARTS, Restarts, cannot_start

__all__ = ["ClientFactory", "ServerStatus", "Unavailable", "Upstream", "UpstreamHooks"]

logger = logging.getLogger("mcpkit.host")
T = TypeVar("T")

_LEASE_TIMEOUT: Final = 120.0  # seconds a call waits for a caller session when the server sets no timeout

State = Literal["starting", "ready", "restarting", "failed", "disabled", "closed"]

#: ``fn(config, options) -> Client``: one connection to a server, from ``Client`` keyword arguments.
ClientFactory = Callable[[ServerConfig, dict[str, Any]], Client]


class Unavailable(MCPError):
    """The server is not connected (starting, restarting after a crash, failed or disabled)."""


@dataclass
class ServerStatus:
    """What the host knows of one server, for people and for ``mcpkit host --list``."""

    key: str
    state: State
    transport: str
    protocol_version: str = ""
    server_name: str = ""
    error: str | None = None
    restarts: int = 0
    tools: int = 0


@dataclass
class UpstreamHooks:
    """How a server's connection reaches the host: what it asks, what it tells, when its lists change."""

    client_options: Callable[[str], dict[str, Any]]  # server key -> sampling=, elicitation=, roots=
    on_notification: Callable[[str, str, dict[str, Any]], Awaitable[None]]
    on_lists: Callable[[str], None]  # the server's lists were (re)read, or emptied


class Upstream:
    """The supervised connection to one configured server."""

    def __init__(
        self,
        config: ServerConfig,
        hooks: UpstreamHooks,
        *,
        restart: bool = True,
        stderr: Any = None,
        max_restarts: int | None = MAX_RESTARTS,
        client_factory: ClientFactory | None = None,
    ) -> None:
        self.config = config
        self.client_factory = client_factory
        self.hooks = hooks
        self.restart = restart
        self.stderr = stderr
        #: Restarts in a row of a stdio server before it is given up on (``None``: never).
        self.max_restarts = max_restarts
        #: What waits out each backoff (a test gives a fake clock's).
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        self.status = ServerStatus(config.key, "starting" if config.enabled else "disabled", config.transport)
        self.client: Client | None = None
        self.tools: list[Tool] = []
        self.resources: list[Resource] = []
        self.templates: list[ResourceTemplate] = []
        self.prompts: list[Prompt] = []
        self.first_attempt = asyncio.Event()  # set after the first connection succeeded or failed
        self.ready = asyncio.Event()
        self._failed = asyncio.Event()  # a call saw the connection die
        self._limit = asyncio.Semaphore(config.max_concurrency) if config.max_concurrency else None
        self._supervisor: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        self._poller: asyncio.Task[None] | None = None
        self._relisting: set[asyncio.Task[None]] = set()
        self._subscription: Any = None
        self.ready_once = False  # connected since the last outage was reported
        self._closing = False
        #: Sessions of their own for callers the server may ask questions (see :mod:`.pool`).
        self.pool = SessionPool(
            config.key,
            self._open_pooled,
            config.max_sessions,
            config.session_idle_timeout,
            config.timeout or _LEASE_TIMEOUT,
        )

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> None:
        if not self.config.enabled:
            self.first_attempt.set()
            return
        self._supervisor = asyncio.ensure_future(self._supervise())

    async def aclose(self) -> None:
        self._closing = True
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._supervisor
        await self.pool.aclose()
        await self._drop_client()
        if self.status.state != "disabled":
            self.status.state = "closed"

    async def _supervise(self) -> None:
        restarts = Restarts(self.config, self.max_restarts)
        while not self._closing:
            began = time.monotonic()
            hopeless: str | None = None
            try:
                await self._connect()
                self.status.state, self.status.error = "ready", None
                self.ready_once = True
                self.ready.set()
                self.first_attempt.set()
                self.hooks.on_lists(self.config.key)
                self.status.error = await self._wait_for_end()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # any failure to connect is this server's status, not the host's
                self.status.error = _describe(exc)
                hopeless = cannot_start(exc, self.config)
            finally:
                self.ready.clear()
                await self._drop_client()
            if self._closing:
                return
            restarts.ended(time.monotonic() - began)
            give_up = not self.restart
            if hopeless is not None:
                self.status.error = f"{hopeless} (not retried)" if self.restart else hopeless
                give_up = True
            elif self.restart and restarts.exhausted():
                self.status.error = f"{self.status.error}; gave up after {restarts.in_a_row} restarts"
                give_up = True
            self.status.state = "failed" if give_up else "restarting"
            if give_up or self.status.restarts >= 1:
                # One retry before the host's start gives up waiting: a server slow to start under
                # load (its discover answer too late, say) usually makes it the second time.
                self.first_attempt.set()
            self.hooks.on_lists(self.config.key)
            # Said once per outage, and when given up on; the retries between are debug lines (the
            # status has the rest).
            said = self.status.restarts == 0 or self.ready_once or give_up
            self.ready_once = False
            logger.log(
                logging.WARNING if said else logging.DEBUG,
                "server %s: %s",
                self.config.key,
                self.status.error,
            )
            if give_up:
                return
            await self.sleep(restarts.next_delay())
            self.status.restarts += 1

    async def _connect(self) -> None:
        client = self._new_client(
            {"on_notification": self._notified, **self.hooks.client_options(self.config.key)}
        )
        self.client = client
        await client.connect()
        self.status.protocol_version = client.protocol_version
        self.status.server_name = client.server_info.name if client.server_info else ""
        await _ask_for_logs(client)
        await self.refresh()
        self._listener = asyncio.ensure_future(self._listen(client))
        self._poller = asyncio.ensure_future(self._poll(client))

    async def _open_pooled(self, session: PooledSession) -> Client:
        """A new session for one caller: its questions and log lines are its holder's (see .pool);
        its list changes are the shared session's business."""
        key = self.config.key

        async def notified(method: str, params: dict[str, Any]) -> None:
            if not method.endswith("/list_changed"):
                await self.hooks.on_notification(key, method, params)

        options = bind(session, {**self.hooks.client_options(key), "on_notification": notified})
        client = self._new_client(options)
        await client.connect()
        try:
            await _ask_for_logs(client)
        except BaseException:
            await client.aclose()
            raise
        return client

    def _new_client(self, extra: dict[str, Any]) -> Client:
        config = self.config
        options: dict[str, Any] = {
            "protocol_version": config.protocol_version,
            # A server that starts slowly (a cold interpreter on a loaded machine) must not be
            # mistaken for a legacy one that ignores the discover probe.
            "probe_timeout": 10.0,
            **extra,
        }
        if config.timeout is not None:
            options["timeout"] = config.timeout
        if config.transport == "stdio":
            import os

            options["env"] = {**os.environ, **config.env} if config.env else None
            options["cwd"] = config.cwd
            options["stderr"] = self.stderr
        elif config.headers:
            options["headers"] = dict(config.headers)
        target: Any = config.target
        if config.transport == "sse" and isinstance(target, str):
            options["protocol_version"] = options["protocol_version"] or "2024-11-05"
        if self.client_factory is not None:
            return self.client_factory(config, options)
        return Client(target, **options)

    async def _wait_for_end(self) -> str:
        """Wait until the connection ends (the process exits, or a call saw it die); say how."""
        client = self.client
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(self._failed.wait())]
        if client is not None and self.config.transport == "stdio":
            waits.append(asyncio.ensure_future(client.wait_closed()))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()
        self._failed.clear()
        reason = client.exit_reason() if client is not None else None
        return f"the server went away ({reason})" if reason is not None else "the connection was lost"

    async def _drop_client(self) -> None:
        for task in (self._listener, self._poller):
            if task is not None:
                task.cancel()
        self._listener = self._poller = None
        subscription, self._subscription = self._subscription, None
        if subscription is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(subscription.close(), 2.0)
        client, self.client = self.client, None
        had_lists = bool(self.tools or self.resources or self.templates or self.prompts)
        self.tools, self.resources, self.templates, self.prompts = [], [], [], []
        self.status.tools = 0
        if had_lists:
            self.hooks.on_lists(self.config.key)
        if client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.aclose(), 10.0)

    # -- lists -------------------------------------------------------------------------------------

    async def refresh(self, kinds: tuple[str, ...] = ("tools", "resources", "prompts")) -> None:
        """Read the lists of *kinds* again (after ``list_changed``), as far as the server offers them."""
        client = self.client
        if client is None:
            return
        caps = client.server_capabilities
        if "tools" in kinds:
            self.tools = await _listed(client.list_tools) if "tools" in caps else []
            self.status.tools = len(self.tools)
        if "resources" in kinds:
            self.resources = await _listed(client.list_resources) if "resources" in caps else []
            self.templates = await _listed(client.list_resource_templates) if "resources" in caps else []
        if "prompts" in kinds:
            self.prompts = await _listed(client.list_prompts) if "prompts" in caps else []

    async def _notified(self, method: str, params: dict[str, Any]) -> None:
        kind = method.removeprefix("notifications/").removesuffix("/list_changed")
        if method.endswith("/list_changed") and kind in ("tools", "resources", "prompts"):
            # Not awaited here: the client reads no further message until this returns, and the
            # answer to the re-listing is one of them.
            task = asyncio.ensure_future(self._relist(kind))
            self._relisting.add(task)
            task.add_done_callback(self._relisting.discard)
        await self.hooks.on_notification(self.config.key, method, params)

    async def _relist(self, kind: str) -> None:
        try:
            await self.refresh((kind,))
        except MCPError as exc:
            logger.warning("server %s: re-listing %s failed: %s", self.config.key, kind, exc)
        self.hooks.on_lists(self.config.key)

    async def _poll(self, client: Client) -> None:
        """Re-list, every ``refresh_interval`` seconds, what the server never announces changes of
        (a list whose capability lacks ``listChanged``); the host hears of it only if it changed."""
        every = self.config.refresh_interval
        caps = client.server_capabilities
        kinds = tuple(
            kind
            for kind in ("tools", "resources", "prompts")
            if isinstance(caps.get(kind), dict) and not caps[kind].get("listChanged")
        )
        if every is None or not kinds:
            return
        while True:
            await asyncio.sleep(every)
            try:
                await self._run(client, lambda _: self.refresh(kinds))
            except MCPError as exc:  # a dead connection is the supervisor's to notice and report
                logger.info("server %s: re-listing %s failed: %s", self.config.key, ", ".join(kinds), exc)
                continue
            self.hooks.on_lists(self.config.key)

    async def _listen(self, client: Client) -> None:
        """2026-07-28 servers tell list changes only to a ``subscriptions/listen`` stream: open one."""
        if client.protocol_version < "2026":
            return
        kinds = {
            k: bool(client.server_capabilities.get(k, {}).get("listChanged"))
            for k in ("tools", "resources", "prompts")
        }
        if not any(kinds.values()):
            return
        try:
            subscription = self._subscription = await client.listen(
                tools=kinds["tools"], resources=kinds["resources"], prompts=kinds["prompts"]
            )
            async for method, params in subscription:
                await self._notified(method, params)
        except (MCPError, OSError) as exc:
            logger.info("server %s: no change notifications: %s", self.config.key, exc)

    # -- calls -------------------------------------------------------------------------------------

    async def call(self, work: Callable[[Client], Awaitable[T]], lease: Lease | None = None) -> T:
        """Run *work* on the live connection, within the concurrency limit; with a *lease*, on a
        session of the lease's owner from the server's :class:`~.pool.SessionPool` instead.

        Raises:
            Unavailable: the server is not connected, or the connection died during *work*, or
                (with a lease) no session of the pool came free in time.
        """
        client = self.client
        if client is None or self.status.state != "ready":
            raise self.unavailable()
        if self._limit is None:
            return await (self._run(client, work) if lease is None else self._leased(client, work, lease))
        try:
            # A slot is waited for no longer than an answer would be: a stuck server's queue
            # must not grow without end.
            async with asyncio.timeout(self.config.timeout):
                await self._limit.acquire()
        except TimeoutError:
            raise Unavailable(
                f"server {self.config.key!r} is busy: {self.config.max_concurrency} calls in flight"
                f" for {self.config.timeout} s"
            ) from None
        try:
            return await self._leased(client, work, lease)
        finally:
            self._limit.release()

    async def _leased(self, client: Client, work: Callable[[Client], Awaitable[T]], lease: Lease | None) -> T:
        if lease is None:
            return await self._run(client, work)
        wait = self.pool.wait_seconds
        try:
            # A full pool frees up when a call ends: waited for no longer than an answer would be.
            async with asyncio.timeout(wait):
                session = await self.pool.acquire(lease)
        except TimeoutError:
            raise Unavailable(
                f"server {self.config.key!r} is busy: its {self.pool.max_sessions} caller sessions"
                f" stayed in use for {wait} s"
            ) from None
        except MCPError as exc:
            if isinstance(exc, Unavailable):
                raise
            raise Unavailable(
                f"server {self.config.key!r}: no session for this caller: {_describe(exc)}"
            ) from exc
        assert session.client is not None
        dead: str | None = None
        try:
            return await self._run(session.client, work, pooled=True)
        except Unavailable as exc:
            dead = str(exc)
            raise
        finally:
            self.pool.release(session, dead=dead, keep=lease.keep)

    async def _run(self, client: Client, work: Callable[[Client], Awaitable[T]], pooled: bool = False) -> T:
        try:
            return await work(client)
        except (TransportError, RPCError) as exc:
            if isinstance(exc, RPCError) and not self._lost_http(exc):
                raise  # the server's own answer
            if pooled:  # the caller's own session died: it leaves the pool (the shared one may be fine)
                raise Unavailable(
                    f"server {self.config.key!r} failed during the call: {_describe(exc)}"
                    " (this caller's session is closed; its next call opens another)"
                ) from exc
            if isinstance(exc, ConnectionClosed) or self.config.transport != "stdio":
                self._failed.set()
                self.ready.clear()
                self.status.state = "restarting" if self.restart else "failed"
                self.status.error = _describe(exc)
            raise Unavailable(f"server {self.config.key!r} failed during the call: {_describe(exc)}") from exc

    def _lost_http(self, exc: RPCError) -> bool:
        """Whether an error is the HTTP client's own report that the server could not be reached
        (a connection refused or broken: ``data.cause`` names it, and there was no HTTP status)."""
        data = exc.data
        return (
            self.config.transport != "stdio"
            and isinstance(data, dict)
            and bool(data.get("cause"))
            and data.get("httpStatus") is None
        )

    def unavailable(self) -> Unavailable:
        state, error = self.status.state, self.status.error
        return Unavailable(f"server {self.config.key!r} is {state}" + (f": {error}" if error else ""))


async def _ask_for_logs(client: Client) -> None:
    if "logging" in client.server_capabilities:
        # Ask for log lines (a 2026-07-28 server sends none unasked); whoever the host hands
        # them to applies its own level (the gateway: each caller's).
        with contextlib.suppress(MCPError):
            await client.set_logging_level("debug")


async def _listed(fetch: Callable[[], Awaitable[list[T]]]) -> list[T]:
    try:
        return await fetch()
    except MethodNotFound:
        return []


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) < 300 else text[:297] + "..."
