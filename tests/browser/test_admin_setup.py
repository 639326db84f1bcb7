"""Setting a company up in the admin workspace, in Chromium: an owner of an empty company
adds a service with an extra and a crew member, and the service is at once priced, open
and bookable over ``/api/v1``; a parameter and a fee added in the browser price quotes to
the cent; a bad amount is refused beside its field and writes nothing; another company's
service, parameter, fee or crew member in the address is the 404 page."""

from __future__ import annotations

import re
import secrets
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from playwright.sync_api import expect

from booking_core.catalog import FeeKind
from booking_core.catalog_drafts import (
    CatalogDraft,
    FeeDraft,
    FrequencyDraft,
    IndustryDraft,
    ParameterDraft,
    ServiceDraft,
)
from booking_core.companies import Company
from booking_core.paging import PageRequest
from booking_core.services import companies as company_cases
from booking_core.services.setup import ReplaceCatalog, export_catalog, replace_catalog
from booking_core.users import Role
from tests.browser.support import Site, sign_in


def empty_company(site: Site) -> Company:
    """A company as ``booking company create`` makes it: no catalog, no crew."""
    return company_cases.create_company(
        company_cases.CreateCompany(slug=f"setup-{secrets.token_hex(4)}", name="Shine Bright Co"),
        uow=site.container.uow(),
        clock=site.container.clock,
    )


def api_key(site: Site, company: Company) -> str:
    return company_cases.create_key(
        company_cases.CreateKey(
            company_id=company.id,
            name="website",
            scopes=frozenset({"catalog:read", "bookings:read", "bookings:write"}),
        ),
        uow=site.container.uow(),
        clock=site.container.clock,
    ).secret


def one_service_company(site: Site) -> Company:
    """An empty company (no tax) with one service: Standard clean, $100, 60 minutes."""
    company = empty_company(site)
    service = ServiceDraft(
        id="svc_clean", name="Standard clean", base_price_cents=10_000, base_duration_minutes=60
    )
    replace_catalog(
        ReplaceCatalog(
            company_id=company.id,
            catalog=CatalogDraft(
                frequencies=(FrequencyDraft(slug="one_time", name="One time"),),
                industries=(IndustryDraft(id="ind_home", name="Home", services=(service,)),),
            ),
        ),
        uow=site.container.uow(),
        clock=site.container.clock,
    )
    return company


def services_of(site: Site, company: Company) -> list[ServiceDraft]:
    catalog = export_catalog(company.id, uow=site.container.reader())
    return [s for industry in catalog.industries for s in industry.services]


