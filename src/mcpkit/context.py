"""What a handler knows about the request it is serving, and what it may send back along the way."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING, Any, Final, TypeVar, overload

import msgspec

from ._connection import LOG_LEVELS, Scope, ServerConnection
from ._errors import MethodNotFound, MissingClientCapability
from ._jsonrpc import RequestId
from ._mrtr import BecomeTask, InputRequired
from ._visibility import Filter
from .auth._info import AuthInfo, current_auth
from .tasks import RELATED_TASK, TaskRecord, TaskRunner
from .types import CreateMessageResult, ElicitResult, Root, supports_ui

if TYPE_CHECKING:
    from .kernel import Outbound

__all__ = ["LOG_LEVELS", "Context"]

T = TypeVar("T")

_RANK: Final = {name: rank for rank, name in enumerate(LOG_LEVELS)}


class Context:
    """Passed to any handler parameter annotated ``Context``: the request's scope and a way back.

    Attributes:
        request_id: the JSON-RPC id of the request being served.
        method: its method name.
        scope: the protocol revision and client capabilities it was spoken in.
        meta: the request's ``_meta`` (empty when absent).
        auth: the caller's verified access token (:class:`~mcpkit.auth.AuthInfo`: subject, client
            id, scopes, claims) on a protected HTTP server; ``None`` where nothing was verified
            (stdio, an HTTP server without ``auth=``). Never the token itself.
    """

    __slots__ = (
        "_asked",
        "_peer",
        "answers",
        "auth",
        "connection",
        "lifespan",
        "meta",
        "method",
        "request_id",
        "scope",
        "task",
        "tasks",
    )

    def __init__(
        self,
        peer: Outbound,
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
        # Read here, in the task serving the request (the HTTP layer set it for this POST), so that
        # a sync handler in a worker thread, or a task outliving the POST, still has it.
        self.auth: AuthInfo | None = current_auth.get()
        #: The connection the request came on (None outside a server).
        self.connection = connection
        #: 2026-07-28: the client's answers to earlier rounds of this request (see ``_mrtr``).
        self.answers: dict[str, Any] = {}
        self._asked = 0
        #: The task this handler runs as, if it was started as one (see ``mcpkit.tasks``).
        self.task: TaskRecord | None = None
        self.tasks: TaskRunner | None = None
        #: What the server's lifespan yielded (``Server(lifespan=...)``), else ``None``.
        self.lifespan: Any = None

    @property
    def peer(self) -> Outbound:
        """The way back to the client the request came from."""
        return self._peer

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification that belongs to this request (over HTTP: on its response stream)."""
        await self._peer.notify(method, params, related=self.request_id)

    @property
    def protocol_version(self) -> str:
        return self.scope.version

    # -- the session's own state -------------------------------------------------------------------

    @property
    def session(self) -> dict[str, Any]:
        """A dict that lives as long as the session: a handshake-era session (stdio, HTTP, HTTP+SSE),
        a stdio connection in either era, an in-process client. A 2026-07-28 request over HTTP
        belongs to no session: there it lives for this request only (keep what must last in your
        own store, keyed by ``ctx.auth`` where a token says who the caller is)."""
        conn = self.connection
        if conn is None:  # a Context made outside a server
            conn = self.connection = ServerConnection()
        if conn.session_state is None:
            conn.session_state = {}
        return conn.session_state

    async def disable(self, *, names: Iterable[str] = (), tags: Iterable[str] = ()) -> None:
        """Hide tools, prompts and resources (by name or URI, or by tag) from this session only:
        its lists leave them out and its calls of them are refused. The session is told its lists
        changed. See :meth:`mcpkit.Server.disable` for the whole server."""
        _session_filter(self.session).disable(names, tags)
        await self._lists_changed()

    async def enable(self, *, names: Iterable[str] = (), tags: Iterable[str] = ()) -> None:
        """Undo :meth:`disable` for this session."""
        _session_filter(self.session).enable(names, tags)
        await self._lists_changed()

    async def _lists_changed(self) -> None:
        if self.scope.stateless:  # 2026-07-28 tells list changes on listen streams only, to everyone
            return
        # Only lists the session was told can change (what initialize declared listChanged for).
        for kind in ("tools", "prompts", "resources"):
            if kind in self._changing:
                await self._peer.notify(f"notifications/{kind}/list_changed", {}, related=None)

    @property
    def _changing(self) -> frozenset[str]:
        conn = self.connection
        return conn.changing if conn is not None else frozenset()

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.scope.client_capabilities

    @property
    def client_info(self) -> dict[str, Any] | None:
        return self.scope.client_info

    @property
    def supports_ui(self) -> bool:
        """Whether the client shows MCP Apps views (it declared the ``io.modelcontextprotocol/ui``
        extension with ``text/html;profile=mcp-app``), in either era. A UI tool answers every client
        with meaningful text; it may say less in words when a view shows the data."""
        return supports_ui(self.scope.client_capabilities)

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
        await self._peer.notify("notifications/progress", params, related=self.request_id)

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
        await self._peer.notify("notifications/message", params, related=self.request_id)

    async def debug(self, data: Any) -> None:
        await self.log("debug", data)

    async def info(self, data: Any) -> None:
        await self.log("info", data)

    async def warning(self, data: Any) -> None:
        await self.log("warning", data)

    async def error(self, data: Any) -> None:
        await self.log("error", data)

    # -- asking the client (elicitation, sampling, roots) ------------------------------------------

    def _require(self, capability: str, detail: str | None = None) -> None:
        declared = self.scope.client_capabilities.get(capability)
        if not isinstance(declared, dict) or (detail is not None and detail not in declared):
            required: dict[str, Any] = {capability: {detail: {}} if detail else {}}
            raise MissingClientCapability.for_capabilities(required)

    async def _ask(self, kind: str, method: str, params: dict[str, Any], key: str | None = None) -> Any:
        self._asked += 1
        key = key or f"{kind}_{self._asked}"
        task, runner = self.task, self.tasks
        if not self.scope.stateless:
            # Handshake era: a real server-to-client request, answered on the same connection.
            if task is None or runner is None:
                return await self._peer.request(method, params, related=self.request_id)
            # "an elicitation that a task-augmented tool call depends on MUST share the same
            # related task ID"; meanwhile the task waits for input.
            params = {**params, "_meta": {RELATED_TASK: {"taskId": task.task_id}}}
            await runner.set_status(task, "input_required")
            try:
                return await self._peer.request(method, params, related=self.request_id)
            finally:
                await runner.set_status(task, "working")
        # 2026-07-28: answered from an earlier round, or asked for in this one (see _mrtr).
        if key in self.answers:
            return self.answers[key]
        if task is not None and runner is not None:
            # 2026-07-28 tasks extension: park the task until tasks/update brings the answer.
            return await runner.ask(task, key, {"method": method, "params": params})
        raise InputRequired({key: {"method": method, "params": params}})

    async def gather(self, *questions: Awaitable[T]) -> list[T]:
        """Ask several questions at once: ``await ctx.gather(ctx.elicit(...), ctx.list_roots())``.

        In the handshake era (and in a task) they are sent concurrently; in a 2026-07-28 request
        every unanswered one goes to the client in the same ``InputRequiredResult``.
        """
        if not self.scope.stateless or self.task is not None:
            return list(await asyncio.gather(*questions))
        answers: list[T] = []
        pending: dict[str, dict[str, Any]] = {}
        for question in questions:  # each raises at once when unanswered: nothing runs twice
            try:
                answers.append(await question)
            except InputRequired as need:
                pending.update(need.requests)
        if pending:
            raise InputRequired(pending)
        return answers

    async def become_task(self) -> None:
        """Go on as a task (2026-07-28 tasks extension): the call answers ``resultType: "task"``
        and the handler runs again from the top in the background, its earlier questions answered
        from this round. Typical use: gather input over a few rounds, then start long work.

        Returns at once, doing nothing, where the request is already a task or the client did not
        declare the tasks extension (the handler simply goes on inline).
        """
        if self.task is None and self.tasks is not None and self.scope.stateless:
            raise BecomeTask

    @overload
    async def elicit(self, message: str, schema: type[T], *, key: str | None = None) -> ElicitResult[T]: ...

    @overload
    async def elicit(
        self, message: str, schema: dict[str, Any] | None = None, *, key: str | None = None
    ) -> ElicitResult[dict[str, Any]]: ...

    async def elicit(
        self, message: str, schema: type[Any] | dict[str, Any] | None = None, *, key: str | None = None
    ) -> ElicitResult[Any]:
        """Ask the user to fill in a form.

        *schema* is a class (dataclass, ``TypedDict``, msgspec struct or pydantic model) whose fields
        are the form's, or a flat JSON Schema object of primitive fields written by hand. For a class
        the accepted ``content`` is an instance of it, its defaults filling what the user left out;
        for a dict it is the dict the client sent::

            @dataclass
            class Booking:
                guests: Annotated[int, msgspec.Meta(ge=1, le=12)]
                vegetarian: bool = False

            answer = await ctx.elicit("Book a table?", Booking)      # ElicitResult[Booking]
            if answer.accepted and answer.content is not None:
                return f"table for {answer.content.guests}"

        *key* names the question in a 2026-07-28 ``inputRequests`` (default: ``elicitation_<n>``).

        Raises:
            TypeError: the class is not a flat object of primitive fields (the message names the
                field), or has a multiple choice the request's revision lacks (before 2025-11-25).
            ElicitationContentError: the client accepted with content that does not fit the class
                (a ``ToolError``: uncaught, the tool answers ``isError`` with a message naming the field).
            MethodNotFound: elicitation does not exist in the request's revision (before 2025-06-18).
            MissingClientCapability: the client did not declare ``elicitation`` (-32021).
        """
        # A class becomes a form (TypeError, before asking, for one that cannot); a dict is sent as is.
        from ._signature_elicit import elicitation_form  # not at import: most servers never elicit

        form = elicitation_form(schema) if schema is not None and not isinstance(schema, dict) else None
        if not self.scope.has("elicitation"):
            raise MethodNotFound(f"elicitation does not exist in protocol revision {self.scope.version}")
        self._require("elicitation")
        declared = self.scope.client_capabilities["elicitation"]
        if declared and "form" not in declared:
            raise MissingClientCapability.for_capabilities({"elicitation": {"form": {}}})
        requested: dict[str, Any]
        if form is not None:
            requested = form.requested_schema(self.scope.version)
        else:
            requested = schema if isinstance(schema, dict) else {"type": "object", "properties": {}}
        params: dict[str, Any] = {"message": message, "requestedSchema": requested}
        if self.scope.has("elicitation_url"):
            params["mode"] = "form"
        answer = msgspec.convert(
            await self._ask("elicitation", "elicitation/create", params, key), ElicitResult
        )
        if form is None or answer.action != "accept":
            return answer
        return ElicitResult(action="accept", content=form.convert(answer.content))

    async def elicit_url(
        self, message: str, url: str, *, elicitation_id: str | None = None
    ) -> ElicitResult[dict[str, Any]]:
        """Send the user to *url* (an out-of-band interaction, 2025-11-25 and later).

        *elicitation_id* is the 2025-11-25 ``elicitationId`` (default: a random one): pass your own
        to put it in the URL or to send ``notifications/elicitation/complete`` for it later. The
        2026-07-28 request has no such field.

        Raises:
            MissingClientCapability: the client did not declare ``elicitation.url`` (-32021).
        """
        if not self.scope.has("elicitation_url"):
            raise MethodNotFound(f"URL elicitation does not exist in protocol revision {self.scope.version}")
        self._require("elicitation", "url")
        params: dict[str, Any] = {"mode": "url", "message": message, "url": url}
        if not self.scope.stateless:
            # 2025-11-25 correlates the completion notification by this id.
            params["elicitationId"] = elicitation_id if elicitation_id is not None else uuid.uuid4().hex
        answer: ElicitResult[dict[str, Any]] = msgspec.convert(
            await self._ask("elicitation", "elicitation/create", params), ElicitResult
        )
        return answer

    async def sample(
        self,
        messages: str | list[dict[str, Any]],
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        temperature: float | None = None,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: dict[str, Any] | None = None,
        model_preferences: dict[str, Any] | None = None,
        key: str | None = None,
    ) -> CreateMessageResult:
        """Ask the client's model for a completion (``sampling/createMessage``).

        *messages* is a user prompt, or sampling messages as the spec shapes them. *tools* and
        *tool_choice* need a client that declared ``sampling.tools`` (2025-11-25 and later).
        """
        self._require("sampling")
        if tools is not None or tool_choice is not None:
            self._require("sampling", "tools")
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens}
        optional = {
            "systemPrompt": system_prompt,
            "temperature": temperature,
            "tools": tools,
            "toolChoice": tool_choice,
            "modelPreferences": model_preferences,
        }
        params.update({key: value for key, value in optional.items() if value is not None})
        return msgspec.convert(
            await self._ask("sampling", "sampling/createMessage", params, key), CreateMessageResult
        )

    async def close_response_stream(self) -> None:
        """End this request's event stream now, without ending the request (SSE polling).

        Over Streamable HTTP in a 2025-11-25 session the client reconnects after the server's
        ``retry`` with ``Last-Event-ID`` and receives the rest, the result included; a long
        request need not hold a connection open. Elsewhere it does nothing.
        """
        await self._peer.close_response_stream(self.request_id)

    async def ping(self) -> None:
        """Check that the client answers (``ping``, handshake era only; 2026-07-28 has none)."""
        if self.scope.stateless:
            raise MethodNotFound("ping does not exist in protocol revision " + self.scope.version)
        await self._peer.request("ping", {}, related=self.request_id)

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """The client's roots (``roots/list``)."""
        self._require("roots")
        result = await self._ask("roots", "roots/list", {}, key)
        return [msgspec.convert(root, Root) for root in result.get("roots", [])]


#: The session_state key of the session's hidden components.
SESSION_FILTER = "mcpkit.visibility"


def _session_filter(state: dict[str, Any]) -> Filter:
    found = state.get(SESSION_FILTER)
    if not isinstance(found, Filter):
        found = state[SESSION_FILTER] = Filter()
    return found
