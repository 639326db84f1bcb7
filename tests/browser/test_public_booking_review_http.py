"""The booking page over HTTP, its confirm step against the booking it confirms: a
plan's later visits that cost otherwise (a date fee) are named, a coupon this email's
customer has used up is refused on the details step with a way on without it, and a
link naming a service or frequency not offered says so."""

from __future__ import annotations

import html
import re
import secrets
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import attrs
import httpx

from booking_core.demo import demo_catalog
from tests.browser.support import Site
from tests.browser.test_public_booking import hidden_fields, money

ZONE = ZoneInfo("America/New_York")
CUSTOMER = {
    "name": "Ada Lovelace",
    "phone": "",
    "line1": "12 Analytical Way",
    "line2": "",
    "city": "New York",
    "state": "NY",
    "access_notes": "",
}


def details_of(
    client: httpx.Client, book: str, day: date, email: str, **choice: str
) -> dict[str, str]:
    """The details step's form for the first open start of ``day``, filled in."""
    query = {"service": "svc_standard_clean", "zip": "10001", "step": "date"}
    dates = client.get(book, params={**query, "date": day.isoformat(), **choice})
    assert dates.status_code == 200, dates.text
    href = re.search(r'href="([^"]*step=details[^"]*)"', dates.text)
    assert href is not None
    details = client.get(html.unescape(href.group(1)))
    return {**hidden_fields(details.text), **CUSTOMER, "email": email}


