"""DPoP (RFC 9449): a token bound to a key, used only with a fresh proof that the caller holds it.

With ``Authorization: DPoP <token>``, the ``DPoP`` header carries a proof JWT, checked here
(each failure a 401 ``invalid_dpop_proof``):

* ``typ`` is ``dpop+jwt``, ``alg`` is on the allowlist (asymmetric only), and the header's ``jwk``
  is a public key (no private members) that verifies the signature;
* ``htm`` is the request's method and ``htu`` its URL without query and fragment (compared after
  normalizing scheme and host case and default ports);
* ``iat`` is within *window* seconds of now (either way), ``jti`` has not been seen in that time
  (a bounded replay cache: *max_proofs* entries, each forgotten once its proof would be too old);
* ``ath`` is base64url(SHA-256(token)), and the token's ``cnf.jkt`` is the RFC 7638 thumbprint of
  the proof's key;
* with *nonces*, the proof's ``nonce`` must be one the server issued: the current one, or the one
  before it during its grace period. A missing or stale one gets 401 ``use_dpop_nonce`` and a fresh
  ``DPoP-Nonce`` header (RFC 9449 §9); the nonce rotates every *rotate_every* seconds.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Iterable
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from joserfc import jwk
from joserfc.errors import JoseError

from ._algorithms import ASYMMETRIC_ALGORITHMS, check_algorithms, key_type_of
from ._info import AuthError, DPoPError
from .tokens import decode_segments, verify_signature

__all__ = ["DPoPError", "DPoPVerifier", "NonceSource", "normalize_url", "token_hash"]

_PRIVATE: Final = frozenset({"d", "p", "q", "dp", "dq", "qi", "k"})
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def token_hash(token: str) -> str:
    """``ath``: base64url (unpadded) of the SHA-256 of the access token's ASCII."""
    digest = hashlib.sha256(token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def normalize_url(url: str) -> str:
    """*url* without query and fragment, scheme and host lower-case, the default port dropped."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        return ""
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", "", ""))


class NonceSource:
    """Server-issued DPoP nonces: one current value, replaced every *rotate_every* seconds; the one
    before it is still accepted for *grace* seconds after the change."""

    def __init__(
        self, rotate_every: float = 300.0, grace: float = 60.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rotate_every = rotate_every
        self.grace = grace
        self.clock = clock
        self._current = secrets.token_urlsafe(24)
        self._previous: str | None = None
        self._since = clock()

    def current(self) -> str:
        now = self.clock()
        if now - self._since >= self.rotate_every:
            # Several periods may have passed: then even the previous value is too old.
            self._previous = self._current if now - self._since < self.rotate_every + self.grace else None
            self._current = secrets.token_urlsafe(24)
            self._since = now
        return self._current

    def accepts(self, nonce: str) -> bool:
        current = self.current()
        if hmac.compare_digest(nonce, current):
            return True
        fresh = self.clock() - self._since < self.grace
        return self._previous is not None and fresh and hmac.compare_digest(nonce, self._previous)


class DPoPVerifier:
    """Checks DPoP proofs (see the module docstring)."""

    def __init__(
        self,
        *,
        algorithms: Iterable[str] = ASYMMETRIC_ALGORITHMS,
        window: float = 60.0,
        max_proofs: int = 100_000,
        nonces: NonceSource | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.algorithms = check_algorithms(algorithms)
        self.window = window
        self.max_proofs = max_proofs
        self.nonces = nonces
        self.clock = clock
        #: jti -> when it may be forgotten, oldest first.
        self._seen: collections.OrderedDict[str, float] = collections.OrderedDict()

    def check(self, proof: str, method: str, urls: Iterable[str], token: str, jkt: str | None) -> None:
        """Raise :class:`DPoPError` unless *proof* binds this request (*method*, one of *urls*) to
        *token*, whose ``cnf.jkt`` is *jkt*."""
        try:
            header, claims, _ = decode_segments(proof)
        except AuthError:
            raise DPoPError("the DPoP proof is not a JWT") from None
        if header.get("typ") != "dpop+jwt":
            raise DPoPError("the DPoP proof's typ is not dpop+jwt")
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise DPoPError(f"the DPoP proof's algorithm {alg!r} is not accepted")
        public = header.get("jwk")
        if not isinstance(public, dict) or _PRIVATE & public.keys():
            raise DPoPError("the DPoP proof must carry a public jwk (and no private key)")
        try:
            key = jwk.import_key(public)
        except (JoseError, ValueError, TypeError):
            raise DPoPError("the DPoP proof's jwk is not a usable key") from None
        if key.key_type != key_type_of(alg) or not verify_signature(proof, key, alg):
            raise DPoPError("the DPoP proof's signature does not verify")
        if claims.get("htm") != method:
            raise DPoPError("the DPoP proof is for another HTTP method (htm)")
        htu = claims.get("htu")
        if not isinstance(htu, str) or normalize_url(htu) not in {normalize_url(u) for u in urls}:
            raise DPoPError("the DPoP proof is for another URL (htu)")
        iat = claims.get("iat")
        now = self.clock()
        if isinstance(iat, bool) or not isinstance(iat, (int, float)) or abs(now - iat) > self.window:
            raise DPoPError("the DPoP proof is too old or from the future (iat)")
        ath = claims.get("ath")
        if not isinstance(ath, str) or not hmac.compare_digest(ath, token_hash(token)):
            raise DPoPError("the DPoP proof is for another access token (ath)")
        if jkt is None:
            raise DPoPError("the access token is not bound to a DPoP key (cnf.jkt)", error="invalid_token")
        if not hmac.compare_digest(jkt, key.thumbprint()):
            raise DPoPError(
                "the DPoP proof's key is not the one the token is bound to", error="invalid_token"
            )
        if self.nonces is not None:
            nonce = claims.get("nonce")
            if not isinstance(nonce, str) or not self.nonces.accepts(nonce):
                raise DPoPError(
                    "a fresh server nonce is required", error="use_dpop_nonce", nonce=self.nonces.current()
                )
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti or len(jti) > 256:
            raise DPoPError("the DPoP proof has no usable jti")
        self._remember(jti, now)

    def _remember(self, jti: str, now: float) -> None:
        seen = self._seen
        while seen and next(iter(seen.values())) < now:
            seen.popitem(last=False)
        if jti in seen:
            raise DPoPError("the DPoP proof was used before (jti)")
        if len(seen) >= self.max_proofs:
            # Full of proofs still young enough to replay: refusing new ones is safer than forgetting.
            raise DPoPError("too many DPoP proofs in the replay window; retry shortly")
        seen[jti] = now + 2 * self.window  # an iat up to `window` ahead stays valid that long

    def hints(self) -> dict[str, Any]:
        return {"algs": " ".join(self.algorithms)}
