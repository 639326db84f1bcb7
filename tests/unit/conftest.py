"""Fixtures of the core's unit tests: the process's own time zone, changed for one test.

The core must never read the server's zone (every instant carries its offset and every
local day its company's zone); these run a test with the process clock elsewhere."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest


def _process_zone(tz: str) -> Iterator[None]:
    """The process's ``TZ`` set to ``tz`` for one test, then put back."""
    patch = pytest.MonkeyPatch()
    patch.setenv("TZ", tz)
    time.tzset()
    yield
    patch.undo()
    time.tzset()


@pytest.fixture
def server_far_east() -> Iterator[None]:
    """The process runs at UTC+13:07 (no real zone: an odd offset and another date)."""
    yield from _process_zone("FAR-13:07")


@pytest.fixture
def server_in_new_york() -> Iterator[None]:
    """The process's own clock follows New York, DST changes included."""
    yield from _process_zone("America/New_York")
