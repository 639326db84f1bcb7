"""``booking plans extend`` racing a booking of the same crew member, on both SQL
backends: the extension holds the member's calendar (``hold_crew``) before it checks its
new visits, as bookings do, so a job booked meanwhile right after the new visit (no
overlap, which storage's constraint would catch, but no time to drive there either)
waits for it and is refused, instead of both going through."""

from __future__ import annotations

from datetime import timedelta

from adapters.phone import PhonenumbersNormalizer
from adapters.sql import Database
from booking_core.clock import FixedClock
from booking_core.customers import Address
from booking_core.drive import TableDriveTime
from booking_core.errors import SlotTaken
from booking_core.services import scheduling
from booking_core.services.plan_upkeep import PlanExtension, extend_plans
from tests.integration.test_booking_races import NOW, solo_company
from tests.integration.test_merge_races import _held_at_commit, race_held

DRIVE = TableDriveTime(default=20, same_zip=20)
HOME = Address("1 Main St", "New York", "NY", "10001")
LATER = FixedClock(NOW + timedelta(days=7))


def _book(db: Database, company_id: str, frequency: str, start, crew_ids=None, clock=LATER):
    return scheduling.create_booking(
        scheduling.CreateBooking(
            company_id=company_id,
            service_id="svc_standard_clean",
            frequency_slug=frequency,
            start=start,
            customer=scheduling.CustomerDetails(name="Ada", email="ada@example.com"),
            address=HOME,
            crew_ids=crew_ids,
        ),
        uow=db.uow(),
        clock=clock,
        drive=DRIVE,
        phones=PhonenumbersNormalizer(),
    )


def test_a_job_booked_against_a_plan_being_extended_waits_for_it_and_is_refused(database):
    company = solo_company(database, "weekly", "Weekly Maids")
    visits = _book(
        database, company.id, "weekly", NOW + timedelta(days=1, hours=3), clock=FixedClock(NOW)
    )
    last = max(visits, key=lambda v: v.visit_index)
    # The visit a week's extension adds, and a job starting on the first quarter hour
    # after it ends: no overlap, but no 20 minutes to drive from one to the other.
    next_start = last.start + timedelta(days=7)
    ends = next_start + (last.end - last.start)
    next_end = ends + timedelta(minutes=-ends.minute % 15)  # the first quarter hour after

    held_uow, reached, release = _held_at_commit(database)
    extended: list[PlanExtension] = []
    extension_errors, booking_errors = race_held(
        lambda: extended.extend(
            extend_plans(
                company.id,
                uow_factory=iter([database.uow(), held_uow]).__next__,
                clock=LATER,
                drive=DRIVE,
            )
        ),
        reached,
        release,
        lambda: _book(database, company.id, "one_time", next_end, crew_ids=("crew_solo",)),
    )

    assert extension_errors == []
    assert [(e.added, e.problem) for e in extended] == [(1, None)]
    assert len(booking_errors) == 1
    assert isinstance(booking_errors[0], SlotTaken)
    with database.uow() as uow:
        starts = sorted(b.start for b in uow.bookings.of_plan(company.id, last.plan_id))
        assert starts[-1] == next_start
        kept = uow.bookings.for_customer(company.id, last.customer_id)
    assert next_end not in {b.start for b in kept}
