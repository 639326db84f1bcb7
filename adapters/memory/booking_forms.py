"""Dict-backed booking forms (the memory unit of work's table ``booking_forms``)."""

from __future__ import annotations

from adapters.memory.repositories import Table
from booking_core.booking_forms import BookingForm
from booking_core.errors import NotFoundError
from booking_core.paging import Page, PageRequest


class MemoryBookingFormRepository:
    """Booking forms by company, listed newest first."""

    def __init__(self, table: Table[BookingForm]) -> None:
        self._t = table

    def get(self, company_id: str, form_id: str) -> BookingForm:
        found = self._t.find(company_id, form_id)
        if found is None:
            raise NotFoundError("booking form", form_id)
        return found

    # A memory unit of work holds the store's one lock from start to end: every read in
    # it is already a read for update.
    get_for_update = get

    def add(self, form: BookingForm) -> None:
        self._t.insert(form.company_id, form.id, form, form.created_at)

    def save(self, form: BookingForm) -> None:
        self.get(form.company_id, form.id)
        self._t.replace(form.company_id, form.id, form)

    def delete(self, company_id: str, form_id: str) -> None:
        self.get(company_id, form_id)
        del self._t.rows[(company_id, form_id)]

    def list(self, company_id: str, page: PageRequest) -> Page[BookingForm]:
        if page.by_change:  # as the SQL table, which carries no change stamps
            raise ValueError("booking forms are listed newest first only, not by change")
        return self._t.page(company_id, page, lambda _: True, lambda f: f.id)
