"""The connections behind a gateway or a proxy: a :class:`~mcpkit.host.Host` whose forwarders are
mounted on the serving server, the :class:`~mcpkit.host.bridge.Bridge` relaying the servers'
questions to its callers, and what the servers tell (list changes, resource updates, log lines)
passed on to them.

It does not make the server: the gateway does (:mod:`._server`), and a proxy makes its own
(:mod:`mcpkit.compose.proxy`), which outlives each relay its lifespan starts.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from ..host import Host, HostConfig
from ..host.bridge import Bridge
from ..server import Server

__all__ = ["Relay"]


class Relay:
    """*config*'s servers, connected for callers of *server* (``async with``: connect, disconnect).

    *host_options* go to the :class:`~mcpkit.host.Host` (``mounted=True``: *server* has the
    forwarders already).
    """

    def __init__(
        self, config: HostConfig, server: Server, *, stderr: Any = None, **host_options: Any
    ) -> None:
        self.server = server
        self.bridge = Bridge(config.roots)
        self.host = Host(
            config,
            sampling=self.bridge.sampling,
            elicitation=self.bridge.elicitation,
            roots=self.bridge.list_roots,
            on_change=self._changed,
            on_notification=self._notified,
            caller="gateway",
            stderr=stderr,
            server=server,
            bridge=self.bridge,
            **host_options,
        )
        self._background: set[asyncio.Task[None]] = set()

    def conflicts(self) -> list[str]:
        """Names and URIs left out because another server had them first (the host's)."""
        return self.host.conflicts()

    async def __aenter__(self) -> Any:
        await self.host.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for parked in list(self.bridge.parked.values()):  # callers that will not come back now
            parked.cancel()
        self.bridge.parked.clear()
        await self.server.close_subscriptions()
        await self.host.aclose()

    # -- what the servers tell us ------------------------------------------------------------------

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _changed(self, kind: str) -> None:
        with contextlib.suppress(RuntimeError):  # no loop: nobody is listening yet
            self._spawn(self.server.notify_list_changed(kind))

    async def _notified(self, server: str, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/resources/updated" and isinstance(params.get("uri"), str):
            self._spawn(self.server.notify_resource_updated(params["uri"]))
        elif method == "notifications/message":
            scope = self.bridge.log_target(server)
            if scope is not None:  # a log line of a call in flight goes to its caller
                level = str(params.get("level", "info"))
                self._spawn(scope.ctx.log(level, params.get("data"), logger=params.get("logger") or server))
