"""A stdio server recording its spans in memory (OpenTelemetry SDK), which its ``spans`` tool
returns: how a test in another process reads what the server recorded."""

from __future__ import annotations

import json

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcpkit import Server

recorded = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(recorded))
trace.set_tracer_provider(provider)

server = Server("traced-stdio", telemetry=True)


@server.tool
def spans() -> str:
    """The spans finished so far: name, kind, attributes, trace and parent span ids."""
    return json.dumps(
        [
            {
                "name": span.name,
                "kind": span.kind.name,
                "attributes": dict(span.attributes or {}),
                "trace": span.context.trace_id,
                "parent": span.parent.span_id if span.parent is not None else None,
            }
            for span in recorded.get_finished_spans()
        ]
    )


if __name__ == "__main__":
    server.run()
