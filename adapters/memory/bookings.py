"""Bookings in memory, with the same no-double-booking guarantee as the SQL adapter.

The memory unit of work already runs one at a time (the store's lock), so checking the
crew's open blocks before writing is enough; a write that fails checks everything first
and changes nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime

from adapters.memory.repositories import Table
from booking_core.availability import Block
from booking_core.bookings import Booking, BookingStatus
from booking_core.errors import ConflictError, NotFoundError, SlotTaken
from booking_core.paging import Page, PageRequest


def blocks_of(booking: Booking) -> list[tuple[str, datetime, datetime]]:
    """The (crew id, start, end) a booking occupies: every member on every day; nothing
    once it is cancelled or completed."""
    if not booking.is_open:
        return []
    days = booking.day_blocks()
    return [(crew_id, s, e) for crew_id in dict.fromkeys(booking.crew_ids) for s, e in days]


def collision(
    bookings: Sequence[Booking], others: Iterable[Booking]
) -> tuple[Booking, str, datetime] | None:
    """The first block of ``bookings`` that overlaps a block of ``others`` or of an earlier
    one of ``bookings`` (same company, same member): (booking, crew id, block start)."""
    taken: dict[tuple[str, str], list[tuple[datetime, datetime]]] = {}
    for other in others:
        for crew_id, s, e in blocks_of(other):
            taken.setdefault((other.company_id, crew_id), []).append((s, e))
    for booking in bookings:
        mine = blocks_of(booking)
        for crew_id, s, e in mine:
            held = taken.get((booking.company_id, crew_id), ())
            if any(s < t_end and t_start < e for t_start, t_end in held):
                return booking, crew_id, s
        for crew_id, s, e in mine:
            taken.setdefault((booking.company_id, crew_id), []).append((s, e))
    return None


def slot_taken(booking: Booking, crew_id: str, start: datetime) -> SlotTaken:
    """``SlotTaken`` for a block of ``booking``, its start given in the booking's zone."""
    return SlotTaken(start.astimezone(booking.zone).isoformat(), crew_id)


def duplicate_key(bookings: Sequence[Booking], others: Iterable[Booking]) -> str | None:
    """What makes ``bookings`` collide with a unique key of ``others`` or of each other
    (id, human code per company, tracking token, plan visit), or None."""
    seen: set[tuple[str, ...]] = set()

    def keys(b: Booking) -> list[tuple[tuple[str, ...], str]]:
        found = [
            (("id", b.company_id, b.id), f"Booking {b.id} already exists."),
            (("code", b.company_id, b.code), f"Booking code {b.code} is taken."),
            (("token", b.tracking_token), "That tracking token is taken."),
        ]
        if b.plan_id is not None:
            visit = ("visit", b.company_id, b.plan_id, str(b.visit_index))
            found.append((visit, f"Plan {b.plan_id} already has visit {b.visit_index}."))
        return found

    for other in others:
        seen.update(key for key, _ in keys(other))
    for booking in bookings:
        for key, problem in keys(booking):
            if key in seen:
                return problem
            seen.add(key)
    return None


class MemoryBookingRepository:
    """Bookings by company; checks every crew member's open blocks before each write."""

    def __init__(self, table: Table[Booking]) -> None:
        self._t = table

    def get(self, company_id: str, booking_id: str) -> Booking:
        found = self._t.find(company_id, booking_id)
        if found is None:
            raise NotFoundError("booking", booking_id)
        return found

    def by_code(self, company_id: str, code: str) -> Booking | None:
        return next((b for b in self._t.values(company_id) if b.code == code), None)

    def by_tracking_token(self, token: str) -> Booking | None:
        return next((b for b in self._t.values() if b.tracking_token == token), None)

    def add_all(self, bookings: Sequence[Booking]) -> None:
        hit = collision(bookings, self._t.values())
        if hit is not None:
            raise slot_taken(*hit)
        problem = duplicate_key(bookings, self._t.values())
        if problem is not None:
            raise ConflictError(problem)
        for booking in bookings:
            self._t.insert(booking.company_id, booking.id, booking, booking.created_at)

    def save_all(self, bookings: Sequence[Booking]) -> None:
        keys = [(b.company_id, b.id) for b in bookings]
        if len(set(keys)) != len(keys):
            raise ValueError("save_all was given one booking twice")
        for booking in bookings:
            stored = self.get(booking.company_id, booking.id)
            if stored.version != booking.version - 1:
                raise ConflictError(f"Booking {booking.id} was changed by another request.")
        saved = set(keys)
        others = [b for b in self._t.values() if (b.company_id, b.id) not in saved]
        hit = collision(bookings, others)
        if hit is not None:
            raise slot_taken(*hit)
        problem = duplicate_key(bookings, others)
        if problem is not None:
            raise ConflictError(problem)
        for booking in bookings:
            self._t.replace(booking.company_id, booking.id, booking)

    def of_plan(self, company_id: str, plan_id: str) -> list[Booking]:
        found = [b for b in self._t.values(company_id) if b.plan_id == plan_id]
        return sorted(found, key=lambda b: (b.visit_index, b.id))

    def of_group(self, company_id: str, group_id: str) -> list[Booking]:
        found = [b for b in self._t.values(company_id) if b.group_id == group_id]
        return sorted(found, key=lambda b: (b.visit_index, b.id))

    def for_customer(self, company_id: str, customer_id: str) -> list[Booking]:
        found = [b for b in self._t.values(company_id) if b.customer_id == customer_id]
        return sorted(found, key=lambda b: (b.start, b.id))

    def for_customers(
        self, company_id: str, customer_ids: Collection[str]
    ) -> dict[str, list[Booking]]:
        return {
            customer_id: self.for_customer(company_id, customer_id) for customer_id in customer_ids
        }

    def hold_crew(self, company_id: str, crew_ids: Collection[str]) -> None:
        # A memory unit of work holds the store's one lock from start to end.
        return None

    def busy(
        self,
        company_id: str,
        start: datetime,
        end: datetime,
        crew_ids: Collection[str] | None = None,
    ) -> dict[str, list[Block]]:
        wanted = None if crew_ids is None else set(crew_ids)
        found: dict[str, list[Block]] = {crew_id: [] for crew_id in wanted or ()}
        for booking in self._t.values(company_id):
            for crew_id, s, e in blocks_of(booking):
                if s < end and start < e and (wanted is None or crew_id in wanted):
                    block = Block(s, e, booking.address.zip, booking.id)
                    found.setdefault(crew_id, []).append(block)
        for blocks in found.values():
            blocks.sort(key=lambda b: (b.start, b.booking_id or ""))
        return found

    def list(
        self,
        company_id: str,
        page: PageRequest,
        *,
        status: BookingStatus | None = None,
        customer_id: str | None = None,
        crew_id: str | None = None,
        starts_from: datetime | None = None,
        starts_until: datetime | None = None,
    ) -> Page[Booking]:
        def keep(b: Booking) -> bool:
            return (
                status in (None, b.status)
                and customer_id in (None, b.customer_id)
                and (crew_id is None or crew_id in b.crew_ids)
                and (starts_from is None or b.start >= starts_from)
                and (starts_until is None or b.start < starts_until)
            )

        return self._t.page(company_id, page, keep, lambda b: b.id)
