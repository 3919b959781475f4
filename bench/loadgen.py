"""The load generator: raw JSON-RPC over stdio and HTTP, no MCP library on the client side.

Every server is driven by the same code and the same bytes, so what differs between two rows of
the report is the server alone. The requests are pre-encoded templates with only the id changing;
answers are counted by their newline (stdio) or read as one HTTP response each, and checked for
errors, and fully parsed only where the result is compared (:func:`check_answers`).

Two eras of the protocol are spoken:

* ``handshake``: ``initialize`` (protocolVersion 2025-11-25), ``notifications/initialized``, then calls;
  over HTTP the ``Mcp-Session-Id`` it returns is sent back on every POST;
* ``modern``: 2026-07-28, no handshake, every request carries ``_meta`` with the protocol version, the
  client capabilities and info; over HTTP also the ``MCP-Protocol-Version``, ``Mcp-Method`` and
  ``Mcp-Name`` headers.

The load generator's parts: the messages (``load_messages``), the stdio driver (``load_stdio``),
the HTTP client (``load_http``) and the processes' figures and placement (``load_procs``). This
module gathers their names, so that every benchmark script imports them from one place.
"""

from __future__ import annotations

import os

from load_http import (
    HttpClient,
    HttpConnection,
    HttpResponse,
    check_http,
    free_port,
    http_figures,
    http_load,
    open_idle_sessions,
    wait_for_port,
)
from load_messages import (
    CLIENT_INFO,
    ECHO_TEXT,
    HANDSHAKE,
    HANDSHAKE_VERSION,
    INITIALIZED,
    MODERN,
    MODERN_META,
    MODERN_VERSION,
    BenchError,
    CallTemplate,
    check_answers,
    initialize,
    request,
)
from load_procs import cpu_seconds, in_turn, medians, percentile, pin, placed, rss_bytes
from load_stdio import StdioServer

__all__ = [
    "CLIENT_INFO",
    "ECHO_TEXT",
    "HANDSHAKE",
    "HANDSHAKE_VERSION",
    "INITIALIZED",
    "MODERN",
    "MODERN_META",
    "MODERN_VERSION",
    "BenchError",
    "CallTemplate",
    "HttpClient",
    "HttpConnection",
    "HttpResponse",
    "StdioServer",
    "check_answers",
    "check_http",
    "cpu_seconds",
    "free_port",
    "http_figures",
    "http_load",
    "in_turn",
    "initialize",
    "medians",
    "open_idle_sessions",
    "percentile",
    "pin",
    "placed",
    "request",
    "rss_bytes",
    "wait_for_port",
]

if os.name != "posix":  # pragma: no cover
    raise ImportError("the benchmark runs on POSIX systems")
