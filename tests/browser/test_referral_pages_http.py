"""The referral programme on the pages, over HTTP (no browser): the admin settings page's
referral discount, in dollars; the customer portal's line with the customer's own code
while the programme is on."""

from __future__ import annotations

import attrs
import httpx

from booking_core.companies import Company
from tests.browser.support import Job, Site
from tests.browser.test_brand_http import owner
from tests.browser.test_notification_settings_http import post, stored
from tests.browser.test_pages_http import client, run_async
from tests.browser.test_portal_http import ask_for_link, latest_token, portal_app

__all__ = ["owner"]  # the fixture, shared with the brand colour's tests (`shop` is in conftest)


def test_the_referral_discount_is_set_in_dollars_on_the_settings_page(
    site: Site, shop: Company, owner: httpx.Client
):
    page = owner.get("/admin/settings")
    assert 'name="referral_discount"' in page.text
    assert "Referral discount" in page.text

    saved = post(owner, shop, referral_discount="$25")
    refused = post(owner, shop, referral_discount="12.345")
    too_much = post(owner, shop, referral_discount="1000000.01")
    kept = post(owner, shop)  # a form made before the field existed

    assert saved.status_code in (302, 303), saved.text
    assert refused.status_code == too_much.status_code == 422
    assert "Write the amount as digits with at most two decimals" in refused.text
    assert "At most $1,000,000.00." in too_much.text
    assert kept.status_code in (302, 303), kept.text
    assert stored(site, shop).referral_discount_cents == 2_500
    assert 'value="25"' in owner.get("/admin/settings").text
    assert post(owner, shop, referral_discount="0").status_code in (302, 303)
    assert stored(site, shop).referral_discount_cents == 0


def _portal_home(site: Site, job: Job) -> tuple[str, str]:
    """The signed-in portal home of the job's customer, and that customer's code."""
    slug = job.company.slug
    app = portal_app(site)

    async def scenario() -> str:
        async with client(app) as browser:
            await ask_for_link(browser, slug, job.customer_email)
            await browser.get(f"/{slug}/portal/link/{latest_token(site, job)}")
            home = await browser.get(f"/{slug}/portal")
            assert home.status_code == 200, home.text
            return home.text

    with site.container.uow() as uow:
        code = uow.customers.get(job.company.id, job.booking.customer_id).referral_code
    return run_async(scenario), code


def test_the_portal_shows_the_customers_referral_code_while_the_programme_is_on(site: Site):
    job = site.crew_job()
    with site.container.uow() as uow:
        uow.companies.save(attrs.evolve(job.company, referral_discount_cents=2_500))
        uow.commit()
    home, code = _portal_home(site, job)
    assert (
        f'Your referral code: <strong class="cust-code">{code}</strong> — friends get $25.00'
        " off their first visit."
    ) in home


def test_the_portal_shows_no_referral_line_while_the_programme_is_off(site: Site):
    home, code = _portal_home(site, site.crew_job())
    assert "referral code" not in home
    assert code not in home
