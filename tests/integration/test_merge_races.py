"""A merge of customers racing a payment on one of the merged record's bookings, on both
SQL backends: whichever commits first, the entry ends up filed under the survivor (never
under the merged record, which no list shows any more).

Each test holds one side at its commit while the other runs: the other side either waits
for it (the two take turns) or, as before the ledgers were held by merges, finishes
meanwhile and files the entry under the merged record."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

import pytest

from adapters.phone import PhonenumbersNormalizer
from adapters.sql import Database
from adapters.sql.uow import SqlUnitOfWork
from booking_core.bookings import Booking
from booking_core.clock import FixedClock
from booking_core.customers import Address
from booking_core.drive import TableDriveTime
from booking_core.ledger import Kind, Method
from booking_core.services import customers, payments, scheduling
from tests.integration.test_booking_races import NOW, solo_company

OTHER_SIDE_GRACE = 2.0
"""Seconds the other side gets to finish while one is held at its commit (it finishes
only if it does not wait for the held one)."""


def _book(db: Database, company_id: str, email: str, day: int) -> Booking:
    return scheduling.create_booking(
        scheduling.CreateBooking(
            company_id=company_id,
            service_id="svc_standard_clean",
            frequency_slug="one_time",
            start=NOW + timedelta(days=day, hours=3),  # 10:00 in New York
            customer=scheduling.CustomerDetails(name="Ada Twin", email=email),
            address=Address("1 Main St", "New York", "NY", "10001"),
        ),
        uow=db.uow(),
        clock=FixedClock(NOW),
        drive=TableDriveTime(default=20),
        phones=PhonenumbersNormalizer(),
    )[0]


@pytest.fixture
def twins(database: Database) -> tuple[str, str, Booking]:
    """A company, a survivor's booking and the booking of its twin record (to be merged):
    (company id, survivor id, the twin's booking)."""
    company = solo_company(database, "twins", "Twin Maids")
    survivor = _book(database, company.id, "ada@example.com", 1)
    twin = _book(database, company.id, "ada.twin@example.com", 2)
    return company.id, survivor.customer_id, twin


def _held_at_commit(db: Database) -> tuple[SqlUnitOfWork, threading.Event, threading.Event]:
    """A unit of work that stops at its commit until released: (it, reached, release)."""
    uow = db.uow()
    reached, release = threading.Event(), threading.Event()
    commit = uow.commit

    def held() -> None:
        reached.set()
        assert release.wait(60), "never released"
        commit()

    uow.commit = held  # type: ignore[method-assign]
    return uow, reached, release


def _in_thread(work: Callable[[], object]) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, errors


def _pay(db: Database, company_id: str, booking_id: str, uow: SqlUnitOfWork | None = None):
    return lambda: payments.record_payment(
        payments.RecordPayment(
            company_id=company_id,
            booking_id=booking_id,
            kind=Kind.PAYMENT,
            amount_cents=4_200,
            method=Method.CASH,
        ),
        uow=uow or db.uow(),
        clock=FixedClock(NOW),
    )


def _merge(db: Database, company_id: str, survivor_id: str, merged_id: str, uow=None):
    return lambda: customers.merge_customers(
        customers.MergeCustomers(
            company_id=company_id, survivor_id=survivor_id, merged_id=merged_id
        ),
        uow=uow or db.uow(),
        clock=FixedClock(NOW + timedelta(minutes=1)),
    )


def _filed_under(db: Database, company_id: str, booking_id: str) -> list[str | None]:
    with db.uow() as uow:
        return [e.customer_id for e in uow.payments.for_booking(company_id, booking_id)]


def race_held(
    first: Callable[[], object], first_reached: threading.Event, release, second
) -> tuple[list[BaseException], list[BaseException]]:
    """``first`` runs to its held commit; ``second`` then gets ``OTHER_SIDE_GRACE``
    seconds; then ``first`` commits and both end: what each raised."""
    held, held_errors = _in_thread(first)
    assert first_reached.wait(60), held_errors
    other, other_errors = _in_thread(second)
    other.join(OTHER_SIDE_GRACE)
    release.set()
    held.join(60)
    other.join(60)
    assert not held.is_alive(), "the held side hung"
    assert not other.is_alive(), "the other side hung"
    return held_errors, other_errors


def _race(first: Callable[[], object], first_reached: threading.Event, release, second):
    """``race_held``, in which neither side may fail."""
    assert race_held(first, first_reached, release, second) == ([], [])


def test_a_payment_committing_during_a_merge_is_re_filed_with_the_rest(database, twins):
    company_id, survivor_id, twin = twins
    uow, reached, release = _held_at_commit(database)
    _race(
        _pay(database, company_id, twin.id, uow),
        reached,
        release,
        _merge(database, company_id, survivor_id, twin.customer_id),
    )
    assert _filed_under(database, company_id, twin.id) == [survivor_id]


def test_a_payment_written_while_a_merge_commits_is_filed_under_the_survivor(database, twins):
    company_id, survivor_id, twin = twins
    uow, reached, release = _held_at_commit(database)
    _race(
        _merge(database, company_id, survivor_id, twin.customer_id, uow),
        reached,
        release,
        _pay(database, company_id, twin.id),
    )
    assert _filed_under(database, company_id, twin.id) == [survivor_id]
