"""OpenTelemetry: spans and duration histograms on both sides, the trace context carried in ``_meta``.

A real HTTP server in this process (uvicorn on 127.0.0.1) and mcpkit's client, both instrumented,
recording into the OpenTelemetry SDK's in-memory exporter and reader; and a real stdio server
process recording into its own, which a tool of it reads back.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from opentelemetry import baggage, context, metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcpkit import Client, Context, RPCError, Server

from ..conftest import free_port


@pytest.fixture(scope="session")
def recorded() -> tuple[InMemorySpanExporter, InMemoryMetricReader]:
    """The global providers, set once for this test process, recording in memory. Once per process,
    not per module: OpenTelemetry keeps the first provider set and ignores later ones, and the
    parallel runner may come back to this module in a worker after other modules (a second module
    fixture's exporter then recorded nothing)."""
    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    return spans, reader


def make_server() -> Server:
    server = Server("traced", telemetry=True)

    @server.tool
    async def meta(ctx: Context) -> str:
        """The trace context fields this request's _meta carried."""
        return json.dumps(sorted(k for k in ctx.meta if k in ("traceparent", "tracestate", "baggage")))

    return server


def http_spans(app: Any) -> Any:
    """*app* with a span per HTTP request around it (kind SERVER, current while the app runs), as
    OpenTelemetry's ASGI instrumentation makes."""
    tracer = trace.get_tracer("test.asgi")

    async def traced(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        with tracer.start_as_current_span(f"{scope['method']} {scope['path']}", kind=trace.SpanKind.SERVER):
            await app(scope, receive, send)

    return traced


@asynccontextmanager
async def serving(server: Server, wrap: Any = None) -> AsyncIterator[str]:
    port = free_port()
    app = server.http_app()
    config = uvicorn.Config(
        wrap(app) if wrap is not None else app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
    )
    running = uvicorn.Server(config)
    task = asyncio.ensure_future(running.serve())
    while not running.started:  # noqa: ASYNC110 - uvicorn offers no event to wait on
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        running.should_exit = True
        await task


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_client_and_server_spans_are_one_trace(
    recorded: tuple[InMemorySpanExporter, InMemoryMetricReader], version: str
) -> None:
    spans, reader = recorded
    spans.clear()

    async def main() -> None:
        async with (
            serving(make_server()) as url,
            Client(url, protocol_version=version, telemetry=True) as client,
        ):
            token = context.attach(baggage.set_baggage("tenant", "t1"))
            try:
                fields = json.loads((await client.call_tool("meta")).content[0].text)  # type: ignore[union-attr]
            finally:
                context.detach(token)
            assert fields == ["baggage", "traceparent"]
            with pytest.raises(RPCError):
                await client.call_tool("missing")

    asyncio.run(main())
    finished = spans.get_finished_spans()
    client_span = next(s for s in finished if s.name == "tools/call meta" and s.kind == trace.SpanKind.CLIENT)
    server_span = next(s for s in finished if s.name == "tools/call meta" and s.kind == trace.SpanKind.SERVER)
    assert server_span.context.trace_id == client_span.context.trace_id
    assert server_span.parent is not None and server_span.parent.span_id == client_span.context.span_id
    for span in (client_span, server_span):
        attributes = dict(span.attributes or {})
        assert attributes["mcp.method.name"] == "tools/call"
        assert attributes["gen_ai.tool.name"] == "meta"
        assert attributes["gen_ai.operation.name"] == "execute_tool"
        assert attributes["mcp.protocol.version"] == version
    failed = next(s for s in finished if s.name == "tools/call missing" and s.kind == trace.SpanKind.SERVER)
    assert dict(failed.attributes or {})["error.type"] == "-32602"
    assert failed.status.status_code == trace.StatusCode.ERROR

    data = reader.get_metrics_data()
    assert data is not None
    points: dict[str, list[Any]] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                points.setdefault(metric.name, []).extend(metric.data.data_points)
    for name in ("mcp.server.operation.duration", "mcp.client.operation.duration"):
        calls = [p for p in points[name] if p.attributes.get("gen_ai.tool.name") == "meta"]
        assert calls and all(p.attributes["mcp.method.name"] == "tools/call" for p in calls)
    assert any(p.attributes.get("error.type") == "-32602" for p in points["mcp.server.operation.duration"])


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_the_mcp_span_is_linked_to_the_http_span_and_names_the_session(
    recorded: tuple[InMemorySpanExporter, InMemoryMetricReader], version: str
) -> None:
    """The MCP server span's parent is the client's span (the trace context in ``_meta``); the
    HTTP server span current when it starts is linked. ``mcp.session.id`` is the session's
    ``Mcp-Session-Id`` in the handshake era, and absent in 2026-07-28 (no session)."""
    spans, _ = recorded
    spans.clear()
    sessions: list[str | None] = []

    async def main() -> None:
        async with (
            serving(make_server(), http_spans) as url,
            Client(url, protocol_version=version, telemetry=True) as client,
        ):
            await client.call_tool("meta")
            sessions.append(getattr(client._transport, "session_id", None))

    asyncio.run(main())
    finished = spans.get_finished_spans()
    client_span = next(s for s in finished if s.name == "tools/call meta" and s.kind == trace.SpanKind.CLIENT)
    server_span = next(s for s in finished if s.name == "tools/call meta" and s.kind == trace.SpanKind.SERVER)
    http_span = next(
        s
        for s in finished
        if s.name == "POST /mcp"
        and s.start_time <= server_span.start_time
        and s.end_time >= server_span.end_time
    )
    assert server_span.parent is not None and server_span.parent.span_id == client_span.context.span_id
    assert [link.context.span_id for link in server_span.links] == [http_span.context.span_id]
    attributes = dict(server_span.attributes or {})
    if version == "2026-07-28":
        assert "mcp.session.id" not in attributes
    else:
        assert sessions[0] and attributes["mcp.session.id"] == sessions[0]


def test_importing_mcpkit_loads_neither_redis_nor_opentelemetry() -> None:
    code = (
        "import sys, json, mcpkit, mcpkit.transports.http, mcpkit.cli; mcpkit.Server('x').http_app(); "
        "print(json.dumps(sorted(sys.modules)))"
    )
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout)
    assert [m for m in loaded if m.split(".")[0] in ("redis", "opentelemetry")] == []


def spans_named(finished: Any, name: str, kind: Any) -> list[Any]:
    return [s for s in finished if s.name == name and s.kind == kind]


@pytest.mark.parametrize("version", ["2025-03-26", "2025-11-25"])
def test_initialize_has_spans_on_both_sides_and_http_says_tcp(
    recorded: tuple[InMemorySpanExporter, InMemoryMetricReader], version: str
) -> None:
    """``initialize`` is traced like any request: a client span, and the server's as its child;
    every span over HTTP carries ``network.transport`` = ``tcp`` (the MCP semantic conventions)."""
    spans, _ = recorded
    spans.clear()

    async def main() -> None:
        async with (
            serving(make_server()) as url,
            Client(url, protocol_version=version, telemetry=True) as client,
        ):
            await client.call_tool("meta")

    asyncio.run(main())
    finished = spans.get_finished_spans()
    [client_init] = spans_named(finished, "initialize", trace.SpanKind.CLIENT)
    [server_init] = spans_named(finished, "initialize", trace.SpanKind.SERVER)
    assert server_init.context.trace_id == client_init.context.trace_id
    assert server_init.parent is not None and server_init.parent.span_id == client_init.context.span_id
    for span in (client_init, server_init):
        attributes = dict(span.attributes or {})
        assert attributes["mcp.method.name"] == "initialize"
        assert attributes["mcp.protocol.version"] == version
    assert dict(server_init.attributes or {})["mcp.session.id"]
    mcp_spans = [s for s in finished if "mcp.method.name" in dict(s.attributes or {})]
    assert {s.name for s in mcp_spans} >= {"initialize", "tools/call meta"}
    assert {dict(s.attributes or {}).get("network.transport") for s in mcp_spans} == {"tcp"}


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_stdio_spans_say_pipe_and_initialize_is_traced(
    recorded: tuple[InMemorySpanExporter, InMemoryMetricReader], version: str
) -> None:
    """Over a real stdio subprocess: the server's spans (read back from its own in-memory
    exporter) and the client's carry ``network.transport`` = ``pipe``; the handshake era's
    ``initialize`` is traced on both sides, the server's span the client's child."""
    spans, _ = recorded
    spans.clear()
    server = Path(__file__).with_name("traced_stdio_server.py")
    seen: list[dict[str, Any]] = []

    async def main() -> None:
        async with Client([sys.executable, str(server)], protocol_version=version, telemetry=True) as client:
            await client.call_tool("spans")  # one call before: its span is finished by the next
            text = (await client.call_tool("spans")).content[0].text  # type: ignore[union-attr]
            seen.extend(json.loads(text))

    asyncio.run(main())
    client_spans = [s for s in spans.get_finished_spans() if s.kind == trace.SpanKind.CLIENT]
    assert {s.name for s in client_spans} >= {"tools/call spans"}
    assert {dict(s.attributes or {}).get("network.transport") for s in client_spans} == {"pipe"}
    assert {s["name"] for s in seen} >= {"tools/call spans"}
    assert {s["attributes"].get("network.transport") for s in seen} == {"pipe"}
    if version != "2026-07-28":
        [client_init] = [s for s in client_spans if s.name == "initialize"]
        [server_init] = [s for s in seen if s["name"] == "initialize"]
        assert server_init["kind"] == "SERVER"
        assert server_init["trace"] == client_init.context.trace_id
        assert server_init["parent"] == client_init.context.span_id
