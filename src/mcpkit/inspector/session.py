"""One browser tab's view of one MCP server: a :class:`~mcpkit.client.Client` and the events it makes.

The page drives the session with operations (:meth:`InspectorSession.handle`): ``connect`` to a
target (with the :class:`~.options.Options` of the connection), send any ``request`` through the
client (so the 2026-07-28 ``_meta``, ``input_required`` rounds and tasks are the client's business,
as for any host), ``answer`` what the server asked of the user, ``cancel`` a request, ``ping``,
``listen`` (2026-07-28 ``subscriptions/listen``, see :mod:`.listening`), ``hostEntry`` (the target
as a host config entry). Everything else flows the other way as events on the page's event
stream (:attr:`InspectorSession.events`): the raw traffic, notifications, progress, the server's
stderr, questions for the user (elicitation, sampling), the connection's state, reloads.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
import time
from typing import Any, Final

import msgspec

from .._errors import HeaderMismatch, MCPError, RPCError
from .._headers import mirrored_parameters
from .._schema_view import read_schema
from .._transport import Transport
from .._versions import Era
from ..client import Client
from ..client.callbacks import implied_capabilities
from ..client.connect import open_legacy_sse, refused_post
from ..client.exchange import ProgressCallback
from ..transports.http.client.streamable import HTTPClientTransport
from .explain import explain
from .listening import Listener
from .options import Options, host_entry
from .recording import UI_EXTENSION, UI_EXTENSION_SETTINGS, RecordingTransport
from .signin import SignIns
from .targets import Target, spawn

__all__ = ["InspectorSession"]

#: Events kept for a page that does not read; beyond it traffic and notices are dropped (counted).
MAX_QUEUED: Final = 10_000


class InspectorSession:
    """The state behind one event stream. *dev* is the dev server's command line, if any;
    *signins* takes OAuth redirects back (``None``: no OAuth sign-in)."""

    def __init__(self, dev: list[str] | None, signins: SignIns | None = None) -> None:
        self.id = secrets.token_urlsafe(12)
        self.dev = dev
        self.signins = signins
        self.options = Options()
        self._oauth_store: Any = None  # tokens kept across reconnects of this page (memory only)
        self.listener = Listener(self.emit)
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.target: Target | None = None
        self._client: Client | None = None
        self._wire: Transport | None = None  # the current client's (recorded) transport
        self._generation = 0  # which connection the events of a transport belong to
        self._connecting = asyncio.Lock()
        self._questions: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._calls: dict[str, asyncio.Task[Any]] = {}
        self._roots: list[dict[str, Any]] = []
        self._dropped = 0

    # -- events ------------------------------------------------------------------------------------

    def emit(self, kind: str, **data: Any) -> None:
        """Queue an event for the page."""
        if self.events.qsize() >= MAX_QUEUED:
            self._dropped += 1
            return
        if self._dropped:
            self.events.put_nowait({"type": "dropped", "count": self._dropped})
            self._dropped = 0
        self.events.put_nowait({"type": kind, "time": time.time(), **data})

    # -- operations --------------------------------------------------------------------------------

    async def handle(self, op: str, params: dict[str, Any]) -> Any:
        """Run one operation of the page. Raises ``ValueError`` or ``MCPError`` for the page to show."""
        if op == "connect":
            return await self.connect(params)
        if op == "disconnect":
            await self.disconnect()
            return {}
        if op == "request":
            return await self.request(params)
        if op == "answer":
            return self.answer(params)
        if op == "cancel":
            task = self._calls.get(str(params.get("callId")))
            if task is not None:
                task.cancel()
            return {}
        if op == "setRoots":
            self._roots = _roots(params.get("roots"))
            if self._client is not None:
                await self._client.roots_changed()  # handshake era; 2026-07-28 asks each time
            return {}
        if op == "setLogLevel":
            await self._set_log_level(str(params.get("level") or ""))
            return {}
        if op == "ping":
            return await self.ping(params)
        if op == "listen":
            return await self.listener.listen(self._live(), params)
        if op == "hostEntry":
            return self.host_entry()
        raise ValueError(f"unknown operation {op!r}")

    async def connect(self, params: dict[str, Any]) -> dict[str, Any]:
        """Connect to ``params.target`` (dropping the current connection), at ``protocolVersion``
        (``"auto"`` or absent to negotiate), offering ``roots`` (a list of URIs), asking for log
        messages from ``logLevel`` up (default ``info``; empty for the server's default).

        Settings it refuses (``ValueError``) drop the current connection too: the page clears what
        it showed on any failure, and the backend must not keep serving the server it no longer shows.
        """
        asked = params.get("protocolVersion")
        version = None if asked in (None, "", "auto") else str(asked)
        async with self._connecting:
            await self.disconnect()
            try:
                target = Target.parse(params.get("target"), self.dev)
                options = Options.parse(params)
            except ValueError as exc:
                self.target = None  # nothing to copy as a host entry either
                self.emit("status", state="failed", error=str(exc))
                raise
            self._roots = _roots(params.get("roots"))
            self.target, self.options = target, options
            self._generation += 1
            generation = self._generation
            self.emit("status", state="connecting", target=_describe(target))
            try:
                client = await self._open(target, version, generation)
            except (asyncio.CancelledError, KeyboardInterrupt):
                self.emit("status", state="failed", error="cancelled", target=_describe(target))
                raise
            except BaseException as exc:
                sent = bool(options.headers or options.bearer)
                line = explain(exc, target.kind, target.value, credentials=sent)
                self.emit(
                    "status", state="failed", error=line, detail=_message(exc), target=_describe(target)
                )
                raise ConnectFailed(line) from exc
            self._client = client
            level = params.get("logLevel", "info")
            if level and "logging" in client.server_capabilities:
                # Logs are what an inspector is for: ask for them from the start (the page can change it).
                try:
                    await client.set_logging_level(str(level))
                except MCPError as exc:
                    self.emit("notice", text=f"the server refused log level {level}: {_message(exc)}")
            info = {
                "state": "connected",
                "target": _describe(target),
                "protocolVersion": client.protocol_version,
                "era": client.era.value,
                "serverInfo": msgspec.to_builtins(client.server_info) if client.server_info else None,
                "capabilities": client.server_capabilities,
                "instructions": client.instructions,
            }
            self.emit("status", **info)
            return info

    async def disconnect(self) -> None:
        """Close the current connection, if any, refusing the questions still open."""
        client, self._client = self._client, None
        self._generation += 1
        await self.listener.stop()
        for future in self._questions.values():
            if not future.done():
                future.cancel()
        if client is not None:
            await client.aclose()
            self.emit("status", state="disconnected", reason="closed by the inspector")

    async def request(self, params: dict[str, Any]) -> Any:
        """Send ``params.method`` with ``params.params`` and return the raw result. With a
        ``callId``, progress is reported under it and ``cancel`` can stop the request."""
        client = self._live()
        method, call_params = str(params.get("method")), params.get("params") or {}
        if not isinstance(call_params, dict):
            raise ValueError("params must be an object")
        call_id = params.get("callId")
        timeout = _seconds(params.get("timeout"))
        highest: float | None = None  # the most progress shown for this call

        async def progress(value: float, total: float | None, message: str | None) -> None:
            # A 2026-07-28 call answered over several rounds runs the tool again with the answers,
            # and it reports its progress again, under each round's new token: progress not beyond
            # what this call has shown is that replay, and is not shown twice.
            nonlocal highest
            if highest is not None and value <= highest:
                return
            highest = value
            self.emit("progress", callId=call_id, progress=value, total=total, message=message)

        task = asyncio.ensure_future(
            self._send(client, method, call_params, progress if call_id is not None else None, timeout)
        )
        if call_id is not None:
            self._calls[str(call_id)] = task
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():  # our own caller is being cancelled
                raise
            raise MCPError("cancelled from the inspector") from None
        finally:
            self._calls.pop(str(call_id), None)

    async def _send(
        self,
        client: Client,
        method: str,
        params: dict[str, Any],
        progress: ProgressCallback | None,
        timeout: float | None = None,
    ) -> Any:
        """*method* through the client, keeping the HTTP transport's ``x-mcp-header`` table current
        (the page lists tools with raw ``tools/list`` requests, not ``Client.list_tools``).
        *timeout*: seconds of silence (progress restarts the clock), ``None`` for no limit."""
        try:
            result = await client.request(method, params, on_progress=progress, timeout=timeout)
        except HeaderMismatch:
            if method != "tools/call":
                raise
            # "the client SHOULD call tools/list to check for changes to the tool's inputSchema,
            # then retry the original request with the appropriate headers"
            await client.list_tools()
            return await client.request(method, params, on_progress=progress, timeout=timeout)
        if method == "tools/list" and isinstance(result, dict):
            _add_forms(result)
        mirrored = getattr(self._wire, "mirrored", None)
        if method == "tools/list" and isinstance(mirrored, dict) and isinstance(result, dict):
            for tool in result.get("tools") or []:
                if isinstance(tool, dict) and isinstance(tool.get("inputSchema"), dict):
                    with contextlib.suppress(ValueError):  # an invalid tool: its calls will say so
                        mirrored[str(tool.get("name"))] = mirrored_parameters(tool["inputSchema"])
        return result

    async def ping(self, params: dict[str, Any]) -> dict[str, Any]:
        """``ping`` (handshake era) or ``server/discover`` (2026-07-28, which has no ping), timed."""
        client = self._live()
        method = "server/discover" if client.era is Era.STATELESS else "ping"
        started = time.perf_counter()
        await client.request(method, {}, timeout=_seconds(params.get("timeout")))
        return {"method": method, "ms": round((time.perf_counter() - started) * 1000, 1)}

    def host_entry(self) -> dict[str, Any]:
        """The current target as an ``mcpServers`` entry, under the server's name."""
        if self.target is None:
            raise ValueError("connect to a server first")
        command = None if self.target.kind == "url" else self.target.command(self.dev)
        entry = host_entry(self.target.kind, self.target.value, command, self.options)
        info = self._client.server_info if self._client is not None else None
        return {"mcpServers": {_key(info.name if info else "", self.target): entry}}

    def answer(self, params: dict[str, Any]) -> dict[str, Any]:
        """The user's answer to a server's question: ``{key, result}`` or ``{key, error}``."""
        future = self._questions.get(str(params.get("key")))
        if future is None or future.done():
            raise ValueError("that question is no longer open")
        future.set_result(params)
        return {}

    async def close(self) -> None:
        """The page is gone: cancel what runs and close the connection."""
        for task in list(self._calls.values()):
            task.cancel()
        await self.disconnect()

    # -- connecting --------------------------------------------------------------------------------

    async def _open(self, target: Target, version: str | None, generation: int) -> Client:
        auth = await self._authorization(target, version)
        transport = self._wire = await self._transport(target, generation, auth)
        client = self._client_for(transport, version)
        try:
            await client.connect()
        except RPCError as exc:
            if target.kind != "url" or not refused_post(exc):
                raise
            # An old HTTP+SSE endpoint (2024-11-05): the client does this fallback for URL targets,
            # but this one is a transport (so that it can be recorded).
            headers = self.options.http_headers() or None
            legacy_sse = await open_legacy_sse(target.value, headers, auth)
            legacy = self._wire = self._recorded(legacy_sse, generation)
            client = self._client_for(legacy, version or "2024-11-05")
            await client.connect()
        return client

    async def _authorization(self, target: Target, version: str | None) -> Any:
        """The OAuth flow for a URL target when the page asked to sign in (else ``None``); the user
        signs in now, before the first request waits on them."""
        if target.kind != "url" or not self.options.oauth:
            return None
        if self.signins is None:
            raise ValueError("OAuth sign-in is not available here")
        from ..client.auth import MemoryTokenStore, OAuth  # loads httpx's auth side: only when asked

        if self._oauth_store is None:
            self._oauth_store = MemoryTokenStore()
        oauth = OAuth(
            interactive=self.signins.hook(lambda url: self.emit("signin", url=url)),
            redirect_uri=self.signins.redirect_uri,
            client_name="mcpkit inspector",
            store=self._oauth_store,
            open_browser=False,
        )
        await oauth.prepare(target.value, version)
        return oauth

    async def _transport(self, target: Target, generation: int, auth: Any = None) -> Transport:
        if target.kind == "url":
            headers = self.options.http_headers() or None
            return self._recorded(HTTPClientTransport(target.value, headers=headers, auth=auth), generation)

        def on_stderr(line: str) -> None:
            if generation == self._generation:
                self.emit("stderr", line=line)

        command = [*target.command(self.dev), *self.options.arguments]
        return self._recorded(await spawn(command, on_stderr, self.options.env), generation)

    def _recorded(self, transport: Transport, generation: int) -> Transport:
        def record(direction: str, data: bytes) -> None:
            if generation == self._generation:
                self.emit("traffic", dir=direction, message=_decoded(data))

        def on_end(reason: str) -> None:
            if generation == self._generation:
                self.emit("status", state="disconnected", reason=reason)

        return RecordingTransport(transport, record, on_end)

    def _client_for(self, transport: Transport, version: str | None) -> Client:
        capabilities = implied_capabilities(
            sampling=self._sampling, elicitation=self._elicitation, roots=self._list_roots
        )
        capabilities["extensions"][UI_EXTENSION] = UI_EXTENSION_SETTINGS

        async def on_notification(method: str, params: dict[str, Any]) -> None:
            self.emit("notification", method=method, params=params)

        async def on_log(params: dict[str, Any]) -> None:
            """Shown with the other notifications; not for Python's logging."""

        return Client(
            transport,
            protocol_version=version,
            capabilities=capabilities,
            # A person answers elicitation and sampling here: no clock on any request but theirs.
            timeout=None,
            max_timeout=None,
            probe_timeout=5.0,
            on_notification=on_notification,
            on_log=on_log,
            sampling=self._sampling,
            elicitation=self._elicitation,
            roots=self._list_roots,
            cache=False,  # an inspector shows what the server says now
        )

    async def _set_log_level(self, level: str) -> None:
        client = self._live()
        if level:
            await client.set_logging_level(level)
        elif client.era is Era.STATELESS:
            client.log_level = None  # no level in _meta: the server's default
        else:
            raise ValueError("logging/setLevel has no way back to the server's default; reconnect")

    def _live(self) -> Client:
        if self._client is None:
            raise MCPError("not connected")
        return self._client

    # -- what the server asks of the user ----------------------------------------------------------

    async def _sampling(self, params: dict[str, Any]) -> Any:
        return await self._ask("sampling/createMessage", params)

    async def _elicitation(self, params: dict[str, Any]) -> Any:
        return await self._ask("elicitation/create", params)

    async def _list_roots(self) -> list[Any]:
        return list(self._roots)

    async def _ask(self, method: str, params: dict[str, Any]) -> Any:
        key = secrets.token_urlsafe(8)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._questions[key] = future
        self.emit("question", key=key, method=method, params=params)
        try:
            # A person is answering: the request that asked is not timed out meanwhile.
            while not future.done():
                if self._client is not None:
                    self._client.restart_timeouts()
                await asyncio.wait({future}, timeout=1.0)
            answer = future.result()
        except asyncio.CancelledError:
            raise RPCError(-32000, "the inspector closed the connection") from None
        finally:
            self._questions.pop(key, None)
            self.emit("questionClosed", key=key)
        error = answer.get("error")
        if isinstance(error, dict):
            raise RPCError(int(error.get("code", -1)), str(error.get("message", "refused by the user")))
        return answer.get("result")


class ConnectFailed(MCPError):
    """Connecting failed; the message is one line for the page, with a hint."""


def _add_forms(result: dict[str, Any]) -> None:
    """Each listed tool's ``inputSchema`` read for people (``$ref``, unions, nested objects), as a
    plain JSON tree under ``_mcpkitForm``, from which the page builds the tool's form. The traffic
    panel shows the message as it was; only the page's copy carries the tree."""
    for tool in result.get("tools") or []:
        if isinstance(tool, dict) and isinstance(tool.get("inputSchema"), dict):
            tool["_mcpkitForm"] = read_schema(tool["inputSchema"])


def _seconds(value: Any) -> float | None:
    """A timeout from the page: a positive number of seconds, else none."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if seconds > 0 else None


def _key(name: str, target: Target) -> str:
    """A host config key: the server's name, else the target's last word."""
    base = name or (target.value.rstrip("/").rsplit("/", 1)[-1] if target.value else "server")
    return re.sub(r"[^A-Za-z0-9_-]+", "-", base).strip("-").lower() or "server"


def _roots(value: Any) -> list[dict[str, Any]]:
    """Roots from the page: a list of URIs."""
    return [{"uri": str(uri)} for uri in value if str(uri).strip()] if isinstance(value, list) else []


def _decoded(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data.decode(errors="replace")


def _describe(target: Target) -> dict[str, str]:
    return {"kind": target.kind, "value": target.value}


def _message(exc: BaseException) -> str:
    if isinstance(exc, RPCError):
        return f"{exc.message} ({exc.code})"
    return str(exc) or type(exc).__name__
