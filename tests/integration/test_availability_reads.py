"""Availability on SQLite and PostgreSQL reads only what the decision needs, and still
answers exactly as the core does with the whole calendar; a roster edit shows at once.

``list_availability`` reads the jobs of the asked dates alone (not a day either side)
and names the roster to the store so it can seek each member's few jobs; crew rows are
decoded once per stored content. None of that may change an answer.
"""

from __future__ import annotations

from datetime import date, datetime, time

import attrs
import pytest

from adapters.drivetime import ZipCentroidDriveTime
from adapters.sql import Database
from booking_core.availability import Block, Slot, SlotQuery, available_slots
from booking_core.bookings import Booking
from booking_core.clock import FixedClock
from booking_core.crew import CrewMember, WorkingHours
from booking_core.customers import Address
from booking_core.services import scheduling
from tests import factories as f
from tests.unit.bookings_support import AT, CATALOG, NY, booked, local, order

CO = CATALOG.company_id
DAY = date(2026, 3, 4)
DRIVE = ZipCentroidDriveTime()
BROOKLYN, MIDTOWN, CHELSEA = "11238", "10036", "10001"


def member(**changes: object) -> CrewMember:
    """Ann: home in Chelsea, serves three zips, works round the clock every day."""
    hours = tuple(WorkingHours(d, time(0), time(23, 59)) for d in range(1, 8))
    made = CrewMember(
        id="crew_a",
        company_id=CO,
        name="Ann",
        home_zip=CHELSEA,
        created_at=AT,
        updated_at=AT,
        service_areas=(CHELSEA, MIDTOWN, BROOKLYN),
        working_hours=hours,
    )
    return attrs.evolve(made, **changes)  # type: ignore[arg-type]


def job(start: datetime, zip_code: str) -> Booking:
    """A 150-minute clean for Ann at ``zip_code``."""
    address = Address("1 Main St", "New York", "NY", zip_code)
    return booked(order(address=address), start=start)[0]


@pytest.fixture
def shop(database: Database) -> Database:
    """Acme (the test catalog's company) with Ann on its roster."""
    with database.uow() as uow:
        uow.companies.add(f.company(id=CO, timezone="America/New_York"))
        uow.catalogs.save(CATALOG)
        uow.crew.add(member())
        uow.commit()
    return database


def listed(db: Database, days: int = 1) -> list[Slot]:
    request = scheduling.AvailabilityRequest(
        company_id=CO, service_id="svc_clean", local_date=DAY, zip_code=CHELSEA, days=days
    )
    return scheduling.list_availability(request, uow=db.reader(), clock=FixedClock(AT), drive=DRIVE)


def core_answer(crew: list[CrewMember], busy: dict[str, list[Block]], days: int) -> list[Slot]:
    """What the core lists given ``busy`` whole (the service is 120 minutes long)."""
    query = SlotQuery("svc_clean", CHELSEA, DAY, NY, 120, AT, 120, days=days)
    return available_slots(query, crew=crew, busy=busy, drive=DRIVE)


@pytest.mark.parametrize("days", [1, 2])
def test_availability_answers_as_the_core_does_with_the_whole_calendar(shop, days):
    late = job(local(2026, 3, 3, 21, 30), BROOKLYN)  # ends at the asked date's midnight
    jobs = [
        job(local(2026, 3, 2, 9), MIDTOWN),
        late,
        job(local(2026, 3, 4, 9), MIDTOWN),
        job(local(2026, 3, 5, 6), BROOKLYN),  # the second day of a two-day job
        job(local(2026, 3, 6, 0), MIDTOWN),
    ]
    with shop.uow() as uow:
        uow.bookings.add_all(jobs)
        uow.commit()
    with shop.reader() as uow:
        everything = uow.bookings.busy(CO, local(2026, 3, 1), local(2026, 3, 8))
    without_late = {"crew_a": [b for b in everything["crew_a"] if b.booking_id != late.id]}

    got = listed(shop, days)

    assert got == core_answer([member()], everything, days)
    # The job that ends as the date begins decides where Ann starts from (Brooklyn).
    assert got != core_answer([member()], without_late, days)


def test_an_edited_or_retired_crew_member_is_served_at_once(shop):
    round_the_clock = listed(shop)
    mornings = tuple(WorkingHours(d, time(9), time(12)) for d in range(1, 8))
    with shop.uow() as uow:
        uow.crew.save(member(working_hours=mornings))  # same updated_at: content decides
        uow.commit()
    morning_only = listed(shop)
    with shop.uow() as uow:
        uow.crew.save(member(working_hours=mornings, active=False))
        uow.commit()
    retired = listed(shop)

    assert round_the_clock[0].start.astimezone(NY).hour < 9
    assert morning_only
    assert all(time(9) <= s.start.astimezone(NY).time() <= time(10) for s in morning_only)
    assert retired == []
