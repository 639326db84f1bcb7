"""Refusals on a company's customer pages (``/{slug}/...``) over HTTP: a form too large,
one holding a NUL, a bad CSRF token. Their one button goes to the company's booking page,
as the 404 page's does, never to the staff sign-in."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.browser.support import Site
from tests.browser.test_customer_pages_http import fetch, quote_for, quote_path, track

HUGE = "x" * (70 * 1024)


@pytest.mark.parametrize(
    ("where", "form", "status"),
    [
        ("book", {"step": "review", "name": "Ann\x00Lee"}, 400),
        ("book", {"step": "review", "notes": HUGE}, 413),
        ("quote", {"action": "accept", "x": "\x00"}, 400),
        ("reschedule", {"start": HUGE}, 413),
        ("portal", {"email": HUGE}, 413),
        ("cancel", {"csrf_token": "forged"}, 403),
    ],
)
def test_a_refused_customer_form_offers_the_company_s_booking_page_not_sign_in(
    site: Site, where: str, form: dict[str, str], status: int
):
    job = site.crew_job()
    slug = job.company.slug
    path = {
        "book": f"/{slug}/book",
        "quote": quote_path(job, quote_for(site, job)) if where == "quote" else "",
        "reschedule": track(job) + "/reschedule",
        "portal": f"/{slug}/portal",
        "cancel": track(job) + "/cancel",
    }[where]
    at = job.booking.start - timedelta(days=2)
    refused = fetch(site, at, ("GET", path, {}), ("POST", path, form))[-1]
    assert refused.status_code == status
    assert "/sign-in" not in refused.text
    assert f'href="/{slug}/book"' in refused.text
    assert f"Book a visit with {job.company.name}" in refused.text


def test_a_refusal_on_an_unknown_company_s_path_offers_no_sign_in(site: Site):
    job = site.crew_job()
    (refused,) = fetch(
        site, job.booking.start, ("POST", "/no-such-company-zz/track/abc/cancel", {"x": HUGE})
    )
    assert refused.status_code == 413
    assert "/sign-in" not in refused.text


def test_a_staff_page_s_refusal_still_offers_sign_in(site: Site):
    job = site.crew_job()
    (refused,) = fetch(
        site, job.booking.start, ("POST", "/admin/catalog/frequencies/weekly", {"x": HUGE})
    )
    assert refused.status_code == 413
    assert 'href="/sign-in"' in refused.text


def test_the_booking_page_of_a_company_with_nothing_to_book_sends_nowhere(site: Site):
    """A new company's booking page is "Not open for booking": no button leading back to
    the same page, and none to sign-in."""
    from booking_core.catalog import Catalog

    company, _ = site.new_company(Catalog(company_id="unused"))
    (refused,) = fetch(site, site.container.clock.now(), ("GET", f"/{company.slug}/book", {}))
    assert refused.status_code == 404
    assert "Not open for booking" in refused.text
    assert f'href="/{company.slug}/book"' not in refused.text
    assert "/sign-in" not in refused.text
