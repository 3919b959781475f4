"""The signature algorithms tokens and DPoP proofs may use."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

__all__ = ["ASYMMETRIC_ALGORITHMS", "check_algorithms", "key_type_of"]

#: The signature algorithms a verifier may accept: public-key ones only (never ``none``, never HMAC,
#: which would let anyone holding the issuer's *public* key sign tokens).
ASYMMETRIC_ALGORITHMS: Final = (
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
)  # fmt: skip


def key_type_of(alg: str) -> str:
    """The JWK ``kty`` of an algorithm's key (so an RSA key never verifies an EC signature)."""
    return "OKP" if alg == "EdDSA" else {"R": "RSA", "P": "RSA", "E": "EC"}[alg[0]]


def check_algorithms(algorithms: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(algorithms)
    bad = [a for a in chosen if a not in ASYMMETRIC_ALGORITHMS]
    if bad or not chosen:
        raise ValueError(
            f"signature algorithms must be among {', '.join(ASYMMETRIC_ALGORITHMS)} (never 'none' nor HMAC);"
            f" got {', '.join(bad) or 'none at all'}"
        )
    return chosen
