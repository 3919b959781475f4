"""How :class:`~mcpkit.client.auth.OAuth` obtains tokens: the grants (a user's consent by the
authorization code flow with PKCE, client credentials, a JWT bearer or identity assertion), a
refresh, who the client is at each authorization server, and where the user is sent back.

:class:`Obtaining` is a base of ``OAuth``, which sets what it reads (its arguments, the DPoP key and
nonces); nothing here keeps tokens: that is ``OAuth``'s.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator, Callable
from typing import Final
from urllib.parse import urlsplit

import httpx

from .credentials import ClientIdentity, DPoPKey, choose_auth_method
from .discovery import AuthServer, Context
from .errors import OAuthError
from .flow import authorization_url, check_response, pkce_pair
from .grants import (
    ClientCredentials,
    Grant,
    IdentityAssertion,
    JWTBearer,
    Tokens,
    jwt_bearer_form,
    token_request,
)
from .identity import metadata_document, preregistered, registered
from .redirect import Interactive, LoopbackRedirect
from .store import TokenStore

__all__ = ["DEFAULT_REDIRECT_URI", "Obtaining"]

#: Where the authorization server is told to send the user back when an *interactive* hook (not the
#: loopback listener) takes the redirect.
DEFAULT_REDIRECT_URI: Final = "http://127.0.0.1/callback"


class Obtaining:
    """Obtaining and refreshing tokens at one authorization server (see the module docstring)."""

    # Set by OAuth.__init__.
    client_id: str | None
    client_secret: str | None
    private_key: str | None
    signing_alg: str
    issuer: str | None
    client_metadata_url: str | None
    client_name: str
    grant: Grant | None
    interactive: Interactive | None
    redirect_uri: str | None
    open_browser: bool
    store: TokenStore
    dpop: bool | None
    waiting_for_user: Callable[[], contextlib.AbstractContextManager[object]] | None
    _dpop_key: DPoPKey | None
    _nonces: dict[str, str]

    def _dpop_for(self, server: AuthServer) -> DPoPKey | None:
        wanted = (
            self.dpop
            if self.dpop is not None
            else server.supports("dpop_signing_alg_values_supported", "ES256")
        )
        if not wanted:
            return None
        if self._dpop_key is None:
            self._dpop_key = DPoPKey()
        return self._dpop_key

    def _preregistered(self, server: AuthServer) -> ClientIdentity | None:
        return preregistered(
            server, self.client_id, self.client_secret, self.private_key, self.signing_alg, self.issuer
        )

    def _methods(self, server: AuthServer) -> list[str] | None:
        methods = server.raw.get("token_endpoint_auth_methods_supported")
        return [m for m in methods if isinstance(m, str)] if isinstance(methods, list) else None

    async def _obtain(
        self, http: httpx.AsyncClient, context: Context, scope: str | None, version: str | None
    ) -> Tokens:
        server, dpop = context.server, self._dpop_for(context.server)
        grant = self.grant
        if grant is None:
            return await self._authorization_code(http, context, scope, version, dpop)
        identity = self._preregistered(server)
        if isinstance(grant, ClientCredentials):
            if identity is None:
                raise OAuthError("the client credentials grant needs client_id (and a secret or key)")
            form = {"grant_type": "client_credentials", "resource": context.resource}
            if scope:
                form["scope"] = scope
        else:
            assert isinstance(grant, (JWTBearer, IdentityAssertion))
            form = await jwt_bearer_form(
                http, grant, issuer=server.issuer, resource=context.resource, scope=scope
            )
        method = choose_auth_method(identity, self._methods(server)) if identity else "none"
        return await token_request(
            http, server, form, identity=identity, method=method, dpop=dpop, nonces=self._nonces
        )

    async def _authorization_code(
        self,
        http: httpx.AsyncClient,
        context: Context,
        scope: str | None,
        version: str | None,
        dpop: DPoPKey | None,
    ) -> Tokens:
        server = context.server
        if server.authorization_endpoint is None:
            raise OAuthError(f"{server.issuer} has no authorization endpoint")
        # 2025-11-25 on: absent code_challenge_methods_supported means no PKCE, and clients "MUST refuse".
        if (
            server.discovered
            and not server.supports("code_challenge_methods_supported", "S256")
            and (version is None or version >= "2025-11-25")
        ):
            raise OAuthError(f"{server.issuer} does not advertise PKCE with S256: refusing to proceed")
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(24)
        async with self._redirect() as (redirect_uri, complete):
            identity = await self._identity(http, server, redirect_uri)
            if identity is None:  # pragma: no cover - registration raises instead
                raise OAuthError(f"no client identity for {server.issuer}")
            url = authorization_url(
                server,
                client_id=identity.client_id,
                redirect_uri=redirect_uri,
                code_challenge=challenge,
                state=state,
                scope=scope,
                resource=context.resource,
            )
            answer = await complete(url)
        code = check_response(answer, state=state, server=server)
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
            "resource": context.resource,
        }
        method = choose_auth_method(identity, self._methods(server))
        return await token_request(
            http, server, form, identity=identity, method=method, dpop=dpop, nonces=self._nonces
        )

    @contextlib.asynccontextmanager
    async def _redirect(self) -> AsyncIterator[tuple[str, Interactive]]:
        if self.interactive is not None:
            yield self.redirect_uri or DEFAULT_REDIRECT_URI, self._while_waiting(self.interactive)
            return
        parts = urlsplit(self.redirect_uri or "")
        listener = LoopbackRedirect(
            port=parts.port or 0, path=parts.path or "/callback", open_browser=self.open_browser
        )
        async with listener.listening() as (redirect_uri, complete):
            yield redirect_uri, self._while_waiting(complete)

    def _while_waiting(self, complete: Interactive) -> Interactive:
        hook = self.waiting_for_user
        if hook is None:
            return complete

        async def held(url: str) -> str:
            with hook():
                return await complete(url)

        return held

    async def _identity(
        self, http: httpx.AsyncClient, server: AuthServer, redirect_uri: str | None
    ) -> ClientIdentity | None:
        """Who to be at *server* (:mod:`.identity`); for a refresh (no *redirect_uri*) never a new
        registration."""
        return (
            self._preregistered(server)
            or metadata_document(server, self.client_metadata_url, self.private_key, self.signing_alg)
            or await registered(http, self.store, server, redirect_uri, self.client_name)
        )

    async def _refresh(self, http: httpx.AsyncClient, context: Context, tokens: Tokens) -> Tokens:
        assert tokens.refresh_token is not None
        server = context.server
        if tokens.issuer is not None and tokens.issuer != server.issuer:
            raise OAuthError("the refresh token belongs to another authorization server")
        identity = await self._identity(http, server, None)
        form = {
            "grant_type": "refresh_token",
            "refresh_token": tokens.refresh_token,
            "resource": context.resource,
        }
        method = choose_auth_method(identity, self._methods(server)) if identity else "none"
        fresh = await token_request(
            http,
            server,
            form,
            identity=identity,
            method=method,
            dpop=self._dpop_for(server),
            nonces=self._nonces,
        )
        if fresh.refresh_token is None:  # the server kept the old one valid (no rotation)
            fresh.refresh_token = tokens.refresh_token
        if fresh.scope is None:
            fresh.scope = tokens.scope
        return fresh
