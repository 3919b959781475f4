"""The conformance suite's ``auth/*`` client scenarios: mcpkit's :class:`~mcpkit.client.auth.OAuth`
against the suite's authorization and MCP servers.

The suite hands each scenario's credentials over in ``MCP_CONFORMANCE_CONTEXT`` (pre-registered
client ids and secrets, a private key, an ID token, workload JWTs). Its authorization servers approve
at once, so the browser step is a plain GET of the authorization URL whose redirect is read, not
followed; the client id metadata document URL is the one the suite's authorization server expects.
"""

from __future__ import annotations

from typing import Any

import httpx

from mcpkit import Client
from mcpkit.client.auth import ClientCredentials, IdentityAssertion, JWTBearer, OAuth

#: The URL the suite's authorization servers take as this client's metadata document.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


async def approve(authorization_url: str) -> str:
    """What a browser would do with an authorization server that asks nothing: land on the redirect."""
    async with httpx.AsyncClient() as http:
        reply = await http.get(authorization_url, follow_redirects=False)
    location: str | None = reply.headers.get("location")
    if reply.status_code not in (302, 303, 307) or not location:
        raise RuntimeError(f"the authorization endpoint answered {reply.status_code}, not a redirect")
    return location


def oauth_for(scenario: str, context: dict[str, Any]) -> OAuth:
    name = scenario.removeprefix("auth/")
    common: dict[str, Any] = {"interactive": approve, "redirect_uri": "http://127.0.0.1:3000/callback"}
    if name == "client-credentials-basic":
        return OAuth(
            client_id=context["client_id"], client_secret=context["client_secret"], grant=ClientCredentials()
        )
    if name == "client-credentials-jwt":
        return OAuth(
            client_id=context["client_id"],
            private_key=context["private_key_pem"],
            signing_alg=context.get("signing_algorithm", "ES256"),
            grant=ClientCredentials(),
        )
    if name == "enterprise-managed-authorization":
        grant = IdentityAssertion(
            id_token=context["idp_id_token"],
            idp_token_endpoint=context["idp_token_endpoint"],
            idp_client_id=context.get("idp_client_id"),
        )
        return OAuth(client_id=context["client_id"], client_secret=context["client_secret"], grant=grant)
    if name == "wif-jwt-bearer":
        return OAuth(client_id=context.get("client_id"), grant=JWTBearer(context["valid_jwt"]))
    if "client_id" in context:  # pre-registration: the credentials, bound to their issuer
        return OAuth(
            client_id=context["client_id"],
            client_secret=context.get("client_secret"),
            issuer=context.get("issuer"),
            **common,
        )
    return OAuth(client_metadata_url=CLIENT_METADATA_URL, **common)


async def auth_scenario(url: str, scenario: str, context: dict[str, Any], version: str | None) -> None:
    """Connect with authorization, list the tools and call each: two requests at least, so that a
    scenario can change its mind between them (a new authorization server, a scope step-up)."""
    async with Client(url, protocol_version=version, auth=oauth_for(scenario, context)) as client:
        for tool in await client.list_tools():
            await client.call_tool(tool.name, {})
