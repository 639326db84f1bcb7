"""Starting and completing a job, and a crew member's jobs, over the memory unit of work:
the crew portal and the admin calendar call these use cases; each transition records its
event, a crew member only reaches their own bookings, refusals change nothing, and a
completed job moves the customer's lifetime statistics."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from adapters.memory import MemoryStore, MemoryUnitOfWork
from adapters.phone import PhonenumbersNormalizer
from booking_core.bookings import (
    ActivityKind,
    Booking,
    BookingStatus,
    cancel,
    complete_job,
    tracking_ends_at,
)
from booking_core.clock import FixedClock
from booking_core.companies import Company
from booking_core.customers import Address
from booking_core.demo import demo_catalog
from booking_core.drive import TableDriveTime
from booking_core.errors import InvalidTransition, NotFoundError, ValidationFailed
from booking_core.events import Event, EventType
from booking_core.plans import CancelScope, RescheduleScope
from booking_core.services import companies, scheduling
from booking_core.services.customers import customer_standing
from tests import factories
from tests.unit.bookings_support import booked, order

NY = ZoneInfo("America/New_York")
NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)  # a Monday, 07:00 in New York
TOMORROW_10 = datetime(2026, 11, 24, 10, tzinfo=NY)
DRIVE = TableDriveTime(default=20)
PHONES = PhonenumbersNormalizer()
HOME = Address("1 Main St", "New York", "NY", "10001")
ROSA, BO = "crew_rosa", "crew_bo"


class World:
    """One company with the demo catalog and Rosa and Bo working every day."""

    def __init__(self) -> None:
        self.store = MemoryStore()
        self.clock = FixedClock(NOW)
        self.company: Company = companies.create_company(
            companies.CreateCompany(slug="acme", name="Acme Maids", catalog=demo_catalog()),
            uow=self.uow(),
            clock=self.clock,
        )
        with self.uow() as unit:
            unit.crew.add(factories.all_week_crew(self.company.id, NOW, ROSA))
            unit.crew.add(factories.all_week_crew(self.company.id, NOW, BO))
            unit.commit()

    def uow(self) -> MemoryUnitOfWork:
        return MemoryUnitOfWork(self.store)

    def book(self, start: datetime, frequency: str = "one_time") -> list[Booking]:
        return scheduling.create_booking(
            scheduling.CreateBooking(
                company_id=self.company.id,
                service_id="svc_standard_clean",
                frequency_slug=frequency,
                start=start,
                customer=scheduling.CustomerDetails(name="Ada", email="ada@example.com"),
                address=HOME,
                crew_ids=(ROSA,),
            ),
            uow=self.uow(),
            clock=self.clock,
            drive=DRIVE,
            phones=PHONES,
        )

    def start(self, booking: Booking | str, crew: str | None = ROSA) -> Booking:
        ref = booking if isinstance(booking, str) else booking.id
        return scheduling.start_booking(
            self.company.id, ref, crew_member_id=crew, uow=self.uow(), clock=self.clock
        )

    def complete(self, booking: Booking | str, crew: str | None = ROSA) -> Booking:
        ref = booking if isinstance(booking, str) else booking.id
        return scheduling.complete_booking(
            self.company.id, ref, crew_member_id=crew, uow=self.uow(), clock=self.clock
        )

    def stored(self, booking_id: str) -> Booking:
        with self.uow() as unit:
            return unit.bookings.get(self.company.id, booking_id)

    def recorded(self) -> list[Event]:
        """The events recorded since the last call."""
        with self.uow() as unit:
            events = list(unit.outbox.claim_undispatched(10_000))
            unit.outbox.mark_dispatched([e.id for e in events], self.clock.now())
            unit.commit()
        return events


@pytest.fixture
def world() -> World:
    return World()


def test_start_then_complete_records_both_events_with_the_times(world):
    (job,) = world.book(TOMORROW_10)
    world.recorded()
    world.clock.advance(timedelta(hours=26, minutes=55))  # 09:55 local, a little early
    started_at = world.clock.now()
    started = world.start(job.code.lower())  # a code, as a person types it
    (event,) = world.recorded()
    assert (event.type, event.subject) == (EventType.BOOKING_STARTED, world.stored(job.id))
    assert started.status is BookingStatus.IN_PROGRESS
    assert (started.activity[-1].kind, started.activity[-1].at) == (
        ActivityKind.STARTED,
        started_at,
    )

    world.clock.advance(timedelta(hours=2, minutes=40))
    completed = world.complete(job)
    (event,) = world.recorded()
    assert (event.type, event.subject) == (EventType.BOOKING_COMPLETED, world.stored(job.id))
    assert completed.status is BookingStatus.COMPLETED
    assert completed.completed_at == world.clock.now()
    assert completed.activity[-1].kind is ActivityKind.COMPLETED
    assert tracking_ends_at(completed) == world.clock.now() + timedelta(days=90)


def test_a_crew_member_not_on_the_booking_is_told_it_does_not_exist(world):
    (job,) = world.book(TOMORROW_10)
    world.recorded()
    for act in (world.start, world.complete):
        with pytest.raises(NotFoundError) as caught:
            act(job.id, BO)
        assert str(caught.value) == f"No such booking: {job.id!r}."
    assert world.stored(job.id) == job
    assert world.recorded() == []
    assert world.start(job, None).status is BookingStatus.IN_PROGRESS  # an admin may


def test_a_cancelled_booking_is_neither_started_nor_completed(world):
    (job,) = world.book(TOMORROW_10)
    scheduling.cancel_booking(
        world.company.id, job.id, CancelScope.THIS, uow=world.uow(), clock=world.clock
    )
    world.clock.advance(timedelta(days=2))
    world.recorded()
    for act in (world.start, world.complete):
        with pytest.raises(InvalidTransition, match="it is already cancelled"):
            act(job)
    assert world.stored(job.id).status is BookingStatus.CANCELLED
    assert world.recorded() == []


def test_refusals_name_why(world):
    (job,) = world.book(TOMORROW_10)
    with pytest.raises(InvalidTransition, match="the job has not started yet"):
        world.complete(job)  # a scheduled job cannot be completed before its start
    world.start(job)  # a day early
    with pytest.raises(InvalidTransition, match="the job has already started"):
        world.start(job)
    with pytest.raises(InvalidTransition, match="the job is not until"):
        world.complete(job)  # completed from its own date on
    world.clock.advance(timedelta(days=1))
    world.complete(job)
    with pytest.raises(InvalidTransition, match="the job is already completed"):
        world.complete(job)
    with pytest.raises(InvalidTransition, match="the job is already completed"):
        world.start(job)


def test_an_admin_can_mark_a_past_job_done_without_a_start(world):
    (job,) = world.book(TOMORROW_10)
    world.recorded()
    world.clock.advance(timedelta(days=3))
    done = world.complete(job, None)
    assert done.status is BookingStatus.COMPLETED
    assert done.activity[-1].details == {"skippedStart": True}
    assert [e.type for e in world.recorded()] == [EventType.BOOKING_COMPLETED]


def test_completing_a_job_moves_the_customers_lifetime_statistics(world):
    (job,) = world.book(TOMORROW_10)
    with world.uow() as unit:
        customer = unit.customers.get(world.company.id, job.customer_id)
        before, _ = customer_standing(customer, uow=unit, at=world.clock.now())
    assert (before.completed, before.last_visit_at) == (0, None)
    world.clock.advance(timedelta(days=1, hours=3))
    world.start(job)
    world.clock.advance(timedelta(hours=3))
    world.complete(job)
    with world.uow() as unit:
        after, _ = customer_standing(customer, uow=unit, at=world.clock.now())
    assert (after.completed, after.last_visit_at, after.next_visit_at) == (1, job.start, None)


def test_only_the_plan_visit_acted_on_changes(world):
    visits = world.book(TOMORROW_10, "weekly")
    world.recorded()
    world.clock.advance(timedelta(days=1, hours=3))
    world.start(visits[0])
    assert [(e.type, e.subject.id) for e in world.recorded()] == [  # type: ignore[union-attr]
        (EventType.BOOKING_STARTED, visits[0].id)
    ]
    world.complete(visits[0])
    assert [(e.type, e.subject.id) for e in world.recorded()] == [  # type: ignore[union-attr]
        (EventType.BOOKING_COMPLETED, visits[0].id)
    ]
    assert world.stored(visits[0].id).status is BookingStatus.COMPLETED
    assert [world.stored(v.id) for v in visits[1:]] == visits[1:]


# --- A crew member's jobs ---------------------------------------------------------------


def test_crew_jobs_lists_the_members_open_and_done_jobs_on_those_local_days(world):
    def job(day: int, hour: int, minute: int = 0, crew=(ROSA,), days: int = 1) -> Booking:
        made = order(company_id=world.company.id, crew_ids=crew, days=days)
        return booked(made, start=datetime(2026, 3, day, hour, minute, tzinfo=NY))[0]

    # New York springs forward on 2026-03-08: that local day has 23 hours.
    late_dst_day = job(8, 23, 30)  # 03:30 UTC on the 9th: still the 8th's job
    late_eve = job(7, 23, 30)  # 04:30 UTC on the 8th: still the 7th's job
    before = job(6, 23, 30)  # 04:30 UTC on the 7th: the 6th's job
    after = job(9, 8)
    spanning = job(5, 9, days=3)  # the 5th, 6th and 7th
    ended = job(2, 9, days=3)  # the 2nd to the 4th
    bos = job(8, 9, crew=(BO,))
    team = job(8, 12, crew=(BO, ROSA))
    cancelled = cancel(job(7, 16), world.clock.now())
    done = complete_job(job(7, 13), datetime(2026, 3, 7, 20, tzinfo=UTC))
    with world.uow() as unit:
        unit.bookings.add_all(
            [late_dst_day, late_eve, before, after, spanning, ended, bos, team, cancelled, done]
        )
        unit.commit()

    def ids(start: date, days: int, member: str = ROSA) -> list[str]:
        found = scheduling.crew_jobs(world.company.id, member, start, days, uow=world.uow())
        return [b.id for b in found]

    weekend = ids(date(2026, 3, 7), 2)
    assert weekend == [spanning.id, done.id, late_eve.id, team.id, late_dst_day.id]
    assert ids(date(2026, 3, 8), 1) == [team.id, late_dst_day.id]
    assert ids(date(2026, 3, 6), 1) == [spanning.id, before.id]
    assert ids(date(2026, 3, 8), 1, BO) == [bos.id, team.id]
    assert ids(date(2026, 3, 10), 3) == []
    with pytest.raises(ValidationFailed):
        ids(date(2026, 3, 7), 0)


def test_crew_jobs_of_the_whole_crew_with_cancelled_ones_for_the_admin_calendar(world):
    def job(hour: int, crew=(ROSA,)) -> Booking:
        made = order(company_id=world.company.id, crew_ids=crew)
        return booked(made, start=datetime(2026, 3, 10, hour, tzinfo=NY))[0]

    rosas, bos, team = job(8), job(9, crew=(BO,)), job(12, crew=(BO, ROSA))
    cancelled = cancel(job(15, crew=(BO,)), world.clock.now())
    other_day = booked(
        order(company_id=world.company.id), start=datetime(2026, 3, 11, 8, tzinfo=NY)
    )
    with world.uow() as unit:
        unit.bookings.add_all([rosas, bos, team, cancelled, *other_day])
        unit.commit()

    def ids(**options: bool) -> list[str]:
        day = date(2026, 3, 10)
        found = scheduling.crew_jobs(world.company.id, None, day, 1, uow=world.uow(), **options)
        return [b.id for b in found]

    assert ids() == [rosas.id, bos.id, team.id]  # a team's job once, not once per member
    assert ids(cancelled=True) == [rosas.id, bos.id, team.id, cancelled.id]


def test_a_start_made_by_mistake_is_taken_back_and_the_job_can_be_moved_again(world):
    (job,) = world.book(TOMORROW_10)
    world.start(job)  # a day early, by mistake
    world.recorded()
    undone = scheduling.undo_start_booking(
        world.company.id, job.id, crew_member_id=None, uow=world.uow(), clock=world.clock
    )
    (event,) = world.recorded()
    assert (event.type, event.subject) == (EventType.BOOKING_START_UNDONE, world.stored(job.id))
    assert undone.status is BookingStatus.SCHEDULED
    assert undone.activity[-1].kind is ActivityKind.START_UNDONE
    # Scheduled again, it can be cancelled (a started job cannot).
    cancelled = scheduling.cancel_booking(
        world.company.id, job.id, CancelScope.THIS, uow=world.uow(), clock=world.clock
    )
    assert cancelled[0].status is BookingStatus.CANCELLED
    # Only a job in progress can be taken back; nothing changes otherwise.
    with pytest.raises(InvalidTransition):
        scheduling.undo_start_booking(
            world.company.id, job.id, crew_member_id=None, uow=world.uow(), clock=world.clock
        )
    assert world.stored(job.id).status is BookingStatus.CANCELLED


def test_a_job_no_longer_scheduled_is_refused_a_move_for_its_status_whatever_the_time(world):
    """A started job moved to a taken time, or to one outside the crew's hours, is told it
    has started: no other time would do."""
    (job,) = world.book(TOMORROW_10)
    (other,) = world.book(TOMORROW_10 + timedelta(hours=4))
    world.start(job)
    world.recorded()
    for start in (other.start, TOMORROW_10.replace(hour=23, minute=45)):
        with pytest.raises(InvalidTransition, match="the job has already started"):
            scheduling.reschedule_booking(
                world.company.id,
                job.id,
                start,
                RescheduleScope.THIS,
                uow=world.uow(),
                clock=world.clock,
                drive=DRIVE,
            )
    assert world.stored(job.id).start == job.start
    assert world.recorded() == []
