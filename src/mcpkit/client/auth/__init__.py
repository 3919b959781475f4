"""Connecting to an MCP server that requires authorization (OAuth 2.1 as the MCP spec profiles it).

::

    async with Client("https://mcp.example.com/mcp", auth=OAuth()) as client:
        ...

:class:`OAuth` is an :class:`httpx.Auth`: the HTTP transports hand it to httpx and know nothing of
OAuth. Modules, one job each:

* :mod:`.oauth`: :class:`OAuth`, reacting to 401 and 403, one token change at a time;
* :mod:`.discovery`: the challenge, Protected Resource Metadata, authorization server metadata;
* :mod:`.flow`: PKCE, the authorization URL, checking the response (``state``, ``iss``), registration;
* :mod:`.identity`: which client id to use at an authorization server, in the spec's order;
* :mod:`.grants`: tokens, the token endpoint, machine grants (client credentials, JWT bearer,
  enterprise-managed ID-JAG exchange);
* :mod:`.credentials`: client authentication (secrets, ``private_key_jwt``) and DPoP proofs;
* :mod:`.redirect`: the loopback listener, the browser, a pasted redirect;
* :mod:`.store`: memory, file (0600) and keyring token stores.

Importing this package loads httpx, and joserfc only when a JWT is first signed.
"""

from .credentials import DPoPKey
from .errors import OAuthError
from .grants import ClientCredentials, IdentityAssertion, JWTBearer, Tokens
from .identity import client_metadata_document
from .oauth import OAuth
from .redirect import LoopbackRedirect, paste_redirect
from .store import FileTokenStore, KeyringTokenStore, MemoryTokenStore, TokenStore, default_store_path

__all__ = [
    "ClientCredentials",
    "DPoPKey",
    "FileTokenStore",
    "IdentityAssertion",
    "JWTBearer",
    "KeyringTokenStore",
    "LoopbackRedirect",
    "MemoryTokenStore",
    "OAuth",
    "OAuthError",
    "TokenStore",
    "Tokens",
    "client_metadata_document",
    "default_store_path",
    "paste_redirect",
]
