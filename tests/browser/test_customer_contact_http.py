"""The customer pages tell how to reach the company: its email address (a mailto link)
beside "call or email" on the tracking page past the cutoff and on the expired link's
page; and their wording reads naturally whatever the company and frequency are named."""

from __future__ import annotations

from datetime import timedelta

from booking_core.services.setup import UpdateCompanySettings, update_company_settings
from tests.browser.support import Job, Site
from tests.browser.test_customer_pages_http import get, quote_for, track

MAILTO = '<a href="mailto:hello@nightowl.example">hello@nightowl.example</a>'


def night_owl(site: Site, *, email: str = "hello@nightowl.example") -> Job:
    job = site.crew_job()
    update_company_settings(
        UpdateCompanySettings(company_id=job.company.id, name="Night Owl Cleaners",
                              notify_email=email),
        uow=site.container.uow(),
    )  # fmt: skip
    return job


def test_past_the_cutoff_the_tracking_page_gives_the_company_s_email(site: Site):
    job = night_owl(site)
    page = get(site, job.booking.start - timedelta(hours=23), track(job))
    assert page.status_code == 200
    assert (
        "Call or email Night Owl Cleaners to change it. Their email address is " + MAILTO + "."
        in page.text
    )
    without = night_owl(site, email="")
    plain = get(site, without.booking.start - timedelta(hours=23), track(without)).text
    assert "Call or email Night Owl Cleaners to change it.</p>" in plain
    assert "mailto:" not in plain


def test_the_expired_link_page_gives_the_email_and_no_possessive(site: Site):
    job = night_owl(site)
    cancelled_at = site.cancel(job)
    gone = get(site, cancelled_at + timedelta(days=90), track(job))
    assert gone.status_code == 410
    assert "Cleaners's" not in gone.text
    assert (
        "For a question about this visit, email Night Owl Cleaners at " + MAILTO + " or call them."
        in gone.text
    )


def test_a_recurring_quote_names_its_frequency_in_a_sentence(site: Site):
    job = site.crew_job()
    container = site.container
    quote = quote_for(site, job, frequency="biweekly")
    page = get(site, container.clock.now(), f"/{job.company.slug}/q/{quote.public_token}")
    assert page.status_code == 200
    assert "Every two weeks visits" not in page.text
    assert "Repeats: Every two weeks. This is the price of the first visit." in page.text
