"""The one error the authorizing client raises."""

from __future__ import annotations

import httpx

__all__ = ["OAuthError"]


class OAuthError(httpx.HTTPError):
    """Authorization failed: discovery, registration, the user's consent or a token request.

    An :class:`httpx.HTTPError`, so the HTTP transports report it as the failure of the request that
    needed the token (the caller sees it at once instead of waiting out a timeout). ``error`` is the
    OAuth error code when the server gave one (``invalid_grant``...), or mcpkit's own name for a
    check that failed (``issuer_mismatch``, ``resource_mismatch``, ``iss_mismatch``...).
    """

    def __init__(self, message: str, *, error: str | None = None) -> None:
        super().__init__(message)
        self.error = error
