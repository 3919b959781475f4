"""OpenTelemetry traces and metrics, following the MCP semantic conventions (opt-in).

``Server(telemetry=True)``, ``Client(telemetry=True)`` or ``mcpkit run --otel`` turn it on; only
then is ``opentelemetry-api`` imported (``pip install 'mcpkit[otel]'``), and spans and metrics go to
whatever SDK and exporters the application set up (none: the API's no-op ones).

What is recorded (OpenTelemetry's semantic conventions for MCP, status "development"):

* one span per request handled (kind SERVER) or sent (kind CLIENT), named ``{method} {target}``
  (``tools/call get_weather``, ``resources/read file:///a``; the method alone where there is no
  target), with ``mcp.method.name``, ``mcp.protocol.version``, ``mcp.session.id`` (handshake
  era), ``jsonrpc.request.id``, ``gen_ai.tool.name`` and ``gen_ai.operation.name`` =
  ``execute_tool`` for a tool call, ``gen_ai.prompt.name``, ``mcp.resource.uri``; a failure sets
  ``error.type`` (and ``rpc.response.status_code``, the JSON-RPC code) and the span's error status;
* the histograms ``mcp.server.operation.duration`` and ``mcp.client.operation.duration`` (seconds),
  with the method, tool name, protocol version and error type;
* ``network.transport`` on every span: ``pipe`` over stdio, ``tcp`` over HTTP (Streamable HTTP and
  HTTP+SSE); the server learns it from the transport serving the request (which tells
  :meth:`Telemetry.serving`: the stdio loop, the HTTP app it is handed to), the client from what
  it connected to;
* ``initialize`` is a request like any other: spans on both sides (the server's is the client's
  child), its duration measured;
* W3C trace context in ``params._meta``: the client injects ``traceparent``, ``tracestate`` and
  ``baggage`` (the global propagator's fields) into each request's ``_meta``; the server extracts
  them, so its span is the client span's child. When a transport span is current on the server
  (an HTTP server span from ASGI instrumentation), the MCP span is linked to it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, Final

__all__ = ["NETWORK_TRANSPORT", "Telemetry"]

#: The ``network.transport`` of the request being served in this context (``"pipe"``: stdio,
#: ``"tcp"``: HTTP), set by the transport that delivers it; what a server's spans say.
NETWORK_TRANSPORT: ContextVar[str | None] = ContextVar("mcpkit_network_transport", default=None)

_TARGET: Final = {
    "tools/call": ("name", "gen_ai.tool.name"),
    "prompts/get": ("name", "gen_ai.prompt.name"),
    "resources/read": ("uri", "mcp.resource.uri"),
    "resources/subscribe": ("uri", "mcp.resource.uri"),
    "resources/unsubscribe": ("uri", "mcp.resource.uri"),
}
#: Seconds: the buckets the conventions advise for the operation durations.
_BUCKETS: Final = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]


class Telemetry:
    """Spans and duration histograms for one side (``"server"`` or ``"client"``).

    Args:
        side: which side records (span kind, metric name).
        tracer_provider: where spans go (default: the global one).
        meter_provider: where measurements go (default: the global one).
    """

    def __init__(self, side: str, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        from opentelemetry import metrics, propagate, trace

        self.side = side
        #: This side's ``network.transport`` when the context does not say (a client sets it to
        #: what it connected to).
        self.transport: str | None = None
        self._trace = trace
        self._propagate = propagate
        self._kind = trace.SpanKind.SERVER if side == "server" else trace.SpanKind.CLIENT
        self._tracer = trace.get_tracer("mcpkit", tracer_provider=tracer_provider)
        meter = metrics.get_meter("mcpkit", meter_provider=meter_provider)
        self._duration = meter.create_histogram(
            f"mcp.{side}.operation.duration",
            unit="s",
            description=f"MCP request duration as observed on the {side}",
            explicit_bucket_boundaries_advisory=_BUCKETS,
        )

    def serving(self, network_transport: str) -> None:
        """The requests this context goes on to deliver came over *network_transport* (``"tcp"``,
        ``"pipe"``): what their spans say. Told by the transport that serves them (the
        :class:`~mcpkit.transports.http.server.seams.RequestTelemetry` it is handed)."""
        NETWORK_TRANSPORT.set(network_transport)

    def inject(self, meta: dict[str, Any]) -> None:
        """Put the current trace context into a request's ``_meta`` (client side)."""
        self._propagate.inject(meta)

    @contextlib.contextmanager
    def request(
        self,
        method: str,
        params: dict[str, Any],
        request_id: Any,
        version: str | None,
        session_id: str | None = None,
    ) -> Iterator[Any]:
        """A span (and a duration) for one request; on the server its parent is the trace context
        in ``params._meta``. Yields the span; an exception escaping marks it failed."""
        attributes: dict[str, Any] = {"mcp.method.name": method}
        if request_id is not None:
            attributes["jsonrpc.request.id"] = str(request_id)
        transport = NETWORK_TRANSPORT.get() or self.transport
        if transport:
            attributes["network.transport"] = transport
        if version:
            attributes["mcp.protocol.version"] = version
        if session_id:
            attributes["mcp.session.id"] = session_id
        name = method
        target = _TARGET.get(method)
        if target is not None and isinstance(params.get(target[0]), str):
            name = f"{method} {params[target[0]]}"
            attributes[target[1]] = params[target[0]]
            if method == "tools/call":
                attributes["gen_ai.operation.name"] = "execute_tool"
        context, links = None, None
        if self.side == "server":
            meta = params.get("_meta")
            if isinstance(meta, dict) and "traceparent" in meta:
                context = self._propagate.extract({k: v for k, v in meta.items() if isinstance(v, str)})
                current = self._trace.get_current_span().get_span_context()
                if current.is_valid:  # the transport's span (HTTP): linked, not the parent
                    links = [self._trace.Link(current)]
        measured = {
            k: v for k, v in attributes.items() if k != "jsonrpc.request.id" and k != "mcp.session.id"
        }
        started = time.perf_counter()
        with self._tracer.start_as_current_span(
            name, context=context, kind=self._kind, attributes=attributes, links=links,
            record_exception=True, set_status_on_exception=True,
        ) as span:  # fmt: skip
            try:
                yield span
            except BaseException as exc:
                code = getattr(exc, "code", None)
                error = str(code) if isinstance(code, int) else type(exc).__name__
                span.set_attribute("error.type", error)
                if isinstance(code, int):
                    span.set_attribute("rpc.response.status_code", error)
                measured["error.type"] = error
                raise
            finally:
                self._duration.record(time.perf_counter() - started, measured)