def test_an_owner_sets_up_an_empty_company_and_it_takes_a_booking(
    site: Site, page: Any, screenshots: Any
) -> None:
    company = empty_company(site)
    owner = site.user(company, Role.OWNER)
    sign_in(page, owner.email)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Catalog").click()
    expect(page.get_by_role("heading", name="No services yet")).to_be_visible()

    page.get_by_role("link", name="Add a service").first.click()
    page.get_by_label("Name").fill("Move-out clean")
    page.get_by_label("Industry").fill("Home cleaning")
    page.get_by_label("Base price").fill("149.99")
    page.get_by_label("Base duration").fill("120")
    page.get_by_role("button", name="Add service").click()
    expect(page.get_by_role("status")).to_contain_text(
        "Saved Move-out clean. A one-time frequency was added", use_inner_text=True
    )
    (service,) = services_of(site, company)
    assert (service.base_price_cents, service.base_duration_minutes) == (14_999, 120)

    page.get_by_role("link", name="Add extra to Move-out clean").click()
    page.get_by_label("Name").fill("Inside the fridge")
    page.get_by_label("Price").fill("25.5")
    page.get_by_label("Extra time").fill("30")
    page.get_by_role("button", name="Add extra").click()
    card = page.locator(f"#service-{service.id}")
    expect(card).to_contain_text("Inside the fridge", use_inner_text=True)
    expect(card).to_contain_text("$25.50", use_inner_text=True)
    (service,) = services_of(site, company)
    (extra,) = service.extras
    assert extra.price_cents == 2_550

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Crew").click()
    expect(page.get_by_role("heading", name="No crew yet")).to_be_visible()
    page.get_by_role("link", name="Add a crew member").first.click()
    page.get_by_label("Name").fill("Rosa Diaz")
    page.get_by_label("Home zip").fill("10001")
    page.get_by_label("Works in these zips").fill("10001, 10003\n10011")
    page.get_by_label("Home zip").fill("00000")  # no such zip: no slot could be found there
    page.get_by_label("Monday", exact=True).fill("18:00-08:00")
    page.get_by_role("button", name="Add crew member").click()
    expect(page.locator("#home_zip-error")).to_contain_text(
        "Unknown US zip code", use_inner_text=True
    )
    expect(page.locator("#day_1-error")).to_contain_text(
        "The end must be after the start", use_inner_text=True
    )
    expect(page.get_by_label("Works in these zips")).to_have_value("10001, 10003\n10011")
    with site.container.reader() as uow:
        assert not uow.crew.list_active(company.id, PageRequest(limit=10)).items
    page.get_by_label("Home zip").fill("10001")
    for day in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"):
        page.get_by_label(day, exact=True).fill("08:00-18:00")
    page.get_by_role("button", name="Add crew member").click()
    expect(page.get_by_role("status")).to_have_text("Saved Rosa Diaz.", use_inner_text=True)
    row = page.locator("tbody tr").filter(has_text="Rosa Diaz")
    expect(row).to_contain_text("10001, 10003, 10011", use_inner_text=True)
    # Its id is shown, for `booking user create --crew-member` (a crew member's login).
    with site.container.uow() as uow:
        (member,) = uow.crew.list_active(company.id, PageRequest(limit=10)).items
    expect(row).to_contain_text(member.id, use_inner_text=True)
    page.screenshot(path=str(screenshots / "admin-crew.png"), full_page=True)

    zone = ZoneInfo(company.timezone)
    day = (site.container.clock.now().astimezone(zone) + timedelta(days=2)).date()
    with site.api(api_key(site, company)) as api:
        quoted = api.post(
            "/api/v1/quote",
            json={"serviceId": service.id, "frequencySlug": "one_time",
                  "extras": [{"id": extra.id}]},
        )  # fmt: skip
        assert quoted.status_code == 200, quoted.text
        assert quoted.json()["firstVisit"]["totalCents"] == 14_999 + 2_550  # no tax set

        slots = api.get(
            "/api/v1/availability",
            params={"serviceId": service.id, "date": day.isoformat(), "zip": "10003",
                    "extras": f"{extra.id}:1"},
        )  # fmt: skip
        assert slots.status_code == 200, slots.text
        assert slots.json()["data"], "no open slot"
        slot = slots.json()["data"][0]

        booked = api.post(
            "/api/v1/bookings",
            headers={"Idempotency-Key": secrets.token_hex(8)},
            json={
                "serviceId": service.id,
                "frequencySlug": "one_time",
                "startIso": slot["startIso"],
                "customer": {"name": "Ada Lovelace", "email": "ada@example.com"},
                "address": {"line1": "12 Analytical Way", "city": "New York",
                            "state": "NY", "zip": "10003"},
                "extras": [{"id": extra.id}],
            },
        )  # fmt: skip
        assert booked.status_code == 201, booked.text
        assert booked.json()["price"]["totalCents"] == 17_549
        assert len(booked.json()["crewIds"]) == 1


