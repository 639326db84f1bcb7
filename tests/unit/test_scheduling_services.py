"""The scheduling use cases over the memory adapters: book through availability, extend
plans over the rolling horizon, cancel and reschedule with scopes."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import attrs
import pytest

from adapters.memory import MemoryStore, MemoryUnitOfWork
from adapters.phone import PhonenumbersNormalizer
from booking_core.clock import FixedClock
from booking_core.crew import WorkingHours
from booking_core.customers import Address
from booking_core.demo import demo_catalog
from booking_core.drive import TableDriveTime
from booking_core.errors import SlotTaken, SlotUnavailable, ValidationFailed
from booking_core.plans import PLAN_HORIZON_DAYS, CancelScope, RescheduleScope
from booking_core.services import companies, scheduling
from booking_core.services.plan_upkeep import extend_plans
from tests import factories

NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)  # a Monday
DRIVE = TableDriveTime(default=20)
HOME = Address("1 Main St", "New York", "NY", "10001")


@pytest.fixture
def world():
    store = MemoryStore()
    clock = FixedClock(NOW)

    def uow():
        return MemoryUnitOfWork(store)

    company = companies.create_company(
        companies.CreateCompany(slug="acme", name="Acme Maids", catalog=demo_catalog()),
        uow=uow(),
        clock=clock,
    )
    with uow() as unit:
        unit.crew.add(factories.all_week_crew(company.id, NOW))
        unit.commit()
    return store, clock, uow, company


def book(world, start, frequency="one_time", email="ada@example.com"):
    _, clock, uow, company = world
    return scheduling.create_booking(
        scheduling.CreateBooking(
            company_id=company.id,
            service_id="svc_standard_clean",
            frequency_slug=frequency,
            start=start,
            customer=scheduling.CustomerDetails(name="Ada", email=email),
            address=HOME,
        ),
        uow=uow(),
        clock=clock,
        drive=DRIVE,
        phones=PhonenumbersNormalizer(),
    )


def tuesday_at(hour: int) -> datetime:
    # New York is UTC-5 in November.
    return datetime(2026, 11, 24, tzinfo=UTC) + timedelta(hours=hour + 5)


def test_a_listed_slot_books_and_then_is_no_longer_listed(world):
    _, clock, uow, company = world
    request = scheduling.AvailabilityRequest(
        company_id=company.id,
        service_id="svc_standard_clean",
        local_date=tuesday_at(0).date(),
        zip_code="10001",
    )
    before = scheduling.list_availability(request, uow=uow(), clock=clock, drive=DRIVE)
    chosen = before[0]
    made = book(world, chosen.start)
    assert made[0].crew_ids == ("crew_rosa",)
    after = scheduling.list_availability(request, uow=uow(), clock=clock, drive=DRIVE)
    assert chosen.start not in [slot.start for slot in after]
    with pytest.raises(SlotTaken):
        book(world, chosen.start, email="grace@example.com")


def test_a_slot_lost_to_a_racing_request_names_the_member_only_when_the_request_did(
    world, monkeypatch
):
    """The hold of the chosen member fails (another request took it meanwhile): a
    request that named no crew is not told which member the service had chosen."""
    from adapters.memory.bookings import MemoryBookingRepository

    def lost(self, bookings):
        raise SlotTaken(bookings[0].start.isoformat(), bookings[0].crew_ids[0])

    monkeypatch.setattr(MemoryBookingRepository, "add_all", lost)
    with pytest.raises(SlotTaken) as anonymous:
        book(world, tuesday_at(9))
    assert anonymous.value.crew_id is None
    assert "crew member" not in str(anonymous.value)
    _, clock, uow, company = world
    with pytest.raises(SlotTaken) as named:
        scheduling.create_booking(
            scheduling.CreateBooking(
                company_id=company.id,
                service_id="svc_standard_clean",
                frequency_slug="one_time",
                start=tuesday_at(9),
                customer=scheduling.CustomerDetails(name="Ada", email="ada@example.com"),
                address=HOME,
                crew_ids=("crew_rosa",),
            ),
            uow=uow(),
            clock=clock,
            drive=DRIVE,
            phones=PhonenumbersNormalizer(),
        )
    assert named.value.crew_id == "crew_rosa"


def test_the_last_bookable_date_lists_only_starts_booking_takes(world):
    """On 2199-12-31 a New York evening start is already 2200 in UTC, which no instant
    of the API may be: it is not listed, and the last one listed books."""
    _, clock, uow, company = world
    late = attrs.evolve(
        factories.all_week_crew(company.id, NOW, member_id="crew_late"),
        working_hours=tuple(WorkingHours(d, time(8), time(23, 45)) for d in range(1, 8)),
    )
    with uow() as unit:
        unit.crew.add(late)
        unit.commit()
    request = scheduling.AvailabilityRequest(
        company_id=company.id,
        service_id="svc_standard_clean",
        local_date=date(2199, 12, 31),
        zip_code="10001",
    )
    listed = scheduling.list_availability(request, uow=uow(), clock=clock, drive=DRIVE)
    assert listed
    assert max(slot.start for slot in listed) < datetime(2200, 1, 1, tzinfo=UTC)
    assert book(world, max(slot.start for slot in listed))
    with pytest.raises(ValidationFailed):
        book(world, datetime(2200, 1, 1, 0, 30, tzinfo=UTC), email="grace@example.com")
    # A weekly plan a week before, at the same evening hour: no visit is made in 2200 UTC.
    evening = datetime(2199, 12, 25, 2, 15, tzinfo=UTC)  # 2199-12-24 21:15 in New York
    visits = book(world, evening, frequency="weekly", email="plan@example.com")
    assert [v.start for v in visits] == [evening]


def test_a_start_outside_working_hours_is_unavailable(world):
    with pytest.raises(SlotUnavailable):
        book(world, tuesday_at(19))


def test_extending_plans_adds_the_visits_that_came_within_the_horizon(world):
    _, clock, uow, company = world
    made = book(world, tuesday_at(9), frequency="weekly")
    assert all(v.start < NOW + timedelta(days=PLAN_HORIZON_DAYS + 1) for v in made)
    assert extend_plans(company.id, uow_factory=uow, clock=clock, drive=DRIVE)[0].added == 0
    clock.advance(timedelta(days=14))
    results = extend_plans(company.id, uow_factory=uow, clock=clock, drive=DRIVE)
    assert [(r.added, r.problem) for r in results] == [(2, None)]
    with uow() as unit:
        visits = unit.bookings.of_plan(company.id, made[0].plan_id)
    assert len(visits) == len(made) + 2
    assert [v.visit_index for v in visits] == list(range(len(visits)))
    # Running it again adds nothing.
    assert extend_plans(company.id, uow_factory=uow, clock=clock, drive=DRIVE)[0].added == 0


def test_cancel_this_and_future_leaves_earlier_visits_scheduled(world):
    _, clock, uow, company = world
    made = book(world, tuesday_at(9), frequency="weekly")
    changed = scheduling.cancel_booking(
        company.id, made[2].code, CancelScope.THIS_AND_FUTURE, uow=uow(), clock=clock
    )
    assert {b.id for b in changed} == {b.id for b in made[2:]}
    with uow() as unit:
        kept = [unit.bookings.get(company.id, b.id).status for b in made[:2]]
    assert [s.value for s in kept] == ["scheduled", "scheduled"]


@pytest.mark.parametrize(
    ("crew_ids", "errors"),
    [
        (("crew_rosa", "crew_rosa"), {"crew_ids.1": "Listed twice."}),
        ((), {"crew_ids": "At least one crew member."}),
    ],
)
def test_a_reschedule_refuses_a_crew_list_a_booking_refuses_and_moves_nothing(
    world, crew_ids, errors
):
    """Not read as a set (a member dropped) nor as "keep the crew", as availability would."""
    _, clock, uow, company = world
    (made,) = book(world, tuesday_at(9))
    with pytest.raises(ValidationFailed) as caught:
        scheduling.reschedule_booking(
            company.id,
            made.id,
            tuesday_at(14),
            RescheduleScope.THIS,
            crew_ids=crew_ids,
            uow=uow(),
            clock=clock,
            drive=DRIVE,
        )
    assert caught.value.field_errors == errors
    with uow() as unit:
        assert unit.bookings.get(company.id, made.id) == made


def test_moving_a_plan_along_without_crew_ids_keeps_each_visits_own_crew(world):
    """A later visit given to another member keeps that member when the plan moves."""
    _, clock, uow, company = world
    with uow() as unit:
        unit.crew.add(factories.all_week_crew(company.id, NOW, member_id="crew_sam"))
        unit.commit()
    made = book(world, tuesday_at(9), frequency="weekly")
    assert {v.crew_ids for v in made} == {("crew_rosa",)}

    def move(visit, start, scope, crew_ids=None):
        return scheduling.reschedule_booking(
            company.id,
            visit.id,
            start,
            scope,
            crew_ids=crew_ids,
            uow=uow(),
            clock=clock,
            drive=DRIVE,
        )

    move(made[2], made[2].start, RescheduleScope.THIS, ("crew_sam",))
    changed = move(made[1], made[1].start + timedelta(hours=1), RescheduleScope.THIS_AND_FUTURE)
    assert {v.id for v in changed} == {v.id for v in made[1:]}
    with uow() as unit:
        crews = [unit.bookings.get(company.id, v.id).crew_ids for v in made]
    assert crews[2] == ("crew_sam",)
    assert set(crews[:2] + crews[3:]) == {("crew_rosa",)}


def test_customer_statistics_come_from_real_visits_and_the_ledger(world):
    from booking_core.ledger import Kind, Method
    from booking_core.services.customers import customer_standings
    from booking_core.services.payments import RecordPayment, record_payment

    _, clock, uow, company = world
    first = book(world, tuesday_at(9))[0]
    book(world, tuesday_at(14))
    for kind, cents in ((Kind.PAYMENT, 14_000), (Kind.TIP, 2_000)):
        record_payment(
            RecordPayment(
                company_id=company.id,
                booking_id=first.id,
                kind=kind,
                amount_cents=cents,
                method=Method.CASH,
            ),
            uow=uow(),
            clock=clock,
        )
    with uow() as unit:
        customer = unit.customers.get(company.id, first.customer_id)
        ((stats, churn),) = customer_standings([customer], uow=unit, at=clock.now()).values()
    assert (stats.bookings, stats.completed, stats.paid_cents) == (2, 0, 14_000)
    assert stats.next_visit_at == first.start
    assert churn.level.value == "low"


def test_a_plans_slots_on_the_night_the_clocks_go_back_are_ranked_by_instant(world):
    # Night crew on Sundays, 00:30-06:00 New York time; 7 November 2027 the clocks go
    # back at 02:00, so the wall clock shows 01:00-01:59 twice. A weekly plan's slots
    # are ranked by drive minutes, then by instant: 01:00 EDT before 01:00 EST.
    _, clock, uow, company = world
    night = attrs.evolve(
        factories.all_week_crew(company.id, NOW, member_id="crew_night"),
        name="Nina",
        working_hours=(WorkingHours(7, time(0, 30), time(6)),),
    )
    with uow() as unit:
        unit.crew.add(night)
        unit.commit()
    request = scheduling.AvailabilityRequest(
        company_id=company.id,
        service_id="svc_standard_clean",
        local_date=date(2027, 11, 7),
        zip_code="10001",
        frequency_slug="weekly",
    )
    slots = scheduling.list_availability(request, uow=uow(), clock=clock, drive=DRIVE)
    ranked = [(s.drive_minutes, s.start.astimezone(UTC)) for s in slots]
    assert ranked == sorted(ranked)
    one_oclock = [s.start.isoformat() for s in slots if s.start.hour == 1 and s.start.minute == 0]
    assert one_oclock == ["2027-11-07T01:00:00-04:00", "2027-11-07T01:00:00-05:00"]
