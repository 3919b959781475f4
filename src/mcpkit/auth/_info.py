"""Who is calling: the verified identity a handler sees, the refusals a verifier raises, and the
context variable that carries the identity from the HTTP layer to the handler.

The HTTP transport verifies a request's token before anything else reads it, then sets
:data:`current_auth` in the task that delivers the request. Every handler task is started from that
task (a 2026-07-28 request runs in it; a handshake-era session's requests are spawned by it, and
asyncio copies the context into each new task), so :class:`~mcpkit.Context` finds the identity of
*this* POST without the session, the kernel or the peer having to carry it: the token may change
between two POSTs of one session, and each request sees its own.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable, Mapping
from dataclasses import FrozenInstanceError, dataclass, field
from types import MappingProxyType
from typing import Any, Final, Protocol, runtime_checkable

__all__ = [
    "AuthError",
    "AuthInfo",
    "AuthUnavailable",
    "DPoPError",
    "InsufficientScope",
    "InvalidToken",
    "TokenVerifier",
    "current_auth",
    "current_headers",
    "scopes_of",
]

_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


# A dataclass whose methods are written out here rather than generated: a server imports this
# module at start-up even when it never authenticates (stdio), and generating them (frozen=True
# compiles seven methods from source) cost 1.5 % of a stdio server's start (callgrind). It is still a
# dataclass (fields(), replace() and asdict() work) and behaves as @dataclass(frozen=True, slots=True)
# would: tests/auth/test_units.py holds it to that.
@dataclass(init=False, repr=False, eq=False, slots=True)
class AuthInfo:
    """A verified access token, as a handler sees it (``ctx.auth``).

    The token itself is deliberately not kept: a server must not pass the caller's token on to
    another service (the MCP spec forbids token passthrough), and what is not here cannot be forwarded.

    Attributes:
        subject: ``sub``: whom the token speaks for (``None`` if the token names nobody).
        client_id: the OAuth client that obtained it (``client_id``, else ``azp``).
        scopes: what it grants (``scope``, space-separated, or ``scp``).
        claims: every claim of the token (or fields of the introspection answer), read-only.
        issuer: ``iss``.
        expires_at: ``exp`` (seconds since the epoch), if any.
        jkt: the RFC 7638 thumbprint of the key the token is bound to (``cnf.jkt``; DPoP).
    """

    subject: str | None
    client_id: str | None = None
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, repr=False)
    issuer: str | None = None
    expires_at: float | None = None
    jkt: str | None = None

    def __init__(
        self,
        subject: str | None,
        client_id: str | None = None,
        scopes: frozenset[str] = frozenset(),
        claims: Mapping[str, Any] = _EMPTY,
        issuer: str | None = None,
        expires_at: float | None = None,
        jkt: str | None = None,
    ) -> None:
        initialize = object.__setattr__  # frozen: as a frozen dataclass's own __init__ does
        initialize(self, "subject", subject)
        initialize(self, "client_id", client_id)
        initialize(self, "scopes", scopes)
        initialize(self, "claims", claims)
        initialize(self, "issuer", issuer)
        initialize(self, "expires_at", expires_at)
        initialize(self, "jkt", jkt)

    def _values(self) -> tuple[Any, ...]:
        return (
            self.subject,
            self.client_id,
            self.scopes,
            self.claims,
            self.issuer,
            self.expires_at,
            self.jkt,
        )

    def __repr__(self) -> str:  # claims left out (repr=False): they may be many, and personal
        return (
            f"{type(self).__qualname__}(subject={self.subject!r}, client_id={self.client_id!r}, "
            f"scopes={self.scopes!r}, issuer={self.issuer!r}, expires_at={self.expires_at!r}, jkt={self.jkt!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    # As frozen=True writes them (object.__setattr__, not super(): slots=True makes a new class).
    def __setattr__(self, name: str, value: Any) -> None:
        if type(self) is AuthInfo or name in _FIELDS:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if type(self) is AuthInfo or name in _FIELDS:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        object.__delattr__(self, name)

    # As frozen=True and slots=True add them, so that pickle and copy can set the fields.
    def __getstate__(self) -> list[Any]:
        return list(self._values())

    def __setstate__(self, state: list[Any]) -> None:
        for name, value in zip(_FIELDS, state, strict=True):
            object.__setattr__(self, name, value)

    def has_scopes(self, needed: Iterable[str]) -> bool:
        return all(scope in self.scopes for scope in needed)


_FIELDS: Final = AuthInfo.__slots__

#: The identity of the request being served (``None``: unauthenticated, e.g. stdio or an open server).
current_auth: contextvars.ContextVar[AuthInfo | None] = contextvars.ContextVar("mcpkit_auth", default=None)
#: The HTTP request's headers (lower-case names) in the task that delivers it, as ``current_auth``;
#: ``None`` outside HTTP. For what a handler explicitly forwards (an OpenAPI server's
#: ``forward_headers``), never sent on by mcpkit itself.
current_headers: contextvars.ContextVar[Mapping[str, str] | None] = contextvars.ContextVar(
    "mcpkit_headers", default=None
)


class AuthError(Exception):
    """A refusal answered with *status* and an RFC 6750 / RFC 9449 ``error`` code.

    *description* goes to the client in ``error_description``: say what is wrong, never why a
    secret did not match."""

    status = 401
    error = "invalid_token"

    def __init__(self, description: str, *, error: str | None = None) -> None:
        super().__init__(description)
        self.description = description
        if error is not None:
            self.error = error


class InvalidToken(AuthError):
    """The token is missing, malformed, expired, not for this server, or not signed by its issuer: 401."""


class InsufficientScope(AuthError):
    """The token is good but does not grant *scopes* (all of which the operation needs): 403."""

    status = 403
    error = "insufficient_scope"

    def __init__(self, scopes: Iterable[str], description: str | None = None) -> None:
        self.scopes = tuple(scopes)
        super().__init__(description or f"this operation needs the scopes: {' '.join(self.scopes)}")


class DPoPError(AuthError):
    """A DPoP proof was refused (RFC 9449): 401 with a ``DPoP`` challenge, and a fresh
    ``DPoP-Nonce`` header when *nonce* is set (``use_dpop_nonce``)."""

    error = "invalid_dpop_proof"

    def __init__(self, description: str, *, error: str | None = None, nonce: str | None = None) -> None:
        super().__init__(description, error=error)
        self.nonce = nonce


class AuthUnavailable(Exception):
    """The token cannot be checked right now (the issuer's keys or introspection endpoint are
    unreachable): the request gets 503 with ``Retry-After``, not a 401 that would send the client
    to re-authorize for nothing. *retry_after* is in seconds."""

    def __init__(self, description: str, retry_after: float = 5.0) -> None:
        super().__init__(description)
        self.retry_after = retry_after


@runtime_checkable
class TokenVerifier(Protocol):
    """Anything that turns an access token into an :class:`AuthInfo`.

    ``verify`` raises :class:`InvalidToken` for a token it refuses and :class:`AuthUnavailable`
    when it cannot tell. It checks everything about the token itself (signature or introspection,
    issuer, audience, lifetime); the HTTP layer then checks the scopes the server requires and,
    for DPoP, that the proof's key is the one in ``jkt``."""

    async def verify(self, token: str) -> AuthInfo: ...


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes a token grants: ``scope`` (RFC 9068 / RFC 7662: space-separated) or ``scp``
    (a list, or a space-separated string, as some issuers write it)."""
    for name in ("scope", "scp"):
        value = claims.get(name)
        if isinstance(value, str):
            return frozenset(value.split())
        if isinstance(value, list):
            return frozenset(item for item in value if isinstance(item, str))
    return frozenset()
