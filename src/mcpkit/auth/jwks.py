"""An issuer's signing keys (a JWKS), fetched when first needed and kept fresh.

* Nothing is fetched at startup: a server whose issuer is down still starts, and the first request
  that needs a key fetches the set (a request that cannot be checked meanwhile gets 503, see
  :class:`~mcpkit.auth.AuthUnavailable`).
* A failed fetch is retried with exponential backoff (0.5 s doubling up to *max_backoff*); keys
  already known stay in use while the issuer is unreachable.
* A token naming an unknown ``kid`` (the issuer rotated its keys) makes one refetch, at most one
  per *cooldown* seconds, so random ``kid`` values cannot make the server hammer the issuer.
* The set is refetched after *ttl* seconds anyway, and concurrent requests share one fetch.

Only public signature keys are kept: an entry with private parts, a symmetric (``oct``) key, or a
key whose ``use`` is not ``sig`` is skipped.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from joserfc import jwk

from ._fetch import FetchError, discover, get_json, new_client
from ._info import AuthUnavailable

if TYPE_CHECKING:
    import httpx

__all__ = ["RemoteKeys"]

logger = logging.getLogger("mcpkit.auth")

_PRIVATE = frozenset({"d", "p", "q", "dp", "dq", "qi", "k"})


class RemoteKeys:
    """The key set at *jwks_uri*, or at the ``jwks_uri`` of *issuer*'s metadata when it is ``None``."""

    def __init__(
        self,
        issuer: str,
        jwks_uri: str | None = None,
        *,
        cooldown: float = 30.0,
        ttl: float = 3600.0,
        timeout: float = 5.0,
        max_backoff: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.issuer = issuer
        self.jwks_uri = jwks_uri
        self.cooldown = cooldown
        self.ttl = ttl
        self.timeout = timeout
        self.max_backoff = max_backoff
        self.clock = clock
        self.keys: list[jwk.Key] = []
        self.fetched_at: float | None = None  # last successful fetch
        self._tried_at = float("-inf")  # last attempt, successful or not
        self._failures = 0
        self._next_try = float("-inf")
        self._fetching: asyncio.Future[None] | None = None
        self._client: httpx.AsyncClient | None = None

    async def candidates(self, kid: str | None, kty: str) -> list[jwk.Key]:
        """The keys that may have signed a token with this ``kid`` and key type (fetching the set
        if it is unknown, stale, or lacks *kid*). Raises :class:`AuthUnavailable` when no set has
        ever been fetched and the issuer cannot be reached."""
        now = self.clock()
        if self.fetched_at is None or now - self.fetched_at > self.ttl:
            await self._refresh(required=self.fetched_at is None)
        found = self._select(kid, kty)
        if not found and kid is not None and self.clock() - self._tried_at >= self.cooldown:
            await self._refresh(required=False)  # perhaps the issuer rotated its keys
            found = self._select(kid, kty)
        return found

    def _select(self, kid: str | None, kty: str) -> list[jwk.Key]:
        return [k for k in self.keys if k.key_type == kty and (kid is None or k.kid == kid)]

    async def _refresh(self, *, required: bool) -> None:
        if self.clock() < self._next_try:  # backing off after a failure
            if required:
                raise AuthUnavailable(
                    "the authorization server's keys cannot be fetched", self._next_try - self.clock()
                )
            return
        if self._fetching is None or self._fetching.done():  # done: an outcome nobody collected
            self._fetching = asyncio.ensure_future(self._fetch())
        fetching = self._fetching
        try:
            await asyncio.shield(fetching)
        except FetchError as exc:
            if required:
                raise AuthUnavailable(
                    f"the authorization server's keys cannot be fetched: {exc}",
                    max(self._next_try - self.clock(), 0.5),
                ) from None
        finally:
            if self._fetching is fetching and fetching.done():
                self._fetching = None

    async def _fetch(self) -> None:
        self._tried_at = self.clock()
        try:
            if self._client is None:
                self._client = new_client(self.timeout)
            if self.jwks_uri is None:
                metadata = await discover(self._client, self.issuer)
                uri = metadata.get("jwks_uri")
                if not isinstance(uri, str):
                    raise FetchError(f"the metadata of {self.issuer} has no jwks_uri")
                self.jwks_uri = uri
            document = await get_json(self._client, self.jwks_uri)
            keys = _public_signing_keys(document)
        except FetchError as exc:
            self._failures += 1
            backoff = min(self.max_backoff, 0.5 * 2 ** (self._failures - 1))
            self._next_try = self.clock() + backoff
            logger.warning("fetching the keys of %s failed (retry in %.1f s): %s", self.issuer, backoff, exc)
            raise
        self.keys, self.fetched_at = keys, self.clock()
        self._failures, self._next_try = 0, float("-inf")
        logger.info("fetched %d signing keys of %s", len(keys), self.issuer)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _public_signing_keys(document: dict[str, Any]) -> list[jwk.Key]:
    entries = document.get("keys")
    if not isinstance(entries, list):
        raise FetchError("the key set has no 'keys' list")
    keys: list[jwk.Key] = []
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("kty") not in ("RSA", "EC", "OKP"):
            continue  # symmetric keys are never used: a public key must not verify an HMAC
        if _PRIVATE & entry.keys() or entry.get("use", "sig") != "sig":
            logger.warning(
                "skipping a key of the set (kid %r): private or not for signatures", entry.get("kid")
            )
            continue
        try:
            keys.append(jwk.import_key(entry))
        except Exception as exc:  # a malformed entry must not hide the others
            logger.warning("skipping a key of the set (kid %r): %s", entry.get("kid"), exc)
    return keys
