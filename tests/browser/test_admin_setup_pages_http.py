"""Setting a company up only through the admin pages, over HTTP (no browser): a parameter,
an extra or a frequency can be removed after a confirmation unless open plans or other
items still use it (said in plain words); names customers choose by are unique; the
custom domain is on the settings page; each form shows every problem at once, in the
page's words (docs/web.md, "Setting the company up")."""

from __future__ import annotations

import html
import re
import secrets
from collections.abc import Iterator
from datetime import timedelta
from zoneinfo import ZoneInfo

import httpx
import pytest

from booking_core.companies import Company
from booking_core.customers import Address
from booking_core.services import scheduling, setup
from booking_core.users import Role
from tests.browser.support import PARAMETERS, Site
from tests.browser.test_admin_stale_forms_http import changed, form_of, signed_in
from tests.browser.test_brand_http import csrf

SERVICE = "/admin/catalog/services/svc_standard_clean"


@pytest.fixture
def owner(site: Site, shop: Company) -> Iterator[httpx.Client]:
    browser = signed_in(site, shop, Role.OWNER)
    try:
        yield browser
    finally:
        browser.close()


def text_of(page: httpx.Response) -> str:
    """The page's text, tags left out and entities read."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.text)).split())


def field_error(page: httpx.Response, name: str) -> str | None:
    """The error shown beside field ``name``, if any."""
    found = re.search(
        rf'<p class="field-error" id="{re.escape(name)}-error">([^<]*)</p>', page.text
    )
    return html.unescape(found[1]) if found else None


def catalog(site: Site, company: Company) -> setup.CatalogDraft:
    return setup.export_catalog(company.id, uow=site.container.reader())


def post(browser: httpx.Client, path: str, data: dict[str, str]) -> httpx.Response:
    token = csrf(browser.get("/admin"))
    return browser.post(path, data={"csrf_token": token, **data})


def plan_with_bedrooms(site: Site, company: Company) -> None:
    """A weekly plan of ``company`` whose visits count bedrooms."""
    site.add_member(company, "Ana Kim")
    container = site.container
    day = container.clock.now().astimezone(ZoneInfo(company.timezone)).date() + timedelta(days=2)
    slots = scheduling.list_availability(
        scheduling.AvailabilityRequest(
            company_id=company.id,
            service_id="svc_standard_clean",
            local_date=day,
            zip_code="10001",
            parameters=PARAMETERS,
        ),
        uow=container.uow(),
        clock=container.clock,
        drive=container.drive,
    )
    scheduling.create_booking(
        scheduling.CreateBooking(
            company_id=company.id,
            service_id="svc_standard_clean",
            frequency_slug="weekly",
            start=min(s.start for s in slots),
            customer=scheduling.CustomerDetails(
                name="Grace Hopper", email=f"grace-{secrets.token_hex(4)}@example.com"
            ),
            address=Address("9 Compiler Ct", "New York", "NY", "10001"),
            parameters=PARAMETERS,
        ),
        uow=container.uow(),
        clock=container.clock,
        drive=container.drive,
        phones=container.phones,
    )


# --- Removing --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "question", "gone"),
    [
        (
            f"{SERVICE}/parameters/par_bathrooms/remove",
            "Remove Bathrooms from Standard clean?",
            lambda draft: all(
                p.id != "par_bathrooms" for p in draft.industries[0].services[0].parameters
            ),
        ),
        (
            f"{SERVICE}/extras/ext_fridge/remove",
            "Remove Inside the fridge from Standard clean?",
            lambda draft: all(e.id != "ext_fridge" for e in draft.industries[0].services[0].extras),
        ),
        (
            "/admin/catalog/frequencies/every_four_weeks/remove",
            "Remove Every four weeks?",
            lambda draft: all(f.slug != "every_four_weeks" for f in draft.frequencies),
        ),
    ],
    ids=["parameter", "extra", "frequency"],
)
def test_a_parameter_extra_or_frequency_no_open_booking_uses_is_removed_after_asking(
    site: Site, shop: Company, owner: httpx.Client, address, question, gone
):
    listed = owner.get("/admin/catalog")
    assert f'href="{address}"' in listed.text  # the catalog offers it

    asked = owner.get(address)

    assert asked.status_code == 200
    assert question in text_of(asked)
    assert not gone(catalog(site, shop))  # asking removes nothing
    removed = owner.post(address, data=form_of(asked, address))
    assert removed.status_code == 303
    assert gone(catalog(site, shop))
    assert "Removed" in text_of(owner.get(removed.headers["location"]))


def test_what_an_open_plan_is_priced_with_cannot_be_removed_and_the_page_says_why(
    site: Site, shop: Company, owner: httpx.Client
):
    plan_with_bedrooms(site, shop)
    address = f"{SERVICE}/parameters/par_bedrooms/remove"

    asked = owner.get(address)

    said = text_of(asked)
    assert "Bedrooms cannot be removed from Standard clean" in said
    assert "open bookings of a plan still use it" in said
    assert "par_bedrooms" not in said
    assert "svc_standard_clean" not in said
    assert "<button" not in asked.text.split("<main", 1)[1]  # no button to press
    forced = post(owner, address, {})
    assert forced.status_code == 422
    assert "open bookings of a plan still use it" in text_of(forced)
    params = catalog(site, shop).industries[0].services[0].parameters
    assert any(p.id == "par_bedrooms" for p in params)


def test_a_frequency_an_extra_is_limited_to_cannot_be_removed_until_unticked_there(
    site: Site, shop: Company, owner: httpx.Client
):
    draft = catalog(site, shop)
    limited = [
        (e.name, e.frequency_slugs)
        for e in draft.industries[0].services[0].extras
        if e.frequency_slugs
    ]
    name, slugs = limited[0]
    frequency = next(f for f in draft.frequencies if f.slug == slugs[0])

    asked = owner.get(f"/admin/catalog/frequencies/{frequency.slug}/remove")

    said = text_of(asked)
    assert f"{frequency.name} cannot be removed" in said
    assert f"The extra \u201c{name}\u201d of Standard clean names it among the frequencies" in said


# --- Names customers choose by ---------------------------------------------------------------


def test_a_second_parameter_or_extra_named_alike_in_any_case_is_refused_beside_the_name(
    site: Site, shop: Company, owner: httpx.Client
):
    parameter = post(
        owner,
        f"{SERVICE}/parameters/new",
        {"name": "bedrooms", "price": "25", "duration": "30", "min_quantity": "1",
         "max_quantity": "6"},
    )  # fmt: skip
    extra = post(
        owner,
        f"{SERVICE}/extras/new",
        {"name": "INSIDE THE FRIDGE", "price": "5", "duration": "0", "max_quantity": "1"},
    )

    assert parameter.status_code == 422
    assert field_error(parameter, "name") == (
        "Another parameter of this service has this name: customers could not tell them apart."
    )
    assert extra.status_code == 422
    assert field_error(extra, "name") == (
        "Another extra of this service has this name: customers could not tell them apart."
    )
    service = catalog(site, shop).industries[0].services[0]
    assert [p.name.casefold() for p in service.parameters].count("bedrooms") == 1


# --- The custom domain -----------------------------------------------------------------------


def test_the_settings_page_shows_sets_and_clears_the_custom_domain(
    site: Site, shop: Company, owner: httpx.Client
):
    setup.update_company_settings(
        setup.UpdateCompanySettings(company_id=shop.id, custom_domain="book.acme.test"),
        uow=site.container.uow(),
    )
    shown = owner.get("/admin/settings")
    form = form_of(shown, "/admin/settings")
    assert form["custom_domain"] == "book.acme.test"
    assert "https://book.acme.test/q/" in text_of(shown)

    refused = owner.post("/admin/settings", data={**form, "custom_domain": "https://x.test/a"})
    assert refused.status_code == 422
    assert field_error(refused, "custom_domain") == (
        "A domain name such as book.example.com: no https://, no path."
    )
    saved = owner.post("/admin/settings", data={**form, "custom_domain": " Quotes.Acme.TEST "})
    assert saved.status_code == 303
    with site.container.uow() as uow:
        assert uow.companies.get(shop.id).custom_domain == "quotes.acme.test"

    again = form_of(owner.get("/admin/settings"), "/admin/settings")
    assert owner.post("/admin/settings", data={**again, "custom_domain": ""}).status_code == 303
    with site.container.uow() as uow:
        assert uow.companies.get(shop.id).custom_domain is None


# --- Every problem at once, in the page's words ----------------------------------------------


def test_an_empty_service_form_marks_every_required_field_at_once(owner: httpx.Client):
    page = post(
        owner,
        "/admin/catalog/services/new",
        {"name": "", "industry": "", "description": "", "price": "", "duration": ""},
    )

    assert page.status_code == 422
    for name in ("name", "industry", "price", "duration"):
        assert field_error(page, name), name


def test_a_frequency_with_two_bad_values_marks_both(owner: httpx.Client):
    page = post(
        owner,
        "/admin/catalog/frequencies/new",
        {"name": "", "interval_days": "0", "discount": "101"},
    )

    assert page.status_code == 422
    assert field_error(page, "name") == "Required."
    assert field_error(page, "interval_days") == "A whole number from 1 to 365."
    assert field_error(page, "discount") == "At most 100.00%."


def test_a_crew_form_marks_every_bad_day_and_the_name_at_once_in_plain_words(
    site: Site, shop: Company, owner: httpx.Client
):
    page = post(
        owner,
        "/admin/crew/new",
        {
            "name": "",
            "home_zip": "10001",
            "service_areas": "10001, 1002x",
            "time_off": "",
            "day_1": "17:00-08:00",
            "day_2": "25:00-26:00",
            "day_3": "08:00-12:00, 11:00-15:00",
            "day_4": "08:00-08:00",
            "active": "on",
        },
    )

    assert page.status_code == 422
    assert field_error(page, "name") == "Required."
    assert field_error(page, "day_1") == "The end must be after the start, e.g. 08:00-17:00."
    # A bad entry of a list is named: the field holds several.
    assert field_error(page, "day_2") == (
        "Could not read \u201825:00-26:00\u2019. Hours such as 08:00-17:00"
        " (or 08:00-12:00, 13:00-17:00); empty for a day off."
    )
    assert field_error(page, "service_areas") == "\u20181002x\u2019 is not a 5-digit US zip code."
    assert field_error(page, "day_3") == (
        "Two stretches of this day overlap: end one before the next starts."
    )
    assert field_error(page, "day_4") == "The end must be after the start, e.g. 08:00-17:00."
    with site.container.uow() as uow:
        assert scheduling.active_crew(uow, shop.id) == []


@pytest.mark.parametrize(
    ("kind", "field", "text"),
    [
        ("date", "weekdays", "Tick the weekdays, or write the dates, the fee is charged on."),
        ("zip", "zips", "Write the zip codes the fee is charged in."),
        ("service", "services", "Tick the services the fee is charged on."),
    ],
)
def test_a_fee_with_nothing_to_apply_by_says_what_to_tick_or_write(
    owner: httpx.Client, kind, field, text
):
    page = post(
        owner, "/admin/catalog/fees/new", {"name": "", "kind": kind, "amount": "10", "percent": ""}
    )

    assert page.status_code == 422
    assert field_error(page, field) == text
    assert field_error(page, "name") == "Required."


def test_a_crew_members_zips_may_be_separated_by_spaces_commas_or_lines(
    site: Site, shop: Company, owner: httpx.Client
):
    page = post(
        owner,
        "/admin/crew/new",
        {
            "name": "Sam Lee",
            "home_zip": "11201",
            "service_areas": "11201 11215  10003,10001\n10002",
            "time_off": "",
            "day_1": "09:00-18:00",
            "active": "on",
        },
    )

    assert page.status_code == 303, page.text
    with site.container.uow() as uow:
        [sam] = scheduling.active_crew(uow, shop.id)
    assert sorted(sam.service_areas) == ["10001", "10002", "10003", "11201", "11215"]


def test_a_member_made_inactive_with_jobs_ahead_is_told_how_many_they_still_hold(site: Site):
    job = site.crew_job()
    (member_id,) = job.booking.crew_ids
    browser = signed_in(site, job.company, Role.OWNER)
    try:
        path = f"/admin/crew/{member_id}"
        fields = changed(form_of(browser.get(path), path), {"active": None})
        saved = browser.post(path, data=fields, follow_redirects=True)
    finally:
        browser.close()
    assert saved.status_code == 200, saved.text
    assert "is inactive and still holds 1 scheduled job: give each to someone else" in (
        text_of(saved)
    )


# --- Hostile values: a field's own answer, never a 500 or a changed text -----------------------


def test_zeros_in_front_of_a_number_do_not_count_however_many(
    site: Site, shop: Company, owner: httpx.Client
):
    # Past 4,300 digits Python's int() refuses to read a number, zeros in front included:
    # the settings page answered 500.
    form = form_of(owner.get("/admin/settings"), "/admin/settings")
    saved = owner.post("/admin/settings", data={**form, "cutoff_hours": "0" * 4400 + "5"})
    assert saved.status_code == 303, text_of(saved)
    with site.container.uow() as uow:
        assert uow.companies.get(shop.id).self_service_cutoff_hours == 5


def test_a_date_at_the_end_of_the_calendar_is_refused_beside_its_field(
    site: Site, shop: Company, owner: httpx.Client
):
    # The day after 9999-12-31 is no date: the coupon and crew forms answered 500.
    coupon = post(
        owner,
        "/admin/catalog/coupons/new",
        {"code": "EDGE1", "percent": "10", "valid_until": "9999-12-31"},
    )
    assert coupon.status_code == 422
    assert field_error(coupon, "valid_until") == "A date such as 2026-12-31."
    member = post(
        owner, "/admin/crew/new", {"name": "Zed", "home_zip": "10001", "time_off": "9999-12-31"}
    )
    assert member.status_code == 422
    assert "Could not read \u20189999-12-31\u2019" in (field_error(member, "time_off") or "")
    assert "EDGE1" not in {c.code for c in catalog(site, shop).coupons}


@pytest.mark.parametrize("typed", ["Edge%FFTester", "Edge%ED%A0%80Tester", "Edge%C0%AFTester"])
def test_a_form_whose_text_is_not_utf8_is_refused_and_nothing_is_saved(
    site: Site, shop: Company, owner: httpx.Client, typed: str
):
    # It was read with a replacement character and saved: a service named "Edge\ufffdTester".
    token = csrf(owner.get("/admin"))
    before = catalog(site, shop)
    refused = owner.post(
        "/admin/catalog/services/new",
        content=f"csrf_token={token}&name={typed}&industry=Cleaning&price=100&duration=60",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert refused.status_code == 400
    assert "That form could not be read" in text_of(refused)
    assert "not UTF-8" in text_of(refused)
    assert catalog(site, shop) == before
