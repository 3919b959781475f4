"""Serves a server built from an OpenAPI document over stdio, for the tests of real stdio.

``python openapi_stdio.py SPEC BASE_URL [maps]``: with ``maps``, GETs with path parameters are
resource templates, ``listPets`` a resource and operations tagged ``internal`` are left out.
"""

from __future__ import annotations

import sys

from mcpkit.compose.openapi import RouteMap, from_openapi

MAPS = [
    RouteMap(tags={"internal"}, kind="exclude"),
    RouteMap(methods={"GET"}, pattern=r"^/pets/\{petId\}$", kind="template"),
    RouteMap(methods={"GET"}, pattern=r"^/pets$", kind="resource"),
]

if __name__ == "__main__":
    maps = MAPS if sys.argv[3:] == ["maps"] else None
    server = from_openapi(
        sys.argv[1], base_url=sys.argv[2], route_maps=maps, headers={"X-Api-Key": "configured"}
    )
    server.run()
