"""Access tokens that are JWTs (RFC 9068), checked locally against the issuer's keys.

The checks, in order, each a 401 ``invalid_token`` when it fails:

* the token is a compact JWS whose header and claims are JSON objects read strictly: no ``NaN``,
  ``Infinity`` or number too large for a double (``NaN`` compares false with every time, so an
  ``exp: NaN`` would never expire), and no member named twice at any depth (two ``aud`` members
  would mean whatever the reader keeps);
* the header names an allowed ``alg`` (never ``none``, never an HMAC:
  the allowlist refuses them at construction) and is not a DPoP proof (``typ: dpop+jwt``);
* a key of the issuer's set with the header's ``kid`` and the algorithm's key type verifies it;
* ``iss`` is the issuer; ``aud`` (a string or a list) contains this server's canonical URI
  (RFC 8707: a token issued for another resource is refused even if the issuer is the same);
* ``exp`` is required and not past, ``nbf`` not in the future, ``iat`` not in the future, each with
  *leeway* seconds for clocks that disagree.
"""

from __future__ import annotations

import base64
import json
import math
import re
import time
from collections.abc import Callable, Iterable
from types import MappingProxyType
from typing import Any

from joserfc import jws
from joserfc.errors import JoseError

from ._algorithms import ASYMMETRIC_ALGORITHMS, check_algorithms, key_type_of
from ._info import AuthInfo, InvalidToken, scopes_of
from .jwks import RemoteKeys

__all__ = ["JWTVerifier", "decode_segments", "info_from", "strict_object", "verify_signature"]


def decode_segments(token: str) -> tuple[dict[str, Any], dict[str, Any], jws.CompactSignature]:
    """Header and claims of a compact JWS, *not yet verified* (to find the key), each read strictly
    (see :func:`strict_object`)."""
    if token.count(".") != 2:
        raise InvalidToken("the token is not a JWT")
    try:
        compact = jws.extract_compact(token.encode("ascii"))
        header_text = base64.urlsafe_b64decode(_padded(compact.segments["header"]))
    except (JoseError, ValueError, UnicodeError):
        raise InvalidToken("the token is not a JWT") from None
    # joserfc read both with json.loads, which takes NaN and keeps the last of two members of one
    # name; the same bytes are read again here, and what the checks see is this reading.
    header = strict_object(header_text, "header")
    claims = strict_object(compact.payload, "claims")
    return header, claims, compact


class _Refused(ValueError):
    """What :func:`strict_object` refuses, said for the token's ``error_description``."""


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 reads as inf
        raise _Refused(f"holds a non-finite number ({_shown(text)})")
    return value


def _no_constant(text: str) -> Any:
    raise _Refused(f"holds a non-finite number ({text})")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    members: dict[str, Any] = {}
    for name, value in pairs:
        if name in members:
            raise _Refused(
                f"names {_shown(name)!r} twice" if _SHOWN.fullmatch(name) else "names a member twice"
            )
        members[name] = value
    return members


#: What a description may repeat of the token: it goes into a ``WWW-Authenticate`` header.
_SHOWN = re.compile(r"[A-Za-z0-9_.:+-]{1,40}")


def _shown(text: str) -> str:
    return text if _SHOWN.fullmatch(text) else "..."


def strict_object(data: bytes, part: str) -> dict[str, Any]:
    """*data* read as a JSON object, refusing what JSON (RFC 8259) has no number for (``NaN``,
    ``Infinity``, ``-Infinity``, and literals too large for a double, such as ``1e400``) and any
    object, at any depth, that names a member twice (RFC 7519 section 4: a JWT parser MUST reject
    duplicate claim names or use the last; taking the last lets two readers disagree)."""
    try:
        value = json.loads(data, object_pairs_hook=_unique, parse_constant=_no_constant, parse_float=_finite)
    except _Refused as refused:
        raise InvalidToken(f"the token's {part} {refused}") from None
    except (ValueError, UnicodeError, RecursionError):
        raise InvalidToken("the token is not a JWT") from None
    if not isinstance(value, dict):
        raise InvalidToken(f"the token's {part} {'is' if part == 'header' else 'are'} not a JSON object")
    return value


