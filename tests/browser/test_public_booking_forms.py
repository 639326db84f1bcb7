"""The customer booking page driven by a booking form (``/{slug}/book?form=bf_...``) and
its coupon code, in Chromium: only the form's services, frequencies and extras, its
questions on the details step (a missing required answer refused beside its field), the
booking made with ``formId`` and the answers, a coupon priced as ``POST /api/v1/quote``
prices it, an unknown coupon refused beside its field, the form through the embed
snippet, and an unknown or inactive form as the 404 page."""

from __future__ import annotations

import re
import secrets
from typing import Any

import httpx
from playwright.sync_api import expect

from booking_core.companies import Company
from booking_core.services import companies as company_cases
from tests.browser.support import Site
from tests.browser.test_public_booking import (
    PHONE,
    api_quote,
    fetched_booking,
    fill_details,
    hidden_fields,
    money,
    open_company,
    other_site,  # noqa: F401 (a fixture)
)

FORM = {
    "name": "Book a deep clean",
    "serviceIds": ["svc_deep_clean"],
    "frequencySlugs": ["one_time", "biweekly"],
    "extraIds": ["ext_baseboards"],
    "questions": [
        {"id": "gate-code", "label": "Gate code?", "required": True},
        {
            "id": "pets",
            "label": "Any pets at home?",
            "kind": "choice",
            "choices": ["No pets", "Cats", "Dogs"],
        },
    ],
}
UNKNOWN_COUPON = "Coupon 'NOPE' cannot be used: no coupon has this code."


def new_form(site: Site, company: Company, **changes: Any) -> str:
    """A booking form made through the API (writing forms takes ``bookings:write``)."""
    writer = company_cases.create_key(
        company_cases.CreateKey(
            company_id=company.id, name="forms", scopes=frozenset({"bookings:write"})
        ),
        uow=site.container.uow(),
        clock=site.container.clock,
    )
    with site.api(writer.secret) as api:
        made = api.post("/api/v1/booking-forms", json={**FORM, **changes})
    assert made.status_code == 201, made.text
    form_id: str = made.json()["id"]
    return form_id


def coupon_error(where: Any) -> Any:
    return where.locator("[id='coupon-error']")


def test_a_form_offers_its_choices_asks_its_questions_and_books_with_a_coupon(
    site: Site, browser: Any, screenshots
):
    company, key = open_company(site)
    form_id = new_form(site, company)
    context = browser.new_context(base_url=site.base_url, viewport=PHONE, is_mobile=True)
    context.set_default_timeout(10_000)
    try:
        page = context.new_page()
        page.goto(f"/{company.slug}/book?form={form_id}")
        expect(page.get_by_role("heading", name="Book a deep clean")).to_be_visible()
        services = page.locator("input[name=service]")
        expect(services).to_have_count(1)
        expect(page.get_by_role("radio", name=re.compile("^Deep clean"))).to_be_checked()
        expect(page.locator("input[name=frequency]")).to_have_count(2)
        expect(page.get_by_role("radio", name=re.compile("^Weekly"))).to_have_count(0)
        expect(page.get_by_label("Baseboards")).to_be_visible()
        expect(page.get_by_label("Inside the oven")).to_have_count(0)  # not offered

        page.get_by_label("Zip code of the place").fill("10001")
        price = page.locator("[data-price-total]")
        plain = api_quote(site, key, {"serviceId": "svc_deep_clean", "zip": "10001"})
        expect(price).to_have_text(money(plain["firstVisit"]["totalCents"]))
        page.get_by_label("Coupon code (optional)").fill("NOPE")
        expect(coupon_error(page)).to_have_text(UNKNOWN_COUPON)
        expect(price).to_have_text(money(plain["firstVisit"]["totalCents"]))
        page.get_by_role("button", name="Choose a date and time").click()  # refused
        expect(coupon_error(page)).to_have_text(UNKNOWN_COUPON)
        expect(page.get_by_label("Zip code of the place")).to_have_value("10001")  # kept

        page.get_by_label("Coupon code (optional)").fill("WELCOME10")
        coupon = {"serviceId": "svc_deep_clean", "zip": "10001", "couponCode": "WELCOME10"}
        priced = api_quote(site, key, coupon)
        assert priced["firstVisit"]["totalCents"] < plain["firstVisit"]["totalCents"]
        expect(price).to_have_text(money(priced["firstVisit"]["totalCents"]))
        expect(coupon_error(page)).to_be_hidden()
        page.get_by_role("button", name="Choose a date and time").click()

        expect(page.get_by_role("heading", name="Choose a date and time")).to_be_visible()
        page.locator(".bkp-time").first.click()
        expect(page.get_by_role("heading", name="Your details")).to_be_visible()
        expect(page.get_by_label("Gate code?")).to_have_attribute("maxlength", "500")
        email = f"ada-{secrets.token_hex(4)}@example.com"
        fill_details(page, email)
        page.get_by_role("radio", name="Cats").check()
        page.get_by_role("button", name="Review booking").click()
        expect(page.locator("[id='q.gate-code-error']")).to_have_text("Enter your answer.")
        expect(page.get_by_role("radio", name="Cats")).to_be_checked()  # kept
        expect(page.get_by_label("Full name")).to_have_value("Ada Lovelace")
        page.screenshot(
            path=str(screenshots / "book-3-details-questions-phone.png"), full_page=True
        )

        # The summary's link to the question takes the focus to its field.
        page.locator("#problems").get_by_role("link", name="Gate code?: Enter your answer.").click()
        expect(page.get_by_label("Gate code?")).to_be_focused()
        page.get_by_label("Gate code?").fill("#4521")
        page.get_by_role("button", name="Review booking").click()
        expect(page.get_by_role("heading", name="Confirm your booking")).to_be_visible()
        expect(page.locator(".bkp-facts")).to_contain_text("#4521")
        expect(page.locator(".bkp-facts")).to_contain_text("WELCOME10")
        page.get_by_role("button", name="Confirm booking").click()
        expect(page.get_by_role("heading", name="You're booked")).to_be_visible()
        code = page.locator("[data-booking-code]").inner_text()
        again = page.get_by_role("link", name="Book another job")
        expect(again).to_have_attribute("href", re.compile(rf"form={form_id}"))
    finally:
        context.close()

    booking = fetched_booking(site, key, code)
    assert booking["formId"] == form_id
    assert booking["answers"] == [
        {"questionId": "gate-code", "question": "Gate code?", "answer": "#4521"},
        {"questionId": "pets", "question": "Any pets at home?", "answer": "Cats"},
    ]
    assert booking["serviceId"] == "svc_deep_clean"
    at_start = api_quote(site, key, {**coupon, "startIso": booking["startIso"]})
    assert booking["price"]["totalCents"] == at_start["firstVisit"]["totalCents"]
    assert booking["price"]["totalCents"] < plain["firstVisit"]["totalCents"]


