"""Connecting: open the transport, then agree on a protocol revision with the server.

The era split, as the 2026-07-28 binding pages order it ("The probe has three possible outcomes"):

* **stateless era** (2026-07-28): probe with ``server/discover`` at our newest revision. A
  ``DiscoverResult`` means a modern server, and every later request carries the revision in
  ``_meta``. A recognised modern error (-32022, ``UnsupportedProtocolVersionError``) means a modern
  server that wants another revision: probe again with one it names, "Do not fall back to
  initialize".
* **handshake era** (2024-11-05 to 2025-11-25): "any other error, or does not respond within a
  reasonable timeout: the server is legacy. Fall back to the initialize handshake." Any other error
  means exactly that, and at once: an error whatever its id (a legacy server that cannot tell what
  it is refusing answers with a null id, or an id of its own), an HTTP 4xx, a body that is not
  JSON-RPC. Only silence costs ``probe_timeout``.
* **forced** (``Client(protocol_version=...)``): a handshake revision skips the probe; a stateless
  one skips the fallback.
* **legacy HTTP+SSE** (2024-11-05 transport): a URL that refuses a POST with 400, 404 or 405 and no
  JSON-RPC error is an old SSE endpoint; :func:`open_legacy_sse` reopens it that way.

Over HTTP the transport already gives a failed POST's error to the request that POST carried. Over
stdio nothing is tied to the request, so :class:`ProbeAnswers` does it: while the probe is the only
request pending, any error answer is the probe's.
"""

from __future__ import annotations

import contextlib
import json
import shlex
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, Final, cast

import msgspec

from .._connection import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
)
from .._errors import MCPError, RequestTimeout, RPCError, UnsupportedProtocolVersion
from .._transport import SendRequestNowait, Transport
from .._versions import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    LATEST_VERSION,
    STATELESS_VERSIONS,
    Era,
    era_of,
)
from ..session import Peer
from ..transports.stdio import DEFAULT_MAX_MESSAGE_BYTES
from ..types import Implementation
from .callbacks import handshake_capabilities

if TYPE_CHECKING:
    import httpx

    from ..kernel import InProcess
    from ..telemetry import Telemetry

__all__ = [
    "Agreement",
    "ProbeAnswers",
    "RequestMeta",
    "agree",
    "initialize",
    "is_url",
    "legacy_sse_version",
    "open_legacy_sse",
    "open_transport",
    "refused_post",
    "user_headers",
]

#: The one revision the HTTP+SSE transport was defined for.
LEGACY_SSE_VERSION: Final = "2024-11-05"
#: "If it fails with HTTP status code 400 Bad Request, 404 Not Found, or 405 Method Not Allowed":
#: the statuses that send a client from a POST to the HTTP+SSE transport's GET.
_LEGACY_SSE_STATUSES: Final = frozenset({400, 404, 405})


@dataclass(frozen=True, slots=True)
class Agreement:
    """What connecting settled: the revision, and what the server said about itself."""

    protocol_version: str
    supported_versions: list[str]
    capabilities: dict[str, Any]
    server_info: Implementation | None
    instructions: str | None


def is_url(target: object) -> bool:
    return isinstance(target, str) and target.startswith(("http://", "https://"))


