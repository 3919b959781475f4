"""How a server is protected: one configuration object, turned into verifiers when first served.

Importing this module costs nothing: joserfc and httpx are imported by :func:`build_verifier` and
:func:`build_dpop`, when a server starts using them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._algorithms import ASYMMETRIC_ALGORITHMS, check_algorithms

if TYPE_CHECKING:
    from ._info import TokenVerifier
    from .dpop import DPoPVerifier

__all__ = ["DPoPPolicy", "ResourceServerAuth", "build_dpop", "build_verifier"]


@dataclass(frozen=True)
class DPoPPolicy:
    """Accepting DPoP-bound tokens (RFC 9449).

    Args:
        required: refuse bearer tokens altogether (``dpop_bound_access_tokens_required``).
        nonce: require a server-issued nonce in every proof (``use_dpop_nonce`` otherwise).
        algorithms: accepted proof algorithms.
        window: seconds a proof's ``iat`` may differ from now; proofs are remembered (``jti``) that long.
        nonce_rotate_every: seconds between nonces; the previous one is accepted for *nonce_grace* more.
        max_proofs: proofs remembered against replay at once (beyond: new proofs refused until room).
    """

    required: bool = False
    nonce: bool = False
    algorithms: Sequence[str] = ("ES256", "ES384", "EdDSA", "RS256", "PS256")
    window: float = 60.0
    nonce_rotate_every: float = 300.0
    nonce_grace: float = 60.0
    max_proofs: int = 100_000


@dataclass(frozen=True)
class ResourceServerAuth:
    """An MCP server as an OAuth 2.1 resource server: pass it as ``http_app(auth=...)`` /
    ``run("http", auth=...)``.

    Args:
        issuer: the authorization server whose tokens are accepted (``iss``).
        audience: this server's canonical URI (``https://mcp.example.com/mcp``): tokens must name it
            in ``aud`` (RFC 8707), and it is the ``resource`` of the Protected Resource Metadata.
        jwks_uri: where the issuer's keys are; ``None`` reads it from the issuer's metadata.
        required_scopes: scopes every request needs (403 ``insufficient_scope`` otherwise).
        scopes_supported: listed in the metadata (default: *required_scopes*, if any).
        authorization_servers: listed in the metadata (default: ``[issuer]``).
        algorithms: accepted token signature algorithms (asymmetric only).
        leeway: seconds of clock skew allowed on ``exp``, ``nbf`` and ``iat``.
        jwks_cooldown: at most one refetch of the keys per this many seconds for an unknown ``kid``.
        jwks_ttl: seconds after which the keys are refetched anyway.
        introspection_endpoint: check opaque tokens there (RFC 7662) instead of as JWTs, as
            *introspection_client_id* / *introspection_client_secret* (HTTP Basic).
        verifier: bring your own :class:`~mcpkit.auth.TokenVerifier` (replaces the two above).
        dpop: accept DPoP-bound tokens (``True`` or a :class:`DPoPPolicy`); ``None``: bearer tokens only.
        resource_name: the human-readable ``resource_name`` of the metadata.
        scope_implies: scope hierarchies (``{"notes:admin": ["notes:read", "notes:write"]}``): a
            token granting a key is taken to grant what it implies (transitively), for the scope
            checks and in ``ctx.auth.scopes``.
    """

    issuer: str
    audience: str
    jwks_uri: str | None = None
    required_scopes: Sequence[str] = ()
    scopes_supported: Sequence[str] | None = None
    authorization_servers: Sequence[str] | None = None
    algorithms: Sequence[str] = ASYMMETRIC_ALGORITHMS
    leeway: float = 60.0
    jwks_cooldown: float = 30.0
    jwks_ttl: float = 3600.0
    introspection_endpoint: str | None = None
    introspection_client_id: str | None = None
    introspection_client_secret: str | None = field(default=None, repr=False)
    verifier: TokenVerifier | None = None
    dpop: DPoPPolicy | bool | None = None
    resource_name: str | None = None
    scope_implies: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_algorithms(self.algorithms)
        if isinstance(self.dpop, DPoPPolicy):
            check_algorithms(self.dpop.algorithms)
        for name in ("issuer", "audience"):
            if not str(getattr(self, name)).startswith(("https://", "http://")):
                raise ValueError(f"{name} must be an absolute http(s) URL, got {getattr(self, name)!r}")
        if "#" in self.audience:
            raise ValueError("audience (the canonical URI) must not have a fragment")

    def expand_scopes(self, granted: Iterable[str]) -> frozenset[str]:
        """*granted* and every scope it implies (see *scope_implies*)."""
        found = set(granted)
        todo = list(found)
        while todo:
            for implied in self.scope_implies.get(todo.pop(), ()):
                if implied not in found:
                    found.add(implied)
                    todo.append(implied)
        return frozenset(found)

    @property
    def dpop_settings(self) -> DPoPPolicy | None:
        if self.dpop is True:
            return DPoPPolicy()
        return self.dpop or None

    def metadata(self) -> dict[str, Any]:
        """The Protected Resource Metadata document (RFC 9728 §2)."""
        document: dict[str, Any] = {
            "resource": self.audience,
            "authorization_servers": list(self.authorization_servers or [self.issuer]),
            "bearer_methods_supported": ["header"],  # never the query string, never a form body
        }
        scopes = self.scopes_supported if self.scopes_supported is not None else self.required_scopes
        if scopes:
            document["scopes_supported"] = list(scopes)
        settings = self.dpop_settings
        if settings is not None:
            document["dpop_signing_alg_values_supported"] = list(settings.algorithms)
            document["dpop_bound_access_tokens_required"] = settings.required
        if self.resource_name is not None:
            document["resource_name"] = self.resource_name
        return document


def build_verifier(config: ResourceServerAuth) -> TokenVerifier:
    """The token verifier these settings describe (imports joserfc or httpx now)."""
    if config.verifier is not None:
        return config.verifier
    if config.introspection_endpoint is not None:
        from .introspection import IntrospectionVerifier

        return IntrospectionVerifier(
            config.introspection_endpoint,
            config.audience,
            client_id=config.introspection_client_id,
            client_secret=config.introspection_client_secret,
            issuer=config.issuer,
        )
    from .jwks import RemoteKeys
    from .tokens import JWTVerifier

    keys = RemoteKeys(config.issuer, config.jwks_uri, cooldown=config.jwks_cooldown, ttl=config.jwks_ttl)
    return JWTVerifier(
        config.issuer, config.audience, keys, algorithms=config.algorithms, leeway=config.leeway
    )


def build_dpop(config: ResourceServerAuth) -> DPoPVerifier | None:
    settings = config.dpop_settings
    if settings is None:
        return None
    from .dpop import DPoPVerifier, NonceSource

    nonces = NonceSource(settings.nonce_rotate_every, settings.nonce_grace) if settings.nonce else None
    return DPoPVerifier(
        algorithms=settings.algorithms,
        window=settings.window,
        max_proofs=settings.max_proofs,
        nonces=nonces,
    )