def test_without_javascript_the_form_and_coupon_travel_through_every_step(site: Site):
    company, _ = open_company(site)
    form_id = new_form(site, company)
    book = f"/{company.slug}/book"
    with httpx.Client(base_url=site.base_url, trust_env=False, timeout=30) as client:
        refused = client.get(
            book, params={"form": form_id, "zip": "10001", "coupon": "NOPE", "step": "date"}
        )
        dates = client.get(
            book, params={"form": form_id, "zip": "10001", "coupon": "welcome10", "step": "date"}
        )
        details_href = re.search(r'href="([^"]*step=details[^"]*)"', dates.text)
        assert details_href is not None
        details = client.get(details_href.group(1).replace("&amp;", "&"))
        form = hidden_fields(details.text)
        form.update(
            name="Ada Lovelace", email="ada@example.com", phone="", line1="12 Analytical Way",
            line2="", city="New York", state="NY", access_notes="", step="review",
        )  # fmt: skip
        too_long = client.post(book, data={**form, "q.gate-code": "x" * 501, "q.pets": "Fish"})
    assert too_long.status_code == 422
    assert '<p class="field-error" id="q.gate-code-error">At most 500 characters.</p>' in (
        too_long.text
    )
    assert "Choose one of the answers listed." in too_long.text
    assert refused.status_code == 422
    assert 'id="coupon-error"' in refused.text
    assert "no coupon has this code." in refused.text
    assert 'value="10001"' in refused.text  # the rest of the form kept
    assert dates.status_code == 200
    assert f"form={form_id}" in details_href.group(1)
    assert "coupon=welcome10" in details_href.group(1)
    assert f'<input type="hidden" name="form" value="{form_id}">' in details.text
    assert '<input type="hidden" name="coupon" value="welcome10">' in details.text
    assert "Gate code?" in details.text


def test_an_unknown_or_inactive_form_is_the_404_page(site: Site):
    company, _ = open_company(site)
    inactive = new_form(site, company, active=False)
    book = f"/{company.slug}/book"
    with httpx.Client(base_url=site.base_url, trust_env=False, timeout=30) as client:
        unknown = client.get(book, params={"form": "bf_nosuchform"})
        off = client.get(book, params={"form": inactive})
        odd = client.get(book, params={"form": "x" * 500})
        plain = client.get(book)
    for answer in (unknown, off, odd):
        assert answer.status_code == 404
        assert "Not found" in answer.text
    assert plain.status_code == 200
    assert "<h1>Book online</h1>" in plain.text


def test_the_embed_snippet_passes_its_form(
    site: Site,
    context: Any,
    other_site: Any,  # noqa: F811 (the fixture)
):
    company, _ = open_company(site)
    form_id = new_form(site, company)
    other_site.serve(
        "<!doctype html><title>Our cleaners</title><h1>Book with us</h1>"
        f'<script src="{site.base_url}/{company.slug}/embed.js" data-form="{form_id}"'
        " async></script>"
    )
    page = context.new_page()
    page.goto(other_site.url)
    frame = page.frame_locator("iframe[title='Book online']")
    expect(frame.get_by_role("heading", name="Book a deep clean")).to_be_visible()
    expect(frame.locator("input[name=service]")).to_have_count(1)
    expect(page.locator("iframe")).to_have_attribute(
        "src", f"{site.base_url}/{company.slug}/book?embed=1&form={form_id}"
    )
