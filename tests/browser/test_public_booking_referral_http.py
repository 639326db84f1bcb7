"""The booking page's referral code over HTTP (and its live price in Chromium): the field
only while the company's programme is on, a good code taken off the price shown and off
the booking made, an unknown code refused beside the field, and a customer who may not
use a code (their own, or booked before) told on the details step, with a way on
without it."""

from __future__ import annotations

import html
import re
import secrets
from datetime import datetime, timedelta
from typing import Any

import attrs
import httpx
from playwright.sync_api import expect

from booking_core.companies import Company
from booking_core.services.customers import CreateCustomer, create_customer
from tests.browser.support import Site
from tests.browser.test_public_booking import DESKTOP, api_quote, hidden_fields, money
from tests.browser.test_public_booking_review_http import CUSTOMER, ZONE, details_of, text_of

DISCOUNT = 2_500
UNKNOWN = "No customer of this company has the referral code 'ZZZZ9999'."
BOOKED_BEFORE = (
    "The referral discount is for a new customer's first booking; this customer has booked before."
)
OWN_CODE = "A customer cannot use their own referral code."
JOB = {"serviceId": "svc_standard_clean", "zip": "10001"}


def referral_company(site: Site, discount: int = DISCOUNT) -> tuple[Company, str]:
    """A fresh company with one crew member, its referral discount set to ``discount``."""
    company, key = site.new_company()
    site.add_member(company)
    company = attrs.evolve(company, referral_discount_cents=discount)
    with site.container.uow() as uow:
        uow.companies.save(company)
        uow.commit()
    return company, key


def customer_code(site: Site, company: Company, email: str) -> str:
    """The referral code of the customer of ``email`` (made if new)."""
    customer, _ = create_customer(
        CreateCustomer(company_id=company.id, name="Grace Hopper", email=email),
        uow=site.container.uow(),
        clock=site.container.clock,
        phones=site.container.phones,
    )
    return customer.referral_code


def field_error(page: str, name: str) -> str:
    found = re.search(rf'id="{name}-error"[^>]*>([^<]*)<', page)
    return html.unescape(found.group(1)) if found else ""


def booking_of(site: Site, key: str, done: str) -> dict[str, Any]:
    code = re.search(r"data-booking-code>([^<]+)<", done)
    assert code is not None, done
    with site.api(key) as api:
        made: dict[str, Any] = api.get(f"/api/v1/bookings/{code.group(1)}").json()
    return made


def test_the_referral_field_shows_only_while_the_programme_is_on(site: Site):
    on, _ = referral_company(site)
    off, _ = referral_company(site, discount=0)
    with httpx.Client(base_url=site.base_url, trust_env=False, timeout=30) as client:
        with_field = client.get(f"/{on.slug}/book")
        without = client.get(f"/{off.slug}/book")
        linked = client.get(f"/{off.slug}/book", params={"referral": "K7Q3XM2P"})
    assert with_field.status_code == without.status_code == 200
    assert 'name="referral"' in with_field.text
    said = text_of(with_field.text)
    assert "Referral code (optional)" in said
    assert "A friend's code takes $25.00 off your first visit." in said
    assert 'name="referral"' not in without.text
    assert "Referral code" not in without.text
    # A link carrying a code while the programme is off says the price is without it.
    assert (
        "This company takes no referral codes at the moment; the price shown is without one."
        in text_of(linked.text)
    )
    assert "K7Q3XM2P" not in linked.text


def test_a_good_code_is_taken_off_the_price_shown_and_the_booking_made(site: Site):
    company, key = referral_company(site)
    code = customer_code(site, company, f"grace-{secrets.token_hex(4)}@example.com")
    book = f"/{company.slug}/book"
    plain = api_quote(site, key, JOB)["firstVisit"]
    referred = api_quote(site, key, {**JOB, "referralCode": code})["firstVisit"]
    assert referred["referralDiscountCents"] == DISCOUNT
    assert referred["totalCents"] < plain["totalCents"]
    email = f"ada-{secrets.token_hex(4)}@example.com"
    day = datetime.now(ZONE).date() + timedelta(days=2)
    with httpx.Client(base_url=site.base_url, trust_env=False, timeout=30) as client:
        job = client.get(book, params={"zip": "10001", "referral": code.lower()})
        form = details_of(client, book, day, email, referral=f" {code.lower()} ")
        review = client.post(book, data={**form, "step": "review"})
        done = client.post(book, data={**form, "step": "confirm"})
    assert job.status_code == 200, job.text
    assert field_error(job.text, "referral") == ""
    assert f"data-price-total>{money(referred['totalCents'])}<" in job.text
    assert "Referral discount" in text_of(job.text)
    assert review.status_code == 200, review.text
    reviewed = text_of(review.text)
    assert f"Referral discount -{money(DISCOUNT)}" in reviewed
    assert f"Referral code {code.lower()}" in reviewed
    assert done.status_code == 200, done.text
    assert f"with your {money(DISCOUNT)} referral discount" in text_of(done.text)
    made = booking_of(site, key, done.text)
    assert made["price"]["referralDiscountCents"] == DISCOUNT
    assert money(made["price"]["totalCents"]) in reviewed


