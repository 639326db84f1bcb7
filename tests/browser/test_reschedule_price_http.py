"""The price of a move, shown before it is made (docs/web.md): the tracking page's time
step and the admin booking page say "The new date's price: $X (was $Y)" with the date fee
named when the new date changes the price, and a move posted without having shown that
price moves nothing. Over HTTP without a browser."""

from __future__ import annotations

import re
import secrets
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import attrs

from booking_core.bookings import Booking
from booking_core.companies import Company
from booking_core.customers import Address
from booking_core.demo import demo_catalog
from booking_core.pricing import Selection, price
from booking_core.services import scheduling
from booking_core.users import Role
from tests.browser.support import Site
from tests.browser.test_customer_pages_http import fetch, get, signing_in

NEW_YORK = ZoneInfo("America/New_York")
MONDAY = date(2027, 12, 13)
HOLIDAY = date(2027, 12, 16)  # a Thursday, made a holiday in this company's catalog


def dollars(cents: int) -> str:
    return f"${cents // 100:,}.{cents % 100:02d}"


def _monday_job(site: Site) -> tuple[Company, Booking]:
    """A company whose catalog surcharges ``HOLIDAY`` $25, and a standard clean of its
    crew member on ``MONDAY`` at 10:00 (no date fee)."""
    catalog = demo_catalog()
    catalog = attrs.evolve(
        catalog,
        fees=tuple(
            attrs.evolve(f, dates=frozenset({HOLIDAY})) if f.id == "fee_holiday" else f
            for f in catalog.fees
        ),
    )
    company, _ = site.new_company(catalog)
    site.add_member(company)
    container = site.container
    made = scheduling.create_booking(
        scheduling.CreateBooking(
            company_id=company.id,
            service_id="svc_standard_clean",
            frequency_slug="one_time",
            start=datetime.combine(MONDAY, time(10), tzinfo=NEW_YORK),
            customer=scheduling.CustomerDetails(
                name="Grace Hopper", email=f"grace-{secrets.token_hex(4)}@example.com"
            ),
            address=Address("9 Compiler Ct", "New York", "NY", "10001"),
        ),
        uow=container.uow(),
        clock=container.clock,
        drive=container.drive,
        phones=container.phones,
    )
    assert made[0].price.fees == ()
    return company, made[0]


def _holiday_total(site: Site, company: Company, booking: Booking) -> int:
    """What a fresh booking of the same visit on ``HOLIDAY`` costs."""
    with site.container.uow() as uow:
        catalog = uow.catalogs.get(company.id)
    on_holiday = datetime.combine(HOLIDAY, time(10), tzinfo=NEW_YORK)
    selection: Selection = attrs.evolve(booking.selection, start=on_holiday)
    return price(catalog, selection, at=booking.created_at).total_cents


def test_the_tracking_page_shows_the_holiday_price_before_the_customer_moves_the_visit(
    site: Site,
):
    company, booking = _monday_job(site)
    track = f"/{company.slug}/track/{booking.tracking_token}"
    at = booking.start - timedelta(days=3)
    new_total = _holiday_total(site, company, booking)
    was = booking.price.total_cents
    shown = get(site, at, f"{track}/reschedule?date={HOLIDAY.isoformat()}")
    assert shown.status_code == 200
    assert (
        f"The new date&#39;s price: {dollars(new_total)} (was {dollars(was)}), "
        "with the Holiday surcharge ($25.00)."
    ) in shown.text
    assert f'name="price" value="{new_total}"' in shown.text
    # Above the times, where a day link (to #times) opens the page: read before a pick.
    assert shown.text.index('id="price-change"') < shown.text.index('name="start"')
    start = re.findall(r'name="start" value="([^"]+)"', shown.text)[0]

    # A form that did not show the new price (an old page) moves nothing.
    _, unseen = fetch(
        site,
        at,
        ("GET", f"{track}/reschedule?date={HOLIDAY.isoformat()}", {}),
        ("POST", f"{track}/reschedule", {"start": start, "date": HOLIDAY.isoformat()}),
    )
    assert unseen.status_code == 409
    assert "The price for this date is shown below." in unseen.text
    assert "with the Holiday surcharge ($25.00)." in unseen.text
    with site.container.uow() as uow:
        assert uow.bookings.get(company.id, booking.id).start == booking.start

    _, moved = fetch(
        site,
        at,
        ("GET", f"{track}/reschedule?date={HOLIDAY.isoformat()}", {}),
        (
            "POST",
            f"{track}/reschedule",
            {"start": start, "date": HOLIDAY.isoformat(), "price": str(new_total)},
        ),
    )
    assert moved.status_code == 303
    with site.container.uow() as uow:
        stored = uow.bookings.get(company.id, booking.id)
    assert stored.start == datetime.fromisoformat(start)
    assert stored.price.total_cents == new_total
    assert [f.name for f in stored.price.fees] == ["Holiday surcharge"]


def test_the_admin_page_asks_to_confirm_a_move_that_changes_the_price(site: Site):
    company, booking = _monday_job(site)
    owner = site.user(company, Role.OWNER)
    at = booking.start - timedelta(days=3)
    new_total = _holiday_total(site, company, booking)
    page = f"/admin/bookings/{booking.id}"
    form = {"date": HOLIDAY.isoformat(), "time": "10:00", "scope": "this", "crew": ""}
    sign_in = signing_in(owner.email)
    (asked,) = fetch(site, at, *sign_in, ("GET", page, {}), ("POST", f"{page}/reschedule", form))[
        3:
    ]
    assert asked.status_code == 200
    assert (
        f"The new date&#39;s price: {dollars(new_total)} (was {dollars(booking.price.total_cents)})"
        ", with the Holiday surcharge ($25.00)."
    ) in asked.text
    assert f'name="price" value="{booking.id}:{new_total}"' in asked.text
    with site.container.uow() as uow:
        assert uow.bookings.get(company.id, booking.id).start == booking.start  # not yet

    confirmed = {**form, "price": f"{booking.id}:{new_total}"}
    moved, shown = fetch(
        site,
        at,
        *sign_in,
        ("GET", page, {}),
        ("POST", f"{page}/reschedule", confirmed),
        ("GET", page, {}),
    )[3:]
    assert moved.status_code == 303
    with site.container.uow() as uow:
        stored = uow.bookings.get(company.id, booking.id)
    assert stored.local_start.date() == HOLIDAY
    assert stored.price.total_cents == new_total
    assert f"price {dollars(booking.price.total_cents)} \u2192 {dollars(new_total)}" in shown.text


def test_a_move_that_keeps_the_price_asks_nothing(site: Site):
    company, booking = _monday_job(site)
    owner = site.user(company, Role.OWNER)
    at = booking.start - timedelta(days=3)
    page = f"/admin/bookings/{booking.id}"
    tuesday = (MONDAY + timedelta(days=1)).isoformat()
    form = {"date": tuesday, "time": "10:00", "scope": "this", "crew": ""}
    moved = fetch(
        site,
        at,
        *signing_in(owner.email),
        ("GET", page, {}),
        ("POST", f"{page}/reschedule", form),
    )[3]
    assert moved.status_code == 303
    with site.container.uow() as uow:
        assert uow.bookings.get(company.id, booking.id).price == booking.price
