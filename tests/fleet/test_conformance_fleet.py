"""The official conformance suite's server scenarios through nginx and three nodes on one Redis.

The same harness and server (``examples/everything.py``) as ``tests/conformance``, in every leg
(the harness's default wire, 2025-11-25, 2026-07-28): each request may land on any node.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conformance import test_conformance as conformance
from ..conftest import EXAMPLES, node_project
from . import conftest as fleet_fixtures


@pytest.fixture(scope="module")
def everything_fleet(redis_url: str) -> Iterator[str]:
    with fleet_fixtures.fleet_of(redis_url, server=EXAMPLES / "everything.py") as fleet:
        yield fleet.url


@pytest.fixture(scope="module")
def harness() -> list[str]:
    """``node conformance.js``, installed as ``tests/conformance`` installs it."""
    return list(node_project(conformance.HARNESS, "@modelcontextprotocol/conformance/dist/index.js"))


@pytest.mark.parametrize("wire", ["default", "2025-11-25", "2026-07-28"])
def test_server_suite_through_the_fleet(
    harness: list[str], everything_fleet: str, wire: str, tmp_path: Path
) -> None:
    conformance.test_server_suite(harness, everything_fleet, wire, tmp_path)