def test_a_bad_amount_is_refused_beside_its_field_and_nothing_is_written(
    site: Site, page: Any, screenshots: Any
) -> None:
    company, _ = site.new_company()
    before = export_catalog(company.id, uow=site.container.reader())
    owner = site.user(company, Role.DISPATCHER, name="Dana Dispatcher")
    sign_in(page, owner.email)
    page.goto("/admin/catalog")
    page.screenshot(path=str(screenshots / "admin-catalog.png"), full_page=True)
    page.get_by_role("link", name="Add a service").first.click()
    for bad, said in (
        ("1e3", "digits with at most two decimals"),
        ("-1", "digits with at most two decimals"),
        ("12.345", "digits with at most two decimals"),
        ("1,049.99", "without commas, as digits with at most two decimals"),
        ("99999999999999999999", "digits with at most two decimals"),
        ("1000000.01", "At most $1,000,000.00."),
    ):
        page.get_by_label("Name").fill("Window wash")
        page.get_by_label("Industry").fill("Home cleaning")
        page.get_by_label("Base price").fill(bad)
        page.get_by_label("Base duration").fill("60")
        # The same error may already show: wait for the answer's page itself.
        with page.expect_navigation() as answer:
            page.get_by_role("button", name="Add service").click()
        assert answer.value.request.method == "POST"
        assert answer.value.status == 422
        error = page.locator("#price-error")
        expect(error).to_contain_text(said, use_inner_text=True)
        expect(page.get_by_label("Base price")).to_have_value(bad)  # kept as typed
        expect(page.get_by_label("Name")).to_have_value("Window wash")
    page.screenshot(path=str(screenshots / "admin-service-form.png"), full_page=True)
    assert export_catalog(company.id, uow=site.container.reader()) == before

    # A rule of the whole catalog, found by replace_catalog, lands beside its field too.
    page.get_by_label("Base price").fill("80")
    page.get_by_label("Base duration").fill("0")
    page.get_by_role("button", name="Add service").click()
    expect(page.locator("#duration-error")).to_contain_text(
        "at least a minute", use_inner_text=True
    )
    assert export_catalog(company.id, uow=site.container.reader()) == before


def test_another_companys_service_fee_or_crew_member_is_not_found(site: Site, context: Any) -> None:
    mine = site.crew_job()
    theirs = site.crew_job("Sam Lee")
    catalog = export_catalog(theirs.company.id, uow=site.container.reader())
    own_service = ServiceDraft(
        id="svc_theirs_only",
        name="Their secret",
        base_price_cents=100,
        base_duration_minutes=30,
        parameters=(ParameterDraft(id="par_theirs_only", name="Rooms", price_cents=100),),
    )
    own_fee = FeeDraft(id="fee_theirs_only", name="Theirs", kind=FeeKind.MANUAL, amount_cents=1)
    replace_catalog(
        ReplaceCatalog(
            company_id=theirs.company.id,
            catalog=catalog.__class__(
                tax_rate_bps=catalog.tax_rate_bps,
                frequencies=catalog.frequencies,
                industries=(*catalog.industries, IndustryDraft(id="ind_x", name="X",
                                                               services=(own_service,))),
                fees=(*catalog.fees, own_fee),
                coupons=catalog.coupons,
            ),
        ),
        uow=site.container.uow(),
        clock=site.container.clock,
    )  # fmt: skip
    owner = site.user(mine.company, Role.OWNER)
    page = context.new_page()
    sign_in(page, owner.email)
    for address in (
        "/admin/catalog/services/svc_theirs_only",
        "/admin/catalog/services/svc_theirs_only/extras/new",
        "/admin/catalog/services/svc_theirs_only/parameters/new",
        "/admin/catalog/services/svc_theirs_only/parameters/par_theirs_only",
        "/admin/catalog/services/svc_deep_clean/parameters/par_theirs_only",
        "/admin/catalog/fees/fee_theirs_only",
        f"/admin/crew/{theirs.member_id}",
    ):
        answer = page.goto(address)
        assert answer.status == 404, address
        expect(page.get_by_role("heading", name="Not found")).to_be_visible()

    # My own member's form, posted to the other company's member: 404, nothing changes.
    page.goto(f"/admin/crew/{mine.member_id}")
    expect(page.get_by_label("Name")).to_have_value("Rosa Diaz")
    token = page.locator("input[name=csrf_token]").first.get_attribute("value")
    posted = context.request.post(
        f"/admin/crew/{theirs.member_id}",
        form={"csrf_token": token, "name": "Taken Over", "home_zip": "10001", "active": "on"},
    )
    assert posted.status == 404
    with site.container.reader() as uow:
        assert uow.crew.get(theirs.company.id, theirs.member_id).name == "Sam Lee"
    for address, form in (
        ("/admin/catalog/fees/fee_theirs_only", {"name": "Mine", "kind": "manual", "amount": "9"}),
        ("/admin/catalog/fees/fee_theirs_only/active", {"active": "false"}),
        ("/admin/catalog/services/svc_theirs_only/parameters/par_theirs_only",
         {"name": "Mine", "price": "9", "duration": "0", "min_quantity": "0",
          "max_quantity": "1"}),
    ):  # fmt: skip
        posted = context.request.post(address, form={"csrf_token": token, **form})
        assert posted.status == 404, address
    assert export_catalog(theirs.company.id, uow=site.container.reader()).fees[-1] == own_fee
    (changed,) = [s for s in services_of(site, theirs.company) if s.id == "svc_theirs_only"]
    assert changed.parameters == own_service.parameters
    # ...and a crew user may not open setup at all.
    crew = site.user(mine.company, Role.CREW, crew_member_id=mine.member_id, name="Rosa Diaz")
    other = context.browser.new_context(base_url=site.base_url)
    try:
        crew_page = other.new_page()
        sign_in(crew_page, crew.email)
        assert crew_page.goto("/admin/catalog").status == 403
    finally:
        other.close()


