"""A customer's own changes through the tracking link (``services.self_service``), over the
memory unit of work: the token finds the booking in its company only, the self-service
cutoff refuses a change with the sentence the customer reads and writes nothing, the open
times come from availability with the booking's own slot not blocking it, and a change
records the usual event."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from booking_core.bookings import Booking, BookingStatus
from booking_core.errors import (
    InvalidTransition,
    NotFoundError,
    PriceNotConfirmed,
    SelfServiceClosed,
    SlotUnavailable,
)
from booking_core.events import EventType
from booking_core.plans import RescheduleScope
from booking_core.services import scheduling, self_service
from tests.unit.test_service_events import DRIVE, World, subjects, tuesday_at, types


@pytest.fixture
def world() -> World:
    """One company (Acme Maids, cutoff 24 hours) with Rosa working every day; no events."""
    made = World()
    made.recorded()
    return made


CLOSED = "Changes online close 24 hours before the visit. Call or email Acme Maids to change it."


def test_the_token_finds_the_booking_in_its_own_company_only(world: World):
    (booking,) = world.book(tuesday_at(9))
    other = world.add_company("other")
    with world.uow() as uow:
        assert self_service.tracked_booking(uow, world.company.id, booking.tracking_token) == (
            booking
        )
        with pytest.raises(NotFoundError):
            self_service.tracked_booking(uow, other.id, booking.tracking_token)
        with pytest.raises(NotFoundError):
            self_service.tracked_booking(uow, world.company.id, "no-such-token")


def test_inside_the_cutoff_both_changes_are_refused_with_the_sentence_and_nothing_changes(
    world: World,
):
    (booking,) = world.book(tuesday_at(9))
    world.recorded()
    world.clock.current = booking.start - timedelta(hours=24) + timedelta(seconds=1)
    with world.uow() as uow:
        company = uow.companies.get(world.company.id)
    assert not self_service.can_change(company, booking, world.clock.now())
    assert self_service.closed_message(company) == CLOSED
    with pytest.raises(SelfServiceClosed) as refused:
        self_service.customer_cancel(
            world.company.id, booking.tracking_token, uow=world.uow(), clock=world.clock
        )
    assert refused.value.message == CLOSED
    with pytest.raises(SelfServiceClosed):
        self_service.customer_reschedule(
            world.company.id,
            booking.tracking_token,
            booking.start + timedelta(days=2),
            shown_total_cents=booking.price.total_cents,
            uow=world.uow(),
            clock=world.clock,
            drive=DRIVE,
        )
    assert world.stored_booking(booking.id) == booking
    assert world.recorded() == []


def test_exactly_the_cutoff_away_a_customer_may_still_cancel_and_it_records_the_event(
    world: World,
):
    visits = world.book(tuesday_at(9), frequency="weekly")
    world.recorded()
    world.clock.current = visits[0].start - timedelta(hours=24)
    cancelled = self_service.customer_cancel(
        world.company.id, visits[0].tracking_token, uow=world.uow(), clock=world.clock
    )
    assert cancelled.status is BookingStatus.CANCELLED
    assert cancelled.cancel_reason == self_service.CUSTOMER_CANCEL_REASON
    events = world.recorded()
    assert types(events) == {EventType.BOOKING_CANCELLED: 1}  # this visit only
    assert world.stored_booking(visits[1].id).status is BookingStatus.SCHEDULED
    with pytest.raises(InvalidTransition):  # a cancelled visit says so, not the cutoff
        self_service.customer_cancel(
            world.company.id, visits[0].tracking_token, uow=world.uow(), clock=world.clock
        )


def test_the_open_times_do_not_block_on_the_booking_itself_and_stay_outside_the_cutoff(
    world: World,
):
    (booking,) = world.book(tuesday_at(9))
    with world.uow() as uow:
        company = uow.companies.get(world.company.id)
    day = booking.local_start.date()
    times = self_service.reschedule_times(
        company, booking, day, uow=world.uow(), clock=world.clock, drive=DRIVE
    )
    starts = [slot.start for slot in times]
    assert booking.start in starts  # its own slot is open to it
    assert booking.start + timedelta(minutes=15) in starts  # overlapping itself is fine
    assert starts == sorted(starts)
    assert all(s >= world.clock.now() + timedelta(hours=24) for s in starts)
    days = self_service.reschedule_days(
        company, booking, 7, uow=world.uow(), clock=world.clock, drive=DRIVE
    )
    assert days[0][0] == (world.clock.now() + timedelta(hours=24)).astimezone(booking.zone).date()
    assert len(days) == 7
    assert any(is_open for _, is_open in days)


def test_a_customer_moves_the_visit_to_a_listed_time_and_it_records_booking_rescheduled(
    world: World,
):
    (booking,) = world.book(tuesday_at(9))
    world.recorded()
    with world.uow() as uow:
        company = uow.companies.get(world.company.id)
    later = booking.local_start.date() + timedelta(days=2)
    new_start = self_service.reschedule_times(
        company, booking, later, uow=world.uow(), clock=world.clock, drive=DRIVE
    )[0].start
    (moved,) = self_service.customer_reschedule(
        world.company.id,
        booking.tracking_token,
        new_start,
        shown_total_cents=booking.price.total_cents,
        uow=world.uow(),
        clock=world.clock,
        drive=DRIVE,
    )
    assert moved.start == new_start
    assert moved.crew_ids == booking.crew_ids
    assert subjects(world.recorded(), EventType.BOOKING_RESCHEDULED) == [moved]
    assert moved.activity[-1].details["by"] == "customer"  # the office sees who moved it


@pytest.mark.parametrize(
    ("when", "refusal"),
    [
        (lambda now, _: now + timedelta(hours=6), "24 hours from now"),  # inside the cutoff
        # Past the 180 days the page offers (a year on, or in 2750): these were booked
        # and announced before.
        (lambda _, start: start.replace(year=start.year + 1), "at the latest"),
        (lambda _, start: start.replace(year=start.year + 724), "at the latest"),
    ],
    ids=["inside-the-cutoff", "a-year-on", "in-2750"],
)
def test_a_new_time_the_customer_may_not_choose_is_refused_and_nothing_changes(
    world: World, when, refusal: str
):
    (booking,) = world.book(tuesday_at(9) + timedelta(days=3))
    world.recorded()
    with pytest.raises(SlotUnavailable, match=refusal):
        self_service.customer_reschedule(
            world.company.id,
            booking.tracking_token,
            when(world.clock.now(), booking.start),
            shown_total_cents=booking.price.total_cents,
            uow=world.uow(),
            clock=world.clock,
            drive=DRIVE,
        )
    assert world.stored_booking(booking.id) == booking
    assert world.recorded() == []


NEW_YEARS_EVE = datetime(2026, 12, 31, 15, tzinfo=UTC)  # 10:00 in New York: demo holiday


def test_a_move_to_a_price_the_customer_was_not_shown_is_refused_in_the_same_unit(world: World):
    (booking,) = world.book(tuesday_at(10))
    world.recorded()
    token = booking.tracking_token

    def move(shown: int | None) -> list[Booking]:
        return self_service.customer_reschedule(
            world.company.id,
            token,
            NEW_YEARS_EVE,
            shown_total_cents=shown,
            uow=world.uow(),
            clock=world.clock,
            drive=DRIVE,
        )

    # The page showed the visit's price before the move (no holiday fee), or none at all.
    for shown in (booking.price.total_cents, None):
        with pytest.raises(PriceNotConfirmed) as refused:
            move(shown)
        ((before, after),) = refused.value.moves
        assert before == booking
        assert after.price.total_cents > booking.price.total_cents
        assert world.stored_booking(booking.id) == booking
        assert world.recorded() == []

    (moved,) = move(after.price.total_cents)  # the total the page showed for the holiday
    assert moved.start == NEW_YEARS_EVE
    assert moved.price == after.price
    assert "Holiday surcharge" in [fee.name for fee in moved.price.fees]


def test_an_admin_move_checks_the_totals_it_confirmed_and_the_api_takes_the_new_price(
    world: World,
):
    (booking,) = world.book(tuesday_at(10))

    def move(confirmed: dict[str, int] | None) -> list[Booking]:
        return scheduling.reschedule_booking(
            world.company.id,
            booking.id,
            NEW_YEARS_EVE,
            RescheduleScope.THIS,
            confirmed_totals=confirmed,
            uow=world.uow(),
            clock=world.clock,
            drive=DRIVE,
        )

    with pytest.raises(PriceNotConfirmed) as refused:
        move({booking.id: booking.price.total_cents})
    assert world.stored_booking(booking.id) == booking
    ((_, after),) = refused.value.moves
    (moved,) = move(None)  # the API: admin-grade, the new price taken as it is
    assert moved.price == after.price
