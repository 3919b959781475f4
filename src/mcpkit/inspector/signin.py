"""OAuth sign-in with the inspector itself as the redirect target.

mcpkit's client flow (:class:`~mcpkit.client.auth.OAuth`) does discovery, registration, PKCE and
the token exchange; the inspector supplies only the user's part. Its *interactive* hook shows the
authorization URL on the page (which opens it in a new tab), and the authorization server sends the
browser back to ``http://127.0.0.1:PORT/oauth/callback?code=...&state=...``, which
:meth:`SignIns.finish` hands to the waiting flow, matched by its ``state``.

The callback carries no inspector token (the authorization server cannot know it); what makes it
safe is that only an answer whose ``state`` (random, 128 bits or more, made by the flow) matches a
sign-in under way is taken, once, and the flow itself checks it again with PKCE and ``iss``.

>>> signins = SignIns("http://127.0.0.1:6280")
>>> signins.redirect_uri
'http://127.0.0.1:6280/oauth/callback'
>>> signins.finish("state=unknown&code=x")
False
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

__all__ = ["CALLBACK_PATH", "SignIns"]

CALLBACK_PATH: Final = "/oauth/callback"
#: How long a sign-in waits for the person at the authorization server.
WAIT_SECONDS: Final = 600.0


class SignIns:
    """The sign-ins under way in one inspector, by the ``state`` of their authorization URL."""

    def __init__(self, base: str) -> None:
        self.redirect_uri = base + CALLBACK_PATH
        self._waiting: dict[str, asyncio.Future[str]] = {}

    def hook(self, show: Callable[[str], None]) -> Callable[[str], Awaitable[str]]:
        """An ``interactive`` hook for :class:`~mcpkit.client.auth.OAuth`: *show* puts the
        authorization URL before the user; the hook returns the redirect the browser brings back."""

        async def interactive(url: str) -> str:
            state = _first(parse_qs(urlsplit(url).query), "state")
            if not state:
                raise ValueError("the authorization URL has no state")
            future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            self._waiting[state] = future
            show(url)
            try:
                return await asyncio.wait_for(future, WAIT_SECONDS)
            except TimeoutError:
                raise ValueError(f"nobody signed in within {WAIT_SECONDS:.0f} s") from None
            finally:
                self._waiting.pop(state, None)

        return interactive

    def finish(self, query: str) -> bool:
        """The browser came back with *query*: True if a sign-in was waiting for it."""
        state = _first(parse_qs(query), "state")
        future = self._waiting.pop(state, None) if state else None
        if future is None or future.done():
            return False
        future.set_result(f"{self.redirect_uri}?{query}")
        return True


def _first(values: dict[str, Any], key: str) -> str:
    found = values.get(key)
    return str(found[0]) if found else ""