async def open_transport(
    target: str | Sequence[str] | Transport | InProcess,
    *,
    env: dict[str, str] | None,
    cwd: str | None,
    stderr: int | IO[bytes] | None,
    headers: dict[str, str] | None = None,
    auth: httpx.Auth | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> Transport:
    """A Streamable HTTP transport for a URL (sending *headers* with every request, authorized by
    *auth*, an :class:`httpx.Auth` such as :class:`~mcpkit.client.auth.OAuth`), a spawned
    process for a command line (a string split as a shell would, or a list of arguments), or
    *target* itself if it is a transport; a server (``Client(server)``) is served in this process
    for as long as the transport is open. Either reads no message larger than *max_message_bytes*."""
    if is_url(target):
        from ..transports.http.client.streamable import HTTPClientTransport  # httpx only for HTTP

        return HTTPClientTransport(
            str(target), headers=headers, auth=auth, max_message_bytes=max_message_bytes
        )
    if isinstance(target, str):
        command = shlex.split(target)
    elif isinstance(target, (list, tuple)):
        command = list(target)
    elif hasattr(target, "serve") and not hasattr(target, "receive"):  # a server: serve it here
        from ..transports.memory import serve_in_process

        server = cast("InProcess", target)
        # Started here, so that a lifespan failing to start fails connect() with its own error.
        await server.start_serving()
        return serve_in_process(server.serve, server.stop_serving)
    else:
        return target  # type: ignore[return-value]  # a Transport given directly
    from ..transports.stdio import StdioClientTransport

    return await StdioClientTransport.spawn(
        command, env=env, cwd=cwd, stderr=stderr, max_message_bytes=max_message_bytes
    )


async def open_legacy_sse(
    url: str,
    headers: dict[str, str] | None = None,
    auth: httpx.Auth | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> Transport:
    """The 2024-11-05 HTTP+SSE transport at *url*, once its ``endpoint`` event has arrived."""
    from ..transports.http.client.legacy_sse import SSEClientTransport

    transport = SSEClientTransport(url, headers=headers, auth=auth, max_message_bytes=max_message_bytes)
    await transport.open()
    return transport


def legacy_sse_version(forced: str | None) -> str:
    """The revision to initialize an HTTP+SSE server with: a forced handshake one, else 2024-11-05."""
    return forced if forced is not None and era_of(forced) is Era.HANDSHAKE else LEGACY_SSE_VERSION


def refused_post(exc: RPCError) -> bool:
    """Whether a failed POST says "no Streamable HTTP here": a 400, 404 or 405 whose body was no
    JSON-RPC error (the HTTP transport then reports the status as ``data["httpStatus"]``)."""
    status = exc.data.get("httpStatus") if isinstance(exc.data, dict) else None
    return status in _LEGACY_SSE_STATUSES


#: Why a probe failed that no other revision would get past, named as the HTTP transport names
#: them in ``data["cause"]``: authorization, or no connection at all (refused, a failed TLS handshake).
_NO_FALLBACK: Final = frozenset({"OAuthError", "ConnectError", "ConnectTimeout"})

#: Headers the transports set themselves: a caller's value would contradict the protocol's.
_PROTOCOL_HEADERS = frozenset(
    {
        "accept",
        "content-type",
        "last-event-id",
        "mcp-protocol-version",
        "mcp-session-id",
        "mcp-method",
        "mcp-name",
    }
)


def user_headers(headers: dict[str, str] | None) -> dict[str, str] | None:
    """*headers* for every HTTP request, refusing the protocol's own (and any ``Mcp-Param-*``)."""
    if not headers:
        return None
    for name in headers:
        lowered = name.lower()
        if lowered in _PROTOCOL_HEADERS or lowered.startswith("mcp-param-"):
            raise ValueError(f"the {name} header is set by the protocol; it cannot be given in headers=")
    return dict(headers)


async def agree(
    peer: Peer,
    probe: ProbeAnswers,
    *,
    forced: str | None,
    meta: Callable[[str], dict[str, Any]],
    capabilities: dict[str, Any],
    client_info: Implementation,
    probe_timeout: float,
    timeout: float | None,
    telemetry: Telemetry | None = None,
) -> Agreement:
    """Agree on a revision as the module docstring says.

    Args:
        meta: the 2026-07-28 request ``_meta`` for a revision (ours: capabilities, info, log level).
        telemetry: records a span for ``initialize`` (see :func:`initialize`).

    Raises:
        RPCError: ``initialize`` failed (over HTTP, ``data["httpStatus"]`` says how).
        MCPError: no revision both sides speak.
        ConnectionClosed: the server went away.
    """
    if forced is not None and era_of(forced) is Era.HANDSHAKE:
        return await initialize(peer, forced, capabilities, client_info, timeout, telemetry)
    # Forced to a stateless revision, silence is no sign of a legacy server (there is no fallback):
    # it is a server still starting (a stdio process importing on a busy machine), so the probe
    # gets the patience of any request rather than the short wait that guesses the era.
    patience = probe_timeout if forced is None else timeout
    found = await discover(peer, probe, forced or LATEST_VERSION, meta, patience)
    if found is not None:
        return found
    if forced is not None:
        raise MCPError(f"the server does not speak {forced} (it did not answer server/discover)")
    try:
        return await initialize(peer, LATEST_HANDSHAKE_VERSION, capabilities, client_info, timeout, telemetry)
    except UnsupportedProtocolVersion as exc:
        # A modern server that was only slow (a stdio server still importing when the probe timed
        # out) has answered the probe since, and now refuses the handshake naming its revisions.
        choice = next((v for v in exc.supported if v in STATELESS_VERSIONS), None)
        if choice is None:
            raise
        found = await discover(peer, probe, choice, meta, timeout if timeout is not None else probe_timeout)
        if found is None:
            raise
        return found


async def discover(
    peer: Peer,
    probe: ProbeAnswers,
    version: str,
    meta: Callable[[str], dict[str, Any]],
    probe_timeout: float | None,
) -> Agreement | None:
    """Probe with ``server/discover``: the agreement with a modern server, ``None`` for a legacy one."""
    for _ in range(2):  # the second round uses a version the server named in -32022
        request_id = peer.next_id()
        try:
            with probe.expecting(request_id):
                future = await peer.send_request(request_id, "server/discover", {"_meta": meta(version)})
                result = await peer.wait(request_id, future, probe_timeout)
        except UnsupportedProtocolVersion as exc:
            # A recognised modern error: a modern server that wants another revision.
            choice = next((v for v in exc.supported if v in STATELESS_VERSIONS), None)
            if choice is None:
                raise MCPError(
                    f"the server supports only {exc.supported}, none of which mcpkit speaks"
                ) from exc
            version = choice
            continue
        except RPCError as exc:
            if isinstance(exc.data, dict) and exc.data.get("cause") in _NO_FALLBACK:
                raise  # authorization or the connection failed: no revision gets further, say why
            return None  # any other error: a legacy server
        except RequestTimeout:
            return None  # or silence
        if not isinstance(result, dict):
            return None
        supported = [v for v in result.get("supportedVersions", []) if isinstance(v, str)]
        if version not in supported:
            choice = next((v for v in supported if v in STATELESS_VERSIONS), None)
            if choice is None:
                return None
            version = choice
        meta_of_result = result.get("_meta")
        info = meta_of_result.get(META_SERVER_INFO) if isinstance(meta_of_result, dict) else None
        return _agreement(version, supported, result.get("capabilities"), info, result.get("instructions"))
    raise MCPError("the server keeps refusing the protocol versions it advertises")


async def initialize(
    peer: Peer,
    version: str,
    capabilities: dict[str, Any],
    client_info: Implementation,
    timeout: float | None,
    telemetry: Telemetry | None = None,
) -> Agreement:
    """The handshake: ``initialize`` at *version*, then ``notifications/initialized``. With
    *telemetry*, ``initialize`` gets its span (kind CLIENT) and carries the trace context in its
    ``_meta``, as every other request does.

    Raises:
        MCPError: the server chose a revision mcpkit does not speak.
    """
    params = {
        "protocolVersion": version,
        "capabilities": handshake_capabilities(capabilities),
        "clientInfo": msgspec.to_builtins(client_info),
    }
    if telemetry is None:
        result = await peer.request("initialize", params, timeout=timeout)
    else:
        with telemetry.request("initialize", params, None, version):
            meta: dict[str, Any] = {}
            telemetry.inject(meta)  # the server's initialize span becomes this one's child
            if meta:
                params["_meta"] = meta
            result = await peer.request("initialize", params, timeout=timeout)
    agreed = result.get("protocolVersion") if isinstance(result, dict) else None
    if not isinstance(agreed, str) or agreed not in HANDSHAKE_VERSIONS:
        # "If the client does not support the version in the server's response, it SHOULD disconnect."
        raise MCPError(
            f"the server answered initialize with protocol version {agreed!r}, which mcpkit does not speak"
        )
    assert isinstance(result, dict)
    agreement = _agreement(
        agreed, [agreed], result.get("capabilities"), result.get("serverInfo"), result.get("instructions")
    )
    await peer.notify("notifications/initialized")
    return agreement


def _agreement(
    version: str, supported: list[str], capabilities: Any, info: Any, instructions: Any
) -> Agreement:
    server_info = None
    if isinstance(info, dict):
        with contextlib.suppress(msgspec.ValidationError):
            server_info = msgspec.convert(info, Implementation)
    return Agreement(
        protocol_version=version,
        supported_versions=supported,
        capabilities=capabilities if isinstance(capabilities, dict) else {},
        server_info=server_info,
        instructions=instructions if isinstance(instructions, str) else None,
    )


class ProbeAnswers:
    """A transport seen through so that, while the probe is the only request pending, every error
    answer is the probe's, whatever id it carries.

    A legacy stdio server that cannot make sense of ``server/discover`` may answer with a null id (as
    JSON-RPC prescribes when "there was an error in detecting the id") or an id of its own. Nothing
    else can be pending then, so that answer is the probe's, and taking it as one saves waiting out
    ``probe_timeout``. Outside the probe messages pass untouched.
    """

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self._probe_id: int | None = None
        # Outside the probe the transport's own methods, so that every message after it pays no
        # extra coroutine here.
        self.receive: Callable[[], Coroutine[Any, Any, bytes]] = transport.receive
        self.send: Callable[[bytes], Coroutine[Any, Any, None]] = transport.send
        self.send_nowait: Callable[[bytes], bool] | None = getattr(transport, "send_nowait", None)
        self.send_request_nowait: SendRequestNowait | None = getattr(transport, "send_request_nowait", None)
        # A transport that can hand answers over as they arrive (stdio), and to whom.
        self._listen: Callable[[Callable[[bytes], bool] | None], None] | None = getattr(
            transport, "listen", None
        )
        self._take: Callable[[bytes], bool] | None = None

    def listen(self, take: Callable[[bytes], bool] | None) -> None:
        """Have a transport that can hand answers to *take* as they arrive do so, outside the probe
        (whose answers must come through :meth:`receive` to be readdressed)."""
        self._take = take
        if self._listen is not None and self._probe_id is None:
            self._listen(take)

    @contextlib.contextmanager
    def expecting(self, request_id: int) -> Iterator[None]:
        """While in this block, error answers are taken as answers to *request_id*."""
        self._probe_id = request_id
        self.receive = self._receive_probing
        if self._listen is not None:
            self._listen(None)
        try:
            yield
        finally:
            self._probe_id = None
            self.receive = self.transport.receive
            if self._listen is not None:
                self._listen(self._take)

    async def _receive_probing(self) -> bytes:
        data = await self.transport.receive()
        if self._probe_id is not None and b'"error"' in data:
            return _readdressed(data, self._probe_id)
        return data

    async def aclose(self) -> None:
        await self.transport.aclose()


def _readdressed(data: bytes, request_id: int) -> bytes:
    """*data* as the answer to *request_id*, if it is a single error response; else unchanged."""
    try:
        message = json.loads(data)
    except ValueError:
        return data
    if not isinstance(message, dict) or "error" not in message or "method" in message:
        return data
    if message.get("id") == request_id:
        return data
    return json.dumps({**message, "id": request_id}).encode()


class RequestMeta:
    """Makes the 2026-07-28 request ``_meta`` (revision, capabilities, client info, log level),
    again only when one of them changes; each request copies it."""

    def __init__(self) -> None:
        self._made: tuple[str, str | None, dict[str, Any], Implementation, dict[str, Any]] | None = None

    def __call__(
        self, version: str, log_level: str | None, capabilities: dict[str, Any], client_info: Implementation
    ) -> dict[str, Any]:
        made = self._made
        if (
            made is None
            or made[0] != version
            or made[1] != log_level
            or made[2] is not capabilities
            or made[3] is not client_info
        ):
            meta = {
                META_PROTOCOL_VERSION: version,
                # The dict itself, not a copy: what is added to it later is sent from then on.
                META_CLIENT_CAPABILITIES: capabilities,
                META_CLIENT_INFO: msgspec.to_builtins(client_info),
            }
            if log_level is not None:
                meta[META_LOG_LEVEL] = log_level
            made = self._made = (version, log_level, capabilities, client_info, meta)
        return made[4]
