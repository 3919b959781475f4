"""Signed things the client sends: client authentication at the token endpoint (``none``,
``client_secret_basic``, ``client_secret_post``, ``private_key_jwt``) and DPoP proofs (RFC 9449).

joserfc (and the cryptography beneath it) loads only here, and only when a JWT is signed: a client that
uses secrets and bearer tokens never imports it.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote_plus, urlsplit, urlunsplit

__all__ = ["ClientIdentity", "DPoPKey", "apply_client_auth", "choose_auth_method", "load_private_key"]

ASSERTION_TYPE: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
_KEY_TYPES: Final = {"ES": "EC", "RS": "RSA", "PS": "RSA", "Ed": "OKP"}


@dataclass(frozen=True, slots=True)
class ClientIdentity:
    """Who the client is at one authorization server: its id, how it authenticates, and with what."""

    client_id: str
    client_secret: str | None = None
    auth_method: str | None = None  # as registered; ``None``: chosen from the server's metadata
    private_key: str | None = None  # PEM, for private_key_jwt
    signing_alg: str = "ES256"

    def to_json(self) -> dict[str, Any]:
        return {
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "auth_method": self.auth_method,
        }


def choose_auth_method(identity: ClientIdentity, supported: list[str] | None) -> str:
    """The token endpoint authentication method: the registered one, else what the credentials allow
    and the server lists (RFC 8414's default when it lists nothing is ``client_secret_basic``)."""
    if identity.auth_method:
        return identity.auth_method
    if identity.private_key:
        return "private_key_jwt"
    if identity.client_secret is None:
        return "none"
    offered = supported or ["client_secret_basic"]
    for method in ("client_secret_basic", "client_secret_post"):
        if method in offered:
            return method
    return "client_secret_basic"


def load_private_key(pem: str, alg: str) -> Any:
    """A joserfc key from a PEM private key, typed by the algorithm family (ES*, RS*, PS*, EdDSA)."""
    from joserfc.jwk import JWKRegistry

    key_type = _KEY_TYPES.get(alg[:2])
    if key_type is None:
        raise ValueError(f"unsupported signing algorithm {alg!r}")
    return JWKRegistry.import_key(pem, key_type)


def client_assertion(identity: ClientIdentity, audience: str) -> str:
    """RFC 7523 section 2.2: a short-lived JWT signed with the client's key, issued by and about the
    client, for the authorization server (its issuer identifier)."""
    from joserfc import jwt

    assert identity.private_key is not None
    now = int(time.time())
    claims = {
        "iss": identity.client_id,
        "sub": identity.client_id,
        "aud": audience,
        "iat": now,
        "exp": now + 300,
        "jti": secrets.token_urlsafe(16),
    }
    key = load_private_key(identity.private_key, identity.signing_alg)
    return jwt.encode({"alg": identity.signing_alg, "typ": "JWT"}, claims, key)


def apply_client_auth(
    method: str, identity: ClientIdentity, data: dict[str, str], headers: dict[str, str], audience: str
) -> None:
    """Authenticate a token endpoint request (*data* is its form, *headers* its headers)."""
    if method == "client_secret_basic" and identity.client_secret is not None:
        # RFC 6749 section 2.3.1: both parts form-encoded before the base64.
        pair = f"{quote_plus(identity.client_id)}:{quote_plus(identity.client_secret)}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    elif method == "client_secret_post" and identity.client_secret is not None:
        data["client_id"] = identity.client_id
        data["client_secret"] = identity.client_secret
    elif method == "private_key_jwt" and identity.private_key:
        data["client_id"] = identity.client_id
        data["client_assertion_type"] = ASSERTION_TYPE
        data["client_assertion"] = client_assertion(identity, audience)
    else:  # "none": a public client says who it is, and nothing more
        data["client_id"] = identity.client_id


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _htu(url: str) -> str:
    """RFC 9449 section 4.2: the request URI "without query and fragment parts"."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


class DPoPKey:
    """A proof-of-possession key pair (ES256, made fresh per :class:`OAuth` unless given) and the
    proofs it signs: one per request, never reused (a fresh ``jti``), bound to the method and URL,
    to the access token (``ath``) when one is presented, and to the server's nonce when it set one."""

    alg: Final = "ES256"

    def __init__(self, pem: str | None = None) -> None:
        from joserfc.jwk import ECKey

        self._key = ECKey.import_key(pem) if pem else ECKey.generate_key("P-256")
        self.public_jwk: dict[str, Any] = dict(self._key.as_dict(private=False))
        #: RFC 7638 thumbprint: what a DPoP-bound token's ``cnf.jkt`` names.
        self.thumbprint: str = self._key.thumbprint()

    def private_pem(self) -> str:
        """The private key, to keep beside the tokens bound to it (they are worthless without it)."""
        pem: bytes = self._key.as_pem(private=True)
        return pem.decode()

    def proof(
        self, method: str, url: str, *, access_token: str | None = None, nonce: str | None = None
    ) -> str:
        from joserfc import jwt

        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": _htu(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = _b64url(hashlib.sha256(access_token.encode("ascii")).digest())
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "alg": self.alg, "jwk": self.public_jwk}
        return jwt.encode(header, claims, self._key)
