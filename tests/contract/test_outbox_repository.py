"""The outbox's contract, on memory, SQLite and PostgreSQL: events read back equal, only
committed events are kept (one by one or as a batch, and a use case's events only with
its change), claims come oldest first and skip what another worker holds."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest

from adapters.phone import PhonenumbersNormalizer
from booking_core.bookings import Booking
from booking_core.clock import FixedClock
from booking_core.customers import Address
from booking_core.demo import demo_catalog
from booking_core.drive import TableDriveTime
from booking_core.errors import ConflictError, SlotTaken
from booking_core.events import Event, EventType, Subject, event
from booking_core.ports import UnitOfWork
from booking_core.services import companies, scheduling
from tests import factories as f
from tests.unit.bookings_support import AT, booked, local, order


def an_event(
    company_id: str = "cmp_a",
    minutes: int = 0,
    subject: Subject = None,
    type: EventType = EventType.WEBHOOK_TEST,
) -> Event:
    return event(type, subject, company_id=company_id, at=f.at(minutes))


def store(uow_factory: Callable[[], UnitOfWork], *events: Event) -> None:
    with uow_factory() as uow:
        for one in events:
            uow.outbox.add(one)
        uow.commit()


def claim(uow_factory: Callable[[], UnitOfWork], limit: int = 100) -> list[Event]:
    """Claim, then let go (rolled back: nothing is marked)."""
    with uow_factory() as uow:
        return list(uow.outbox.claim_undispatched(limit))


def test_an_event_of_every_subject_kind_reads_back_equal(uow_factory):
    booking = booked(order(company_id="cmp_a"), start=local(2026, 3, 3, 9), at=AT)[0]
    events = [
        an_event(minutes=0, subject=booking, type=EventType.BOOKING_CREATED),
        an_event(minutes=1, subject=f.customer("cmp_a"), type=EventType.CUSTOMER_CREATED),
        an_event(minutes=2, subject=f.lead("cmp_a"), type=EventType.LEAD_CREATED),
        an_event(minutes=3, subject=f.quote("cmp_a"), type=EventType.QUOTE_SENT),
        an_event(minutes=4, subject=f.payment("cmp_a"), type=EventType.PAYMENT_RECORDED),
        an_event(minutes=5, subject=None, type=EventType.WEBHOOK_TEST),
    ]
    store(uow_factory, *events)
    assert claim(uow_factory) == events


def test_a_rolled_back_unit_stores_no_event(uow_factory):
    never_committed, committed, added_after_commit = (an_event(minutes=m) for m in range(3))
    with uow_factory() as uow:
        uow.outbox.add(never_committed)

    def failing_unit() -> None:
        with uow_factory() as uow:
            uow.outbox.add(committed)
            uow.commit()
            uow.outbox.add(added_after_commit)
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        failing_unit()
    assert claim(uow_factory) == [committed]


def test_add_all_stores_every_event_of_a_batch_and_only_on_commit(uow_factory):
    rolled_back = [an_event(minutes=m) for m in range(3)]
    with uow_factory() as uow:
        uow.outbox.add_all(rolled_back)
    visits = booked(order("weekly", company_id="cmp_a"), start=local(2026, 3, 3, 9), at=AT)
    batch = [
        an_event(minutes=10 + index, subject=visit, type=EventType.BOOKING_CREATED)
        for index, visit in enumerate(visits)
    ]
    with uow_factory() as uow:
        uow.outbox.add_all([])
        uow.outbox.add_all(batch)
        uow.commit()
    assert len(batch) > 1
    assert claim(uow_factory) == batch


def test_add_all_writes_a_batch_larger_than_one_statement_takes(uow_factory):
    from adapters.sql.webhooks import INSERT_CHUNK

    many = [an_event(f"cmp_{index % 3}", minutes=index) for index in range(INSERT_CHUNK * 2 + 1)]
    store_all(uow_factory, many)
    assert claim(uow_factory, limit=len(many) + 1) == many


def test_add_all_refuses_an_event_id_taken_or_given_twice(uow_factory):
    stored = an_event(minutes=0)
    store(uow_factory, stored)
    fresh = an_event(minutes=1)
    with uow_factory() as uow, pytest.raises(ConflictError, match=stored.id):
        uow.outbox.add_all([fresh, stored])
    with uow_factory() as uow, pytest.raises(ConflictError, match=fresh.id):
        uow.outbox.add_all([fresh, fresh])
    assert claim(uow_factory) == [stored]


def store_all(uow_factory: Callable[[], UnitOfWork], events: list[Event]) -> None:
    with uow_factory() as uow:
        uow.outbox.add_all(events)
        uow.commit()


def test_claims_come_oldest_first_across_companies_up_to_the_limit(uow_factory):
    newest = an_event("cmp_b", minutes=30)
    oldest = an_event("cmp_b", minutes=0)
    tied = sorted([an_event("cmp_a", minutes=10), an_event("cmp_c", minutes=10)], key=id_of)
    store(uow_factory, newest, tied[1], oldest, tied[0])
    assert claim(uow_factory, limit=3) == [oldest, *tied]
    assert claim(uow_factory, limit=1) == [oldest]
    assert claim(uow_factory) == [oldest, *tied, newest]


def id_of(one: Event) -> str:
    return one.id


def test_dispatched_events_are_not_claimed_again_unless_the_marking_rolls_back(uow_factory):
    events = [an_event(minutes=m) for m in range(4)]
    store(uow_factory, *events)
    with uow_factory() as uow:
        first_two = uow.outbox.claim_undispatched(2)
        uow.outbox.mark_dispatched([e.id for e in first_two], f.at(60))
        uow.commit()
    assert claim(uow_factory) == events[2:]
    with uow_factory() as uow:
        uow.outbox.mark_dispatched([events[2].id], f.at(61))  # the worker died: no commit
    assert claim(uow_factory) == events[2:]
    with uow_factory() as uow:
        uow.outbox.mark_dispatched([], f.at(62))
        uow.outbox.mark_dispatched([e.id for e in events], f.at(62))
        uow.commit()
    assert claim(uow_factory) == []


# --- Through a use case ---------------------------------------------------------------

NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)  # a Monday
TUESDAY_9AM = datetime(2026, 11, 24, 14, tzinfo=UTC)  # 09:00 in New York


class CommitFails:
    """A unit of work whose commit fails (the database went away): it rolls back."""

    def __init__(self, inner: UnitOfWork) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def __enter__(self) -> CommitFails:
        self._inner.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._inner.__exit__(*exc)  # type: ignore[arg-type]

    def commit(self) -> None:
        raise RuntimeError("the connection was lost at commit")


def book(uow: object, company_id: str, email: str) -> list[Booking]:
    return scheduling.create_booking(
        scheduling.CreateBooking(
            company_id=company_id,
            service_id="svc_standard_clean",
            frequency_slug="one_time",
            start=TUESDAY_9AM,
            customer=scheduling.CustomerDetails(name="Ada", email=email),
            address=Address("1 Main St", "New York", "NY", "10001"),
        ),
        uow=uow,  # type: ignore[arg-type]
        clock=FixedClock(NOW),
        drive=TableDriveTime(default=20),
        phones=PhonenumbersNormalizer(),
    )


def test_a_booking_s_events_are_stored_with_it_or_not_at_all(uow_factory):
    """Through the use case: a booking whose commit fails leaves no event (nor booking,
    nor customer); a refused one none; a committed one exactly its customer and itself."""
    company = companies.create_company(
        companies.CreateCompany(slug="acme", name="Acme Maids", catalog=demo_catalog()),
        uow=uow_factory(),
        clock=FixedClock(NOW),
    )
    with uow_factory() as uow:
        uow.crew.add(f.all_week_crew(company.id, NOW))
        uow.commit()

    with pytest.raises(RuntimeError, match="lost at commit"):
        book(CommitFails(uow_factory()), company.id, "ada@example.com")
    assert claim(uow_factory) == []

    (made,) = book(uow_factory(), company.id, "ada@example.com")
    with uow_factory() as uow:
        stored = uow.bookings.get(company.id, made.id)
        customer = uow.customers.get(company.id, made.customer_id)
    events = claim(uow_factory)
    assert sorted((e.type, e.company_id) for e in events) == [
        (EventType.BOOKING_CREATED, company.id),
        (EventType.CUSTOMER_CREATED, company.id),
    ]
    assert {e.type: e.subject for e in events} == {
        EventType.BOOKING_CREATED: stored,
        EventType.CUSTOMER_CREATED: customer,
    }

    with pytest.raises(SlotTaken):
        book(uow_factory(), company.id, "grace@example.com")
    assert claim(uow_factory) == events


@pytest.fixture
def pg_uow_factory(postgres_database) -> Callable[[], UnitOfWork]:
    """Units of work over the (emptied) PostgreSQL database of this run."""
    postgres_database.truncate_all()
    return postgres_database.uow


def test_two_workers_on_postgres_never_claim_the_same_event(pg_uow_factory):
    """The first worker holds its claim open (its transaction, and the row locks, last
    until it marks and commits); a second one, on another connection, claims at once the
    events the first does not hold, without waiting for it."""
    events = [an_event(minutes=m) for m in range(5)]
    store(pg_uow_factory, *events)
    with ThreadPoolExecutor(1) as other, pg_uow_factory() as first:
        held = first.outbox.claim_undispatched(2)
        assert held == events[:2]
        second = other.submit(claim, pg_uow_factory).result(timeout=10)
        assert second == events[2:]
        first.outbox.mark_dispatched([e.id for e in held], f.at(60))
        first.commit()
    assert claim(pg_uow_factory) == events[2:]
