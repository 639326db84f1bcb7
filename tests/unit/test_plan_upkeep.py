"""``extend_plans`` over the memory adapters: a plan keeps the price terms it was booked
with, one plan that cannot be extended never holds back the others, and the horizon is
counted in the company's local days across DST changes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import attrs
import pytest

from adapters.memory import MemoryStore, MemoryUnitOfWork
from adapters.phone import PhonenumbersNormalizer
from booking_core.bookings import Booking
from booking_core.catalog import Catalog
from booking_core.clock import FixedClock
from booking_core.companies import Company
from booking_core.coupons import Coupon
from booking_core.crew import TimeOff, WorkingHours, new_crew_member
from booking_core.customers import Address
from booking_core.demo import demo_catalog
from booking_core.drive import TableDriveTime
from booking_core.errors import CouponRejected, UnknownCatalogItem
from booking_core.plans import RescheduleScope
from booking_core.pricing import DiscountKind
from booking_core.services import companies, scheduling
from booking_core.services.plan_upkeep import extend_plans
from tests import factories

NY = ZoneInfo("America/New_York")
NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)  # a Monday
DRIVE = TableDriveTime(default=20)
HOME = Address("1 Main St", "New York", "NY", "10001")
SOON = Coupon(
    "cpn_soon",
    "SOON20",
    percent_bps=2_000,
    valid_until=NOW + timedelta(days=1),
    max_redemptions=1,
    per_customer_limit=1,
)


@attrs.define
class World:
    store: MemoryStore
    clock: FixedClock
    company: Company

    def uow(self) -> MemoryUnitOfWork:
        return MemoryUnitOfWork(self.store)

    def book(
        self, start: datetime, *, email: str = "ada@example.com", coupon: str | None = None
    ) -> list[Booking]:
        return scheduling.create_booking(
            scheduling.CreateBooking(
                company_id=self.company.id,
                service_id="svc_standard_clean",
                frequency_slug="weekly",
                start=start,
                customer=scheduling.CustomerDetails(name="Ada", email=email),
                address=HOME,
                coupon_code=coupon,
            ),
            uow=self.uow(),
            clock=self.clock,
            drive=DRIVE,
            phones=PhonenumbersNormalizer(),
        )

    def change_catalog(self, change: Callable[[Catalog], Catalog]) -> None:
        with self.uow() as unit:
            unit.catalogs.save(change(unit.catalogs.get(self.company.id)))
            unit.commit()

    def plan(self, plan_id: str | None) -> list[Booking]:
        assert plan_id is not None
        with self.uow() as unit:
            return unit.bookings.of_plan(self.company.id, plan_id)

    def extend(self) -> list[tuple[str, int, str | None]]:
        results = extend_plans(self.company.id, uow_factory=self.uow, clock=self.clock, drive=DRIVE)
        return [(r.plan_id, r.added, r.problem) for r in results]


def make_world(now: datetime) -> World:
    store = MemoryStore()
    clock = FixedClock(now)
    catalog = attrs.evolve(demo_catalog(), coupons=(*demo_catalog().coupons, SOON))
    company = companies.create_company(
        companies.CreateCompany(slug="acme", name="Acme Maids", catalog=catalog),
        uow=MemoryUnitOfWork(store),
        clock=clock,
    )
    with MemoryUnitOfWork(store) as unit:
        for name in ("rosa", "sam"):
            unit.crew.add(
                new_crew_member(
                    member_id=f"crew_{name}",
                    company_id=company.id,
                    name=name.title(),
                    home_zip="10001",
                    at=now,
                    service_areas=("10001",),
                    working_hours=tuple(WorkingHours(d, time(7), time(20)) for d in range(1, 8)),
                )
            )
        unit.commit()
    return World(store, clock, company)


@pytest.fixture
def world() -> World:
    return make_world(NOW)


def at_local(day: datetime, hour: int, minute: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=NY).astimezone(UTC)


def coupon_lines(visit: Booking) -> list[tuple[str | None, int]]:
    return [
        (d.code, d.amount_cents) for d in visit.price.discounts if d.kind is DiscountKind.COUPON
    ]


# --- Price terms -------------------------------------------------------------------------


def test_a_plan_booked_with_a_coupon_since_expired_and_used_up_still_extends_with_it(world):
    made = world.book(at_local(NOW + timedelta(days=1), 9), coupon="soon20")
    assert all(coupon_lines(v) for v in made)
    world.clock.advance(timedelta(days=14))  # SOON20 has expired and has no redemption left

    assert world.extend() == [(made[0].plan_id, 2, None)]

    visits = world.plan(made[0].plan_id)
    added = visits[len(made) :]
    assert len(added) == 2
    for visit in added:
        assert coupon_lines(visit) == coupon_lines(made[-1])
        assert visit.price.total_cents == made[-1].price.total_cents


def test_a_plan_keeps_its_coupon_after_it_is_switched_off_and_its_window_closed(world):
    made = world.book(at_local(NOW + timedelta(days=1), 9), coupon="SOON20")

    def switched_off(catalog: Catalog) -> Catalog:
        coupons = tuple(
            attrs.evolve(c, active=False, valid_from=NOW + timedelta(days=300))
            if c.id == SOON.id
            else c
            for c in catalog.coupons
        )
        return attrs.evolve(catalog, coupons=coupons)

    world.change_catalog(switched_off)
    world.clock.advance(timedelta(days=7))

    assert world.extend() == [(made[0].plan_id, 1, None)]
    assert coupon_lines(world.plan(made[0].plan_id)[-1]) == coupon_lines(made[-1])


def test_a_plan_of_a_service_since_retired_keeps_extending_at_its_price(world):
    made = world.book(at_local(NOW + timedelta(days=1), 9))

    world.change_catalog(
        lambda catalog: factories.with_service_retired(catalog, "svc_standard_clean")
    )
    world.clock.advance(timedelta(days=7))

    assert world.extend() == [(made[0].plan_id, 1, None)]
    added = world.plan(made[0].plan_id)[-1]
    assert added.price.total_cents == made[-1].price.total_cents
    with pytest.raises(UnknownCatalogItem):  # but nobody can book it anew
        world.book(at_local(NOW + timedelta(days=16), 9), email="grace@example.com")


def test_a_new_booking_with_the_expired_coupon_is_still_refused(world):
    world.book(at_local(NOW + timedelta(days=1), 9), coupon="SOON20")
    world.clock.advance(timedelta(days=14))
    with pytest.raises(CouponRejected) as refused:
        world.book(
            at_local(NOW + timedelta(days=16), 9), email="grace@example.com", coupon="SOON20"
        )
    assert refused.value.rule == "expired"


# --- One bad plan ------------------------------------------------------------------------


def test_a_plan_that_cannot_be_extended_is_skipped_and_the_others_still_extend(world):
    tuesday = world.book(at_local(NOW + timedelta(days=1), 9), coupon="SOON20")
    wednesday = world.book(at_local(NOW + timedelta(days=2), 9), email="grace@example.com")
    thursday = world.book(at_local(NOW + timedelta(days=3), 9), email="alan@example.com")
    # SOON20 leaves the catalog: the Tuesday plan's discount can no longer be priced.
    world.change_catalog(
        lambda c: attrs.evolve(c, coupons=tuple(x for x in c.coupons if x.id != SOON.id))
    )
    world.clock.advance(timedelta(days=7))

    results = {plan_id: (added, problem) for plan_id, added, problem in world.extend()}

    assert results[wednesday[0].plan_id] == (1, None)
    assert results[thursday[0].plan_id] == (1, None)
    added, problem = results[tuesday[0].plan_id]
    assert added == 0
    assert problem is not None
    assert "SOON20" in problem
    assert len(world.plan(tuesday[0].plan_id)) == len(tuesday)  # nothing of it was written
    assert len(world.plan(wednesday[0].plan_id)) == len(wednesday) + 1


def test_a_plan_whose_next_visit_collides_is_skipped_and_retried_on_the_next_run(world):
    made = world.book(at_local(NOW + timedelta(days=1), 9))
    other = world.book(at_local(NOW + timedelta(days=2), 9), email="grace@example.com")
    next_visit = made[-1].start + timedelta(days=7)
    with world.uow() as unit:  # both crew members busy at the plan's next visit
        for crew in ("crew_rosa", "crew_sam"):
            blocker = attrs.evolve(
                made[0],
                id=f"bkg_block_{crew}",
                code=f"SC-BLK{crew[-1].upper()}0",
                tracking_token=f"tok_{crew}",
                plan_id=None,
                visit_index=0,
                crew_ids=(crew,),
                start=next_visit,
                end=next_visit + timedelta(minutes=made[0].duration_minutes),
                planned_start=None,
            )
            unit.bookings.add_all([blocker])
        unit.commit()
    world.clock.advance(timedelta(days=7))

    results = {plan_id: (added, problem) for plan_id, added, problem in world.extend()}

    assert results[other[0].plan_id] == (1, None)
    assert results[made[0].plan_id][0] == 0
    assert results[made[0].plan_id][1]


def test_a_plan_whose_service_left_the_catalog_is_skipped_with_the_reason(world):
    made = world.book(at_local(NOW + timedelta(days=1), 9))

    def without_service(catalog: Catalog) -> Catalog:
        industries = tuple(
            attrs.evolve(i, services=tuple(s for s in i.services if s.id != made[0].service_id))
            for i in catalog.industries
        )
        return attrs.evolve(catalog, industries=industries)

    world.change_catalog(without_service)
    world.clock.advance(timedelta(days=7))

    ((plan_id, added, problem),) = world.extend()
    assert (plan_id, added) == (made[0].plan_id, 0)
    assert problem is not None
    assert made[0].service_id in problem


# --- The horizon in local days -----------------------------------------------------------


@pytest.mark.parametrize(
    ("today", "label"),
    [
        (datetime(2026, 2, 24, tzinfo=NY), "New York springs forward on 8 March"),
        (datetime(2026, 10, 6, tzinfo=NY), "New York falls back on 1 November"),
    ],
)
def test_extension_keeps_eight_weeks_of_visits_ahead_across_a_dst_change(today, label):
    """Run at 08:30 on the day of a 09:00 visit: the horizon ends at 08:30 local, 56 days
    on, so the visit that day is the eighth ahead and the one 56 days on is not yet in."""
    world = make_world(at_local(today, 8) - timedelta(days=21))
    made = world.book(at_local(today, 9) - timedelta(days=14))
    world.clock.current = at_local(today, 8, 30)

    world.extend()

    ahead = [v for v in world.plan(made[0].plan_id) if v.start >= world.clock.now()]
    assert len(ahead) == 8, label
    assert {v.local_start.time() for v in ahead} == {time(9)}
    assert ahead[-1].local_start.date() == (today + timedelta(days=49)).date()


# --- New visits are open for their crew --------------------------------------------------


def _change_member(world: World, member_id: str, **changes: object) -> None:
    with world.uow() as unit:
        member = unit.crew.get(world.company.id, member_id)
        unit.crew.save(attrs.evolve(member, **changes))
        unit.commit()


def test_a_plan_whose_crew_member_left_the_roster_is_skipped_naming_why(world):
    made = world.book(at_local(NOW + timedelta(days=1), 9))
    (member_id,) = made[0].crew_ids
    _change_member(world, member_id, active=False)
    world.clock.advance(timedelta(days=7))

    ((plan_id, added, problem),) = world.extend()

    assert (plan_id, added) == (made[0].plan_id, 0)
    assert problem is not None
    assert "not on the active roster" in problem
    assert len(world.plan(plan_id)) == len(made)


def test_a_visit_on_the_crew_member_s_time_off_is_not_made(world):
    made = world.book(at_local(NOW + timedelta(days=1), 9))
    (member_id,) = made[0].crew_ids
    following = made[-1].start + timedelta(days=7)
    away = TimeOff(following - timedelta(hours=2), following + timedelta(hours=6))
    _change_member(world, member_id, time_off=(away,))
    world.clock.advance(timedelta(days=7))

    ((_, added, problem),) = world.extend()

    assert added == 0
    assert problem is not None
    assert len(world.plan(made[0].plan_id)) == len(made)


def test_visits_whose_start_passed_while_runs_were_missed_are_not_made(world):
    made = world.book(at_local(NOW + timedelta(days=1), 9))
    world.clock.advance(timedelta(days=80))  # past every visit booked, and weeks beyond

    ((_, added, problem),) = world.extend()

    assert problem is None
    new = world.plan(made[0].plan_id)[len(made) :]
    assert len(new) == added > 0
    assert all(visit.start > world.clock.now() for visit in new)
    assert new[0].start - world.clock.now() <= timedelta(days=7)  # the next one is made


def test_moving_the_first_visit_months_ahead_does_not_move_the_plans_horizon(world):
    first = world.book(at_local(NOW + timedelta(days=3), 11))  # Thursday 2026-11-26
    plan_id = first[0].plan_id
    with world.uow() as unit:  # a fresh plan's last visit: 7 weeks after the first
        assert max(v.visit_index for v in unit.bookings.of_plan(world.company.id, plan_id)) == 7
    scheduling.reschedule_booking(
        world.company.id,
        first[0].id,
        at_local(NOW + timedelta(days=101), 11),  # Thursday 2027-03-04
        RescheduleScope.THIS,
        uow=world.uow(),
        clock=world.clock,
        drive=DRIVE,
    )
    world.clock.advance(timedelta(days=7))
    assert world.extend() == [(plan_id, 1, None)]  # one week on, one more visit
    visits = world.plan(plan_id)
    assert max(v.local_start for v in visits if v.visit_index > 0).date() == date(2027, 1, 21)