def test_an_unknown_code_is_refused_beside_the_field_with_the_price_without_it(site: Site):
    company, key = referral_company(site)
    plain = api_quote(site, key, {**JOB, "couponCode": "WELCOME10"})["firstVisit"]
    with httpx.Client(base_url=site.base_url, trust_env=False, timeout=30) as client:
        asked = {"zip": "10001", "referral": "ZZZZ9999"}
        job = client.get(f"/{company.slug}/book", params={**asked, "coupon": "welcome10"})
        onward = client.get(f"/{company.slug}/book", params={**asked, "step": "date"})
    assert job.status_code == 422
    assert field_error(job.text, "referral") == UNKNOWN
    assert field_error(job.text, "coupon") == ""  # the coupon is taken, and priced
    assert f"data-price-total>{money(plain['totalCents'])}<" in job.text
    assert 'value="ZZZZ9999"' in job.text  # kept to correct
    assert onward.status_code == 422  # no going on with it
    assert field_error(onward.text, "referral") == UNKNOWN
    assert "Choose a start time" not in onward.text


def test_a_customer_who_booked_before_is_refused_on_the_details_step_with_a_way_on(
    site: Site,
):
    company, key = referral_company(site)
    code = customer_code(site, company, f"grace-{secrets.token_hex(4)}@example.com")
    email = f"ada-{secrets.token_hex(4)}@example.com"
    site.book(company, email, "Ada Lovelace", days_ahead=1)
    own = customer_code(site, company, email)
    book = f"/{company.slug}/book"
    day = datetime.now(ZONE).date() + timedelta(days=3)
    with httpx.Client(base_url=site.base_url, trust_env=False, timeout=30) as client:
        form = details_of(client, book, day, email, referral=code, coupon="welcome10")
        refused = client.post(book, data={**form, "step": "review"})
        kept = hidden_fields(refused.text)
        without = client.post(book, data={**kept, **CUSTOMER, "email": email,
                                          "without_referral": "1"})  # fmt: skip
        booked = client.post(book, data={**hidden_fields(without.text), "step": "confirm"})
        own_form = details_of(client, book, day, email, referral=own)
        own_refused = client.post(book, data={**own_form, "step": "review"})
    assert refused.status_code == 422
    assert "Confirm booking" not in refused.text
    said = text_of(refused.text)
    assert f"{BOOKED_BEFORE} Continue without the referral code, or change your choice" in said
    assert kept["referral"] == code
    assert without.status_code == 200, without.text
    assert "Confirm booking" in without.text
    assert "Referral" not in text_of(without.text)
    assert "referral" not in hidden_fields(without.text)
    assert hidden_fields(without.text)["coupon"] == "welcome10"  # the other code stays
    assert booked.status_code == 200, booked.text
    made = booking_of(site, key, booked.text)
    assert made["price"]["referralDiscountCents"] == 0
    assert [d["code"] for d in made["price"]["discounts"]] == ["WELCOME10"]
    assert own_refused.status_code == 422
    assert OWN_CODE in text_of(own_refused.text)
    assert "Continue without the referral code" in own_refused.text


def test_a_code_refused_by_the_booking_itself_comes_back_with_the_way_on(site: Site):
    """The customer books elsewhere between the review and "Confirm booking": the
    booking's refusal is said on the details step, with the button to go on without."""
    company, _ = referral_company(site)
    code = customer_code(site, company, f"grace-{secrets.token_hex(4)}@example.com")
    email = f"ada-{secrets.token_hex(4)}@example.com"
    book = f"/{company.slug}/book"
    day = datetime.now(ZONE).date() + timedelta(days=3)
    with httpx.Client(base_url=site.base_url, trust_env=False, timeout=30) as client:
        form = details_of(client, book, day, email, referral=code)
        review = client.post(book, data={**form, "step": "review"})
        site.book(company, email, "Ada Lovelace", days_ahead=1)  # meanwhile
        refused = client.post(book, data={**hidden_fields(review.text), "step": "confirm"})
    assert review.status_code == 200, review.text
    assert refused.status_code == 422
    said = text_of(refused.text)
    assert f"{BOOKED_BEFORE} Continue without the referral code" in said
    assert "Continue without the referral code" in refused.text


def test_the_live_price_takes_a_good_code_and_refuses_an_unknown_one(site: Site, browser: Any):
    company, key = referral_company(site)
    code = customer_code(site, company, f"grace-{secrets.token_hex(4)}@example.com")
    plain = api_quote(site, key, {"serviceId": "svc_standard_clean"})["firstVisit"]
    referred = api_quote(site, key, {"serviceId": "svc_standard_clean", "referralCode": code})
    context = browser.new_context(base_url=site.base_url, viewport=DESKTOP)
    context.set_default_timeout(10_000)
    try:
        page = context.new_page()
        page.goto(f"/{company.slug}/book")
        price = page.locator("[data-price-total]")
        error = page.locator("[id='referral-error']")
        expect(price).to_have_text(money(plain["totalCents"]))
        page.get_by_label("Referral code (optional)").fill("ZZZZ9999")
        expect(error).to_have_text(UNKNOWN)
        expect(price).to_have_text(money(plain["totalCents"]))
        page.get_by_label("Referral code (optional)").fill(code)
        expect(error).to_be_hidden()
        expect(price).to_have_text(money(referred["firstVisit"]["totalCents"]))
        expect(page.get_by_role("row", name=re.compile("^Referral discount"))).to_be_visible()
    finally:
        context.close()
