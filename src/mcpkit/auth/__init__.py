"""An MCP server as an OAuth 2.1 resource server: configuration, verified identities, verifiers.

Light to import: the verifiers that need joserfc (JWTs, DPoP) or httpx (keys, introspection) live
in submodules that :class:`ResourceServerAuth` imports only when a server starts using them.
See ``docs/authorization.md``.
"""

from ._info import (
    AuthError,
    AuthInfo,
    AuthUnavailable,
    DPoPError,
    InsufficientScope,
    InvalidToken,
    TokenVerifier,
    current_auth,
    scopes_of,
)
from .config import DPoPPolicy, ResourceServerAuth

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
    "scopes_of",
]
