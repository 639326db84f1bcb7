"""The waitlist in memory (the memory unit of work's table ``waitlist``): newest first
only, as the SQL table, which carries no change stamps."""

from __future__ import annotations

from adapters.memory.repositories import Table
from booking_core.errors import NotFoundError
from booking_core.paging import Page, PageRequest
from booking_core.waitlist import WaitlistEntry


class MemoryWaitlistRepository:
    """Waitlist entries by company."""

    def __init__(self, table: Table[WaitlistEntry]) -> None:
        self._t = table

    def add(self, entry: WaitlistEntry) -> None:
        self._t.insert(entry.company_id, entry.id, entry, entry.created_at)

    def get(self, company_id: str, entry_id: str) -> WaitlistEntry:
        found = self._t.find(company_id, entry_id)
        if found is None:
            raise NotFoundError("waitlist entry", entry_id)
        return found

    def delete(self, company_id: str, entry_id: str) -> None:
        self.get(company_id, entry_id)
        del self._t.rows[(company_id, entry_id)]

    def list(self, company_id: str, page: PageRequest) -> Page[WaitlistEntry]:
        if page.by_change:
            raise ValueError("waitlist entries are listed newest first only, not by change")
        return self._t.page(company_id, page, lambda _: True, lambda entry: entry.id)
