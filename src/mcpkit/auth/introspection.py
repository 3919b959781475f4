"""Opaque access tokens, checked by asking the authorization server (RFC 7662 token introspection).

The server authenticates to the introspection endpoint as a client (``client_secret_basic``: HTTP
Basic with *client_id* and *client_secret*), POSTs ``token=...&token_type_hint=access_token``, and
accepts the token only if the answer is ``active: true``, names this server in ``aud`` (RFC 8707;
an answer without ``aud`` is refused unless *require_audience* is off), comes from *issuer* when it
says (``iss``), and has not expired. A positive answer is cached for at most *cache_seconds* and
never past the token's ``exp``, keyed by a hash of the token (the token itself is not kept);
negative answers are not cached, so a token the server just revoked is refused again at once.
"""

from __future__ import annotations

import collections
import hashlib
import json
import time
from collections.abc import Callable
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ._fetch import MAX_DOCUMENT, new_client
from ._info import AuthInfo, AuthUnavailable, InvalidToken, scopes_of

if TYPE_CHECKING:
    import httpx

__all__ = ["IntrospectionVerifier"]


class IntrospectionVerifier:
    """A :class:`~mcpkit.auth.TokenVerifier` asking *endpoint* about each token (see the module docstring)."""

    def __init__(
        self,
        endpoint: str,
        audience: str,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        issuer: str | None = None,
        require_audience: bool = True,
        cache_seconds: float = 60.0,
        max_cached: int = 10_000,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.endpoint = endpoint
        self.audience = audience
        self.client_id = client_id
        self.client_secret = client_secret
        self.issuer = issuer
        self.require_audience = require_audience
        self.cache_seconds = cache_seconds
        self.max_cached = max_cached
        self.timeout = timeout
        self.clock = clock
        self._cache: collections.OrderedDict[bytes, tuple[float, AuthInfo]] = collections.OrderedDict()
        self._client: httpx.AsyncClient | None = None

    async def verify(self, token: str) -> AuthInfo:
        key = hashlib.sha256(token.encode()).digest()
        now = self.clock()
        cached = self._cache.get(key)
        if cached is not None:
            if cached[0] > now:
                return cached[1]
            del self._cache[key]
        answer = await self._ask(token)
        info = self._check(answer, now)
        until = now + self.cache_seconds
        if info.expires_at is not None:
            until = min(until, info.expires_at)
        if until > now:
            self._cache[key] = (until, info)
            while len(self._cache) > self.max_cached:
                self._cache.popitem(last=False)
        return info

    async def _ask(self, token: str) -> dict[str, Any]:
        import httpx

        if self._client is None:
            self._client = new_client(self.timeout)
        extra: dict[str, Any] = {}
        if self.client_id is not None and self.client_secret is not None:
            extra["auth"] = httpx.BasicAuth(self.client_id, self.client_secret)
        try:
            response = await self._client.post(
                self.endpoint, data={"token": token, "token_type_hint": "access_token"}, **extra
            )
        except httpx.HTTPError as exc:
            raise AuthUnavailable(
                f"the introspection endpoint cannot be reached: {type(exc).__name__}"
            ) from None
        if response.status_code != 200 or len(response.content) > MAX_DOCUMENT:
            # 401 here means *our* credentials were refused: the caller's token is not at fault.
            raise AuthUnavailable(f"the introspection endpoint answered {response.status_code}")
        try:
            answer = json.loads(response.content)
        except ValueError:
            raise AuthUnavailable("the introspection endpoint did not answer JSON") from None
        if not isinstance(answer, dict):
            raise AuthUnavailable("the introspection endpoint did not answer a JSON object")
        return answer

    def _check(self, answer: dict[str, Any], now: float) -> AuthInfo:
        if answer.get("active") is not True:
            raise InvalidToken("the token is not active")
        if self.issuer is not None and "iss" in answer and answer["iss"] != self.issuer:
            raise InvalidToken("the token was issued by another authorization server")
        audience = answer.get("aud")
        audiences = (
            [audience] if isinstance(audience, str) else audience if isinstance(audience, list) else []
        )
        if (audiences or self.require_audience) and self.audience not in audiences:
            raise InvalidToken("the token was issued for another resource (aud)")
        exp = answer.get("exp")
        if isinstance(exp, (int, float)) and not isinstance(exp, bool):
            if now >= exp:
                raise InvalidToken("the token has expired")
        else:
            exp = None
        subject, client_id = answer.get("sub"), answer.get("client_id")
        cnf = answer.get("cnf")
        jkt = cnf.get("jkt") if isinstance(cnf, dict) else None
        return AuthInfo(
            subject=subject if isinstance(subject, str) else None,
            client_id=client_id if isinstance(client_id, str) else None,
            scopes=scopes_of(answer),
            claims=MappingProxyType(answer),
            issuer=answer.get("iss") if isinstance(answer.get("iss"), str) else self.issuer,
            expires_at=float(exp) if exp is not None else None,
            jkt=jkt if isinstance(jkt, str) else None,
        )

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