def test_settings_refuse_a_bad_tax_rate_then_save(site: Site, page: Any, screenshots: Any) -> None:
    company, _ = site.new_company()
    owner = site.user(company, Role.OWNER)
    sign_in(page, owner.email)
    page.goto("/admin/settings")
    page.get_by_label("Tax rate").fill("8.875")
    page.get_by_label("Booking code prefix").fill("bc")
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator("#tax_rate-error")).to_contain_text(
        "at most two decimals", use_inner_text=True
    )
    page.get_by_label("Tax rate").fill("8.5")
    with page.expect_navigation():  # the same error may already show
        page.get_by_role("button", name="Save settings").click()
    expect(page.locator("#code_prefix-error")).to_contain_text(
        "Two capital letters", use_inner_text=True
    )
    page.screenshot(path=str(screenshots / "admin-settings.png"), full_page=True)
    with site.container.reader() as uow:
        assert uow.companies.get(company.id).tax_rate_bps == 887  # nothing written
    page.get_by_label("Booking code prefix").fill("SB")
    page.get_by_label("Timezone").select_option("America/Chicago")
    page.get_by_role("button", name="Save settings").click()
    expect(page.get_by_role("status")).to_have_text("Settings saved.", use_inner_text=True)
    with site.container.reader() as uow:
        saved = uow.companies.get(company.id)
    assert (saved.tax_rate_bps, saved.code_prefix, saved.timezone) == (850, "SB", "America/Chicago")


