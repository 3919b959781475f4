"""Whether a request whose process died may run again elsewhere: at most once, unless it is safe.

In a fleet, the process the client reconnects to (``Last-Event-ID``) can take over a request whose
process died mid-stream (:mod:`.sessions`). Taking it over means running it again from its start,
and for a tool with side effects (send a message, move money, delete a file) that is a second
execution nobody asked for: the first may have done all, half or none of its work. So a request is
run again only when running it twice is known to be harmless:

* ``tools/call``: only if its tool says so: ``readOnlyHint`` or ``idempotentHint`` in its
  annotations, or ``@server.tool(repeatable=True)`` (``repeatable=False`` refuses even a tool with
  those hints). The server answers that (:class:`RepeatableTools`); a server that cannot say, or a
  tool this process does not have, is not run again;
* the spec's other requests to a server (:data:`SAFE_METHODS`): they read, or set what they set
  again (``resources/subscribe``, ``logging/setLevel``), or act on a task by its id, so running them
  twice does what running them once did. Methods of extensions are not run again.

A request not run again gets an answer that says so, appended to its stream in place of the rest
(:func:`not_repeated`): for ``tools/call`` a tool error result, so the model reading it learns that
the outcome is unknown and can check before trying again (a JSON-RPC error is a protocol failure
that most clients raise to the program and hide from the model); for other methods a JSON-RPC
internal error (-32603), since they have no result that can carry a message. Tasks follow the same
rule: a task whose process died fails rather than run again (:mod:`mcpkit.tasks`).
"""

from __future__ import annotations

from typing import Any, Final, Protocol, runtime_checkable

from .. import _jsonrpc as jsonrpc
from .._errors import INTERNAL_ERROR

__all__ = ["SAFE_METHODS", "RepeatableTools", "may_repeat", "not_repeated"]

#: Requests a client sends a server that may run twice with the effect of once.
SAFE_METHODS: Final = frozenset(
    {
        "ping",
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
        "tasks/get",
        "tasks/result",
        "tasks/list",
        "tasks/cancel",
    }
)

#: What the client reads in place of the outcome it will never get.
NOT_REPEATED: Final = (
    "The server stopped during this call and did not run it again, because running it twice might "
    "repeat its effects: it may have completed, partly or not at all, so its outcome is unknown. "
    "Check before calling it again."
)


@runtime_checkable
class RepeatableTools(Protocol):
    """A server that can say whether a call of one of its tools may run a second time."""

    def repeatable(self, tool: str) -> bool: ...


def may_repeat(endpoint: object, request: jsonrpc.Request) -> bool:
    """Whether *request* may run again on this process after its first run's process died."""
    if request.method != "tools/call":
        return request.method in SAFE_METHODS
    name = request.params.get("name") if isinstance(request.params, dict) else None
    return isinstance(name, str) and isinstance(endpoint, RepeatableTools) and endpoint.repeatable(name)


def not_repeated(request: jsonrpc.Request) -> bytes:
    """The answer to *request*, taken over but not run again."""
    if request.method == "tools/call":
        result: dict[str, Any] = {"content": [{"type": "text", "text": NOT_REPEATED}], "isError": True}
        return jsonrpc.encode(jsonrpc.Response(id=request.id, result=result))
    message = NOT_REPEATED.replace("this call", "this request").replace("calling it", "sending it")
    return jsonrpc.encode(
        jsonrpc.ErrorResponse(id=request.id, error={"code": INTERNAL_ERROR, "message": message})
    )
