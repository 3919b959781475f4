""":class:`OAuth`: the MCP authorization flow as an :class:`httpx.Auth`, so transports stay ignorant.

Every request to the MCP server goes through :meth:`OAuth.async_auth_flow`, which adds the token and
reacts to what comes back:

* **401**: discover (the challenge, Protected Resource Metadata, authorization server metadata),
  refresh if a refresh token from that same server is at hand, else obtain tokens afresh (the
  grant: a user's consent by the authorization code flow, or a machine grant), then send again;
* **403 ``insufficient_scope``**: step up: authorize again for the union of the scopes asked so far
  and the challenged ones, at most ``max_step_ups`` times for one request;
* **``use_dpop_nonce``**: send again with a proof carrying the server's nonce.

One change of tokens at a time: requests that meet a 401 or an expired token while another is
refreshing wait for that refresh under one lock and then use its result, rather than each
refreshing (a refresh token can be single-use, so racing refreshes would log the user out).
Tokens are only ever sent to the origin of the MCP server they were obtained for.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Final

import httpx

from .credentials import DPoPKey
from .discovery import (
    Challenge,
    Context,
    canonical_resource,
    discover,
    origin_of,
    parse_challenge,
)
from .errors import OAuthError
from .grants import Grant, Tokens
from .obtain import Obtaining
from .redirect import Interactive
from .store import MemoryTokenStore, TokenStore

__all__ = ["OAuth"]

#: A failed authorization is not tried again at once: the era probe and the fallback ``initialize``
#: that follows it would otherwise send the user to the browser twice for one refusal.
_FAILURE_MEMORY: Final = 10.0


class OAuth(httpx.Auth, Obtaining):
    """Authorization for one MCP server: ``Client(url, auth=OAuth(...))``.

    With no arguments it is a public client for a user: it registers itself (a Client ID Metadata
    Document if ``client_metadata_url`` is given and the server supports it, else dynamic
    registration), opens the browser on the authorization URL and takes the redirect on a loopback
    port.

    Args:
        client_id: a pre-registered client id (used first); with ``client_secret`` or ``private_key``
            (PEM, for ``private_key_jwt`` signed with ``signing_alg``) when the client is confidential.
        issuer: the authorization server the pre-registered credentials belong to; they are never
            presented to another (when unset, to whichever the server names).
        client_metadata_url: the HTTPS URL of this client's metadata document, used as its client id
            where the authorization server advertises ``client_id_metadata_document_supported``.
        scope: the scopes to ask for (default: the challenge's, else the server's ``scopes_supported``,
            else none).
        grant: a machine grant instead of a user: :class:`ClientCredentials`, :class:`JWTBearer`,
            :class:`IdentityAssertion`.
        interactive: ``async fn(authorization_url) -> redirect URL`` to show the user the page and
            return where the browser was sent (default: a :class:`LoopbackRedirect`).
        redirect_uri: where the authorization server sends the user back (with *interactive*; for the
            loopback listener its port, if any, is the one to listen on).
        open_browser: launch the browser (else print the URL and wait for the redirect).
        store: where tokens and registrations are kept (default: memory).
        dpop: bind tokens to a key with DPoP (RFC 9449): ``None`` when the authorization server
            advertises it, ``True`` always, ``False`` never.
        offline_access: ask for ``offline_access`` (refresh tokens) when the authorization server lists
            it in ``scopes_supported``.
        max_step_ups: how many times one request may re-authorize for more scope.
        client_name: the name registered dynamically (what the consent page shows).
        timeout: seconds for each request to the authorization server (not for the user).
        waiting_for_user: ``fn() -> context manager`` entered while the user is at the browser, so
            the application can stop the clocks of requests waiting on the authorization (the
            command line does: a step up inside a call must not time the call out).
    """

    requires_request_body = False
    requires_response_body = False

    def __init__(
        self,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        private_key: str | None = None,
        signing_alg: str = "ES256",
        issuer: str | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "mcpkit",
        scope: str | Sequence[str] | None = None,
        grant: Grant | None = None,
        interactive: Interactive | None = None,
        redirect_uri: str | None = None,
        open_browser: bool = True,
        store: TokenStore | None = None,
        dpop: bool | None = None,
        offline_access: bool = True,
        max_step_ups: int = 2,
        timeout: float = 30.0,
        waiting_for_user: Callable[[], contextlib.AbstractContextManager[object]] | None = None,
    ) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.private_key = private_key
        self.signing_alg = signing_alg
        self.issuer = issuer
        self.client_metadata_url = client_metadata_url
        self.client_name = client_name
        self.scope = scope if scope is None or isinstance(scope, str) else " ".join(scope)
        self.grant = grant
        self.interactive = interactive
        self.redirect_uri = redirect_uri
        self.open_browser = open_browser
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.dpop = dpop
        self.offline_access = offline_access
        self.max_step_ups = max_step_ups
        self.timeout = timeout
        self.waiting_for_user = waiting_for_user
        #: The MCP server this instance authorizes for: the first URL it sees, unless given.
        self.server_url: str | None = None
        self._tokens: Tokens | None = None
        self._loaded = False
        self._context: Context | None = None
        self._requested: list[str] = []
        self._lock = asyncio.Lock()
        self._dpop_key: DPoPKey | None = None
        self._nonces: dict[str, str] = {}
        self._failure: tuple[float, OAuthError] | None = None

    async def prepare(self, url: str, version: str | None = None) -> None:
        """Authorize now if the server at *url* wants it, before the first MCP request.

        :class:`~mcpkit.Client` calls this when it connects: a person may take minutes in the
        browser, longer than a request (let alone the era probe) waits for its answer. Whether the
        server asks is learnt from an unauthenticated ``ping``: a 401 starts the flow, anything else
        leaves it to the requests. Tokens already at hand (from the store) are used as they are.

        Raises:
            OAuthError: the authorization failed.
        """
        if self.server_url is None:
            self.server_url = canonical_resource(url)
        if await self._current() is not None:
            return
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        if version is not None:
            headers["MCP-Protocol-Version"] = version
        try:
            ping = b'{"jsonrpc":"2.0","id":0,"method":"ping"}'  # its answer's body is never read
            async with self._http() as http, http.stream("POST", url, content=ping, headers=headers) as reply:
                status, challenge = reply.status_code, parse_challenge(reply.headers)
        except httpx.HTTPError:
            return  # nothing there: connecting will say so
        if status == 401:
            await self._reauthorize(version, challenge, None, step_up=False)

    # -- the httpx side ----------------------------------------------------------------------------

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if self.server_url is None:
            self.server_url = canonical_resource(str(request.url))
        if origin_of(str(request.url)) != origin_of(self.server_url):
            yield request  # another origin never sees this server's tokens
            return
        version = request.headers.get("mcp-protocol-version")
        used = self._sign(request, await self._current())
        response = yield request
        reauthorized = step_ups = nonce_retries = 0
        while True:
            self._take_nonce(request, response)
            if response.status_code not in (401, 403):
                return
            challenge = parse_challenge(response.headers)
            if (
                challenge.error == "use_dpop_nonce"
                and used is not None
                and used.is_dpop
                and nonce_retries < 2
            ):
                nonce_retries += 1  # RFC 9449 section 9: the same request, a proof with the nonce
            elif response.status_code == 401 and reauthorized < 2:
                reauthorized += 1
                await self._reauthorize(version, challenge, used, step_up=False)
            elif (
                response.status_code == 403
                and challenge.error == "insufficient_scope"
                and step_ups < self.max_step_ups
            ):
                step_ups += 1
                await self._reauthorize(version, challenge, used, step_up=True)
            else:
                return
            used = self._sign(request, self._tokens)
            response = yield request

    def _sign(self, request: httpx.Request, tokens: Tokens | None) -> Tokens | None:
        if tokens is None:
            return None
        if tokens.is_dpop and self._dpop_key is not None:
            request.headers["Authorization"] = f"DPoP {tokens.access_token}"
            request.headers["DPoP"] = self._dpop_key.proof(
                request.method,
                str(request.url),
                access_token=tokens.access_token,
                nonce=self._nonces.get(origin_of(str(request.url))),
            )
        else:
            request.headers["Authorization"] = f"Bearer {tokens.access_token}"
        return tokens

    def _take_nonce(self, request: httpx.Request, response: httpx.Response) -> None:
        nonce = response.headers.get("dpop-nonce")
        if nonce and self._dpop_key is not None:
            self._nonces[origin_of(str(request.url))] = nonce

    # -- tokens ------------------------------------------------------------------------------------

    @property
    def _tokens_key(self) -> str:
        return f"tokens {self.server_url}"

    async def _current(self) -> Tokens | None:
        """The tokens to send: loaded from the store the first time, refreshed first when expired."""
        if not self._loaded:
            async with self._lock:
                if not self._loaded:
                    await self._load()
        tokens = self._tokens
        if tokens is not None and tokens.expired() and tokens.refresh_token:
            async with self._lock:
                if self._tokens is tokens:  # nobody refreshed while this request waited
                    with contextlib.suppress(OAuthError):
                        async with self._http() as http:
                            context = self._context or await self._discover(http, None, Challenge())
                            await self._keep(await self._refresh(http, context, tokens))
        return self._tokens

    async def _load(self) -> None:
        stored = await self.store.get(self._tokens_key)
        tokens = Tokens.from_json(stored) if stored else None
        pem = stored.get("dpop_key") if stored else None
        if tokens is not None and tokens.dpop_jkt and isinstance(pem, str) and self.dpop is not False:
            key = DPoPKey(pem)  # the key the tokens are bound to, kept beside them
            if key.thumbprint == tokens.dpop_jkt and self._dpop_key is None:
                self._dpop_key = key
        if (
            tokens is not None
            and tokens.dpop_jkt is not None
            and (self._dpop_key is None or self._dpop_key.thumbprint != tokens.dpop_jkt)
        ):
            tokens = None
        self._tokens = tokens
        if tokens is not None and tokens.scope:
            self._requested = tokens.scope.split()
        self._loaded = True

    async def _keep(self, tokens: Tokens) -> None:
        self._tokens = tokens
        entry = tokens.to_json()
        if tokens.dpop_jkt is not None and self._dpop_key is not None:
            entry["dpop_key"] = self._dpop_key.private_pem()
        await self.store.set(self._tokens_key, entry)

    async def _reauthorize(
        self, version: str | None, challenge: Challenge, used: Tokens | None, *, step_up: bool
    ) -> None:
        async with self._lock:
            if self._tokens is not used and self._tokens is not None:
                return  # another request got new tokens while this one waited: try those
            if self._failure is not None and time.monotonic() - self._failure[0] < _FAILURE_MEMORY:
                raise self._failure[1]
            try:
                async with self._http() as http:
                    context = await self._discover(http, version, challenge)
                    if (
                        not step_up
                        and used is not None
                        and used.refresh_token
                        and used.issuer == context.server.issuer
                    ):
                        with contextlib.suppress(OAuthError):
                            await self._keep(await self._refresh(http, context, used))
                            return
                    scope = self._scope_for(context, challenge, version)
                    await self._keep(await self._obtain(http, context, scope, version))
                    self._failure = None
            except OAuthError as exc:
                self._failure = (time.monotonic(), exc)
                raise

    def _http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)

    async def _discover(self, http: httpx.AsyncClient, version: str | None, challenge: Challenge) -> Context:
        assert self.server_url is not None
        self._context = await discover(http, self.server_url, challenge, version, self.issuer)
        return self._context

    def _scope_for(self, context: Context, challenge: Challenge, version: str | None) -> str | None:
        """The scope strategy: the challenge's scopes (added to those asked for before: a step up
        keeps what was granted), else the ones the user gave, else ``scopes_supported``, else none."""
        if challenge.scopes:
            wanted = list(dict.fromkeys([*self._requested, *challenge.scopes]))
        elif self.scope:
            wanted = self.scope.split()
        elif context.prm is not None and context.prm.scopes_supported:
            wanted = list(context.prm.scopes_supported)
        else:
            wanted = list(self._requested)
        self._requested = list(wanted)
        offered = context.server.scopes_supported or []
        if (
            self.grant is None
            and self.offline_access
            and "offline_access" in offered
            and "offline_access" not in wanted
        ):
            wanted.append("offline_access")  # SEP-2207: only where the server lists it
        return " ".join(wanted) or None

    async def logout(self) -> None:
        """Forget this server's tokens, here and in the store."""
        async with self._lock:
            self._tokens = None
            if self.server_url is not None:
                await self.store.delete(self._tokens_key)
