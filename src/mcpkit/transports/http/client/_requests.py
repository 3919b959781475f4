"""How a client transport's requests go out: on its own connections, through an ``httpx.Auth`` flow,
or, in the rare cases it leaves to httpx, over httpx.

:class:`Requests` is what a transport holds. :attr:`Requests.pool` is for the hot path, taken
straight by the transport when :attr:`Requests.direct` (no auth, no proxy, no read timeout);
:meth:`Requests.open` sends any request and returns its answer once its head has come:

* with *auth* (an :class:`httpx.Auth`: mcpkit's :class:`~mcpkit.client.auth.OAuth`, a bearer
  token, anything with an ``async_auth_flow``) the flow is driven here, on the pool's connections:
  each request it yields is sent, and each answer handed back to it as an :class:`httpx.Response`
  (its body read first, bounded, if the flow asks for it), until the flow is done; the last answer
  is the request's;
* with a proxy in the environment (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, which httpx
  honours with ``NO_PROXY``) or a read *timeout*, httpx sends everything, as it did before this
  module: those are rare, and httpx knows proxies.

httpx is imported only in those cases: a client on plain HTTP never loads it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING

from ._bounded import Answer
from ._pool import Origin, Pool, header_lines
from ._wire import ConnectionLost, ReadError

if TYPE_CHECKING:
    import httpx

__all__ = ["Answer", "Requests", "merged_headers"]

_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


class _Read:
    """An answer whose body has been read already (for an auth flow that asked to see it)."""

    def __init__(self, status_code: int, headers: Mapping[str, str], body: bytes) -> None:
        self.status_code = status_code
        self.headers = headers
        self._body = body

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        if self._body:
            yield self._body

    async def aclose(self) -> None:
        return None


class Requests:
    """The requests to one endpoint *url*, each with *headers* (already merged with the defaults)."""

    def __init__(
        self,
        url: str,
        headers: dict[str, str],
        *,
        auth: httpx.Auth | None = None,
        timeout: float | None = None,
        max_body: int,
    ) -> None:
        self.url = url
        self.origin = Origin(url)
        self.pool = Pool(self.origin)
        self.static = header_lines(headers)  # checked here, once: no line break gets into a request
        self.auth = auth
        self.max_body = max_body
        self._httpx: httpx.AsyncClient | None = None
        self._pools: dict[tuple[bool, str, int], Pool] = {self.origin.key: self.pool}
        if timeout is not None or any(os.environ.get(name) for name in _PROXY_VARIABLES):
            import httpx

            self._httpx = httpx.AsyncClient(
                headers=headers, timeout=httpx.Timeout(timeout, connect=10.0), auth=auth
            )
        #: What a failed request raises: the pool's ConnectionLost, and httpx's errors where httpx (or
        #: an auth flow, whose own errors are httpx's: OAuthError) takes part.
        self.errors: tuple[type[BaseException], ...] = (ConnectionLost,)
        #: What a stream that broke mid-way raises.
        self.broken: tuple[type[BaseException], ...] = (ReadError,)
        if auth is not None or self._httpx is not None:
            import httpx

            self.errors = (ConnectionLost, httpx.HTTPError)
            self.broken = (ReadError, httpx.ReadError, httpx.RemoteProtocolError)

    @property
    def direct(self) -> bool:
        """Whether the transport may write straight to :attr:`pool`'s connections."""
        return self.auth is None and self._httpx is None

    async def open(
        self,
        method: str,
        headers: dict[str, str],
        body: bytes = b"",
        url: str | None = None,
        *,
        keep: bool = True,
    ) -> Answer:
        """Send one request to *url* (default: the endpoint) and return its answer once its head has
        come; *keep* false: its connection is closed after it (see :meth:`._pool.Pool.open`).

        Raises:
            ConnectionLost: no connection, or no answer on it.
            httpx.HTTPError: the same over httpx, or an auth flow's own failure (OAuthError).
        """
        url = url or self.url
        if self._httpx is not None:
            request = self._httpx.build_request(method, url, headers=headers, content=body or None)
            return await self._httpx.send(request, stream=True)
        if self.auth is not None:
            return await self._authorized(method, url, headers, body, keep)
        pool, origin = self._pool(url)
        return await pool.open(
            method.encode(), origin.target, self.static + header_lines(headers), body, keep=keep
        )

    def _pool(self, url: str) -> tuple[Pool, Origin]:
        if url is self.url or url == self.url:
            return self.pool, self.origin
        origin = Origin(url)
        pool = self._pools.get(origin.key)
        if pool is None:
            pool = self._pools[origin.key] = Pool(origin)
        return pool, origin

    async def _authorized(
        self, method: str, url: str, headers: dict[str, str], body: bytes, keep: bool
    ) -> Answer:
        """The request sent as the auth flow says, and the flow's last answer."""
        import httpx

        from ._bounded import read_body

        assert self.auth is not None
        flow = self.auth.async_auth_flow(httpx.Request(method, url, headers=headers, content=body))
        try:
            request = await flow.__anext__()
            while True:
                pool, origin = self._pool(str(request.url))
                target = request.url.raw_path
                # Host and Content-Length are the pool's to write; the flow's other headers go.
                own = {
                    k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")
                }
                lines = self.static + header_lines(own)
                answer: Answer = await pool.open(
                    request.method.encode(), target or origin.target, lines, request.content
                )
                seen = httpx.Response(
                    answer.status_code, headers=list(answer.headers.items()), request=request
                )
                if self.auth.requires_response_body:
                    content = await read_body(answer, self.max_body)
                    answer = _Read(answer.status_code, answer.headers, content)
                    seen = httpx.Response(
                        answer.status_code,
                        headers=list(answer.headers.items()),
                        content=content,
                        request=request,
                    )
                try:
                    request = await flow.asend(seen)
                except StopAsyncIteration:
                    return answer
                await answer.aclose()  # the flow tries again: this answer is not the request's
        finally:
            await flow.aclose()

    async def aclose(self) -> None:
        for pool in self._pools.values():
            await pool.aclose()
        if self._httpx is not None:
            await self._httpx.aclose()


def merged_headers(given: Mapping[str, str] | None, defaults: Mapping[str, str]) -> dict[str, str]:
    """*defaults* with *given* over them, names compared without case (as httpx merges them).

    >>> merged_headers({"accept-encoding": "identity"}, {"Accept-Encoding": "gzip", "User-Agent": "x"})
    {'accept-encoding': 'identity', 'User-Agent': 'x'}
    """
    merged = {name.lower(): (name, value) for name, value in defaults.items()}
    for name, value in (given or {}).items():
        merged[name.lower()] = (name, value)
    return dict(merged.values())
