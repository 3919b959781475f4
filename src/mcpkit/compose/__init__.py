"""Servers made of other servers: mounted servers, proxies, and servers built from OpenAPI documents."""
