"""The customers pages in Chromium (docs/web.md, "Customers"): a dispatcher finds a
customer by email, opens them, and goes on to one of their bookings; on a phone nothing
is off the screen."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from booking_core.users import Role
from tests.browser.support import Site, sign_in


def test_a_dispatcher_finds_a_customer_and_opens_their_booking(
    site: Site, context: Any, screenshots: Any
):
    job = site.crew_job()
    site.book(job.company, "grace@example.com", "Grace Hopper", days_ahead=3)
    page = context.new_page()
    sign_in(page, site.user(job.company, Role.DISPATCHER, name="Dana Dispatch").email)
    page.goto("/admin")
    page.get_by_role("link", name="Customers", exact=True).first.click()
    expect(page.get_by_role("heading", name="Customers", level=1)).to_be_visible()
    page.screenshot(path=str(screenshots / "admin-customers.png"), full_page=True)

    page.get_by_label("Find a customer").fill(job.customer_email)
    page.get_by_role("button", name="Find").click()
    rows = page.locator("tbody tr")
    expect(rows).to_have_count(1)
    rows.first.get_by_role("link").click()
    expect(page.get_by_role("heading", name="Coming visits")).to_be_visible()
    page.screenshot(path=str(screenshots / "admin-customer.png"), full_page=True)

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(screenshots / "admin-customer-phone.png"), full_page=True)
    page.get_by_role("link", name=job.booking.code).first.click()
    expect(page.get_by_text(job.booking.code).first).to_be_visible()
    assert page.url.endswith(f"/admin/bookings/{job.booking.id}")
