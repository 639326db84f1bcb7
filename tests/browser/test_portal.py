"""The customer portal in a real browser: a customer asks for a sign-in link, follows it
(read from the queued message in the database), sees their visits and moves one from the
portal; each page photographed at a phone's width and a desktop's."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from adapters.web.admin_booking import money
from booking_core.ledger import Kind, Method
from booking_core.notifications import MessageKind
from booking_core.pricing import Selection
from booking_core.services.payments import RecordPayment, record_payment
from booking_core.services.quotes import CreateQuote, create_quote
from booking_core.services.self_service import customer_cancel
from tests.browser.support import PARAMETERS, Site
from tests.browser.test_customer_pages import photograph, stored, visit_in_three_days

LINK = re.compile(r"https?://[^\s\"'<>]+/portal/link/[A-Za-z0-9_-]{43}")


def test_a_customer_signs_in_by_email_link_and_reschedules_from_the_portal(
    site: Site, page: Any, screenshots: Path
):
    job, booking = visit_in_three_days(site)
    slug = job.company.slug
    container = site.container
    record_payment(
        RecordPayment(
            company_id=job.company.id,
            booking_id=job.booking.id,
            kind=Kind.PAYMENT,
            amount_cents=5_000,
            method=Method.CHECK,
        ),
        uow=container.uow(),
        clock=container.clock,
    )
    quote = create_quote(
        CreateQuote(
            company_id=job.company.id,
            customer_id=booking.customer_id,
            selection=Selection(
                service_id="svc_standard_clean", frequency_slug="one_time", parameters=PARAMETERS
            ),
            expires_at=container.clock.now() + timedelta(days=14),
            send_now=True,
        ),
        uow=container.uow(),
        clock=container.clock,
    )
    dropped = site.book(job.company, job.customer_email, "Grace Hopper", days_ahead=6)
    customer_cancel(
        job.company.id, dropped.tracking_token, uow=container.uow(), clock=container.clock
    )
    page.goto(f"/{slug}/portal")
    expect(page.get_by_role("heading", level=1)).to_have_text(
        "Your bookings with Brightside Cleaning"
    )
    photograph(page, screenshots, "portal-sign-in")
    page.get_by_label("Your email").fill(job.customer_email)
    page.get_by_role("button", name="Email me a sign-in link").click()
    expect(page.get_by_role("status")).to_have_text(
        "If that address has bookings with Brightside Cleaning, we've emailed you a link."
        " It works once, for 15 minutes."
    )
    photograph(page, screenshots, "portal-link-sent")

    with site.container.uow() as uow:
        queued = uow.messages.for_subject(job.company.id, booking.customer_id)
    (message,) = [m for m in queued if m.kind is MessageKind.PORTAL_SIGN_IN]
    assert message.to == job.customer_email
    found = LINK.search(message.text)
    assert found is not None, message.text
    page.goto(found.group(0))

    expect(page.get_by_role("heading", name="Hello, Grace Hopper")).to_be_visible()
    expect(page).to_have_url(re.compile(rf"/{slug}/portal$"))
    upcoming = page.get_by_role("region", name="Upcoming visits")
    expect(upcoming.get_by_text(booking.code, exact=True)).to_be_visible()
    expect(upcoming.get_by_text(job.booking.code, exact=True)).to_be_visible()
    expect(page.get_by_role("region", name="Past and cancelled visits")).to_contain_text(
        dropped.code
    )
    expect(page.get_by_role("region", name="Receipts")).to_contain_text("$50.00")
    quotes = page.get_by_role("region", name="Quotes")
    expect(quotes.get_by_role("link", name="Standard clean")).to_have_attribute(
        "href", f"/{slug}/q/{quote.public_token}"
    )
    expect(quotes).to_contain_text(money(quote.total_cents))
    photograph(page, screenshots, "portal")

    upcoming.get_by_role("link", name=f"Reschedule visit {booking.code}").click()
    expect(page.get_by_role("heading", name="Choose a new time")).to_be_visible()
    new_day = booking.local_start.date() + timedelta(days=1)
    page.locator(f'a.cust-day[href*="date={new_day.isoformat()}"]').click()
    times = page.get_by_role("radio")
    expect(times.first).to_be_visible()
    times.first.check()
    page.get_by_role("button", name="Move my visit").click()
    expect(page.get_by_role("status")).to_contain_text("Your visit is moved to ")

    page.get_by_role("link", name="Back to your account").click()
    expect(page.get_by_role("heading", name="Hello, Grace Hopper")).to_be_visible()
    moved = stored(site, booking)
    assert moved.local_start.date() == new_day
    day = f"{new_day:%A}, {new_day:%B} {new_day.day}, {new_day.year}"
    expect(upcoming.get_by_role("listitem").filter(has_text=booking.code)).to_contain_text(day)

    page.get_by_role("link", name="Edit details and addresses").click()
    expect(page.get_by_role("heading", name="Your details")).to_be_visible()
    page.get_by_label("Phone").fill("12")
    page.get_by_role("button", name="Save details").click()
    expect(page.locator("#phone-error")).to_contain_text("Not a phone number")
    photograph(page, screenshots, "portal-details")
    page.get_by_label("Phone").fill("(212) 555-0199")
    page.get_by_role("button", name="Save details").click()
    expect(page.get_by_role("status")).to_have_text("Your details are saved.")
    with site.container.uow() as uow:
        assert uow.customers.get(job.company.id, booking.customer_id).phone == "+12125550199"
    page.get_by_role("link", name="Back to your account").click()
    expect(page.locator("dd", has_text="(212) 555-0199")).to_be_visible()  # as people write it
    page.get_by_role("link", name="Edit details and addresses").click()
    expect(page.get_by_label("Phone")).to_have_value("(212) 555-0199")  # and so to edit

    page.get_by_role("link", name="Add an address").click()
    page.get_by_label("Street address").fill("1 Lake Rd")
    page.get_by_label("City").fill("Hudson")
    page.get_by_label("State").fill("NY")
    page.get_by_label("ZIP code").fill("1253")
    page.get_by_role("button", name="Save address").click()
    expect(page.locator("#zip-error")).to_have_text("A 5-digit US zip code.")
    photograph(page, screenshots, "portal-address")
    page.get_by_label("ZIP code").fill("12534")
    page.get_by_label("Use this address by default").check()
    page.get_by_role("button", name="Save address").click()
    expect(page.get_by_role("status")).to_have_text("Your address is saved.")
    expect(page.get_by_role("listitem").filter(has_text="1 Lake Rd")).to_contain_text("Default")

    page.goto(f"/{slug}/portal")
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("status")).to_have_text("You are signed out.")
    expect(page.get_by_role("button", name="Email me a sign-in link")).to_be_visible()
