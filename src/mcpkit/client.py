"""The client: connect to a server, learn which revision it speaks, list and call its tools.

::

    async with Client("python examples/weather.py") as client:
        for tool in await client.list_tools():
            print(tool.name)
        result = await client.call_tool("get_weather", {"location": "Paris"})

Connecting follows the 2026-07-28 stdio binding's backward-compatibility rules: probe with
``server/discover`` at our newest revision; a ``DiscoverResult`` means a modern server (every later
request carries its revision in ``_meta``), a recognised modern error (-32022) means a modern server
that wants another revision, and anything else, including silence, means a legacy server, which gets
the ``initialize`` handshake. ``protocol_version=`` forces a revision and skips what does not apply.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
import shlex
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import IO, Any, Final, Self

import msgspec

from ._connection import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
)
from ._errors import (
    ConnectionClosed,
    HeaderMismatch,
    MCPError,
    MethodNotFound,
    RequestTimeout,
    RPCError,
    UnsupportedProtocolVersion,
)
from ._headers import mirrored_parameters
from ._jsonrpc import Notification, Request
from ._methods import CACHEABLE_METHODS
from ._versions import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    LATEST_VERSION,
    STATELESS_VERSIONS,
    Era,
    era_of,
)
from .session import Peer
from .skills import Skill, entries, entry, read_verified, require_extension
from .tasks import TASKS_EXTENSION
from .transports.base import Transport
from .types import (
    CallToolResult,
    Completion,
    GetPromptResult,
    Implementation,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Root,
    Tool,
)

__all__ = ["Client", "Subscription"]

server_logger = logging.getLogger("mcpkit.server_log")
logger = logging.getLogger("mcpkit.client")

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]
NotificationCallback = Callable[[str, dict[str, Any]], Awaitable[None]]
LogCallback = Callable[[dict[str, Any]], Awaitable[None]]
RequestCallback = Callable[[dict[str, Any]], Awaitable[Any]]

_DEFAULT_INFO: Final = Implementation(name="mcpkit", version="0.1.0")
_MAX_PAGES: Final = 10_000  # a server whose cursors never end must not hang the client


class Client:
    """A connection to one MCP server.

    Args:
        target: a command line to spawn (a string, split like a shell would, or a list of arguments),
            or the URL of a Streamable HTTP endpoint (``http://127.0.0.1:8000/mcp``).
        protocol_version: force this revision instead of negotiating one (any mcpkit supports).
        client_info: our name and version, as the server sees them.
        capabilities: client capabilities to declare (sampling, roots, elicitation...).
        timeout: seconds to wait for each answer (``None``: wait for ever); progress notifications
            restart the clock.
        max_timeout: the most seconds any request may take, progress or not.
        probe_timeout: seconds to wait for the ``server/discover`` probe before assuming a legacy
            server that ignores unknown requests.
        on_notification: ``async fn(method, params)`` for server notifications (list changes,
            resource updates, log messages).
        on_log: ``async fn(params)`` for log messages (default: Python logging).
        sampling, elicitation: ``async fn(params) -> result`` answering the server's
            ``sampling/createMessage`` and ``elicitation/create`` (declares the capability).
        roots: the roots to offer (``roots/list``), or ``async fn() -> roots``.
        max_input_rounds: how many ``input_required`` rounds one request may take (2026-07-28).
        cache: keep results while their ``ttlMs`` says they are fresh (2026-07-28).
        env, cwd: for the spawned process.
        stderr: where the spawned server's stderr goes (default: ours; ``subprocess.DEVNULL`` to drop it).
    """

    def __init__(
        self,
        target: str | Sequence[str] | Transport,
        *,
        protocol_version: str | None = None,
        client_info: Implementation = _DEFAULT_INFO,
        capabilities: dict[str, Any] | None = None,
        timeout: float | None = 60.0,
        max_timeout: float | None = 600.0,
        probe_timeout: float = 5.0,
        on_notification: NotificationCallback | None = None,
        on_log: LogCallback | None = None,
        sampling: RequestCallback | None = None,
        elicitation: RequestCallback | None = None,
        roots: Sequence[Root] | Callable[[], Awaitable[Sequence[Root]]] | None = None,
        max_input_rounds: int = 10,
        cache: bool = True,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        stderr: int | IO[bytes] | None = None,
    ) -> None:
        if protocol_version is not None and era_of(protocol_version) is None:
            raise ValueError(f"unsupported protocol version {protocol_version!r}")
        self._target = target
        self._forced = protocol_version
        self.client_info = client_info
        #: ``async fn(params) -> CreateMessageResult | dict`` answering ``sampling/createMessage``.
        self.sampling = sampling
        #: ``async fn(params) -> ElicitResult | dict`` answering ``elicitation/create``.
        self.elicitation = elicitation
        #: The roots to list, or ``async fn() -> roots``.
        self.roots = roots
        self.max_input_rounds = max_input_rounds
        #: Honour 2026-07-28 ``ttlMs`` hints: answer repeated list and read requests from memory
        #: while fresh, and forget them when a change notification arrives.
        self.cache = cache
        self._cache: dict[tuple[str, str], tuple[float, Any]] = {}
        self.capabilities: dict[str, Any] = (
            capabilities if capabilities is not None else self._implied_capabilities()
        )
        self.timeout = timeout
        self.max_timeout = max_timeout
        self.probe_timeout = probe_timeout
        #: ``async fn(method, params)`` for notifications not handled here (list changes, updates).
        self.on_notification = on_notification
        #: ``async fn(params)`` for ``notifications/message``; default: the ``mcpkit.server`` logger.
        self.on_log: LogCallback = on_log or self._default_log
        #: Stateless era: the ``io.modelcontextprotocol/logLevel`` sent with every request.
        self.log_level: str | None = None
        self._progress: dict[Any, _Progress] = {}
        self._subscriptions: dict[Any, Subscription] = {}
        self._env = env
        self._cwd = cwd
        self._stderr = stderr
        self._transport: Transport | None = None
        self._peer: Peer | None = None
        self._reader: asyncio.Task[None] | None = None
        #: Negotiated revision, once connected.
        self.protocol_version: str = ""
        self.server_info: Implementation | None = None
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.supported_versions: list[str] = []

    def _implied_capabilities(self) -> dict[str, Any]:
        # The capabilities that the callbacks given make true. Tasks of the 2026-07-28 extension
        # are followed by call_tool itself, so the extension is always declared.
        caps: dict[str, Any] = {"extensions": {TASKS_EXTENSION: {}}}
        if self.sampling is not None:
            caps["sampling"] = {"tools": {}}
        if self.elicitation is not None:
            caps["elicitation"] = {"form": {}, "url": {}}
        if self.roots is not None:
            caps["roots"] = {"listChanged": True}
        return caps

    @property
    def era(self) -> Era:
        era = era_of(self.protocol_version)
        if era is None:
            raise MCPError("not connected")
        return era

    # -- connecting --------------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def connect(self) -> None:
        """Start the transport and agree on a protocol revision with the server."""
        self._transport = await self._open_transport()
        self._peer = Peer(self._transport, on_request=self._on_request, on_notification=self._on_notification)
        self._reader = asyncio.ensure_future(self._peer.run())
        try:
            forced = self._forced
            if forced is not None and era_of(forced) is Era.HANDSHAKE:
                await self._initialize(forced)
            elif not await self._discover(forced or LATEST_VERSION):
                if forced is not None:
                    raise MCPError(f"the server does not speak {forced} (it did not answer server/discover)")
                await self._initialize(LATEST_HANDSHAKE_VERSION)
        except RPCError as exc:
            status = exc.data.get("httpStatus") if isinstance(exc.data, dict) else None
            if status not in (400, 404, 405) or not self._is_url():
                await self.aclose()
                raise
            # "If it fails with an HTTP 4xx status code ... issue a GET request to the server URL,
            # expecting ... an SSE stream" of the 2024-11-05 HTTP+SSE transport.
            await self.aclose()
            await self._connect_legacy_sse()
        except BaseException:
            await self.aclose()
            raise

    def _is_url(self) -> bool:
        return isinstance(self._target, str) and self._target.startswith(("http://", "https://"))

    async def _connect_legacy_sse(self) -> None:
        from .transports.sse_client import SSEClientTransport

        transport = SSEClientTransport(str(self._target))
        await transport.open()
        self._transport = transport
        self._peer = Peer(transport, on_request=self._on_request, on_notification=self._on_notification)
        self._reader = asyncio.ensure_future(self._peer.run())
        try:
            forced = self._forced
            await self._initialize(
                forced if forced is not None and era_of(forced) is Era.HANDSHAKE else "2024-11-05"
            )
        except BaseException:
            await self.aclose()
            raise

    async def _open_transport(self) -> Transport:
        target = self._target
        if isinstance(target, str) and target.startswith(("http://", "https://")):
            from .transports.http_client import HTTPClientTransport

            return HTTPClientTransport(target)
        if isinstance(target, str):
            command = shlex.split(target)
        elif isinstance(target, (list, tuple)):
            command = list(target)
        else:
            return target  # type: ignore[return-value]  # a Transport given directly
        from .transports.stdio import StdioClientTransport

        return await StdioClientTransport.spawn(command, env=self._env, cwd=self._cwd, stderr=self._stderr)

    async def _discover(self, version: str) -> bool:
        """Probe with ``server/discover``; True if the server is modern (and we now speak it)."""
        assert self._peer is not None
        for _ in range(2):  # the second round uses a version the server named in -32022
            try:
                result = await self._peer.request(
                    "server/discover", {"_meta": self._meta(version)}, timeout=self.probe_timeout
                )
            except UnsupportedProtocolVersion as exc:
                # A recognised modern error: a modern server that wants another revision.
                choice = next((v for v in exc.supported if v in STATELESS_VERSIONS), None)
                if choice is None:
                    raise MCPError(
                        f"the server supports only {exc.supported}, none of which mcpkit speaks"
                    ) from exc
                version = choice
                continue
            except (RPCError, RequestTimeout):
                return False  # any other error, or silence: a legacy server
            except ConnectionClosed as exc:
                raise self._closed_error() from exc
            if not isinstance(result, dict):
                return False
            supported = [v for v in result.get("supportedVersions", []) if isinstance(v, str)]
            if version not in supported:
                choice = next((v for v in supported if v in STATELESS_VERSIONS), None)
                if choice is None:
                    return False
                version = choice
            self.protocol_version = version
            self.supported_versions = supported
            self._accept_server(
                result.get("capabilities"), _server_info_from(result), result.get("instructions")
            )
            return True
        raise MCPError("the server keeps refusing the protocol versions it advertises")

    async def _initialize(self, version: str) -> None:
        assert self._peer is not None
        params = {
            "protocolVersion": version,
            # Extensions are a 2026-07-28 notion; older revisions' ClientCapabilities have no slot.
            "capabilities": {k: v for k, v in self.capabilities.items() if k != "extensions"},
            "clientInfo": msgspec.to_builtins(self.client_info),
        }
        try:
            result = await self._peer.request("initialize", params, timeout=self.timeout)
        except ConnectionClosed as exc:
            raise self._closed_error() from exc
        agreed = result.get("protocolVersion") if isinstance(result, dict) else None
        if agreed not in HANDSHAKE_VERSIONS:
            # "If the client does not support the version in the server's response, it SHOULD disconnect."
            raise MCPError(
                f"the server answered initialize with protocol version {agreed!r}, which mcpkit does not speak"
            )
        self.protocol_version = agreed
        self.supported_versions = [agreed]
        self._accept_server(result.get("capabilities"), result.get("serverInfo"), result.get("instructions"))
        await self._peer.notify("notifications/initialized")

    def _accept_server(self, capabilities: Any, info: Any, instructions: Any) -> None:
        self.server_capabilities = capabilities if isinstance(capabilities, dict) else {}
        with contextlib.suppress(msgspec.ValidationError):
            self.server_info = msgspec.convert(info, Implementation) if isinstance(info, dict) else None
        self.instructions = instructions if isinstance(instructions, str) else None

    def _meta(self, version: str) -> dict[str, Any]:
        meta = {
            META_PROTOCOL_VERSION: version,
            META_CLIENT_CAPABILITIES: self.capabilities,
            META_CLIENT_INFO: msgspec.to_builtins(self.client_info),
        }
        if self.log_level is not None:
            meta[META_LOG_LEVEL] = self.log_level
        return meta

    def _closed_error(self) -> ConnectionClosed:
        detail = ""
        describe = getattr(self._transport, "describe_exit", None)
        if describe is not None:
            detail = f" ({describe()})"
        return ConnectionClosed(f"the server closed the connection{detail}")

    async def aclose(self) -> None:
        """Close the connection (for stdio: close stdin, then SIGTERM, then SIGKILL)."""
        if self._transport is not None:
            await self._transport.aclose()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, 5.0)
            self._reader = None

    # -- requests ----------------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        max_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> Any:
        """Send any request and return its raw result (a dict).

        In the stateless era the per-request ``_meta`` is added, and an ``input_required`` result is
        answered through the callbacks and retried (a new id each round, ``requestState`` echoed
        verbatim) until the result is complete.

        Args:
            timeout: seconds of silence before giving up (default: the client's ``timeout``).
                Each progress notification for the request starts the clock again...
            max_timeout: ...but never past this many seconds in all (default: the client's).
            on_progress: ``async fn(progress, total, message)``, called for each
                ``notifications/progress`` of this request (a ``progressToken`` is sent).

        Raises:
            RPCError: the server answered with an error.
            RequestTimeout: no answer in time (``notifications/cancelled`` is sent).
            ConnectionClosed: the server went away (its exit status is in the message).
        """
        params = dict(params or {})
        try:
            return await self._request(method, params, timeout, max_timeout, on_progress)
        except RPCError as exc:
            # A handshake-era HTTP session the server no longer knows (404): "the client MUST start a
            # new session by sending a new InitializeRequest without a session ID attached".
            lost = isinstance(exc.data, dict) and exc.data.get("httpStatus") == 404
            if not (lost and self.era is Era.HANDSHAKE and method != "initialize"):
                raise
            transport = self._transport
            if transport is not None and hasattr(transport, "session_id"):
                transport.session_id = None
            await self._initialize(self.protocol_version)
            return await self._request(method, params, timeout, max_timeout, on_progress)

    async def _request(
        self,
        method: str,
        params: dict[str, Any],
        timeout: float | None,
        max_timeout: float | None,
        on_progress: ProgressCallback | None,
    ) -> Any:
        cache_key = self._cache_key(method, params)
        if cache_key is not None:
            cached = self._cache.get(cache_key)
            if cached is not None and cached[0] > time.monotonic():
                return copy.deepcopy(cached[1])
        for round_number in range(self.max_input_rounds):
            result = await self._request_once(method, params, timeout, max_timeout, on_progress)
            if isinstance(result, dict) and result.get("resultType") == "task":
                return await self._follow_task(result)
            if not isinstance(result, dict) or result.get("resultType") != "input_required":
                # Results of retried requests "MUST NOT be cached": they depend on the answers.
                if cache_key is not None and round_number == 0:
                    self._remember(cache_key, result)
                return result
            # "the client MUST construct the requested inputs before retrying the original request"
            responses = await self._answer_inputs(result.get("inputRequests"), set())
            params = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
            if responses:
                params["inputResponses"] = responses
            if "requestState" in result:
                params["requestState"] = result["requestState"]
        raise MCPError(f"{method}: the server still wanted input after {self.max_input_rounds} rounds")

    async def _answer_inputs(self, requests: Any, answered: set[str]) -> dict[str, Any]:
        """Answer an ``inputRequests`` map through the callbacks, skipping (and recording) keys in
        *answered*: the ``inputResponses`` that go back to the server."""
        responses: dict[str, Any] = {}
        if isinstance(requests, dict):
            for key, asked in requests.items():
                if key not in answered:
                    responses[key] = await self._answer(asked.get("method"), asked.get("params") or {})
                    answered.add(key)
        return responses

    async def _follow_task(self, created: dict[str, Any]) -> Any:
        """Drive a 2026-07-28 task to its end: poll ``tasks/get``, answer its ``inputRequests``
        through the callbacks with ``tasks/update``, and return the inlined result."""
        task_id = created.get("taskId")
        interval = created.get("pollIntervalMs")
        answered: set[str] = set()
        while True:
            task = await self.request("tasks/get", {"taskId": task_id})
            status = task.get("status")
            if status == "completed":
                return task.get("result", {})
            if status == "failed":
                raise RPCError.from_wire(task.get("error") or {"code": -32603, "message": "task failed"})
            if status == "cancelled":
                raise MCPError(f"task {task_id} was cancelled")
            waiting = status == "input_required"
            responses = await self._answer_inputs(task.get("inputRequests"), answered) if waiting else {}
            if responses:
                await self.request("tasks/update", {"taskId": task_id, "inputResponses": responses})
                continue
            interval = task.get("pollIntervalMs", interval)
            seconds = interval / 1000 if isinstance(interval, (int, float)) and interval > 0 else 0.5
            await asyncio.sleep(min(max(seconds, 0.01), 5.0))

    async def start_task(
        self, name: str, arguments: dict[str, Any] | None = None, *, ttl_ms: int | None = None
    ) -> dict[str, Any]:
        """Start a tool as a task (2025-11-25: ``params.task``) and return the task; then use
        :meth:`get_task`, :meth:`task_result`, :meth:`cancel_task`. In 2026-07-28 the server
        decides, and :meth:`call_tool` follows its tasks by itself."""
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}, "task": {}}
        if ttl_ms is not None:
            params["task"]["ttl"] = ttl_ms
        result = await self._request_once("tools/call", params, None, None, None)
        task = result.get("task") if isinstance(result, dict) else None
        if not isinstance(task, dict):
            raise MCPError("the server did not start a task")
        return task

    async def get_task(self, task_id: str) -> dict[str, Any]:
        """``tasks/get``: the task's status (and in 2026-07-28 its inlined result)."""
        return await self.request("tasks/get", {"taskId": task_id})  # type: ignore[no-any-return]

    async def task_result(self, task_id: str) -> CallToolResult:
        """``tasks/result`` (2025-11-25): wait for the task's end and return its tool result."""
        return msgspec.convert(
            await self.request("tasks/result", {"taskId": task_id}, timeout=None), CallToolResult
        )

    async def cancel_task(self, task_id: str) -> Any:
        """``tasks/cancel``."""
        return await self.request("tasks/cancel", {"taskId": task_id})

    async def list_tasks(self) -> list[dict[str, Any]]:
        """``tasks/list`` (2025-11-25), across pages."""
        return await self._list_all("tasks/list", "tasks")

    def _cache_key(self, method: str, params: dict[str, Any]) -> tuple[str, str] | None:
        if not self.cache or method not in CACHEABLE_METHODS or self.era is not Era.STATELESS:
            return None
        salient = {k: v for k, v in params.items() if k not in ("_meta", "inputResponses", "requestState")}
        return method, json.dumps(salient, sort_keys=True, default=str)

    def _remember(self, key: tuple[str, str], result: Any) -> None:
        ttl = result.get("ttlMs") if isinstance(result, dict) else None
        if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl > 0:
            self._cache[key] = (time.monotonic() + ttl / 1000, copy.deepcopy(result))

    def _forget(self, method: str, uri: str | None = None) -> None:
        """Drop cached answers that a change notification made stale."""
        for key in [k for k in self._cache if k[0] == method]:
            if uri is None or json.loads(key[1]).get("uri") == uri:
                del self._cache[key]

    def _forget_for(self, method: str, params: dict[str, Any]) -> None:
        if method.endswith("/list_changed"):
            kind = method.removeprefix("notifications/").removesuffix("/list_changed")
            self._forget(f"{kind}/list")
            if kind == "resources":
                self._forget("resources/templates/list")
        elif method == "notifications/resources/updated":
            self._forget("resources/read", params.get("uri"))

    async def _request_once(
        self,
        method: str,
        params: dict[str, Any],
        timeout: float | None,
        max_timeout: float | None,
        on_progress: ProgressCallback | None,
    ) -> Any:
        peer = self._peer
        if peer is None or not self.protocol_version:
            raise MCPError("not connected: use 'async with Client(...)' or await connect()")
        params = dict(params)
        meta: dict[str, Any] = dict(params.get("_meta") or {})
        if self.era is Era.STATELESS:
            meta = {**self._meta(self.protocol_version), **meta}
        request_id = peer.next_id()
        progress = _Progress(on_progress)
        if on_progress is not None:
            meta["progressToken"] = request_id
            self._progress[request_id] = progress
        if meta:
            params["_meta"] = meta
        try:
            future = await peer.send_request(request_id, method, params)
            result = await self._await(
                peer, request_id, future, progress, timeout or self.timeout, max_timeout
            )
        except ConnectionClosed as exc:
            raise self._closed_error() from exc
        finally:
            self._progress.pop(request_id, None)
        if isinstance(result, dict) and self.era is Era.STATELESS:
            # "clients MUST treat an absent resultType as complete"; unknown ones are invalid.
            kind = result.get("resultType", "complete")
            if kind not in ("complete", "input_required", "task"):
                raise MCPError(f"unsupported resultType {kind!r} in the answer to {method}")
        return result

    async def _await(
        self,
        peer: Peer,
        request_id: int,
        future: asyncio.Future[Any],
        progress: _Progress,
        timeout: float | None,
        max_timeout: float | None,
    ) -> Any:
        if timeout is None:
            return await peer.wait(request_id, future, None)
        loop = asyncio.get_running_loop()
        hard_stop = loop.time() + (max_timeout or self.max_timeout or float("inf"))
        try:
            while True:
                deadline = min(progress.last_seen(loop) + timeout, hard_stop)
                remaining = deadline - loop.time()
                if remaining <= 0:
                    await peer.cancel(request_id, "request timed out")
                    raise RequestTimeout(f"no answer to request {request_id} within {timeout:g} s")
                done, _ = await asyncio.wait({future}, timeout=remaining)
                if done:
                    return future.result()
        except asyncio.CancelledError:
            await peer.cancel(request_id, "request cancelled by the caller")
            raise

    async def _list_all(self, method: str, key: str, params: dict[str, Any] | None = None) -> list[Any]:
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            result = await self.request(
                method, {**(params or {}), "cursor": cursor} if cursor is not None else params
            )
            page = result.get(key, []) if isinstance(result, dict) else []
            items.extend(page if isinstance(page, list) else [])
            cursor = result.get("nextCursor") if isinstance(result, dict) else None
            if not isinstance(cursor, str) or not cursor:
                return items
        raise MCPError(f"{method}: the server returned more than {_MAX_PAGES} pages")

    # -- tools, resources, prompts, completion -----------------------------------------------------

    async def list_tools(self) -> list[Tool]:
        """Every tool the server offers, following ``nextCursor`` across pages.

        Over HTTP, a tool whose ``x-mcp-header`` annotations break the spec's rules is left out, with
        a warning ("the client MUST exclude the invalid tool from the result of tools/list").
        """
        tools = [msgspec.convert(t, Tool) for t in await self._list_all("tools/list", "tools")]
        mirrored: dict[str, dict[str, tuple[str, ...]]] | None = getattr(self._transport, "mirrored", None)
        if mirrored is None:
            return tools
        kept = []
        for tool in tools:
            try:
                mirrored[tool.name] = mirrored_parameters(tool.input_schema)
            except ValueError as exc:
                logger.warning("ignoring tool %r: %s", tool.name, exc)
                continue
            kept.append(tool)
        return kept

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> CallToolResult:
        """Call a tool. A tool that failed returns ``is_error=True``; protocol errors raise ``RPCError``."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        try:
            result = await self.request("tools/call", params, timeout=timeout, on_progress=on_progress)
        except HeaderMismatch:
            if getattr(self._transport, "mirrored", None) is None:
                raise
            # "the client SHOULD call tools/list to check for changes to the tool's inputSchema,
            # then retry the original request with the appropriate headers"
            await self.list_tools()
            result = await self.request("tools/call", params, timeout=timeout, on_progress=on_progress)
        return msgspec.convert(result, CallToolResult)

    async def list_resources(self) -> list[Resource]:
        """Every fixed resource, across pages."""
        return [msgspec.convert(r, Resource) for r in await self._list_all("resources/list", "resources")]

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        """Every resource template, across pages."""
        found = await self._list_all("resources/templates/list", "resourceTemplates")
        return [msgspec.convert(t, ResourceTemplate) for t in found]

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """Read a resource. A missing one raises ``ResourceNotFound`` (-32002) or ``InvalidParams`` (-32602)."""
        return msgspec.convert(await self.request("resources/read", {"uri": uri}), ReadResourceResult)

    async def list_prompts(self) -> list[Prompt]:
        """Every prompt, across pages."""
        return [msgspec.convert(p, Prompt) for p in await self._list_all("prompts/list", "prompts")]

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> GetPromptResult:
        """Fill in a prompt. Prompt arguments are strings."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return msgspec.convert(await self.request("prompts/get", params), GetPromptResult)

    async def complete(
        self,
        ref: dict[str, str],
        argument: str,
        value: str,
        context: dict[str, str] | None = None,
    ) -> Completion:
        """Suggestions for an argument: ``ref`` is ``{"type": "ref/prompt", "name": ...}`` or
        ``{"type": "ref/resource", "uri": ...}``; ``context`` holds arguments already chosen."""
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        result = await self.request("completion/complete", params)
        return msgspec.convert(result.get("completion", {}), Completion)

    # -- skills (the io.modelcontextprotocol/skills extension, SEP-2640) ----------------------------

    async def list_skills(self) -> list[Skill]:
        """Every skill the server lists (``skills/list``, across pages). No skill file is read: "Hosts
        MUST NOT retrieve a skill's files ahead of need". Malformed entries are left out, with a warning.

        Raises:
            MCPError: the server does not declare the skills extension.
        """
        require_extension(self.server_capabilities)
        return entries(await self._list_all("skills/list", "skills"))

    async def get_skill(self, uri: str) -> Skill:
        """The entry of the skill whose ``SKILL.md`` is at *uri* (``skills/get``), listed or not.

        Raises:
            InvalidParams: the server serves no skill there.
            SkillVerificationError: the entry is malformed.
        """
        require_extension(self.server_capabilities)
        result = await self.request("skills/get", {"uri": uri})
        return entry(result.get("skill") if isinstance(result, dict) else None)

    async def load_skill(self, skill: Skill | str) -> str:
        """Read a skill's ``SKILL.md`` to use it, checked against its entry: size, digest and every
        frontmatter field. Given a URI, the entry is fetched first with ``skills/get``.

        Raises:
            SkillVerificationError: the content is not what the entry describes (not returned).
        """
        held = skill if isinstance(skill, Skill) else await self.get_skill(skill)
        return (await read_verified(self.request, held, held.uri)).decode("utf-8")

    async def read_skill_file(self, skill: Skill, path: str) -> bytes:
        """Read one file of *skill* (a path relative to its root, or a URI), checked against the
        entry's size and digest. A file the entry does not list is not read. (A ``"dynamic"`` skill
        has no digests: its files are read as they come, if they are within the skill.)

        Raises:
            SkillVerificationError: unlisted, or not what the entry describes (not returned).
        """
        return await read_verified(self.request, skill, skill.resolve(path))

    async def list_directory(self, uri: str) -> list[Resource]:
        """The direct children of a directory resource (``resources/directory/read``, across pages);
        subdirectories have ``mime_type="inode/directory"``.

        Raises:
            MCPError: the server does not declare ``directoryRead``.
            InvalidParams: *uri* is not a directory.
        """
        require_extension(self.server_capabilities, directory_read=True)
        found = await self._list_all("resources/directory/read", "resources", {"uri": uri})
        return [msgspec.convert(r, Resource) for r in found]

    async def subscribe_resource(self, uri: str) -> None:
        """``resources/subscribe`` (handshake era). In 2026-07-28 use :meth:`listen`."""
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        """``resources/unsubscribe`` (handshake era)."""
        await self.request("resources/unsubscribe", {"uri": uri})

    async def set_logging_level(self, level: str) -> None:
        """Ask for log messages at *level* and above: ``logging/setLevel`` in the handshake era, the
        ``io.modelcontextprotocol/logLevel`` request ``_meta`` key from 2026-07-28 on."""
        if self.era is Era.STATELESS:
            self.log_level = level
        else:
            await self.request("logging/setLevel", {"level": level})

    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        uris: Sequence[str] = (),
    ) -> Subscription:
        """Ask to be told about changes; iterate the returned :class:`Subscription` for them.

        In 2026-07-28 this is one ``subscriptions/listen`` request; in the handshake era list changes
        arrive unasked and ``resources/subscribe`` is sent for each of *uris*. Either way the
        subscription yields ``(method, params)`` pairs and ends with ``close()``.
        """
        peer = self._peer
        if peer is None:
            raise MCPError("not connected")
        kinds = {
            k for k, wanted in (("tools", tools), ("prompts", prompts), ("resources", resources)) if wanted
        }
        subscription = Subscription(self, kinds, set(uris))
        if self.era is Era.HANDSHAKE:
            for uri in uris:
                await self.subscribe_resource(uri)
            subscription.acknowledged = {"kinds": sorted(kinds), "uris": list(uris)}
            self._subscriptions[None] = subscription
            return subscription
        wanted: dict[str, Any] = {f"{k}ListChanged": True for k in sorted(kinds)}
        if uris:
            wanted["resourceSubscriptions"] = list(uris)
        request_id = peer.next_id()
        self._subscriptions[request_id] = subscription
        params = {"notifications": wanted, "_meta": self._meta(self.protocol_version)}
        subscription.request_id = request_id
        subscription.answer = await peer.send_request(request_id, "subscriptions/listen", params)
        await subscription.wait_acknowledged(self.timeout)
        return subscription

    async def ping(self) -> None:
        """Check the server answers (handshake era; 2026-07-28 has no ``ping``, so discover is used)."""
        if self.era is Era.STATELESS:
            await self.request("server/discover")
        else:
            await self.request("ping")

    # -- what the server sends us ------------------------------------------------------------------

    async def _on_request(self, request: Request) -> Any:
        if request.method == "ping":
            return {}
        return await self._answer(request.method, request.params if isinstance(request.params, dict) else {})

    async def _answer(self, method: Any, params: dict[str, Any]) -> Any:
        """What we say to a server's request: in the handshake era a real request, in 2026-07-28 one
        entry of an ``input_required`` result. The callbacks answer; a missing one is -32601."""
        callback = {
            "sampling/createMessage": self.sampling,
            "elicitation/create": self.elicitation,
        }.get(method)
        if method == "roots/list" and self.roots is not None:
            roots = await self.roots() if callable(self.roots) else self.roots
            return {"roots": [msgspec.to_builtins(r) if isinstance(r, Root) else r for r in roots]}
        if callback is None:
            raise MethodNotFound(f"Method not found: {method} (this client has no callback for it)")
        answer = await callback(params)
        answer = msgspec.to_builtins(answer) if isinstance(answer, msgspec.Struct) else answer
        if method == "elicitation/create":
            _apply_defaults(answer, params.get("requestedSchema"))
        return answer

    async def roots_changed(self) -> None:
        """Tell the server the roots changed (``notifications/roots/list_changed``, handshake era)."""
        if self._peer is not None and self.era is Era.HANDSHAKE:
            await self._peer.notify("notifications/roots/list_changed")

    async def _on_notification(self, notification: Notification) -> None:
        params = notification.params if isinstance(notification.params, dict) else {}
        method = notification.method
        meta = params.get("_meta")
        if isinstance(meta, dict) and META_SUBSCRIPTION_ID in meta:
            if method.endswith("/list_changed") or method == "notifications/resources/updated":
                self._forget_for(method, params)
            subscription = self._subscriptions.get(meta[META_SUBSCRIPTION_ID])
            if subscription is not None:
                subscription.deliver(method, params)
            return
        legacy = self._subscriptions.get(None)
        if legacy is not None and legacy.wants(method, params):
            legacy.deliver(method, params)
        if method == "notifications/progress":
            progress = self._progress.get(params.get("progressToken"))
            if progress is not None:
                await progress.update(params)
            return
        self._forget_for(method, params)
        if method == "notifications/message":
            await self.on_log(params)
        if self.on_notification is not None:
            await self.on_notification(method, params)

    async def _default_log(self, params: dict[str, Any]) -> None:
        level = _PY_LEVELS.get(str(params.get("level")), logging.INFO)
        server_logger.log(level, "%s", params.get("data"), extra={"mcp_logger": params.get("logger")})


_PY_LEVELS: Final = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


class Subscription:
    """Changes the server tells us about; see :meth:`Client.listen`.

    ``async for method, params in subscription`` until :meth:`close`; ``acknowledged`` holds what
    the server agreed to send.
    """

    def __init__(self, client: Client, kinds: set[str], uris: set[str]) -> None:
        self._client = client
        self._kinds = kinds
        self._uris = uris
        self._queue: asyncio.Queue[tuple[str, dict[str, Any]] | None] = asyncio.Queue()
        self._acknowledged = asyncio.Event()
        self.acknowledged: dict[str, Any] | None = None
        self.request_id: int | None = None
        self.answer: asyncio.Future[Any] | None = None

    def wants(self, method: str, params: dict[str, Any]) -> bool:
        if method == "notifications/resources/updated":
            return params.get("uri") in self._uris
        kind = method.removeprefix("notifications/").removesuffix("/list_changed")
        return method.endswith("/list_changed") and kind in self._kinds

    def deliver(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/subscriptions/acknowledged":
            notifications = params.get("notifications")
            self.acknowledged = notifications if isinstance(notifications, dict) else {}
            self._acknowledged.set()
            return
        self._queue.put_nowait((method, params))

    async def wait_acknowledged(self, timeout: float | None) -> None:
        assert self.answer is not None
        waiter = asyncio.ensure_future(self._acknowledged.wait())
        done, _ = await asyncio.wait(
            {waiter, self.answer}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        waiter.cancel()
        if self.answer in done:
            self.answer.result()  # an error answer raises here
            raise MCPError("the server ended the subscription before acknowledging it")
        if not done:
            await self.close()
            raise RequestTimeout("subscriptions/listen was not acknowledged in time")

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> tuple[str, dict[str, Any]]:
        getter = asyncio.ensure_future(self._queue.get())
        waiting: set[asyncio.Future[Any]] = {getter}
        if self.answer is not None:
            waiting.add(self.answer)  # a graceful close by the server ends the iteration
        done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if getter in done:
            item = getter.result()
            if item is not None:
                return item
        getter.cancel()
        raise StopAsyncIteration

    async def close(self) -> None:
        """End the subscription (``notifications/cancelled`` for a listen request)."""
        self._client._subscriptions.pop(self.request_id, None)
        if self.request_id is not None and self._client._peer is not None:
            await self._client._peer.cancel(self.request_id, "subscription closed")
        elif self._client.era is Era.HANDSHAKE:
            for uri in self._uris:
                with contextlib.suppress(MCPError):
                    await self._client.unsubscribe_resource(uri)
        self._queue.put_nowait(None)


class _Progress:
    """The progress of one request: when it was last heard of, and whom to tell."""

    __slots__ = ("_callback", "_seen")

    def __init__(self, callback: ProgressCallback | None) -> None:
        self._callback = callback
        self._seen: float | None = None

    def last_seen(self, loop: asyncio.AbstractEventLoop) -> float:
        if self._seen is None:
            self._seen = loop.time()
        return self._seen

    async def update(self, params: dict[str, Any]) -> None:
        self._seen = asyncio.get_running_loop().time()
        if self._callback is not None:
            await self._callback(params.get("progress", 0), params.get("total"), params.get("message"))


def _server_info_from(result: dict[str, Any]) -> Any:
    meta = result.get("_meta")
    return meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None


def _apply_defaults(answer: Any, schema: Any) -> None:
    """An accepted form leaves out fields the user did not touch: those with a ``default`` in the
    requested schema take it (SEP-1034)."""
    if not isinstance(answer, dict) or answer.get("action") != "accept" or not isinstance(schema, dict):
        return
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    content = answer.get("content")
    if not isinstance(content, dict):
        content = answer["content"] = {}
    for name, field in properties.items():
        if name not in content and isinstance(field, dict) and "default" in field:
            content[name] = field["default"]
