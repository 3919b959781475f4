"""The user's part of the authorization code flow: open the authorization URL, get the redirect back.

* :class:`LoopbackRedirect` (the default): a one-shot HTTP listener on 127.0.0.1 at a random port
  (RFC 8252 section 7.3, "Loopback Interface Redirection"), the system browser opened on the URL, or,
  headless, the URL printed for the user to open anywhere whose browser can reach this machine;
* :func:`paste_redirect`: print the URL and read back the address the browser ended on, for a
  terminal on another machine than the browser;
* any ``async fn(authorization_url) -> redirect URL`` (an *interactive* hook) for the rest: tests, a
  GUI, a test authorization server that approves at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import webbrowser
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Final
from urllib.parse import urlsplit

__all__ = ["Interactive", "LoopbackRedirect", "paste_redirect"]

#: ``async fn(authorization_url) -> the URL the authorization server redirected to`` (or the bare code).
Interactive = Callable[[str], Awaitable[str]]

_PAGE: Final = (
    b"<!doctype html><meta charset=utf-8><title>Authorized</title>"
    b"<p>Authorization complete. You can close this window and return to the application.</p>"
)


class LoopbackRedirect:
    """A redirect endpoint at ``http://127.0.0.1:<port><path>`` for one authorization.

    Args:
        port: 0 for any free port (the authorization server must then accept any loopback port, as
            RFC 8252 requires).
        open_browser: launch the system browser; when false (or when no browser can be started) the
            URL is printed on stderr for the user to open.
        timeout: how long to wait for the user, in seconds.
    """

    def __init__(
        self, *, port: int = 0, path: str = "/callback", open_browser: bool = True, timeout: float = 300.0
    ) -> None:
        self.port = port
        self.path = path
        self.open_browser = open_browser
        self.timeout = timeout

    @contextlib.asynccontextmanager
    async def listening(self) -> AsyncIterator[tuple[str, Interactive]]:
        """``(redirect_uri, complete)`` while the listener runs; ``await complete(url)`` shows the
        user *url* and returns the redirect the browser brings back."""
        arrived: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
                while (await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                    pass  # the headers: nothing in them matters
                parts = line.split()
                target = parts[1] if len(parts) >= 2 else ""
                if parts[:1] == ["GET"] and urlsplit(target).path == self.path and not arrived.done():
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n")
                    writer.write(b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(_PAGE) + _PAGE)
                    arrived.set_result(f"http://127.0.0.1:{port}{target}")
                else:  # a favicon, a second visit: not the redirect
                    writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                await writer.drain()
            except (TimeoutError, ConnectionError):
                pass
            finally:
                writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", self.port)
        port = server.sockets[0].getsockname()[1]

        async def complete(url: str) -> str:
            shown = self.open_browser and await asyncio.to_thread(_open, url)
            if not shown:
                print(f"Open this URL in a browser to authorize:\n\n  {url}\n", file=sys.stderr, flush=True)
            return await asyncio.wait_for(asyncio.shield(arrived), self.timeout)

        try:
            yield f"http://127.0.0.1:{port}{self.path}", complete
        finally:
            server.close()
            await server.wait_closed()


def _open(url: str) -> bool:
    try:
        return bool(webbrowser.open(url))
    except webbrowser.Error:
        return False


async def paste_redirect(url: str) -> str:
    """Print *url*, then read the address the browser was redirected to (or just the code) from stdin."""
    print(f"Open this URL in a browser to authorize:\n\n  {url}\n", file=sys.stderr, flush=True)
    print("Then paste the address the browser ended on: ", end="", file=sys.stderr, flush=True)
    line: str = await asyncio.to_thread(sys.stdin.readline)
    return line.strip()
