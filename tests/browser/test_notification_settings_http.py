"""A company's email settings over HTTP (no browser) on ``/admin/settings``: its email
address (the Reply-To of its emails) and reminder hours are shown, saved, refused beside
their field when wrong (nothing saved), and left alone by a form without them."""

from __future__ import annotations

import httpx

from booking_core.companies import Company
from tests.browser.support import Site
from tests.browser.test_brand_http import csrf, owner

__all__ = ["owner"]  # the fixture, shared with the brand colour's tests (`shop` is in conftest)


def post(browser: httpx.Client, company: Company, **fields: str) -> httpx.Response:
    page = browser.get("/admin/settings")
    assert page.status_code == 200, page.text
    form = {
        "csrf_token": csrf(page),
        "name": company.name,
        "timezone": company.timezone,
        "cutoff_hours": str(company.self_service_cutoff_hours),
        "min_notice_minutes": str(company.min_notice_minutes),
        "code_prefix": company.code_prefix,
        "tax_rate": "8.87",
        "brand_color": "",
        **fields,
    }
    return browser.post("/admin/settings", data=form)


def stored(site: Site, company: Company) -> Company:
    with site.container.uow() as uow:
        return uow.companies.get(company.id)


def test_the_email_settings_are_shown_saved_and_refused_beside_their_field(
    site: Site, shop: Company, owner: httpx.Client
):
    page = owner.get("/admin/settings")
    assert 'name="reminder_hours"' in page.text
    assert 'value="24"' in page.text
    saved = post(owner, shop, notify_email=" Office@Shop.Example ", reminder_hours="48")
    assert saved.status_code in (302, 303), saved.text
    after = stored(site, shop)
    assert (after.notify_email, after.reminder_hours) == ("office@shop.example", 48)
    refused = post(owner, shop, notify_email="office@shop.example\nBcc: x@y", reminder_hours="999")
    assert refused.status_code == 422
    assert "An email address such as office@example.com." in refused.text
    assert "Between 0 and 336 hours." in refused.text
    assert stored(site, shop) == after
    assert post(owner, shop).status_code in (302, 303)  # an older form: both kept
    assert stored(site, shop) == after
    cleared = post(owner, shop, notify_email="", reminder_hours="0")
    assert cleared.status_code in (302, 303), cleared.text
    assert (stored(site, shop).notify_email, stored(site, shop).reminder_hours) == (None, 0)


def test_a_settings_form_without_the_brand_colour_keeps_it(
    site: Site, shop: Company, owner: httpx.Client
):
    """Like the other later fields: a form made before it existed leaves it as stored."""
    assert post(owner, shop, brand_color="#1d4ed8").status_code in (302, 303)
    page = owner.get("/admin/settings")
    form = {
        "csrf_token": csrf(page),
        "name": shop.name,
        "timezone": shop.timezone,
        "cutoff_hours": "24",
        "min_notice_minutes": "30",
        "code_prefix": shop.code_prefix,
        "tax_rate": "8.87",
    }
    assert owner.post("/admin/settings", data=form).status_code in (302, 303)
    assert stored(site, shop).brand_color == "#1d4ed8"


def test_a_long_number_is_told_the_fields_own_bounds(
    site: Site, shop: Company, owner: httpx.Client
):
    """Twelve digits and more were "At most 1,000,000,000." or "digits only"."""
    before = stored(site, shop)
    for digits in ("999999999999", "9" * 40):
        refused = post(owner, shop, min_notice_minutes=digits, reminder_hours=digits)
        assert refused.status_code == 422
        assert "Between 0 and 20160 minutes." in refused.text
        assert "Between 0 and 336 hours." in refused.text
        assert "digits only" not in refused.text
        assert "1,000,000,000" not in refused.text
    assert stored(site, shop) == before
