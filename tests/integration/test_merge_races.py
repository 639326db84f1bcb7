"""A merge of customers racing what is filed under the merged record, on both SQL
backends: a payment, a reversal, a quote, a convert, a plan's new visits and a booking
of the merged email. Whichever commits first, it ends up filed under the survivor (never
under the merged record, which no list shows any more), and no side is refused for the
race alone.

Each test holds one side at its commit while the other runs: the other side either waits
for it (the two take turns) or, without the hold that makes them take turns, finishes
meanwhile and files its record under the merged one."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from adapters.phone import PhonenumbersNormalizer
from adapters.sql import Database
from adapters.sql.uow import SqlUnitOfWork
from booking_core.bookings import Booking
from booking_core.clock import FixedClock
from booking_core.conversion import ConvertRequest
from booking_core.customers import Address
from booking_core.drive import TableDriveTime
from booking_core.errors import RuleViolation
from booking_core.ledger import Kind, Method, PaymentEntry
from booking_core.pricing import Selection
from booking_core.quotes import Quote
from booking_core.services import conversions, customers, payments, plan_upkeep, scheduling
from booking_core.services import quotes as quote_cases
from tests.integration.test_booking_races import NOW, solo_company

OTHER_SIDE_GRACE = 2.0
"""Seconds the other side gets to finish while one is held at its commit (it finishes
only if it does not wait for the held one)."""


def _book(db: Database, company_id: str, email: str, day: int) -> Booking:
    """A one-time job at 10:00 in New York ``day`` days on, for ``email``."""
    return _visits(db, company_id, email, NOW + timedelta(days=day, hours=3))[0]


def _visits(
    db: Database,
    company_id: str,
    email: str,
    start: datetime,
    frequency: str = "one_time",
    uow: SqlUnitOfWork | None = None,
) -> list[Booking]:
    """The visits of a booking for ``email`` (one, or a plan's)."""
    return scheduling.create_booking(
        scheduling.CreateBooking(
            company_id=company_id,
            service_id="svc_standard_clean",
            frequency_slug=frequency,
            start=start,
            customer=scheduling.CustomerDetails(name="Ada Twin", email=email),
            address=Address("1 Main St", "New York", "NY", "10001"),
        ),
        uow=uow or db.uow(),
        clock=FixedClock(NOW),
        drive=TableDriveTime(default=20),
        phones=PhonenumbersNormalizer(),
    )


def _weekly_plan(db: Database, company_id: str) -> list[Booking]:
    """A weekly plan for a customer of its own, first visit three days on."""
    return _visits(
        db, company_id, "ada.plan@example.com", NOW + timedelta(days=3, hours=3), "weekly"
    )


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


# --- Everything else filed under a customer: held against merges as bookings are ---


def _reverse(db: Database, company_id: str, entry_id: str):
    return lambda: payments.reverse_payment(
        payments.ReversePayment(company_id=company_id, entry_id=entry_id, note="Wrong booking."),
        uow=db.uow(),
        clock=FixedClock(NOW),
    )


def _quote(db: Database, company_id: str, customer_id: str, made: list[Quote], uow=None):
    def create() -> None:
        made.append(
            quote_cases.create_quote(
                quote_cases.CreateQuote(
                    company_id=company_id,
                    customer_id=customer_id,
                    selection=Selection(service_id="svc_standard_clean"),
                    send_now=True,
                ),
                uow=uow or db.uow(),
                clock=FixedClock(NOW),
            )
        )

    return create


def test_a_reversal_written_while_a_merge_commits_is_filed_under_the_survivor(database, twins):
    """The reversal read the entry before the merge re-filed it; it is filed as the
    entry stands once the ledger is held (it was filed under the merged record)."""
    company_id, survivor_id, twin = twins
    _pay(database, company_id, twin.id)()
    (paid,) = payments_of(database, company_id, twin.id)
    uow, reached, release = _held_at_commit(database)
    _race(
        _merge(database, company_id, survivor_id, twin.customer_id, uow),
        reached,
        release,
        _reverse(database, company_id, paid.id),
    )
    assert _filed_under(database, company_id, twin.id) == [survivor_id, survivor_id]


@pytest.mark.parametrize("merge_first", [True, False])
def test_a_quote_made_as_a_merge_commits_is_filed_under_the_survivor(database, twins, merge_first):
    company_id, survivor_id, twin = twins
    made: list[Quote] = []
    uow, reached, release = _held_at_commit(database)
    if merge_first:
        first = _merge(database, company_id, survivor_id, twin.customer_id, uow)
        second = _quote(database, company_id, twin.customer_id, made)
    else:
        first = _quote(database, company_id, twin.customer_id, made, uow)
        second = _merge(database, company_id, survivor_id, twin.customer_id)
    _race(first, reached, release, second)
    with database.uow() as unit:
        (quote,) = made
        assert unit.quotes.get(company_id, quote.id).customer_id == survivor_id


def test_a_quote_converted_while_a_merge_commits_books_for_the_survivor(database, twins):
    """The convert read the quote before the merge re-filed it; it reads it again once it
    holds the customer, so it is claimed for the survivor instead of refused as changed."""
    company_id, survivor_id, twin = twins
    made: list[Quote] = []
    _quote(database, company_id, twin.customer_id, made)()
    (quote,) = made
    uow, reached, release = _held_at_commit(database)
    converted: list[tuple[Quote, Booking | None]] = []
    _race(
        _merge(database, company_id, survivor_id, twin.customer_id, uow),
        reached,
        release,
        lambda: converted.append(
            conversions.convert_quote(
                company_id,
                quote.id,
                ConvertRequest(start=NOW + timedelta(days=4, hours=3)),
                uow=database.uow(),
                clock=FixedClock(NOW),
                drive=TableDriveTime(default=20),
            )
        ),
    )
    ((done, booking),) = converted
    assert booking is not None
    assert (done.customer_id, booking.customer_id) == (survivor_id, survivor_id)


def test_plan_upkeep_racing_a_merge_files_the_new_visits_under_the_survivor(database, twins):
    """``booking plans extend`` adds visits under the plan's customer: held, as a booking
    holds it, so a merge committing meanwhile never leaves them under the merged record."""
    company_id, survivor_id, _ = twins
    plan = _weekly_plan(database, company_id)
    merged_id = plan[0].customer_id
    held_uow, reached, release = _held_at_commit(database)
    later = FixedClock(NOW + timedelta(days=7))
    extended: list[object] = []
    _race(
        lambda: extended.extend(
            plan_upkeep.extend_plans(
                company_id,
                uow_factory=iter([database.uow(), held_uow]).__next__,
                clock=later,
                drive=TableDriveTime(default=20),
            )
        ),
        reached,
        release,
        _merge(database, company_id, survivor_id, merged_id),
    )
    with database.uow() as unit:
        assert unit.bookings.for_customer(company_id, merged_id) == []
        assert len(unit.bookings.for_customer(company_id, survivor_id)) > len(plan)


def payments_of(db: Database, company_id: str, booking_id: str) -> list[PaymentEntry]:
    with db.uow() as uow:
        return list(uow.payments.for_booking(company_id, booking_id))


def test_a_merge_sent_again_is_refused_without_waiting_for_a_booking_of_the_merged_email(
    postgres,
):
    """A booking of the merged record's email holds that record on its way to the
    survivor; a merge of the pair sent again (a double click, a client's retry) is
    refused at once as already merged, instead of holding the survivor and waiting for
    the merged record in a circle with the booking (a deadlock, answered 409)."""
    company = solo_company(postgres, "again", "Again Maids")
    # The survivor's id sorts first, so that a merge holding both in id order would hold
    # it first: the circle the refusal before holding avoids.
    survivor, twin = sorted(
        (_book(postgres, company.id, email, n + 1) for n, email in enumerate(EMAILS)),
        key=lambda booking: booking.customer_id,
    )
    twin_email = _email_of(postgres, company.id, twin.customer_id)
    _merge(postgres, company.id, survivor.customer_id, twin.customer_id)()
    holding, merge_done = threading.Event(), threading.Event()
    booking_uow = postgres.uow()
    real_by_email = booking_uow.customers.by_email

    def by_email(company_id: str, email: str, *, held: bool = False):  # type: ignore[no-untyped-def]
        found = real_by_email(company_id, email, held=held)
        holding.set()
        merge_done.wait(10)
        return found

    booking_uow.customers.by_email = by_email  # type: ignore[method-assign]
    booked: list[Booking] = []
    start = NOW + timedelta(days=3, hours=3)
    thread, errors = _in_thread(
        lambda: booked.extend(_visits(postgres, company.id, twin_email, start, uow=booking_uow))
    )
    assert holding.wait(30), errors
    began = time.monotonic()
    with pytest.raises(RuleViolation, match="already merged"):
        _merge(postgres, company.id, survivor.customer_id, twin.customer_id)()
    assert time.monotonic() - began < 5  # refused at once, not after the booking let go
    assert not merge_done.is_set()  # refused while the booking still held the record
    merge_done.set()
    thread.join(60)
    assert errors == []
    assert [b.customer_id for b in booked] == [survivor.customer_id]


EMAILS = ("ada@example.com", "ada.twin@example.com")


def _email_of(db: Database, company_id: str, customer_id: str) -> str:
    with db.uow() as uow:
        return uow.customers.get(company_id, customer_id).email


def test_two_merges_of_a_pair_at_once_and_a_booking_of_the_merged_email_all_keep_their_turn(
    postgres,
):
    """The second merge reads the first's outcome before it holds anything (merges of a
    record take turns), so it never holds the survivor while a booking of the merged
    email holds the merged record on its way there: the booking is never refused."""
    company = solo_company(postgres, "twice", "Twice Maids")
    survivor, twin = sorted(
        (_book(postgres, company.id, email, n + 1) for n, email in enumerate(EMAILS)),
        key=lambda booking: booking.customer_id,
    )
    twin_email = _email_of(postgres, company.id, twin.customer_id)
    uow, reached, release = _held_at_commit(postgres)
    first, first_errors = _in_thread(
        _merge(postgres, company.id, survivor.customer_id, twin.customer_id, uow)
    )
    assert reached.wait(30), first_errors
    second, second_errors = _in_thread(
        _merge(postgres, company.id, survivor.customer_id, twin.customer_id)
    )
    time.sleep(0.3)  # the second merge waits for the first
    booked: list[Booking] = []
    booking, booking_errors = _in_thread(
        lambda: booked.append(_book(postgres, company.id, twin_email, 3))
    )
    time.sleep(0.3)  # the booking waits for the first merge's hold on the merged record
    release.set()
    for thread in (first, second, booking):
        thread.join(60)
    assert (first_errors, booking_errors) == ([], [])
    assert [type(error) for error in second_errors] == [RuleViolation]
    assert [b.customer_id for b in booked] == [survivor.customer_id]


def test_two_extensions_of_one_plan_at_once_add_its_visits_once_and_report_no_problem(
    database,
):
    """The second waits for the first (both hold the plan's customer) and reads the plan
    again: nothing left to add, and no slot refused against the first's new visits."""
    company = solo_company(database, "extend", "Extend Maids")
    _weekly_plan(database, company.id)
    held_uow, reached, release = _held_at_commit(database)
    later = FixedClock(NOW + timedelta(days=7))
    runs: list[list[plan_upkeep.PlanExtension]] = [[], []]

    def extend(index: int, factory: Callable[[], SqlUnitOfWork]) -> Callable[[], None]:
        return lambda: runs[index].extend(
            plan_upkeep.extend_plans(
                company.id, uow_factory=factory, clock=later, drive=TableDriveTime(default=20)
            )
        )

    _race(
        extend(0, iter([database.uow(), held_uow]).__next__),
        reached,
        release,
        extend(1, database.uow),
    )
    assert [(e.added, e.problem) for e in runs[0]] == [(1, None)]
    assert [(e.added, e.problem) for e in runs[1]] == [(0, None)]
