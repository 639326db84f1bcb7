"""The leads pages in Chromium (docs/web.md, "Leads"): a dispatcher finds the enquiry of
the day, opens it, reads the message, moves it to contacted with an owner and a follow-up
date, and sees the change on its history; on a phone nothing is off the screen."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from booking_core.users import Role
from tests.browser.support import Site, sign_in
from tests.browser.test_admin_leads_http import enquiry


def test_a_dispatcher_works_a_lead_from_the_list(site: Site, context: Any, screenshots: Any):
    company, _ = site.new_company()
    enquiry(site, company, "Dorothy Vaughan", "dorothy@example.com", "Weekly cleaning, 3 beds")
    lead = enquiry(
        site,
        company,
        "Katherine Johnson",
        "katherine@example.com",
        "Deep clean before we move in on the 12th?\nThe keys are with the building manager.",
    )
    page = context.new_page()
    sign_in(page, site.user(company, Role.DISPATCHER, name="Dana Dispatch").email)
    page.goto("/admin")
    page.get_by_role("link", name="Leads", exact=True).first.click()
    expect(page.get_by_role("heading", name="Leads", level=1)).to_be_visible()
    page.screenshot(path=str(screenshots / "admin-leads.png"), full_page=True)

    page.get_by_role("link", name="Katherine Johnson").click()
    expect(page.get_by_text("Deep clean before we move in on the 12th?")).to_be_visible()
    page.get_by_label("Stage").select_option("contacted")
    page.get_by_label("Owner").fill("dana@brightside.example")
    page.get_by_label("Follow up on").fill("2026-12-01")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_have_text("Saved.")
    history = page.locator(".lead-timeline")
    expect(history).to_contain_text("Stage New → Contacted")
    expect(history).to_contain_text("by Dana Dispatch")
    page.screenshot(path=str(screenshots / "admin-lead.png"), full_page=True)

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/admin/leads/{lead.id}")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390  # nothing runs off a phone's screen
    page.screenshot(path=str(screenshots / "admin-lead-phone.png"), full_page=True)
    page.goto("/admin/leads")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    long = enquiry(site, company, "W" * 200, f"{'x' * 60}@example.com", "y" * 300)
    page.goto(f"/admin/leads/{long.id}")  # a name with no space to break at still wraps
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