def test_frequencies_coupons_and_retiring_a_service(site: Site, page: Any) -> None:
    company, _ = site.new_company()
    dispatcher = site.user(company, Role.DISPATCHER, name="Dana Dispatcher")
    sign_in(page, dispatcher.email)

    page.goto("/admin/catalog/frequencies/new")
    page.get_by_label("Name").fill("Every three weeks")
    page.get_by_label("Every").fill("21")
    page.get_by_label("Discount").fill("7.5")
    page.get_by_role("button", name="Add frequency").click()
    expect(page.get_by_role("status")).to_have_text("Saved Every three weeks.", use_inner_text=True)
    catalog = export_catalog(company.id, uow=site.container.reader())
    added = catalog.frequencies[-1]
    assert (added.slug, added.interval_days, added.discount_bps) == ("every_three_weeks", 21, 750)
    # A second one of the same name would be a second identical choice on the booking page.
    page.goto("/admin/catalog/frequencies/new")
    page.get_by_label("Name").fill("every three WEEKS ")
    page.get_by_label("Every").fill("21")
    page.get_by_role("button", name="Add frequency").click()
    expect(page.locator("#name-error")).to_contain_text("Another frequency", use_inner_text=True)
    assert export_catalog(company.id, uow=site.container.reader()).frequencies == (
        catalog.frequencies
    )

    page.goto("/admin/catalog/coupons/new")
    page.get_by_label("Code").fill("SUMMER25")
    page.get_by_label("Percent off").fill("10")
    page.get_by_label("Amount off").fill("25")
    page.get_by_role("button", name="Add coupon").click()
    expect(page.locator("#amount-error")).to_contain_text("not both", use_inner_text=True)
    page.get_by_label("Percent off").fill("")
    page.get_by_label("Amount off").fill("0")  # refused in dollars, as it is typed
    page.get_by_role("button", name="Add coupon").click()
    expect(page.locator("#amount-error")).to_have_text("At least $0.01.", use_inner_text=True)
    page.get_by_label("Amount off").fill("25")
    page.get_by_label("Last day").fill("2030-08-31")
    page.get_by_label("Every three weeks").check()
    page.get_by_role("button", name="Add coupon").click()
    expect(page.get_by_role("status")).to_have_text("Saved coupon SUMMER25.", use_inner_text=True)
    coupon = export_catalog(company.id, uow=site.container.reader()).coupons[-1]
    assert (coupon.amount_cents, coupon.percent_bps) == (2_500, None)
    assert coupon.frequency_slugs == ("every_three_weeks",)
    assert coupon.valid_until is not None
    assert coupon.valid_until.isoformat() == "2030-09-01T00:00:00-04:00"  # through Aug 31, NY

    page.goto("/admin/catalog")
    card = page.locator("#service-svc_deep_clean")
    card.get_by_role("button", name="Retire Deep clean").click()
    expect(page.get_by_role("status")).to_contain_text("Deep clean is retired", use_inner_text=True)
    expect(page.locator("#service-svc_deep_clean")).to_contain_text("Retired", use_inner_text=True)
    (deep,) = [s for s in services_of(site, company) if s.id == "svc_deep_clean"]
    assert not deep.active


def test_a_parameter_added_in_the_browser_prices_a_quote_to_the_cent(site: Site, page: Any) -> None:
    company = one_service_company(site)
    sign_in(page, site.user(company, Role.OWNER).email)
    page.goto("/admin/catalog")
    page.get_by_role("link", name="Add parameter to Standard clean").click()
    page.get_by_label("Name").fill("Bedrooms")
    page.get_by_label("Price each").fill("24.75")
    page.get_by_label("Time each").fill("30")
    page.get_by_label("At least").fill("1")
    page.get_by_label("At most").fill("0")
    with page.expect_response(lambda r: r.request.method == "POST") as answer:
        page.get_by_role("button", name="Add parameter").click()
    assert answer.value.status == 422
    expect(page.locator("#max_quantity-error")).to_have_text(
        "At least the minimum quantity.", use_inner_text=True
    )
    expect(page.get_by_label("Price each")).to_have_value("24.75")
    (service,) = services_of(site, company)
    assert service.parameters == ()  # nothing written

    page.get_by_label("At most").fill("6")
    page.get_by_role("button", name="Add parameter").click()
    expect(page.get_by_role("status")).to_have_text(
        "Saved Bedrooms of Standard clean.", use_inner_text=True
    )
    (service,) = services_of(site, company)
    (parameter,) = service.parameters
    assert re.fullmatch(r"par_[0-9a-f]{24}", parameter.id)  # drawn at random, not named
    row = page.locator(f"#parameter-svc_clean-{parameter.id}")
    expect(row).to_contain_text("$24.75", use_inner_text=True)
    expect(row).to_contain_text("1 to 6", use_inner_text=True)

    def quoted(quantity: int) -> dict[str, Any]:
        answer = api.post(
            "/api/v1/quote",
            json={"serviceId": "svc_clean", "frequencySlug": "one_time",
                  "parameters": [{"id": parameter.id, "quantity": quantity}]},
        )  # fmt: skip
        assert answer.status_code == 200, answer.text
        return dict(answer.json()["firstVisit"])

    with site.api(api_key(site, company)) as api:
        first = quoted(3)
        assert first["totalCents"] == 10_000 + 3 * 2_475
        assert first["durationMinutes"] == 60 + 3 * 30
        page.get_by_role("link", name="Edit Bedrooms").click()
        page.get_by_label("Price each").fill("25")
        page.get_by_role("button", name="Save parameter").click()
        expect(page.get_by_role("status")).to_have_text(
            "Saved Bedrooms of Standard clean.", use_inner_text=True
        )
        assert quoted(3)["totalCents"] == 10_000 + 3 * 2_500


