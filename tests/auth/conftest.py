"""The test issuer every module here signs its tokens with: one per module (a module-scoped fixture
found by every test module in this folder)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .issuer import TestIssuer


@pytest.fixture(scope="module")
def issuer() -> Iterator[TestIssuer]:
    with TestIssuer() as running:
        yield running
