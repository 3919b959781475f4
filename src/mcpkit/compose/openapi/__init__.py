"""Servers built from an OpenAPI document or a FastAPI app: each operation becomes a tool (or, by
route map, a resource or a resource template) that performs the real HTTP request when called.

::

    from mcpkit.compose.openapi import RouteMap, from_openapi

    server = from_openapi("petstore.yaml", base_url="http://127.0.0.1:8000",
                          route_maps=[RouteMap(methods={"GET"}, pattern=r"\\{", kind="template")])
    server.run()

The parts, each with one job: :mod:`._load` reads the document and resolves its ``$ref``\\ s,
:mod:`.routes` decides what each operation becomes, :mod:`._operations` turns an operation into a
tool definition, :mod:`._request` performs a call, and :mod:`._build` puts them on a server.
``docs/openapi.md`` is the guide.
"""

from ._build import DEFAULT_MAX_RESPONSE_BYTES, from_fastapi, from_openapi
from ._operations import fallback_name
from .routes import Kind, RouteMap

__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "Kind", "RouteMap", "fallback_name", "from_fastapi", "from_openapi"]
