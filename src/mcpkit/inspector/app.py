"""The inspector's backend: a small ASGI app that serves the page and relays it to its sessions.

Routes (everything else is 404):

* ``GET /?token=T``: the page. ``GET /static/NAME``: its scripts and styles (public code, no token).
* ``GET /api/events?token=T``: the page's event stream (SSE). Opening it starts a session (an
  :class:`~.session.InspectorSession`); its first event, ``hello``, names it. Closing it ends the
  session and the server connection with it.
* ``POST /api/op?token=T&session=S``: one operation, ``{"op": ..., "params": {...}}``, answered
  ``{"result": ...}`` or ``{"error": {"message", "code"?, "data"?}}``.
* ``GET /oauth/callback?code=...&state=...``: where an authorization server sends the browser back
  during an OAuth sign-in (see :mod:`.signin`). It needs no token, and takes only an answer whose
  ``state`` a sign-in under way is waiting for.

Only this machine's pages may drive it: the app listens on the loopback interface, and every request
must name the port's own host (``127.0.0.1:PORT`` or ``localhost:PORT``: a DNS-rebinding page
carries its own name), come from the inspector's own origin when it says where it comes from
(``Origin``, ``Sec-Fetch-Site``), and carry the random token of the URL ``mcpkit dev`` printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import mimetypes
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs

from .._errors import MCPError, RPCError
from .._versions import SUPPORTED_VERSIONS
from .session import InspectorSession
from .signin import CALLBACK_PATH, SignIns

__all__ = ["STATIC", "InspectorApp"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

STATIC: Final = Path(__file__).parent / "static"
MAX_BODY: Final = 16 * 1024 * 1024
KEEPALIVE_SECONDS: Final = 15.0

#: The page's policy. Scripts may be inline only because an MCP App's document (an ``srcdoc``
#: iframe) inherits this policy and apps are inline HTML; the page itself has no inline script and
#: builds its DOM with ``textContent``. Each app gets a stricter policy of its own on top.
PAGE_POLICY: Final = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; media-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; "
    "frame-src 'self' blob: data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_PAGE_HEADERS: Final = [
    (b"content-security-policy", PAGE_POLICY.encode()),
    (b"referrer-policy", b"no-referrer"),  # the token is in the URL
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-store"),
]


class InspectorApp:
    """The ASGI app for one ``mcpkit dev``: *port* is where it listens (for the Host and Origin
    checks), *dev* the dev server's command line (``None``: no dev file), *dev_label* how the page
    names it, *watcher* a coroutine run while the app runs (the file watcher)."""

    def __init__(
        self,
        *,
        token: str,
        port: int,
        dev: list[str] | None,
        dev_label: str | None = None,
        watcher: Callable[[InspectorApp], Awaitable[None]] | None = None,
    ) -> None:
        self.token = token
        self.dev = dev
        self.dev_label = dev_label
        self.sessions: dict[str, InspectorSession] = {}
        self._hosts = {f"127.0.0.1:{port}".encode(), f"localhost:{port}".encode()}
        self._origins = {b"http://" + host for host in self._hosts}
        self.signins = SignIns(f"http://127.0.0.1:{port}")
        self._watcher = watcher
        self._static = {
            path.name: path for path in STATIC.iterdir() if path.is_file() and not path.name.startswith(".")
        }

    def reload(self, files: list[str]) -> None:
        """The dev server's files changed: every page hears it (those showing it reconnect)."""
        for session in self.sessions.values():
            session.emit("reload", files=files)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            await _plain(send, refusal[0], refusal[1])
            return
        path, method = scope["path"], scope["method"]
        if path == "/" and method == "GET":
            await self._file(send, "index.html", _PAGE_HEADERS)
        elif path.startswith("/static/") and method == "GET":
            await self._file(send, path.removeprefix("/static/"), [(b"cache-control", b"no-cache")])
        elif path == "/api/events" and method == "GET":
            await self._events(receive, send)
        elif path == "/api/op" and method == "POST":
            await self._operation(scope, receive, send)
        elif path == CALLBACK_PATH and method == "GET":
            await self._signed_in(scope, send)
        else:
            await _plain(send, 404, "not found")

    # -- the checks --------------------------------------------------------------------------------

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        headers: dict[bytes, bytes] = {}
        for name, value in scope["headers"]:
            headers.setdefault(name, value)
        if headers.get(b"host") not in self._hosts:
            return 421, "this inspector answers only to its own address"
        origin = headers.get(b"origin")
        if origin is not None and origin not in self._origins:
            return 403, "requests from other origins are refused"
        path = scope["path"]
        if path.startswith("/static/") or path == CALLBACK_PATH:
            return None
        site = headers.get(b"sec-fetch-site")
        if path.startswith("/api/") and site is not None and site != b"same-origin":
            return 403, "requests from other sites are refused"
        token = _query(scope).get("token", "")
        if not hmac.compare_digest(token.encode(), self.token.encode()):
            return 403, "wrong or missing token: open the address mcpkit dev printed"
        return None

    # -- the routes --------------------------------------------------------------------------------

    async def _file(self, send: Send, name: str, extra: list[tuple[bytes, bytes]]) -> None:
        path = self._static.get(name)
        if path is None:
            await _plain(send, 404, "not found")
            return
        kind = "text/javascript" if name.endswith(".js") else mimetypes.guess_type(name)[0] or "text/plain"
        headers = [(b"content-type", f"{kind}; charset=utf-8".encode()), *extra]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": path.read_bytes()})

    async def _events(self, receive: Receive, send: Send) -> None:
        session = InspectorSession(self.dev, self.signins)
        self.sessions[session.id] = session
        session.emit(
            "hello",
            session=session.id,
            dev=self.dev_label,
            versions=list(SUPPORTED_VERSIONS),
        )
        headers = [
            (b"content-type", b"text/event-stream"),
            (b"cache-control", b"no-store"),
            (b"x-accel-buffering", b"no"),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        gone = asyncio.ensure_future(_wait_disconnect(receive))
        try:
            while not gone.done():
                getter = asyncio.ensure_future(session.events.get())
                done, _ = await asyncio.wait(
                    {getter, gone}, timeout=KEEPALIVE_SECONDS, return_when=asyncio.FIRST_COMPLETED
                )
                if getter not in done:
                    getter.cancel()
                    if not gone.done():
                        await _chunk(send, b": keepalive\n\n")
                    continue
                batch = [getter.result()]
                while not session.events.empty() and len(batch) < 200:
                    batch.append(session.events.get_nowait())
                body = b"".join(b"data: " + _json(event) + b"\n\n" for event in batch)
                await _chunk(send, body)
        except OSError:
            pass  # the page went away mid-write
        finally:
            gone.cancel()
            self.sessions.pop(session.id, None)
            await session.close()
            with contextlib.suppress(Exception):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _operation(self, scope: Scope, receive: Receive, send: Send) -> None:
        session = self.sessions.get(_query(scope).get("session", ""))
        if session is None:
            await _json_response(send, 404, {"error": {"message": "unknown session: reload the page"}})
            return
        body = await _read_body(receive)
        try:
            request = json.loads(body) if body is not None else None
        except ValueError:
            request = None
        if not isinstance(request, dict) or not isinstance(request.get("params", {}), dict):
            await _json_response(send, 400, {"error": {"message": "expected {op, params}"}})
            return
        try:
            result = await session.handle(str(request.get("op")), request.get("params") or {})
        except RPCError as exc:
            await _json_response(send, 200, {"error": exc.to_wire()})
        except (MCPError, ValueError, OSError) as exc:
            await _json_response(send, 200, {"error": {"message": str(exc) or type(exc).__name__}})
        except Exception as exc:  # a bug or a library's own error: still an answer the page can show
            await _json_response(send, 200, {"error": {"message": f"{type(exc).__name__}: {exc}"}})
        else:
            await _json_response(send, 200, {"result": result})

    async def _signed_in(self, scope: Scope, send: Send) -> None:
        query = scope.get("query_string", b"").decode("latin-1")
        if self.signins.finish(query):
            status, text = 200, "Signed in. You can close this tab and go back to the inspector."
        else:
            status, text = 400, "No sign-in is waiting for this answer (it may have timed out): try again."
        page = f"<!doctype html><meta charset=utf-8><title>mcpkit inspector</title><p id=signin>{text}</p>"
        headers = [(b"content-type", b"text/html; charset=utf-8"), *_PAGE_HEADERS]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": page.encode()})

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        watcher: asyncio.Task[None] | None = None
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                if self._watcher is not None:
                    watcher = asyncio.ensure_future(self._watcher(self))
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if watcher is not None:
                    watcher.cancel()
                for session in list(self.sessions.values()):
                    await session.close()
                await send({"type": "lifespan.shutdown.complete"})
                return


def _query(scope: Scope) -> dict[str, str]:
    parsed = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    return {key: values[0] for key, values in parsed.items()}


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), default=str).encode()


async def _chunk(send: Send, body: bytes) -> None:
    await send({"type": "http.response.body", "body": body, "more_body": True})


async def _plain(send: Send, status: int, text: str) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text.encode() + b"\n"})


async def _json_response(send: Send, status: int, value: Any) -> None:
    headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": _json(value)})


async def _read_body(receive: Receive) -> bytes | None:
    """The request body, or ``None`` past :data:`MAX_BODY` or if the client left."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        part = message.get("body", b"")
        size += len(part)
        if size > MAX_BODY:
            return None
        parts.append(part)
        if not message.get("more_body"):
            return b"".join(parts)


async def _wait_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
