"""The :class:`Client` class: the protocol's calls, one method each, on top of :class:`.core.ClientCore`."""

from __future__ import annotations

import logging
from typing import Any

import msgspec

from .._errors import HeaderMismatch, MCPError
from .._headers import mirrored_parameters
from .._versions import Era
from ..types import (
    CallToolResult,
    Completion,
    GetPromptResult,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Tool,
)
from .exchange import ProgressCallback, list_all
from .skill_calls import SkillCalls
from .streams import Streams

__all__ = ["Client"]

logger = logging.getLogger("mcpkit.client")


class Client(SkillCalls, Streams):
    """A connection to one MCP server.

    ::

        async with Client("python examples/weather.py") as client:
            for tool in await client.list_tools():
                print(tool.name)
            result = await client.call_tool("get_weather", {"location": "Paris"})

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
            server that ignores unknown requests (one that answers with any error is known at once).
            With ``protocol_version`` forcing a stateless revision there is nothing to fall back to,
            and the probe waits ``timeout`` instead.
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
        headers: HTTP headers sent with every request to a URL target (``Authorization``, say);
            the protocol's own (``Mcp-Session-Id``, ``MCP-Protocol-Version``...) are refused.
        auth: an :class:`httpx.Auth` for every HTTP request: ``OAuth(...)``
            (:mod:`mcpkit.client.auth`) runs the MCP authorization flow when the server answers 401.
        extensions: extension capabilities to declare (``{"io.modelcontextprotocol/ui": {...}}``),
            in both eras (``capabilities.extensions`` of ``initialize``, or of each request's ``_meta``).
        ui: declare MCP Apps views (``io.modelcontextprotocol/ui``, ``text/html;profile=mcp-app``):
            the server then lists tools meant for views only, and ``ctx.supports_ui`` is true.
        telemetry: record OpenTelemetry spans and durations of the requests sent and carry the
            trace context in their ``_meta`` (:mod:`mcpkit.telemetry`; ``mcpkit[otel]``).
        max_message_bytes: the largest message read from the server (16 MiB by default): a stdio
            line, an HTTP answer, an SSE event or line. A request whose answer is larger fails with
            an error naming the limit, without the answer being read whole, and the client stays
            usable; a stream that sends one is dropped (logged).
    """

    # -- tools, resources, prompts, completion -----------------------------------------------------

    async def list_tools(self) -> list[Tool]:
        """Every tool the server offers, following ``nextCursor`` across pages.

        Over HTTP, a tool whose ``x-mcp-header`` annotations break the spec's rules is left out, with
        a warning ("the client MUST exclude the invalid tool from the result of tools/list").
        """
        tools = [msgspec.convert(t, Tool) for t in await list_all(self.request, "tools/list", "tools")]
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
        """Call a tool. A tool that failed returns ``is_error=True``; protocol errors raise ``RPCError``.

        A 2026-07-28 server may answer with a task: it is followed (``tasks/get``, questions
        answered with ``tasks/update``) to its result.
        """
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
        found = await list_all(self.request, "resources/list", "resources")
        return [msgspec.convert(r, Resource) for r in found]

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        """Every resource template, across pages."""
        found = await list_all(self.request, "resources/templates/list", "resourceTemplates")
        return [msgspec.convert(t, ResourceTemplate) for t in found]

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """Read a resource. A missing one raises ``ResourceNotFound`` (-32002) or ``InvalidParams`` (-32602)."""
        return msgspec.convert(await self.request("resources/read", {"uri": uri}), ReadResourceResult)

    async def list_prompts(self) -> list[Prompt]:
        """Every prompt, across pages."""
        return [msgspec.convert(p, Prompt) for p in await list_all(self.request, "prompts/list", "prompts")]

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

    # -- tasks -------------------------------------------------------------------------------------

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
        return await list_all(self.request, "tasks/list", "tasks")

    # -- logging, liveness, changes ----------------------------------------------------------------

    async def set_logging_level(self, level: str) -> None:
        """Ask for log messages at *level* and above: ``logging/setLevel`` in the handshake era, the
        ``io.modelcontextprotocol/logLevel`` request ``_meta`` key from 2026-07-28 on."""
        if self.era is Era.STATELESS:
            self.log_level = level
        else:
            await self.request("logging/setLevel", {"level": level})

    async def ping(self) -> None:
        """Check the server answers (handshake era; 2026-07-28 has no ``ping``, so discover is used)."""
        if self.era is Era.STATELESS:
            await self.request("server/discover")
        else:
            await self.request("ping")

    async def roots_changed(self) -> None:
        """Tell the server the roots changed (``notifications/roots/list_changed``, handshake era)."""
        if self._peer is not None and self.era is Era.HANDSHAKE:
            await self._peer.notify("notifications/roots/list_changed")

    async def subscribe_resource(self, uri: str) -> None:
        """``resources/subscribe`` (handshake era). In 2026-07-28 use :meth:`listen`."""
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        """``resources/unsubscribe`` (handshake era)."""
        await self.request("resources/unsubscribe", {"uri": uri})
