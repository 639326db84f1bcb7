"""Checks every list's keyset pagination the same way."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from booking_core.paging import Page, PageRequest

Lister = Callable[[PageRequest], Page[object]]


def walk(list_page: Lister, limit: int, updated_since: datetime | None = None) -> list[list[str]]:
    """Follow ``next_after`` from the first page to the last; the ids of each page."""
    pages: list[list[str]] = []
    after = None
    while True:
        page = list_page(PageRequest(limit=limit, after=after, updated_since=updated_since))
        pages.append([item.id for item in page.items])  # type: ignore[attr-defined]
        if not page.has_more:
            if updated_since is None:
                assert page.next_after is None
            return pages
        assert page.next_after is not None
        after = page.next_after
        assert len(pages) < 1_000, "pagination does not end"


def assert_paginates(list_page: Lister, expected_ids: list[str]) -> None:
    """Pages of 1, 2 and all items each cover ``expected_ids`` in order, once each."""
    for limit in (1, 2, max(1, len(expected_ids))):
        pages = walk(list_page, limit)
        flat = [i for page in pages for i in page]
        assert flat == expected_ids, f"limit {limit}"
        assert all(len(page) <= limit for page in pages)