def test_a_fee_added_in_the_browser_is_listed_and_charged_then_retired(
    site: Site, page: Any, screenshots: Any
) -> None:
    company = one_service_company(site)
    sign_in(page, site.user(company, Role.DISPATCHER, name="Dana Dispatcher").email)
    page.goto("/admin/catalog")
    page.get_by_role("link", name="Add a fee").click()
    page.get_by_label("Name").fill("Travel charge")
    page.locator("#kind-zip").check()
    expect(page.locator("#zips")).to_be_visible()
    expect(page.locator("#weekday_1")).to_be_hidden()  # only the chosen kind's fields
    page.get_by_label("Percentage").fill("12.345")
    with page.expect_response(lambda r: r.request.method == "POST") as answer:
        page.get_by_role("button", name="Add fee").click()
    assert answer.value.status == 422
    expect(page.locator("#percent-error")).to_contain_text(
        "at most two decimals", use_inner_text=True
    )
    expect(page.locator("#kind-zip")).to_be_checked()  # kept as chosen

    page.get_by_label("Percentage").fill("")
    page.get_by_label("Fixed amount").fill("15")
    with page.expect_navigation():  # the same error may already show
        page.get_by_role("button", name="Add fee").click()
    expect(page.locator("#zips-error")).to_have_text(
        "Write the zip codes the fee is charged in.", use_inner_text=True
    )  # the core's, in the page's words
    page.locator("#zips").fill("10001, 1234")
    page.get_by_role("button", name="Add fee").click()
    expect(page.locator("#zips-error")).to_contain_text(
        "\u20181234\u2019 is not a 5-digit US zip code.", use_inner_text=True
    )
    page.screenshot(path=str(screenshots / "admin-fee-form.png"), full_page=True)
    assert export_catalog(company.id, uow=site.container.reader()).fees == ()

    page.locator("#kind-service").check()
    expect(page.locator("#zips")).to_be_hidden()
    page.get_by_label("Standard clean").check()
    page.get_by_role("button", name="Add fee").click()
    expect(page.get_by_role("status")).to_have_text("Saved fee Travel charge.", use_inner_text=True)
    (fee,) = export_catalog(company.id, uow=site.container.reader()).fees
    assert re.fullmatch(r"fee_[0-9a-f]{24}", fee.id)  # drawn at random, not named
    assert (fee.kind, fee.amount_cents, fee.amount_bps) == (FeeKind.SERVICE, 1_500, None)
    assert (fee.service_ids, fee.zips) == (("svc_clean",), ())  # the zip kind's field left out

    quote = {"serviceId": "svc_clean", "frequencySlug": "one_time"}
    with site.api(api_key(site, company)) as api:
        listed = api.get("/api/v1/services").json()["fees"]
        assert [(f["id"], f["amountCents"], f["serviceIds"]) for f in listed] == [
            (fee.id, 1_500, ["svc_clean"])
        ]
        priced = api.post("/api/v1/quote", json=quote).json()["firstVisit"]
        assert [(f["id"], f["amountCents"]) for f in priced["fees"]] == [(fee.id, 1_500)]
        assert priced["totalCents"] == 10_000 + 1_500

        page.locator(f"#fee-{fee.id}").get_by_role("button", name="Retire").click()
        expect(page.get_by_role("status")).to_contain_text(
            "Travel charge is retired", use_inner_text=True
        )
        expect(page.locator(f"#fee-{fee.id}")).to_contain_text("Retired", use_inner_text=True)
        assert api.get("/api/v1/services").json()["fees"] == []
        assert api.post("/api/v1/quote", json=quote).json()["firstVisit"]["totalCents"] == 10_000


