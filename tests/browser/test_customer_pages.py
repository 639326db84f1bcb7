"""The customer's pages in a real browser: follow a visit from its tracking link and
reschedule or cancel it, answer a quote from its link; each page photographed at a
phone's width (390 px) and a desktop's (1280 px)."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import attrs
from playwright.sync_api import expect

from booking_core.bookings import Booking, BookingStatus
from booking_core.customers import Address
from booking_core.pricing import SelectedItem, Selection
from booking_core.quotes import QuoteStatus
from booking_core.services.customers import CreateCustomer, create_customer
from booking_core.services.quotes import CreateQuote, create_quote
from booking_core.services.setup import UpdateCompanySettings, update_company_settings
from tests.browser.support import Job, Site

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def photograph(page: Any, folder: Path, name: str) -> None:
    """``name-desktop.png`` and ``name-phone.png`` of the page as it is."""
    page.set_viewport_size(DESKTOP)
    page.screenshot(path=str(folder / f"{name}-desktop.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.screenshot(path=str(folder / f"{name}-phone.png"), full_page=True)
    page.set_viewport_size(DESKTOP)


def visit_in_three_days(site: Site) -> tuple[Job, Booking]:
    """A fresh company's crew member and a visit of theirs three days ahead (well outside
    the 24-hour cutoff)."""
    job = site.crew_job(name="Rosa Diaz")
    booking = site.book(job.company, job.customer_email, "Grace Hopper", days_ahead=3)
    return job, booking


def stored(site: Site, booking: Booking) -> Booking:
    with site.container.uow() as uow:
        return uow.bookings.get(booking.company_id, booking.id)


def tracking_path(job: Job, booking: Booking) -> str:
    return f"/{job.company.slug}/track/{booking.tracking_token}"


def test_a_customer_follows_the_link_and_reschedules_the_visit(
    site: Site, page: Any, screenshots: Path
):
    job, booking = visit_in_three_days(site)
    page.goto(tracking_path(job, booking))
    expect(page.get_by_role("heading", level=1)).to_have_text("Standard clean")
    expect(page.locator(".status")).to_contain_text("Scheduled")
    expect(page.get_by_text("Rosa", exact=True)).to_be_visible()
    expect(page.get_by_text(booking.code).first).to_be_visible()
    photograph(page, screenshots, "track")

    page.get_by_role("link", name="Reschedule").click()
    expect(page.get_by_role("heading", name="Choose a new time")).to_be_visible()
    new_day = booking.local_start.date() + timedelta(days=1)
    page.locator(f'a.cust-day[href*="date={new_day.isoformat()}"]').click()
    expect(page.get_by_role("heading", name=re.compile(r"^2\. Pick a time"))).to_be_visible()
    times = page.get_by_role("radio")
    expect(times.first).to_be_visible()
    chosen = times.last
    label = chosen.locator("xpath=..").inner_text().strip()
    chosen.check()
    photograph(page, screenshots, "track-reschedule")
    page.get_by_role("button", name="Move my visit").click()
    expect(page.get_by_role("status")).to_contain_text("Your visit is moved to ")
    expect(page.get_by_role("status")).to_contain_text(label)
    moved = stored(site, booking)
    assert moved.local_start.date() == new_day
    assert moved.status is BookingStatus.SCHEDULED


def test_a_customer_cancels_the_visit_with_the_keyboard(site: Site, page: Any, screenshots: Path):
    job, booking = visit_in_three_days(site)
    page.goto(tracking_path(job, booking))
    page.get_by_role("link", name="Cancel visit").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Cancel this visit?")).to_be_visible()
    photograph(page, screenshots, "track-cancel")
    page.get_by_role("button", name="Yes, cancel my visit").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_have_text("Your visit is cancelled.")
    expect(page.locator(".status")).to_contain_text("Cancelled")
    expect(page.get_by_role("link", name="Cancel visit")).to_have_count(0)
    assert stored(site, booking).status is BookingStatus.CANCELLED
    photograph(page, screenshots, "track-cancelled")


def test_inside_the_cutoff_and_after_the_link_ends_the_customer_is_told_what_to_do(
    site: Site, page: Any, screenshots: Path
):
    job, booking = visit_in_three_days(site)
    update_company_settings(
        UpdateCompanySettings(company_id=job.company.id, self_service_cutoff_hours=24 * 7),
        uow=site.container.uow(),
    )
    page.goto(tracking_path(job, booking))
    expect(page.get_by_role("note")).to_have_text(
        "Changes online close 7 days before the visit. "
        "Call or email Brightside Cleaning to change it."
    )
    expect(page.get_by_role("link", name="Reschedule")).to_have_count(0)
    photograph(page, screenshots, "track-closed")

    long_ago = site.container.clock.now() - timedelta(days=120)
    with site.container.uow() as uow:
        old = uow.bookings.get(job.company.id, job.booking.id)
        uow.bookings.save_all(
            [
                attrs.evolve(
                    old,
                    status=BookingStatus.COMPLETED,
                    completed_at=long_ago,
                    version=old.version + 1,
                )
            ]
        )
        uow.commit()
    answer = page.goto(tracking_path(job, job.booking))
    assert answer is not None
    assert answer.status == 410
    expect(page.get_by_role("heading", level=1)).to_have_text("This tracking link has expired")
    expect(page.get_by_role("link", name="Book a visit")).to_have_attribute(
        "href", f"/{job.company.slug}/book"
    )
    photograph(page, screenshots, "track-expired")


def test_a_customer_accepts_a_quote_from_its_page(site: Site, page: Any, screenshots: Path):
    job = site.crew_job()
    container = site.container
    customer, _ = create_customer(
        CreateCustomer(
            company_id=job.company.id,
            name="Quinn Harper",
            email="quinn@example.com",
            address=Address("5 Elm St", "New York", "NY", "10001"),
        ),
        uow=container.uow(),
        clock=container.clock,
        phones=container.phones,
    )
    quote = create_quote(
        CreateQuote(
            company_id=job.company.id,
            customer_id=customer.id,
            selection=Selection(
                service_id="svc_standard_clean",
                frequency_slug="one_time",
                parameters=(SelectedItem("par_bedrooms", 3), SelectedItem("par_bathrooms", 2)),
                extras=(SelectedItem("ext_oven"), SelectedItem("ext_windows", 4)),
            ),
            expires_at=container.clock.now() + timedelta(days=14),
            message="Hi Quinn, thanks for showing us around. Here is the price we talked about.",
            send_now=True,
        ),
        uow=container.uow(),
        clock=container.clock,
    )
    page.goto(f"/{job.company.slug}/q/{quote.public_token}")
    expect(page.get_by_role("heading", level=1)).to_have_text("Standard clean")
    total = quote.total_cents
    expect(page.locator(".cust-price-total")).to_contain_text(
        f"${total // 100:,}.{total % 100:02d}"
    )
    expect(page.get_by_text("Valid until")).to_be_visible()
    photograph(page, screenshots, "quote")
    page.get_by_role("button", name="Accept quote").click()
    expect(page.get_by_role("status")).to_contain_text("you accepted this quote")
    expect(page.get_by_role("button", name="Accept quote")).to_have_count(0)
    expect(page.get_by_role("note")).to_contain_text("You accepted this quote on")
    with container.uow() as uow:
        assert uow.quotes.get(job.company.id, quote.id).status is QuoteStatus.ACCEPTED
    photograph(page, screenshots, "quote-accepted")
