"""What a handler knows about the request it is serving, and what it may send back along the way."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ._connection import Scope, ServerConnection
from ._jsonrpc import RequestId

if TYPE_CHECKING:
    from .session import Peer

__all__ = ["LOG_LEVELS", "Context"]

# RFC 5424 severities, least severe first (server/utilities/logging).
LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_RANK: Final = {name: rank for rank, name in enumerate(LOG_LEVELS)}


class Context:
    """Passed to any handler parameter annotated ``Context``: the request's scope and a way back.

    Attributes:
        request_id: the JSON-RPC id of the request being served.
        method: its method name.
        scope: the protocol revision and client capabilities it was spoken in.
        meta: the request's ``_meta`` (empty when absent).
    """

    __slots__ = ("_peer", "connection", "meta", "method", "request_id", "scope")

    def __init__(
        self,
        peer: Peer,
        request_id: RequestId,
        method: str,
        scope: Scope,
        meta: dict[str, Any],
        connection: ServerConnection | None = None,
    ) -> None:
        self._peer = peer
        self.request_id = request_id
        self.method = method
        self.scope = scope
        self.meta = meta
        #: The connection the request came on (None outside a server).
        self.connection = connection

    @property
    def peer(self) -> Peer:
        """The JSON-RPC endpoint the request came through."""
        return self._peer

    @property
    def protocol_version(self) -> str:
        return self.scope.version

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.scope.client_capabilities

    @property
    def client_info(self) -> dict[str, Any] | None:
        return self.scope.client_info

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` if the client asked for it (a ``progressToken``); else nothing."""
        token = self.meta.get("progressToken")
        if token is None:
            return
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and self.scope.has("progress_message"):
            params["message"] = message
        await self._peer.notify("notifications/progress", params)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send ``notifications/message`` when *level* reaches the level the client chose.

        In 2026-07-28 a request opts in with ``_meta['io.modelcontextprotocol/logLevel']`` and "servers
        MUST NOT emit notifications/message for requests that did not include this field"; in the
        handshake era ``logging/setLevel`` sets it for the session, and until then everything is sent.
        """
        if level not in _RANK:
            raise ValueError(f"unknown log level {level!r}; expected one of {', '.join(LOG_LEVELS)}")
        threshold = self.scope.log_level
        if threshold is None and self.scope.stateless:
            return
        if threshold is not None and _RANK[level] < _RANK.get(threshold, 0):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._peer.notify("notifications/message", params)

    async def debug(self, data: Any) -> None:
        await self.log("debug", data)

    async def info(self, data: Any) -> None:
        await self.log("info", data)

    async def warning(self, data: Any) -> None:
        await self.log("warning", data)

    async def error(self, data: Any) -> None:
        await self.log("error", data)
