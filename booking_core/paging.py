"""Keyset pagination, as every list endpoint uses it.

Two orders exist. Without ``updated_since``: newest first by ``(created_at, id)``
descending. With it: ascending by change position, for incremental polling, over the
rows whose last change is at or after that instant. Storage decides what a change
position is, and guarantees that a row whose change commits after a page was read
lands after that page's last position, so a poller that passes the last position it saw
never misses a row that committed late: in memory and on SQLite ``(at, id)`` with
``at`` stamped at commit, one writer at a time; on PostgreSQL ``(seq, id)`` with ``seq``
the writing transaction's id, where a page shows only transactions below the oldest one
still running (docs/storage.md).

Repositories take a ``PageRequest`` and answer a ``Page`` whose ``next_after`` is the
position to continue from; the HTTP adapter turns positions into opaque cursors.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Generic, TypeVar

from attrs import frozen

T = TypeVar("T")

DEFAULT_LIMIT = 50
MAX_LIMIT = 200


@frozen
class Position:
    """Where a row stands in a list's order: its ordering instant and id, and ``seq``
    when storage orders changes by a number (PostgreSQL: the id of the transaction that
    wrote the row); the order is then ``(seq, id)``, and ``at`` is only informative.
    ``seq`` is ``None`` in the other orders and storages, and in positions made before
    storage had it (storage then continues after ``(at, id)``)."""

    at: datetime
    id: str
    seq: int | None = None


@frozen
class PageRequest:
    """Which page: at most ``limit`` rows after ``after`` in the chosen order."""

    limit: int = DEFAULT_LIMIT
    after: Position | None = None
    updated_since: datetime | None = None

    def __attrs_post_init__(self) -> None:
        if not 1 <= self.limit <= MAX_LIMIT:
            raise ValueError(f"limit must be within 1..{MAX_LIMIT}")

    @property
    def by_change(self) -> bool:
        """True when the page is ordered by change (``updated_since`` given)."""
        return self.updated_since is not None


@frozen
class Page(Generic[T]):
    """One page of rows; ``next_after`` is set when more rows follow, and in change order
    whenever the page has rows (where a poller resumes)."""

    items: tuple[T, ...]
    has_more: bool
    next_after: Position | None


def page_of(rows: Sequence[tuple[Position, T]], request: PageRequest) -> Page[T]:
    """Cut a page from rows already in order and already past ``request.after``, of which
    the caller fetched up to ``limit + 1`` so that ``has_more`` is known."""
    kept = rows[: request.limit]
    has_more = len(rows) > request.limit
    # In change order the last page still says where it ended, so a poller can resume
    # from exactly there later and see only what changed since.
    resumable = has_more or request.by_change
    return Page(
        items=tuple(row for _, row in kept),
        has_more=has_more,
        next_after=kept[-1][0] if resumable and kept else None,
    )
