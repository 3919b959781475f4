"""Why a connection failed, in one line a person can act on: what went wrong, then a hint.

The client's own errors are precise but written for a program (``HTTP request failed: ConnectError:
[Errno 111] Connect call failed ('127.0.0.1', 1) (-32600)``); the page shows this instead:

>>> from mcpkit._errors import RPCError
>>> refused = RPCError(-32600, "HTTP request failed: ConnectError: [Errno 111] Connect call failed",
...                    {"httpStatus": None, "cause": "ConnectError"})
>>> explain(refused, "url", "http://127.0.0.1:1/mcp")
'nothing is listening at 127.0.0.1:1: is the server running, on that port?'
>>> explain(RPCError(-32600, "HTTP 404", {"httpStatus": 404}), "url", "http://127.0.0.1:8000/x")
'the server at http://127.0.0.1:8000/x answered 404 Not Found: check the path (MCP servers often use /mcp)'
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit

from .._errors import ConnectionClosed, RequestTimeout, RPCError, TransportError

__all__ = ["explain"]

_STATUS_HINTS: Final = {
    400: "Bad Request: the server refused the request (is this an MCP endpoint?)",
    401: "Unauthorized: add a bearer token or a header, or sign in with OAuth",
    403: "Forbidden: the token or headers given do not allow this",
    404: "Not Found: check the path (MCP servers often use /mcp)",
    405: "Method Not Allowed: this URL does not take MCP requests (check the path)",
    406: "Not Acceptable: this URL does not speak Streamable HTTP",
    421: "Misdirected Request: the server refuses this Host name (try 127.0.0.1 or localhost)",
    500: "Internal Server Error: the server failed; see its own log",
    502: "Bad Gateway: a proxy in front of the server could not reach it",
    503: "Service Unavailable: the server is starting or overloaded; try again",
}


def explain(exc: BaseException, kind: str, value: str, *, credentials: bool = False) -> str:
    """One line for the failure *exc* of connecting to a target of *kind* (``dev``, ``command``,
    ``url``) and *value* (its URL or command line); *credentials*: a token or headers were sent."""
    text = str(exc) or type(exc).__name__
    if kind == "url":
        reason = _http(exc, value, credentials)
        if reason is not None:
            return reason
    if isinstance(exc, RequestTimeout):
        return f"no answer in time ({text}): is the server busy, or is the request timeout too short?"
    if isinstance(exc, ConnectionClosed):
        where = "the dev file's server" if kind == "dev" else "the server"
        return f"{where} stopped before answering ({_exit_of(text)}): its stderr is in Events"
    if isinstance(exc, TransportError) and text.startswith("could not start"):
        program = text.split("'")[1] if text.count("'") >= 2 else value
        if "No such file" in text:
            return f"could not start {program!r}: no such program (is it installed and on PATH?)"
        if "Permission denied" in text:
            return f"could not start {program!r}: not executable (check its permissions)"
        return text.split(": [Errno")[0]
    if type(exc).__name__ == "OAuthError":
        return f"signing in failed: {text}"
    if isinstance(exc, RPCError):
        return f"the server refused to connect: {exc.message} (error {exc.code})"
    return text


def _http(exc: BaseException, url: str, credentials: bool) -> str | None:
    """The HTTP side of a failure, or ``None`` if it was not one."""
    data = exc.data if isinstance(exc, RPCError) and isinstance(exc.data, dict) else {}
    status = data.get("httpStatus")
    text = str(exc)
    if isinstance(status, int) and status >= 400:
        hint = _STATUS_HINTS.get(status, "check the URL")
        if status == 401 and credentials:
            hint = "Unauthorized: the token or headers given were refused (or sign in with OAuth)"
        return f"the server at {url} answered {status} {hint}"
    cause = str(data.get("cause") or "")
    parts = urlsplit(url)
    address = parts.netloc or url
    if cause == "ConnectError" or "ConnectError" in text:
        if "Errno 111" in text or "refused" in text.lower():
            return f"nothing is listening at {address}: is the server running, on that port?"
        if re.search(r"Errno -[235]\b|Name or service not known|nodename nor servname", text):
            return f"no such host {parts.hostname!r}: check the URL's host name"
        if "SSL" in text or "certificate" in text:
            return f"the TLS handshake with {address} failed: check the certificate (or use http://)"
        return f"could not reach {address}: check the URL and that the server is running"
    if "Timeout" in cause or "Timeout" in text:
        return f"{address} did not answer in time: is the server busy or behind a firewall?"
    if "RemoteProtocolError" in text or "ReadError" in text:
        return f"{address} closed the connection mid-answer: is it an HTTP server, and an MCP one?"
    return None


def _exit_of(text: str) -> str:
    match = re.search(r"\(([^()]*(?:exit|signal)[^()]*)\)", text)
    return match.group(1) if match else "it exited"
