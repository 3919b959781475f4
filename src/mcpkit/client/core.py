"""What every call of the client stands on: its options, the connection, and the one request path.

:class:`ClientCore` owns the transport and the :class:`~mcpkit.session.Peer` on it, connects through
:mod:`.connect`, and sends every request the same way (:meth:`ClientCore.request`): from the cache if
fresh, with the 2026-07-28 ``_meta``, waited for as :mod:`.exchange` says, answered through
:mod:`.callbacks` while the server wants input, followed when it becomes a task. What the server
sends us unasked is routed by its base, :class:`~.inbound.Inbound`. :class:`~mcpkit.client.Client`
adds the calls of the protocol on top.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any, Final, Self

from .._errors import ConnectionClosed, MCPError, RPCError
from .._transport import Transport
from .._versions import STATELESS_VERSIONS, Era, era_of
from ..session import Peer
from ..transports.stdio import DEFAULT_MAX_MESSAGE_BYTES
from ..types import Implementation
from . import callbacks
from .cache import ResultCache
from .callbacks import LogCallback, RequestCallback, RootsSource
from .connect import (
    Agreement,
    ProbeAnswers,
    RequestMeta,
    agree,
    initialize,
    is_url,
    legacy_sse_version,
    open_legacy_sse,
    open_transport,
    refused_post,
    user_headers,
)
from .exchange import (
    Deadlines,
    Progress,
    ProgressCallback,
    await_answer,
    check_result_type,
    follow_task,
    retry_params,
)
from .inbound import Inbound, NotificationCallback
from .subscriptions import Subscriptions

if TYPE_CHECKING:
    import httpx

    from ..kernel import InProcess
    from ..telemetry import Telemetry

__all__ = ["ClientCore", "LogCallback", "NotificationCallback"]

DEFAULT_INFO: Final = Implementation(name="mcpkit", version="0.1.0")
#: New sessions a request starts after 404s before the next 404 is raised (a server forgetting
#: sessions as fast as they are made is not one to chase).
_RENEWALS: Final = 3


class ClientCore(Inbound):
    """The connection and request path under :class:`~mcpkit.client.Client` (whose docstring
    describes the arguments)."""

    def __init__(
        self,
        target: str | Sequence[str] | Transport | InProcess,
        *,
        protocol_version: str | None = None,
        client_info: Implementation = DEFAULT_INFO,
        capabilities: dict[str, Any] | None = None,
        timeout: float | None = 60.0,
        max_timeout: float | None = 600.0,
        probe_timeout: float = 5.0,
        on_notification: NotificationCallback | None = None,
        on_log: LogCallback | None = None,
        sampling: RequestCallback | None = None,
        elicitation: RequestCallback | None = None,
        roots: RootsSource | None = None,
        max_input_rounds: int = 10,
        cache: bool = True,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        stderr: int | IO[bytes] | None = None,
        headers: dict[str, str] | None = None,
        auth: httpx.Auth | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        ui: bool = False,
        telemetry: bool = False,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        if protocol_version is not None and era_of(protocol_version) is None:
            raise ValueError(f"unsupported protocol version {protocol_version!r}")
        #: OpenTelemetry spans and durations of the requests sent, with the trace context in their
        #: ``_meta`` (see :mod:`mcpkit.telemetry`); imported only when asked for.
        self.telemetry: Telemetry | None = None
        if telemetry:
            from ..telemetry import Telemetry

            self.telemetry = Telemetry("client")
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
        self._cache = ResultCache()
        self.capabilities: dict[str, Any] = (
            capabilities
            if capabilities is not None
            else callbacks.implied_capabilities(sampling=sampling, elicitation=elicitation, roots=roots)
        )
        declared = callbacks.extensions_to_declare(extensions, ui=ui)
        if declared:
            self.capabilities = {
                **self.capabilities,
                "extensions": {**self.capabilities.get("extensions", {}), **declared},
            }
        self.timeout = timeout
        self.max_timeout = max_timeout
        self.probe_timeout = probe_timeout
        #: ``async fn(method, params)`` for notifications not handled here (list changes, updates).
        self.on_notification = on_notification
        #: ``async fn(params)`` for ``notifications/message``; default: the ``mcpkit.server_log`` logger.
        self.on_log: LogCallback = on_log or callbacks.log_to_python
        #: Stateless era: the ``io.modelcontextprotocol/logLevel`` sent with every request.
        self.log_level: str | None = None
        # The last request _meta made (see _meta), and what it was made for.
        self._made_meta = RequestMeta()
        self._progress: dict[Any, Progress] = {}
        self._deadlines = Deadlines()
        self._subscriptions = Subscriptions()
        self._env = env
        self._cwd = cwd
        self._stderr = stderr
        self._headers = user_headers(headers)
        self._auth = auth
        #: The largest message read from the server (a stdio line, an HTTP body, an SSE event).
        self.max_message_bytes = max_message_bytes
        self._transport: Transport | None = None
        self._background: set[asyncio.Task[None]] = set()  # cancelled on close
        self._renewing = asyncio.Lock()  # one new session at a time, for as many 404s
        self._peer: Peer | None = None
        self._reader: asyncio.Task[None] | None = None
        #: Negotiated revision, once connected.
        self.protocol_version: str = ""
        self.server_info: Implementation | None = None
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.supported_versions: list[str] = []

    @property
    def era(self) -> Era:
        era = era_of(self.protocol_version)
        if era is None:
            raise MCPError("not connected")
        return era

    def _meta(self, version: str) -> dict[str, Any]:
        """The 2026-07-28 request ``_meta``: who we are, at *version* (see :class:`RequestMeta`)."""
        return self._made_meta(version, self.log_level, self.capabilities, self.client_info)

    # -- connecting --------------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def connect(self) -> None:
        """Start the transport and agree on a protocol revision with the server (see
        :mod:`mcpkit.client.connect`)."""
        try:
            prepare = getattr(self._auth, "prepare", None)  # OAuth's: authorize before the probe
            if prepare is not None and is_url(self._target):
                # A person in the browser takes longer than the era probe (or any request) waits.
                await prepare(str(self._target), self._forced)
            transport = await open_transport(
                self._target,
                env=self._env,
                cwd=self._cwd,
                stderr=self._stderr,
                headers=self._headers,
                auth=self._auth,
                max_message_bytes=self.max_message_bytes,
            )
            if self.telemetry is not None:  # the spans' network.transport: HTTP runs on TCP
                self.telemetry.transport = "tcp" if is_url(self._target) else "pipe"
            probe = self._attach(transport)
            try:
                with self._naming_exit():
                    agreement = await agree(
                        self._live_peer(),
                        probe,
                        forced=self._forced,
                        meta=self._meta,
                        capabilities=self.capabilities,
                        client_info=self.client_info,
                        probe_timeout=self.probe_timeout,
                        timeout=self.timeout,
                        telemetry=self.telemetry,
                    )
            except RPCError as exc:
                if not (is_url(self._target) and refused_post(exc)):
                    raise
                # "If it fails with an HTTP 4xx status code ... issue a GET request to the server URL,
                # expecting ... an SSE stream" of the 2024-11-05 HTTP+SSE transport.
                await self.aclose()
                self._attach(
                    await open_legacy_sse(
                        str(self._target), self._headers, self._auth, self.max_message_bytes
                    )
                )
                with self._naming_exit():
                    agreement = await self._initialize(legacy_sse_version(self._forced))
        except BaseException:
            await self.aclose()
            raise
        self._accept(agreement)

    def _attach(self, transport: Transport) -> ProbeAnswers:
        self._transport = transport
        probe = ProbeAnswers(transport)
        self._peer = Peer(probe, on_request=self._on_request, on_notification=self._on_notification)
        self._reader = asyncio.ensure_future(self._peer.run())
        return probe

    async def _initialize(self, version: str) -> Agreement:
        return await initialize(
            self._live_peer(), version, self.capabilities, self.client_info, self.timeout, self.telemetry
        )

    def _accept(self, agreement: Agreement) -> None:
        self.protocol_version = agreement.protocol_version
        self.supported_versions = agreement.supported_versions
        self.server_capabilities = agreement.capabilities
        self.server_info = agreement.server_info
        self.instructions = agreement.instructions

    def restart_timeouts(self) -> None:
        """Start the silence timer of every request waiting for its answer again, as a progress
        notification for it would: for time the server is not to blame for (a person typing the
        answer to its question, say)."""
        if self._peer is not None:
            self._deadlines.restart(self._peer.event_loop().time())

    def _live_peer(self) -> Peer:
        if self._peer is None:
            raise MCPError("not connected: use 'async with Client(...)' or await connect()")
        return self._peer

    async def wait_closed(self) -> None:
        """Return once the connection has ended: the server exited or closed it, or :meth:`aclose`.

        Raises:
            MCPError: not connected yet.
        """
        await self._live_peer().closed.wait()

    @property
    def closed(self) -> bool:
        """Whether the connection has ended (false before :meth:`connect`)."""
        return self._peer is not None and self._peer.closed.is_set()

    def exit_reason(self) -> str | None:
        """How a stdio server process ended (``exit code 1``, ``killed by SIGKILL``, ``still
        running``); None for other transports."""
        describe = getattr(self._transport, "describe_exit", None)
        return str(describe()) if describe is not None else None

    @contextlib.contextmanager
    def _naming_exit(self) -> Iterator[None]:
        """Turn the session's ``ConnectionClosed`` into one that says how the server ended."""
        try:
            yield
        except ConnectionClosed as exc:
            raise self._closed_error(exc) from exc

    def _closed_error(self, exc: ConnectionClosed) -> ConnectionClosed:
        describe = getattr(self._transport, "describe_exit", None)
        detail = f" ({describe()})" if describe is not None else ""
        return ConnectionClosed(f"the server closed the connection{detail}")

    async def aclose(self) -> None:
        """Close the connection (for stdio: close stdin, then SIGTERM, then SIGKILL)."""
        self._deadlines.close()
        for task in list(self._background):
            task.cancel()
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
            RequestTimeout: no answer in time (the request is cancelled on the server).
            ConnectionClosed: the server went away (its exit status is in the message).
        """
        params = params if params is not None else {}  # copied where it is changed (_request_once)
        for _ in range(_RENEWALS):
            if self._renewing.locked():  # a new session is being started: go out in that one
                async with self._renewing:
                    pass
            session = self._session_id()  # the session this request goes out in
            try:
                return await self._request(method, params, timeout, max_timeout, on_progress)
            except RPCError as exc:
                # A handshake-era HTTP session the server no longer knows (404): "the client MUST
                # start a new session by sending a new InitializeRequest without a session ID".
                lost = isinstance(exc.data, dict) and exc.data.get("httpStatus") == 404
                if not (lost and self.era is Era.HANDSHAKE and method != "initialize"):
                    raise
                await self._renew_session(session)
        return await self._request(method, params, timeout, max_timeout, on_progress)

    def _session_id(self) -> str | None:
        return getattr(self._transport, "session_id", None)

    async def _renew_session(self, lost: str | None) -> None:
        """Start a new handshake-era session, the server having forgotten session *lost*: unless a
        new one is already in use (another request, or the session's stream, met the 404 first)."""
        async with self._renewing:
            if self._session_id() not in (lost, None):
                return
            if hasattr(self._transport, "session_id"):
                setattr(self._transport, "session_id", None)  # noqa: B010 (the lost id must not be sent again)
            with self._naming_exit():
                self._accept(await self._initialize(self.protocol_version))

    async def _request(
        self,
        method: str,
        params: dict[str, Any],
        timeout: float | None,
        max_timeout: float | None,
        on_progress: ProgressCallback | None,
    ) -> Any:
        key = (
            ResultCache.key(method, params)
            if self.cache and self.protocol_version in STATELESS_VERSIONS
            else None
        )
        if key is not None and (cached := self._cache.get(key)) is not None:
            return cached
        for round_number in range(self.max_input_rounds):
            result = await self._request_once(method, params, timeout, max_timeout, on_progress)
            if isinstance(result, dict) and result.get("resultType") == "task":
                return await follow_task(self.request, self._answer_inputs, result)
            if not isinstance(result, dict) or result.get("resultType") != "input_required":
                # Results of retried requests "MUST NOT be cached": they depend on the answers.
                if key is not None and round_number == 0:
                    self._cache.remember(key, result)
                return result
            # "the client MUST construct the requested inputs before retrying the original request"
            responses = await self._answer_inputs(result.get("inputRequests"), set())
            params = retry_params(params, result, responses)
        raise MCPError(f"{method}: the server still wanted input after {self.max_input_rounds} rounds")

    async def _request_once(
        self,
        method: str,
        params: dict[str, Any],
        timeout: float | None,
        max_timeout: float | None,
        on_progress: ProgressCallback | None,
    ) -> Any:
        """One round: send *method* once and wait for its answer, whatever its ``resultType``."""
        peer = self._live_peer()
        version = self.protocol_version
        if not version:
            raise MCPError("not connected: use 'async with Client(...)' or await connect()")
        stateless = version in STATELESS_VERSIONS
        given = params.get("_meta")
        params = dict(params)  # the caller's dict is never changed
        meta: dict[str, Any] = {**self._meta(version), **(given or {})} if stateless else dict(given or {})
        request_id = peer.next_id()
        progress = None
        if on_progress is not None:
            progress = self._progress[request_id] = Progress(on_progress)
            meta["progressToken"] = request_id
        telemetry = self.telemetry
        if telemetry is None:  # the hot path: no span, no context manager
            if meta:
                params["_meta"] = meta
            result = await self._send_and_wait(
                peer, request_id, method, params, progress, timeout, max_timeout
            )
        else:
            with telemetry.request(method, params, request_id, version):
                telemetry.inject(meta)  # the server's span becomes this one's child
                if meta:
                    params["_meta"] = meta
                result = await self._send_and_wait(
                    peer, request_id, method, params, progress, timeout, max_timeout
                )
        if stateless:
            check_result_type(method, result)
        return result

    async def _send_and_wait(
        self,
        peer: Peer,
        request_id: int,
        method: str,
        params: dict[str, Any],
        progress: Progress | None,
        timeout: float | None,
        max_timeout: float | None,
    ) -> Any:
        try:
            future = peer.send_request_nowait(request_id, method, params)
            if future is None:
                future = await peer.send_request(request_id, method, params)
            return await await_answer(
                peer,
                request_id,
                future,
                progress,
                timeout or self.timeout,
                max_timeout or self.max_timeout,
                self._deadlines,
            )
        except ConnectionClosed as exc:
            raise self._closed_error(exc) from exc
        finally:
            if progress is not None:
                self._progress.pop(request_id, None)
