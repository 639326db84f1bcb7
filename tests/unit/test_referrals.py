"""The referral programme in the core, over the memory unit of work: a customer's code,
the rules that refuse one (``booking_core.referrals``), and the discount a booking and a
quote take off the first visit only."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import attrs
import pytest

from adapters.memory import MemoryStore, MemoryUnitOfWork
from adapters.phone import PhonenumbersNormalizer
from booking_core.bookings import Booking
from booking_core.clock import FixedClock
from booking_core.companies import MAX_REFERRAL_DISCOUNT_CENTS, validate_company
from booking_core.customers import Address, Customer, merge, referral_key
from booking_core.demo import demo_catalog
from booking_core.drive import TableDriveTime
from booking_core.errors import ReferralRejected, ValidationFailed
from booking_core.paging import PageRequest
from booking_core.pricing import Selection
from booking_core.referrals import check_referred, referral_discount
from booking_core.services import companies, scheduling
from booking_core.services.customers import CreateCustomer, add_new_customer, create_customer
from booking_core.services.pricing import price_selection
from booking_core.services.setup import UpdateCompanySettings, update_company_settings
from tests import factories

NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)  # a Monday
DRIVE = TableDriveTime(default=20)
PHONES = PhonenumbersNormalizer()
NY = ZoneInfo("America/New_York")
HOME = Address("1 Main St", "New York", "NY", "10001")
CODE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{8}\Z")


class Shop:
    """One company with the demo catalog, a referral discount and a crew member working
    every day, over one memory store."""

    def __init__(self, discount: int = 2_500) -> None:
        self.store = MemoryStore()
        self.clock = FixedClock(NOW)
        made = companies.create_company(
            companies.CreateCompany(slug="acme", name="Acme Maids", catalog=demo_catalog()),
            uow=self.uow(),
            clock=self.clock,
        )
        self.company = update_company_settings(
            UpdateCompanySettings(company_id=made.id, referral_discount_cents=discount),
            uow=self.uow(),
        )
        with self.uow() as unit:
            unit.crew.add(factories.all_week_crew(made.id, NOW))
            unit.commit()

    def uow(self) -> MemoryUnitOfWork:
        return MemoryUnitOfWork(self.store)

    def customer(self, email: str) -> Customer:
        made, _ = create_customer(
            CreateCustomer(company_id=self.company.id, name="Friend", email=email),
            uow=self.uow(),
            clock=self.clock,
            phones=PHONES,
        )
        return made

    def book(
        self, hour: int, code: str | None, email: str = "new@example.com", **kw: object
    ) -> list[Booking]:
        start = datetime(2026, 11, 24, hour, tzinfo=NY)  # a Tuesday
        return scheduling.create_booking(
            scheduling.CreateBooking(
                company_id=self.company.id,
                service_id="svc_standard_clean",
                frequency_slug=str(kw.pop("frequency", "one_time")),
                start=start,
                customer=scheduling.CustomerDetails(name="New", email=email),
                address=HOME,
                referral_code=code,
                **kw,  # type: ignore[arg-type]
            ),
            uow=self.uow(),
            clock=self.clock,
            drive=DRIVE,
            phones=PHONES,
        )

    def customers(self) -> list[Customer]:
        with self.uow() as unit:
            return list(unit.customers.list(self.company.id, PageRequest(limit=200)).items)


def test_a_new_customer_gets_a_random_referral_code_of_eight_crockford_characters():
    shop = Shop()
    codes = {shop.customer(f"c{i}@example.com").referral_code for i in range(20)}
    assert len(codes) == 20
    assert all(CODE.match(code) for code in codes)


def test_a_typed_code_is_matched_trimmed_and_case_insensitively():
    assert referral_key("  k7q3xm2p\t") == "K7Q3XM2P"
    assert referral_key("K7Q3XM2P") == "K7Q3XM2P"


def test_a_drawn_code_already_taken_in_the_company_is_drawn_again():
    shop = Shop()
    holder = shop.customer("holder@example.com")
    clash = attrs.evolve(factories.customer(shop.company.id), referral_code=holder.referral_code)
    with shop.uow() as unit:
        stored, created = add_new_customer(unit, clash)
        unit.commit()
    assert created
    assert stored.id == clash.id
    assert stored.referral_code != holder.referral_code
    assert CODE.match(stored.referral_code)


def test_the_rules_refuse_in_order_naming_each():
    company = factories.company()
    friend, me = factories.customer(company.id), factories.customer(company.id)
    on = attrs.evolve(company, referral_discount_cents=2_500)

    with pytest.raises(ReferralRejected) as off:
        referral_discount(company, "ABC", friend)
    with pytest.raises(ReferralRejected) as unknown:
        referral_discount(on, "ABC", None)
    with pytest.raises(ReferralRejected) as own:
        check_referred("ABC", me, me, booked=False)
    with pytest.raises(ReferralRejected) as booked:
        check_referred("ABC", friend, me, booked=True)

    assert referral_discount(on, "ABC", friend) == (2_500, friend)
    check_referred("ABC", friend, me, booked=False)
    assert [e.value.rule for e in (off, unknown, own, booked)] == [
        "disabled",
        "unknown",
        "own_code",
        "not_first_booking",
    ]
    assert off.value.message == "Referral codes are not enabled for this company."
    assert "'ABC'" in unknown.value.message


def test_the_company_setting_is_0_to_one_million_dollars():
    company = factories.company()
    assert company.referral_discount_cents == 0  # off for a new company
    validate_company(attrs.evolve(company, referral_discount_cents=MAX_REFERRAL_DISCOUNT_CENTS))
    for wrong in (-1, MAX_REFERRAL_DISCOUNT_CENTS + 1):
        with pytest.raises(ValidationFailed) as refused:
            validate_company(attrs.evolve(company, referral_discount_cents=wrong))
        assert set(refused.value.field_errors) == {"referral_discount_cents"}


def test_a_booking_with_a_friends_code_takes_the_discount_off_the_first_visit_of_a_plan():
    shop = Shop()
    friend = shop.customer("friend@example.com")

    plan = shop.book(9, f" {friend.referral_code.lower()} ", frequency="weekly")

    assert plan[0].price.referral_discount_cents == 2_500
    assert all(v.price.referral_discount_cents == 0 for v in plan[1:])
    assert plan[0].activity[0].details["referredBy"] == friend.id
    assert all("referredBy" not in v.activity[0].details for v in plan[1:])


def test_a_refused_code_writes_nothing():
    shop = Shop(discount=0)
    friend = shop.customer("friend@example.com")
    with pytest.raises(ReferralRejected):
        shop.book(9, friend.referral_code)
    assert [c.email for c in shop.customers()] == ["friend@example.com"]
    with shop.uow() as unit:
        assert unit.bookings.for_customer(shop.company.id, friend.id) == []


def test_a_returning_customer_and_the_codes_owner_are_refused():
    shop = Shop()
    friend = shop.customer("friend@example.com")
    shop.book(9, None, email="back@example.com")

    with pytest.raises(ReferralRejected) as returning:
        shop.book(13, friend.referral_code, email="BACK@example.com")
    with pytest.raises(ReferralRejected) as own:
        shop.book(13, friend.referral_code, email="friend@example.com")

    assert returning.value.rule == "not_first_booking"
    assert own.value.rule == "own_code"


def test_a_merged_records_code_refers_to_its_survivor():
    shop = Shop()
    survivor = shop.customer("survivor@example.com")
    merged = shop.customer("merged@example.com")
    with shop.uow() as unit:
        kept, gone = merge(survivor, merged, at=NOW)
        unit.customers.save(kept)
        unit.customers.save(gone)
        unit.commit()

    made = shop.book(9, merged.referral_code)

    assert made[0].activity[0].details["referredBy"] == survivor.id


def test_a_quote_with_a_code_takes_the_discount_off_the_first_visit_only():
    shop = Shop()
    friend = shop.customer("friend@example.com")
    selection = Selection(service_id="svc_standard_clean", frequency_slug="weekly")

    priced = price_selection(
        shop.company.id,
        selection,
        referral_code=friend.referral_code,
        uow=shop.uow(),
        clock=shop.clock,
    )

    assert priced.first_visit.referral_discount_cents == 2_500
    assert priced.later_visits is not None
    assert priced.later_visits.referral_discount_cents == 0
    with pytest.raises(ReferralRejected):
        price_selection(
            shop.company.id, selection, referral_code="NOPE", uow=shop.uow(), clock=shop.clock
        )