def _padded(segment: bytes) -> bytes:
    return segment + b"=" * (-len(segment) % 4)


def verify_signature(token: str, key: Any, alg: str) -> bool:
    try:
        jws.deserialize_compact(token, key, algorithms=[alg])
    except (JoseError, ValueError, TypeError):  # whatever the segments hold, the answer is "no"
        return False
    return True


class JWTVerifier:
    """A :class:`~mcpkit.auth.TokenVerifier` for JWT access tokens signed by *issuer*.

    Args:
        issuer: the ``iss`` tokens must carry (also where keys are discovered without *jwks_uri*).
        audience: this server's canonical URI; ``aud`` must contain it.
        keys: the issuer's key set (:class:`~mcpkit.auth.jwks.RemoteKeys`).
        algorithms: accepted ``alg`` values (asymmetric only).
        leeway: seconds of clock skew allowed on ``exp``, ``nbf`` and ``iat``.
    """

    def __init__(
        self,
        issuer: str,
        audience: str,
        keys: RemoteKeys,
        *,
        algorithms: Iterable[str] = ASYMMETRIC_ALGORITHMS,
        leeway: float = 60.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.issuer = issuer
        self.audience = audience
        self.keys = keys
        self.algorithms = check_algorithms(algorithms)
        self.leeway = leeway
        self.clock = clock

    async def verify(self, token: str) -> AuthInfo:
        header, claims, _ = decode_segments(token)
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise InvalidToken(f"the token's algorithm {alg!r} is not accepted")
        if str(header.get("typ", "")).lower() in ("dpop+jwt", "application/dpop+jwt"):
            raise InvalidToken("a DPoP proof is not an access token")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("the token's kid is not a string")
        candidates = await self.keys.candidates(kid, key_type_of(alg))
        if not candidates:
            raise InvalidToken("the token is signed with a key the issuer does not publish")
        if not any(verify_signature(token, key, alg) for key in candidates[:4]):
            raise InvalidToken("the token's signature does not verify")
        return self.check_claims(claims)

    def check_claims(self, claims: dict[str, Any]) -> AuthInfo:
        if claims.get("iss") != self.issuer:
            raise InvalidToken("the token was issued by another authorization server")
        audience = claims.get("aud")
        audiences = (
            [audience] if isinstance(audience, str) else audience if isinstance(audience, list) else []
        )
        if self.audience not in audiences:
            raise InvalidToken("the token was issued for another resource (aud)")
        now = self.clock()
        exp = _number(claims, "exp", required=True)
        if exp is not None and now > exp + self.leeway:
            raise InvalidToken("the token has expired")
        nbf = _number(claims, "nbf")
        if nbf is not None and now + self.leeway < nbf:
            raise InvalidToken("the token is not valid yet (nbf)")
        iat = _number(claims, "iat")
        if iat is not None and now + self.leeway < iat:
            raise InvalidToken("the token was issued in the future (iat)")
        return info_from(claims, exp)


def info_from(claims: dict[str, Any], exp: float | None) -> AuthInfo:
    subject = claims.get("sub")
    client_id = claims.get("client_id", claims.get("azp"))
    cnf = claims.get("cnf")
    jkt = cnf.get("jkt") if isinstance(cnf, dict) else None
    issuer = claims.get("iss")
    return AuthInfo(
        subject=subject if isinstance(subject, str) else None,
        client_id=client_id if isinstance(client_id, str) else None,
        scopes=scopes_of(claims),
        claims=MappingProxyType(claims),
        issuer=issuer if isinstance(issuer, str) else None,
        expires_at=exp,
        jkt=jkt if isinstance(jkt, str) else None,
    )


def _number(claims: dict[str, Any], name: str, *, required: bool = False) -> float | None:
    value = claims.get(name)
    if value is None:
        if required:
            raise InvalidToken(f"the token has no {name}")
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidToken(f"the token's {name} is not a number")
    try:
        return float(value)
    except OverflowError:  # an integer of hundreds of digits: no time is that far
        raise InvalidToken(f"the token's {name} is out of range") from None
