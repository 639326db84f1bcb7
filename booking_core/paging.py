"""Keyset pagination, as every list endpoint uses it.

Two orders exist. Without ``updated_since``: newest first by ``(created_at, id)``
descending. With it: ascending by change position ``(changed_at, id)`` from that
instant on, for incremental polling. ``changed_at`` is stamped by storage when the
change commits, under a per-company lock, so a poller that passes the last change it saw
never misses a row that committed late (docs/storage.md).

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
    """Where a row stands in a list's order: its ordering instant and id."""

    at: datetime
    id: str


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