def test_the_catalog_and_crew_pages_fit_a_phone(site: Site, page: Any, screenshots: Any) -> None:
    company, _ = site.new_company()
    site.add_member(company)
    sign_in(page, site.user(company, Role.OWNER).email)
    page.set_viewport_size({"width": 390, "height": 844})
    for path in ("/admin/catalog", "/admin/crew"):
        page.goto(path)
        # Wide tables scroll inside their own box; the page itself never scrolls sideways
        # (the tables' visually hidden labels used to stretch it to 548 and 865 px).
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{path} is {width} px wide on a 390 px phone"
    page.screenshot(path=str(screenshots / "admin-crew-phone.png"), full_page=True)


def test_every_action_of_the_catalog_stays_inside_its_card_on_a_desktop(
    site: Site, page: Any
) -> None:
    """At 1280 px the frequencies, coupons and fees cards sit side by side: each row's
    Edit and Remove stay inside their card (Remove used to run under the next card)."""
    company, _ = site.new_company()
    sign_in(page, site.user(company, Role.OWNER).email)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/admin/catalog")
    outside = page.evaluate(
        """() => [...document.querySelectorAll('.card')].flatMap(card => {
            const box = card.getBoundingClientRect();
            return [...card.querySelectorAll('a, button')]
              .filter(el => el.getBoundingClientRect().right > box.right + 0.5)
              .map(el => el.textContent.trim());
        })"""
    )
    assert page.locator("#frequencies tbody tr").count() >= 2
    assert outside == []


def test_the_top_bar_keeps_its_links_on_one_line_whatever_the_names(
    site: Site, page: Any, screenshots: Any
) -> None:
    """An owner with a long name: on a desktop the bar is one row (the names are cut
    short, the links never wrap); from 70rem down the links take a row of their own.
    Either way no link lies over another or off the screen."""
    company, _ = site.new_company()
    owner = site.user(company, Role.OWNER, name="Maximiliana Featherstonehaugh-Smith")
    sign_in(page, owner.email)
    rows = """() => {
      const links = [...document.querySelectorAll('.topbar a, .topbar button')]
        .filter(e => e.getClientRects().length);
      const middle = e => { const r = e.getBoundingClientRect(); return (r.top + r.bottom) / 2; };
      const tops = new Set(links.map(e => Math.round(middle(e) / 24)));
      const overlaps = links.some((a, i) => links.slice(i + 1).some(b => {
        const p = a.getBoundingClientRect(), q = b.getBoundingClientRect();
        return p.left < q.right && q.left < p.right && p.top < q.bottom && q.top < p.bottom;
      }));
      const nav = [...document.querySelectorAll('.nav a')].filter(e => e.getClientRects().length);
      return {
        navRows: new Set(nav.map(e => Math.round(middle(e) / 24))).size,
        rows: tops.size, overlaps,
        wide: document.documentElement.scrollWidth,
        tall: links.some(e => e.getBoundingClientRect().height > 48),
      };
    }"""
    for width, navs_row in ((1440, 1), (1280, 1), (1130, 1), (1024, 1), (800, 1)):
        page.set_viewport_size({"width": width, "height": 800})
        page.goto("/admin/keys")
        found = page.evaluate(rows)
        assert found["navRows"] == navs_row, (width, found)
        assert not found["overlaps"], (width, found)
        assert not found["tall"], (width, found)  # no button's words wrapped
        assert found["wide"] <= width, (width, found)
        if width > 1120:
            assert found["rows"] == 1, (width, found)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto("/admin/keys")
    page.screenshot(path=str(screenshots / "admin-top-bar-long-name.png"))
