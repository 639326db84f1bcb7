"""Coupon rules on the booking path (``scheduling.create_booking`` over the memory
adapters), not only on the quote: the validity window is judged at the instant of
booking, redemptions are counted from storage, and a refused booking stores nothing."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import attrs
import pytest

from adapters.memory import MemoryStore, MemoryUnitOfWork
from adapters.phone import PhonenumbersNormalizer
from booking_core.bookings import Booking
from booking_core.clock import FixedClock
from booking_core.companies import Company
from booking_core.coupons import Coupon, CouponUsage
from booking_core.crew import WorkingHours, new_crew_member
from booking_core.customers import Address
from booking_core.demo import demo_catalog
from booking_core.drive import TableDriveTime
from booking_core.errors import CouponRejected
from booking_core.pricing import DiscountKind
from booking_core.services import companies, scheduling

NY = ZoneInfo("America/New_York")
OPENS = datetime(2026, 11, 23, 12, tzinfo=UTC)  # a Monday
CLOSES = OPENS + timedelta(days=7)
HOME = Address("1 Main St", "New York", "NY", "10001")
WINDOW = Coupon("cpn_window", "Window10", percent_bps=1_000, valid_from=OPENS, valid_until=CLOSES)
TWICE = Coupon("cpn_twice", "Twice5", amount_cents=500, max_redemptions=2)
ONCE_EACH = Coupon("cpn_once_each", "OnceEach", amount_cents=700, per_customer_limit=1)
COUPONS = {c.id: c for c in (WINDOW, TWICE, ONCE_EACH)}


@attrs.define
class World:
    store: MemoryStore
    clock: FixedClock
    company: Company
    days_booked: int = 0

    def uow(self) -> MemoryUnitOfWork:
        return MemoryUnitOfWork(self.store)

    def book(self, coupon: str | None, *, email: str = "ada@example.com") -> Booking:
        """A one-time standard clean at 09:00 New York time on a fresh day next week."""
        self.days_booked += 1
        day = (self.clock.now() + timedelta(days=1 + self.days_booked)).astimezone(NY).date()
        start = datetime.combine(day, time(9), tzinfo=NY)
        (made,) = scheduling.create_booking(
            scheduling.CreateBooking(
                company_id=self.company.id,
                service_id="svc_standard_clean",
                frequency_slug="one_time",
                start=start,
                customer=scheduling.CustomerDetails(name="Ada", email=email),
                address=HOME,
                coupon_code=coupon,
            ),
            uow=self.uow(),
            clock=self.clock,
            drive=TableDriveTime(default=20),
            phones=PhonenumbersNormalizer(),
        )
        return made

    def refusal(self, coupon: str, *, email: str = "ada@example.com") -> CouponRejected:
        with pytest.raises(CouponRejected) as caught:
            self.book(coupon, email=email)
        return caught.value

    def usage(self, coupon_id: str, email: str = "ada@example.com") -> CouponUsage:
        with self.uow() as unit:
            customer = unit.customers.by_email(self.company.id, email)
            customer_id = customer.id if customer is not None else None
            return unit.coupon_redemptions.usage(self.company.id, coupon_id, customer_id)

    def bookings_of(self, email: str) -> list[Booking]:
        with self.uow() as unit:
            customer = unit.customers.by_email(self.company.id, email)
            if customer is None:
                return []
            return unit.bookings.for_customer(self.company.id, customer.id)


@pytest.fixture
def world() -> World:
    store = MemoryStore()
    clock = FixedClock(OPENS)
    catalog = attrs.evolve(demo_catalog(), coupons=tuple(COUPONS.values()))
    company = companies.create_company(
        companies.CreateCompany(slug="acme", name="Acme Maids", catalog=catalog),
        uow=MemoryUnitOfWork(store),
        clock=clock,
    )
    with MemoryUnitOfWork(store) as unit:
        unit.crew.add(
            new_crew_member(
                member_id="crew_rosa",
                company_id=company.id,
                name="Rosa",
                home_zip="10001",
                at=OPENS,
                service_areas=("10001",),
                working_hours=tuple(WorkingHours(d, time(7), time(20)) for d in range(1, 8)),
            )
        )
        unit.commit()
    return World(store, clock, company)


def coupon_lines(booking: Booking) -> list[tuple[str | None, int]]:
    return [
        (d.code, d.amount_cents) for d in booking.price.discounts if d.kind is DiscountKind.COUPON
    ]


# Plain one-time standard clean: 9000 + 1 bedroom 2500 + 1 bathroom 2000 = 13500.


# --- validity window -----------------------------------------------------------------------


def test_a_booking_before_the_coupon_window_opens_is_refused_and_stores_nothing(world):
    world.clock = FixedClock(OPENS - timedelta(seconds=1))
    refused = world.refusal("window10")
    assert (refused.code, refused.rule) == ("Window10", "not_yet_valid")
    assert refused.message == "Coupon 'Window10' cannot be used: it is not valid yet."
    assert world.bookings_of("ada@example.com") == []
    assert world.usage(WINDOW.id) == CouponUsage(0, 0)


def test_a_booking_at_the_instant_the_coupon_window_opens_takes_the_coupon(world):
    made = world.book("WINDOW10")
    assert coupon_lines(made) == [("Window10", 1_350)]
    assert made.price.discounted_subtotal_cents == 13_500 - 1_350
    assert world.usage(WINDOW.id) == CouponUsage(1, 1)


def test_a_booking_one_second_before_the_window_closes_takes_the_coupon(world):
    world.clock = FixedClock(CLOSES - timedelta(seconds=1))
    assert coupon_lines(world.book("window10")) == [("Window10", 1_350)]


def test_a_booking_at_the_instant_the_coupon_window_closes_is_refused_as_expired(world):
    world.clock = FixedClock(CLOSES)
    refused = world.refusal("window10")
    assert (refused.code, refused.rule) == ("Window10", "expired")
    assert refused.message == "Coupon 'Window10' cannot be used: it has expired."
    assert world.bookings_of("ada@example.com") == []


def test_the_window_is_judged_when_booking_not_at_the_start_of_the_job(world):
    """Booked the day before the window closes for a job a week later: the coupon holds."""
    world.clock = FixedClock(CLOSES - timedelta(days=1))
    world.days_booked = 6
    made = world.book("window10")
    assert made.start > CLOSES
    assert coupon_lines(made) == [("Window10", 1_350)]


# --- redemption limits ------------------------------------------------------------------


def test_a_coupon_is_booked_up_to_its_redemption_limit_then_refused(world):
    first = world.book("twice5", email="ada@example.com")
    second = world.book("twice5", email="grace@example.com")
    assert coupon_lines(first) == coupon_lines(second) == [("Twice5", 500)]
    assert world.usage(TWICE.id, "grace@example.com") == CouponUsage(2, 1)

    refused = world.refusal("twice5", email="alan@example.com")

    assert (refused.code, refused.rule) == ("Twice5", "max_redemptions")
    assert refused.message == (
        "Coupon 'Twice5' cannot be used: it has been redeemed the maximum number of times."
    )
    assert world.bookings_of("alan@example.com") == []
    assert world.usage(TWICE.id) == CouponUsage(2, 1)


def test_a_coupon_limited_per_customer_is_refused_to_a_customer_who_used_it(world):
    assert coupon_lines(world.book("onceeach")) == [("OnceEach", 700)]

    refused = world.refusal("ONCEEACH")

    assert (refused.code, refused.rule) == ("OnceEach", "per_customer_limit")
    assert refused.message == (
        "Coupon 'OnceEach' cannot be used: this customer has used it the maximum number of times."
    )
    assert len(world.bookings_of("ada@example.com")) == 1
    assert world.usage(ONCE_EACH.id) == CouponUsage(1, 1)


def test_a_coupon_limited_per_customer_is_still_accepted_for_another_customer(world):
    world.book("onceeach", email="ada@example.com")
    made = world.book("onceeach", email="grace@example.com")
    assert coupon_lines(made) == [("OnceEach", 700)]
    assert world.usage(ONCE_EACH.id, "grace@example.com") == CouponUsage(2, 1)


def test_a_booking_without_a_coupon_redeems_nothing(world):
    made = world.book(None)
    assert coupon_lines(made) == []
    assert all(world.usage(coupon_id) == CouponUsage(0, 0) for coupon_id in COUPONS)
