"""An MCP server as an OAuth 2.1 resource server: configuration, verified identities, verifiers.

Light to import: the verifiers that need joserfc (JWTs, DPoP) or httpx (keys, introspection) live
in submodules that :class:`ResourceServerAuth` imports only when a server starts using them.
See ``docs/authorization.md``.
"""

from typing import TYPE_CHECKING, Any

from ._info import (
    AuthError,
    AuthInfo,
    AuthUnavailable,
    DPoPError,
    InsufficientScope,
    InvalidToken,
    TokenVerifier,
    current_auth,
    current_headers,
    scopes_of,
)

if TYPE_CHECKING:
    from .config import DPoPPolicy, ResourceServerAuth


def __getattr__(name: str) -> Any:
    # The configuration classes load on first use: ``import mcpkit`` brings this package (for
    # ``ctx.auth``'s AuthInfo), and a server without auth never needs them.
    if name in ("DPoPPolicy", "ResourceServerAuth"):
        from . import config

        value = getattr(config, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mcpkit.auth' has no attribute {name!r}")


__all__ = [
    "AuthError",
    "AuthInfo",
    "AuthUnavailable",
    "DPoPError",
    "DPoPPolicy",
    "InsufficientScope",
    "InvalidToken",
    "ResourceServerAuth",
    "TokenVerifier",
    "current_auth",
    "current_headers",
    "scopes_of",
]
