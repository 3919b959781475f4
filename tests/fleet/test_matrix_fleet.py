"""The feature matrix (``tests/e2e/test_matrix.py``) through nginx and three nodes on one Redis.

The same tests, the same server (``tests/e2e/matrix_server.py``), every HTTP and HTTP+SSE cell: each
request of a test may land on any node. Its stdio cells are left out (a stdio server has no fleet),
and so are three tests that read the test server's own memory, which a fleet does not share:
``grow`` adds a tool to the one node it lands on (so tool lists and their cursors differ between
nodes) and ``runs`` counts the runs of ``plan`` per node. A server run as a fleet keeps such state
in a shared store of its own; the fan-out of list changes is tested in ``test_fleet`` and
``test_sessions``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..e2e import test_matrix as matrix
from ..e2e.test_matrix import *  # noqa: F403 - the tests, collected here against the fleet
from ..e2e.test_matrix import connect  # noqa: F401 - the fixture the tests take
from . import conftest as fleet_fixtures

#: Tests that read the matrix server's per-process memory (see the module docstring).
PER_PROCESS = ("test_list_changed", "test_list_changed_caused_by_another_client", "test_multi_round_trip")


@pytest.fixture(scope="module")
def http_url(redis_url: str) -> Iterator[str]:
    """The matrix server as three nodes behind nginx (replaces the one process of test_matrix)."""
    with fleet_fixtures.fleet_of(redis_url, server=matrix.SERVER) as fleet:
        yield fleet.url
