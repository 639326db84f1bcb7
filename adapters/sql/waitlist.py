"""The waitlist: one row per entry, paged newest first only (no change stamps)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select

from adapters.sql.context import AnyRow, UnitContext
from adapters.sql.tables import waitlist_entries
from booking_core.errors import NotFoundError
from booking_core.paging import Page, PageRequest
from booking_core.waitlist import WaitlistEntry


def _values(entry: WaitlistEntry) -> dict[str, Any]:
    return {
        "company_id": entry.company_id,
        "id": entry.id,
        "service_id": entry.service_id,
        "zip": entry.zip,
        "date_from": entry.date_from,
        "date_to": entry.date_to,
        "frequency_slug": entry.frequency_slug,
        "name": entry.name,
        "email": entry.email,
        "phone": entry.phone,
        "note": entry.note,
        "created_at": entry.created_at,
    }


def _entry(row: AnyRow) -> WaitlistEntry:
    return WaitlistEntry(
        id=row.id,
        company_id=row.company_id,
        service_id=row.service_id,
        zip=row.zip,
        date_from=row.date_from,
        date_to=row.date_to,
        frequency_slug=row.frequency_slug,
        name=row.name,
        email=row.email,
        created_at=row.created_at,
        phone=row.phone,
        note=row.note,
    )


class SqlWaitlistRepository:
    """Waitlist entries by company."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def add(self, entry: WaitlistEntry) -> None:
        self._cx.insert_new(
            waitlist_entries, _values(entry), f"Waitlist entry {entry.id} already exists."
        )

    def get(self, company_id: str, entry_id: str) -> WaitlistEntry:
        statement = select(waitlist_entries).where(
            waitlist_entries.c.company_id == company_id, waitlist_entries.c.id == entry_id
        )
        row = self._cx.execute(statement).first()
        if row is None:
            raise NotFoundError("waitlist entry", entry_id)
        return _entry(row)

    def delete(self, company_id: str, entry_id: str) -> None:
        gone = self._cx.execute(
            delete(waitlist_entries).where(
                waitlist_entries.c.company_id == company_id, waitlist_entries.c.id == entry_id
            )
        )
        if gone.rowcount == 0:
            raise NotFoundError("waitlist entry", entry_id)

    def list(self, company_id: str, page: PageRequest) -> Page[WaitlistEntry]:
        if page.by_change:
            raise ValueError("waitlist entries are listed newest first only, not by change")
        return self._cx.keyset_page(waitlist_entries, company_id, page, [], _entry)