def text_of(page: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def test_the_confirm_step_names_the_later_visits_a_date_fee_makes_dearer(site: Site):
    """A weekly plan whose third and fourth visits fall on holiday dates: the confirm
    step says so, with the prices the booking then holds, not "$X each"."""
    today = datetime.now(ZONE).date()
    first = today + timedelta(days=3)
    holidays = (first + timedelta(days=14), first + timedelta(days=21))
    catalog = demo_catalog()
    fees = tuple(
        attrs.evolve(f, dates=frozenset(holidays)) if f.id == "fee_holiday" else f
        for f in catalog.fees
    )
    company, key = site.new_company(attrs.evolve(catalog, fees=fees))
    site.add_member(company)
    book = f"/{company.slug}/book"
    email = f"ada-{secrets.token_hex(4)}@example.com"
    with httpx.Client(base_url=site.base_url, trust_env=False, timeout=30) as client:
        form = details_of(client, book, first, email, frequency="weekly")
        review = client.post(book, data={**form, "step": "review"})
        assert review.status_code == 200, review.text
        done = client.post(book, data={**form, "step": "confirm"})
        assert done.status_code == 200, done.text
    with site.api(key) as api:
        (customer,) = api.get("/api/v1/customers", params={"search": email}).json()["data"]
        visits = api.get("/api/v1/bookings", params={"customerId": customer["id"],
                                                     "limit": 50}).json()["data"]  # fmt: skip
    totals = {date.fromisoformat(v["startIso"][:10]): v["price"]["totalCents"] for v in visits}
    usual = totals[first + timedelta(days=7)]
    dearer = totals[holidays[0]]
    assert dearer > usual
    assert totals[holidays[1]] == dearer
    assert {t for d, t in totals.items() if d not in (first, *holidays)} == {usual}
    named = " and ".join(f"{d:%b} {d.day}" for d in holidays)
    expected = (
        f"Later visits: {money(usual)} each, except {named}: {money(dearer)} (Holiday surcharge)."
    )
    assert expected in text_of(review.text)


def test_a_coupon_used_up_by_this_email_is_refused_on_the_details_step_with_a_way_on(
    site: Site,
):
    """FIRSTCLEAN is once per customer: the second booking of the same email is told
    at the details step (not after "Confirm booking"), and goes on without it."""
    company, key = site.new_company()
    site.add_member(company)
    book = f"/{company.slug}/book"
    email = f"fiona-{secrets.token_hex(4)}@example.com"
    day = datetime.now(ZONE).date() + timedelta(days=2)
    with httpx.Client(base_url=site.base_url, trust_env=False, timeout=30) as client:
        form = details_of(client, book, day, email, coupon="firstclean")
        first = client.post(book, data={**form, "step": "review"})
        assert first.status_code == 200
        assert "FIRSTCLEAN" in first.text
        assert client.post(book, data={**form, "step": "confirm"}).status_code == 200

        again = details_of(client, book, day + timedelta(days=1), email, coupon="firstclean")
        refused = client.post(book, data={**again, "step": "review"})
        assert refused.status_code == 422
        assert "Confirm booking" not in refused.text
        said = text_of(refused.text)
        assert (
            "Coupon 'FIRSTCLEAN' cannot be used: this customer has used it the maximum"
            " number of times." in said
        )
        assert "Continue without the coupon" in said
        kept = hidden_fields(refused.text)
        assert kept["coupon"] == "firstclean"
        without = client.post(book, data={**kept, **CUSTOMER, "email": email,
                                          "without_coupon": "1"})  # fmt: skip
        assert without.status_code == 200, without.text
        assert "Confirm booking" in without.text
        assert "FIRSTCLEAN" not in without.text
        assert "coupon" not in hidden_fields(without.text)
        booked = client.post(book, data={**hidden_fields(without.text), "step": "confirm"})
    assert booked.status_code == 200, booked.text
    code = re.search(r"data-booking-code>([^<]+)<", booked.text)
    assert code is not None
    with site.api(key) as api:
        made = api.get(f"/api/v1/bookings/{code.group(1)}").json()
    assert made["price"]["discounts"] == []
    assert money(made["price"]["totalCents"]) in without.text


def test_a_link_naming_a_service_or_frequency_not_offered_says_so(site: Site):
    company, _ = site.new_company()
    site.add_member(company)
    book = f"/{company.slug}/book"
    with httpx.Client(base_url=site.base_url, trust_env=False, timeout=30) as client:
        both = client.get(book, params={"service": "svc_nope", "frequency": "daily",
                                        "zip": "10001", "step": "date"})  # fmt: skip
        service = client.get(book, params={"service": "svc_nope", "zip": "10001"})
        fine = client.get(book, params={"service": "svc_standard_clean", "frequency": "weekly"})
    assert both.status_code == 200
    assert (
        "The service and frequency this link asks for are not offered here."
        " Choose from those below." in text_of(both.text)
    )
    assert "Choose a date and time" in both.text  # step 1's button: the choice shown first
    assert "The service this link asks for is not offered here." in text_of(service.text)
    assert "not offered here" not in fine.text


def test_a_link_naming_an_extra_its_service_has_not_says_so_and_never_drops_it_unsaid(
    site: Site,
):
    """A Deep clean extra on a Standard clean link, even straight to the details step:
    step 1 with a sentence, as for a service or frequency not offered."""
    company, _ = site.new_company()
    site.add_member(company)
    book = f"/{company.slug}/book"
    asked = {"service": "svc_standard_clean", "frequency": "one_time", "zip": "10001"}
    with httpx.Client(base_url=site.base_url, trust_env=False, timeout=30) as client:
        foreign = client.get(book, params={**asked, "extra.ext_baseboards": "1",
                                           "step": "details"})  # fmt: skip
        own = client.get(book, params={**asked, "extra.ext_oven": "1"})
        zero = client.get(book, params={**asked, "extra.ext_baseboards": "0"})
    assert foreign.status_code == 200
    assert "The extra this link asks for is not offered here. Choose from those below." in text_of(
        foreign.text
    )
    assert "Choose a date and time" in foreign.text  # step 1
    assert "not offered here" not in own.text
    assert "not offered here" not in zero.text


def test_a_visit_inside_the_cutoff_is_not_promised_online_changes(site: Site):
    """The confirm and booked steps say what the tracking page will: changes online close
    before the visit (docs/web.md, "The booking page")."""
    company, _ = site.new_company()
    site.add_member(company)
    day = datetime.now(ZONE).date() + timedelta(days=3)
    for cutoff, closed in ((24, False), (24 * 14, True)):
        with site.container.uow() as uow:
            stored = uow.companies.get(company.id)
            uow.companies.save(
                attrs.evolve(
                    stored, self_service_cutoff_hours=cutoff, notify_email="office@acme.example"
                )
            )
            uow.commit()
        book = f"/{company.slug}/book"
        email = f"ada-{secrets.token_hex(4)}@example.com"
        with httpx.Client(base_url=site.base_url, trust_env=False, timeout=30) as client:
            form = details_of(client, book, day, email)
            typed = {**form, "state": " ny "}  # shown as it will be stored
            review = text_of(client.post(book, data={**typed, "step": "review"}).text)
            done = text_of(client.post(book, data={**form, "step": "confirm"}).text)
        assert "New York, NY 10001" in review
        sentence = "Changes online close 14 days before the visit. Call or email"
        assert (sentence in review, sentence in done) == (closed, closed)
        # As the tracking page: the address to write to, not only "call or email".
        reach = "Their email address is office@acme.example"
        assert (reach in review, reach in done) == (closed, closed)
        promise = "You can change or cancel later from the link in your confirmation."
        assert (promise in review) is not closed
        assert ("Track, change or cancel your booking" in done) is not closed
        assert "Track your booking" in done or not closed
