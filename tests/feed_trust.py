"""Windows in which the change feed vouched for memory throughout, for the tests that
count a kept read's database use (none while nothing changed).

The PostgreSQL feed trusts nothing for a moment whenever its heartbeat is held up (its
thread waits for the CPU on a loaded machine, ``adapters.sql.changes``): reads then go to
the database, as they must, and a window that met such a moment says nothing about what a
kept read costs. ``vouched`` runs the window again until one passes with every stamp
answered, so the count is asserted on such a window only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import pytest

from adapters.sql import Database

T = TypeVar("T")

TRIES = 20


@contextmanager
def _refusals(database: Database) -> Iterator[list[object]]:
    """The stamps the feed refused (answered None) during the block."""
    feed = database.changes
    refused: list[object] = []
    stamp = feed.stamp

    def noting(*args: Any, **kwargs: Any) -> object:
        found = stamp(*args, **kwargs)
        if found is None:
            refused.append(args)
        return found

    feed.stamp = noting  # type: ignore[method-assign]
    try:
        yield refused
    finally:
        del feed.stamp


def vouched(database: Database, window: Callable[[], T]) -> T:
    """``window()``'s result from a run during which the feed answered every stamp."""
    for _ in range(TRIES):
        with _refusals(database) as refused:
            result = window()
        if not refused:
            return result
    pytest.fail(f"the change feed trusted nothing at some moment of each of {TRIES} windows")
