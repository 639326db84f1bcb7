"""The customer portal over HTTP without a browser: the same answer for a known and an
unknown email, a link that works once and for 15 minutes, one company's customer never
seeing another's portal (nor staff pages, nor staff a portal), the CSRF check, the
throttle on link requests, and details saved with errors beside their fields."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import attrs
import httpx

from adapters.web.deps import new_portal_throttle
from adapters.web.throttle import SignInThrottle
from booking_core.clock import FixedClock
from booking_core.companies import Company
from booking_core.notifications import Message, MessageKind
from booking_core.users import Role
from entrypoints.web import web_app, web_deps
from tests.browser.support import PASSWORD, Job, Site
from tests.browser.test_pages_http import CSRF, client, run_async

LINK = re.compile(r"/portal/link/([A-Za-z0-9_-]{43})")


class PlainComposer:
    """A stand-in for the configured composer: the link in the text."""

    def compose(
        self, kind: MessageKind, company: Company, context: Mapping[str, object]
    ) -> tuple[str, str, str]:
        return f"Sign in to {company.name}", f"Open {context['link_url']}", "<p>link</p>"


def portal_app(site: Site, at: datetime | None = None, **changes: Any):
    deps = web_deps(site.container)
    if deps.composer is None:
        changes.setdefault("composer", PlainComposer())
    if at is not None:
        changes["clock"] = FixedClock(at)
    return web_app(site.container, pages=attrs.evolve(deps, **changes))


def sign_in_messages(site: Site, company_id: str, customer_id: str) -> list[Message]:
    with site.container.uow() as uow:
        found = uow.messages.for_subject(company_id, customer_id)
    return [m for m in found if m.kind is MessageKind.PORTAL_SIGN_IN]


def latest_token(site: Site, job: Job) -> str:
    messages = sign_in_messages(site, job.company.id, job.booking.customer_id)
    found = LINK.search(messages[-1].text)
    assert found is not None, messages[-1].text
    return found.group(1)


async def ask_for_link(browser: httpx.AsyncClient, slug: str, email: str) -> httpx.Response:
    form = await browser.get(f"/{slug}/portal")
    token = CSRF.search(form.text)
    assert token is not None, form.text
    return await browser.post(
        f"/{slug}/portal", data={"csrf_token": token.group(1), "email": email}
    )


def without_tokens(html: str, *emails: str) -> str:
    html = CSRF.sub('name="csrf_token" value=""', html)
    for email in emails:
        html = html.replace(email, "EMAIL")
    return html


def test_a_known_and_an_unknown_email_get_the_same_answer_and_only_a_customer_a_link(
    site: Site,
):
    job = site.crew_job()
    slug = job.company.slug
    app = portal_app(site)

    async def scenario() -> tuple[httpx.Response, httpx.Response]:
        async with client(app) as one, client(app, address="198.51.100.8") as two:
            known = await ask_for_link(one, slug, job.customer_email.upper())
            unknown = await ask_for_link(two, slug, "stranger@example.com")
        return known, unknown

    known, unknown = run_async(scenario)
    assert known.status_code == unknown.status_code == 200
    sentence = (
        "If that address has bookings with Brightside Cleaning, we&#39;ve emailed you a link."
    )
    assert sentence in known.text
    assert without_tokens(known.text, job.customer_email.upper()) == without_tokens(
        unknown.text, "stranger@example.com"
    )
    (message,) = sign_in_messages(site, job.company.id, job.booking.customer_id)
    assert message.to == job.customer_email
    assert message.dedupe_key.startswith("portal.sign_in:pln_")
    assert LINK.search(message.text)


def test_a_link_signs_in_once_then_says_it_was_used(site: Site):
    job = site.crew_job()
    slug = job.company.slug
    app = portal_app(site)

    async def scenario() -> None:
        async with client(app) as browser:
            await ask_for_link(browser, slug, job.customer_email)
            token = latest_token(site, job)
            claimed = await browser.get(f"/{slug}/portal/link/{token}")
            assert claimed.status_code == 303
            assert claimed.headers["location"] == f"/{slug}/portal"
            assert claimed.headers["referrer-policy"] == "no-referrer"
            home = await browser.get(f"/{slug}/portal")
            assert home.status_code == 200
            assert "Hello, Grace Hopper" in home.text
            assert job.booking.code in home.text
            assert f"/{slug}/track/{job.booking.tracking_token}" in home.text
            # Opening a used or bad link, a portal one or a staff one, signs no one out.
            for used in (f"/{slug}/portal/link/{token}", "/sign-in/link/garbage"):
                assert (await browser.get(used)).status_code == 303
                still = await browser.get(f"/{slug}/portal")
                assert "Hello, Grace Hopper" in still.text, used
                # The mail's link clicked twice: no "ask for a new one below" without a
                # form below; the customer is told they are still signed in.
                assert "Ask for a new one below" not in still.text
            await browser.get(f"/{slug}/portal/link/{token}")
            told = html.unescape((await browser.get(f"/{slug}/portal")).text)
            assert f"You are still signed in as {job.customer_email}." in told
        async with client(app, address="203.0.113.9") as thief:
            again = await thief.get(f"/{slug}/portal/link/{token}")
            assert again.status_code == 303
            page = await thief.get(f"/{slug}/portal")
            assert "expired or was already used" in page.text
            assert "Hello," not in page.text
            assert job.booking.code not in page.text

    run_async(scenario)


def test_a_link_ends_15_minutes_after_it_was_asked_for(site: Site):
    job = site.crew_job()
    slug = job.company.slug
    asked_at = site.container.clock.now()

    async def ask() -> None:
        async with client(portal_app(site, asked_at)) as browser:
            await ask_for_link(browser, slug, job.customer_email)

    run_async(ask)
    token = latest_token(site, job)

    async def claim_late() -> str:
        async with client(portal_app(site, asked_at + timedelta(minutes=15))) as browser:
            await browser.get(f"/{slug}/portal/link/{token}")
            return (await browser.get(f"/{slug}/portal")).text

    late = run_async(claim_late)
    assert "expired or was already used" in late
    assert "Hello," not in late


def test_a_customer_session_opens_its_own_company_s_portal_only_and_no_staff_page(site: Site):
    job = site.crew_job()
    other = site.crew_job()
    # The same person is a customer of the other company too: still not one portal.
    site.book(other.company, job.customer_email, "Grace Hopper", days_ahead=2)
    slug = job.company.slug
    app = portal_app(site)

    async def scenario() -> None:
        async with client(app) as browser:
            await ask_for_link(browser, slug, job.customer_email)
            token = latest_token(site, job)
            # The link is this company's: another company's address does not take it.
            refused = await browser.get(f"/{other.company.slug}/portal/link/{token}")
            assert refused.status_code == 303
            assert (await browser.get(f"/{slug}/portal/link/{token}")).status_code == 303
            elsewhere = await browser.get(f"/{other.company.slug}/portal")
            assert "Email me a sign-in link" in elsewhere.text
            assert other.booking.code not in elsewhere.text
            assert job.booking.code not in elsewhere.text
            details = await browser.get(f"/{other.company.slug}/portal/details")
            assert details.status_code == 303
            home = await browser.get(f"/{slug}/portal")
            assert job.booking.code in home.text
            assert other.booking.code not in home.text
            for staff_page in ("/admin", "/crew", "/account"):
                answer = await browser.get(staff_page)
                assert answer.status_code == 303
                assert answer.headers["location"] == "/sign-in"
            # ... and being sent there (a link from anywhere) does not sign them out.
            still = await browser.get(f"/{slug}/portal")
            assert job.booking.code in still.text

    run_async(scenario)


def test_a_staff_session_opens_no_portal(site: Site):
    job = site.crew_job()
    owner = site.user(job.company, Role.OWNER)
    app = portal_app(site)

    async def scenario() -> None:
        async with client(app) as browser:
            form = await browser.get("/sign-in")
            token = CSRF.search(form.text)
            assert token is not None
            signed_in = await browser.post(
                "/sign-in",
                data={"csrf_token": token.group(1), "email": owner.email, "password": PASSWORD},
            )
            assert signed_in.headers["location"] == "/admin"
            portal = await browser.get(f"/{job.company.slug}/portal")
            assert "Email me a sign-in link" in portal.text
            assert job.booking.code not in portal.text
            details = await browser.get(f"/{job.company.slug}/portal/details")
            assert details.status_code == 303
            assert details.headers["location"] == f"/{job.company.slug}/portal"

    run_async(scenario)


def test_posts_without_the_page_s_token_are_refused(site: Site):
    job = site.crew_job()
    slug = job.company.slug
    app = portal_app(site)

    async def scenario() -> None:
        async with client(app) as browser:
            forged = await browser.post(f"/{slug}/portal", data={"email": job.customer_email})
            assert forged.status_code == 403
            assert sign_in_messages(site, job.company.id, job.booking.customer_id) == []
            await ask_for_link(browser, slug, job.customer_email)
            await browser.get(f"/{slug}/portal/link/{latest_token(site, job)}")
            details = await browser.post(
                f"/{slug}/portal/details", data={"name": "Mallory", "phone": ""}
            )
            assert details.status_code == 403
            signed_out = await browser.post(f"/{slug}/portal/sign-out", data={})
            assert signed_out.status_code == 403
            assert "Hello, Grace Hopper" in (await browser.get(f"/{slug}/portal")).text

    run_async(scenario)
    with site.container.uow() as uow:
        assert uow.customers.get(job.company.id, job.booking.customer_id).name == "Grace Hopper"


def test_link_requests_are_throttled_per_email_with_one_answer_for_known_and_unknown(
    site: Site,
):
    job = site.crew_job()
    slug = job.company.slug
    throttle = SignInThrottle(per_email=2, per_address=100, namespace="portal")
    app = portal_app(site, portal_throttle=throttle)

    async def scenario() -> list[httpx.Response]:
        answers = []
        async with client(app) as browser:
            for email in (job.customer_email,) * 3 + ("nobody@example.com",) * 3:
                answers.append(await ask_for_link(browser, slug, email))
        return answers

    answers = run_async(scenario)
    assert [a.status_code for a in answers] == [200, 200, 429, 200, 200, 429]
    assert "Too many requests for a sign-in link" in answers[2].text
    assert 0 < int(answers[2].headers["retry-after"]) <= 15 * 60
    assert without_tokens(answers[2].text, job.customer_email) == without_tokens(
        answers[5].text, "nobody@example.com"
    )
    assert len(sign_in_messages(site, job.company.id, job.booking.customer_id)) == 2


def test_link_requests_are_throttled_per_client_address(site: Site):
    job = site.crew_job()
    slug = job.company.slug
    app = portal_app(site, portal_throttle=SignInThrottle(per_email=100, per_address=3))

    async def scenario() -> tuple[int, int]:
        async with client(app, address="192.0.2.60") as browser:
            for n in range(3):
                await ask_for_link(browser, slug, f"guess{n}@example.com")
            held = await ask_for_link(browser, slug, job.customer_email)
        async with client(app, address="192.0.2.61") as neighbour:
            fine = await ask_for_link(neighbour, slug, job.customer_email)
        return held.status_code, fine.status_code

    assert run_async(scenario) == (429, 200)
    assert len(sign_in_messages(site, job.company.id, job.booking.customer_id)) == 1


def test_one_company_s_link_requests_never_throttle_another_s_portal(site: Site):
    """The same email and the same network at their limit on one company's portal: the
    next company's portal still answers (each company counts its own)."""
    job = site.crew_job()
    other, _ = site.new_company()
    app = portal_app(site, portal_throttle=SignInThrottle(per_email=2, per_address=3))

    async def scenario() -> list[int]:
        async with client(app, address="192.0.2.70") as browser:
            here = [
                (await ask_for_link(browser, job.company.slug, email)).status_code
                for email in (job.customer_email, job.customer_email, job.customer_email)
            ]
            there = await ask_for_link(browser, other.slug, job.customer_email)
        return [*here, there.status_code]

    assert run_async(scenario) == [200, 200, 429, 200]


def test_the_default_portal_throttle_counts_five_requests_per_email():
    throttle = new_portal_throttle()
    for _ in range(5):
        assert throttle.wait_seconds("ada@example.com", "192.0.2.1") == 0
        throttle.hit("ada@example.com", "192.0.2.1")
    assert throttle.wait_seconds("ADA@example.com", "192.0.2.2") > 0


def test_details_are_saved_and_errors_shown_beside_their_fields(site: Site):
    job = site.crew_job()
    slug = job.company.slug
    app = portal_app(site)

    async def scenario() -> tuple[httpx.Response, httpx.Response, httpx.Response]:
        async with client(app) as browser:
            await ask_for_link(browser, slug, job.customer_email)
            await browser.get(f"/{slug}/portal/link/{latest_token(site, job)}")
            form = await browser.get(f"/{slug}/portal/details")
            csrf = CSRF.search(form.text)
            assert csrf is not None
            bad = await browser.post(
                f"/{slug}/portal/details",
                data={"csrf_token": csrf.group(1), "name": " ", "phone": "12"},
            )
            good = await browser.post(
                f"/{slug}/portal/details",
                data={"csrf_token": csrf.group(1), "name": "Grace B. Hopper", "phone": ""},
            )
            address = await browser.post(
                f"/{slug}/portal/addresses/new",
                data={
                    "csrf_token": csrf.group(1),
                    "line1": "1 Navy Way",
                    "city": "Arlington",
                    "state": "New York",
                    "zip": "2220",
                },
            )
            # A street of a zero-width space alone prints as nothing; a zip drive times
            # do not know could never be booked: both are refused beside their field.
            unseen, unknown = [
                await browser.post(
                    f"/{slug}/portal/addresses/new",
                    data={
                        "csrf_token": csrf.group(1),
                        "line1": line1,
                        "city": "Arlington",
                        "state": "VA",
                        "zip": zip_code,
                    },
                )
                for line1, zip_code in (("\u200b", "22202"), ("1 Navy Way", "99999"))
            ]
            assert unseen.status_code == unknown.status_code == 422
            assert 'id="line1-error">Required: at least one visible character.' in unseen.text
            assert 'id="zip-error">Unknown US zip code &#39;99999&#39;.' in unknown.text
            for path, field in (("details", "name"), ("addresses/new", "line1")):
                nul = await browser.post(
                    f"/{slug}/portal/{path}",
                    data={"csrf_token": csrf.group(1), field: "1 Navy Way\x00", "zip": "22202"},
                )
                assert nul.status_code == 400, path
                assert "NUL character" in nul.text
        return bad, good, address

    bad, good, address = run_async(scenario)
    assert bad.status_code == 422
    assert re.search(r'id="name-error">Required', bad.text)
    assert re.search(r'id="phone-error">Not a phone number', bad.text)
    assert good.status_code == 303
    assert address.status_code == 422
    assert re.search(r'id="zip-error">A 5-digit US zip code', address.text)
    # A state typed out (or filled in by the browser) comes back whole, refused beside
    # its field: the field does not cut it to two letters, so "New York" is never saved
    # as "NE".
    assert re.search(r'id="state-error">A two-letter state code', address.text)
    assert re.search(r'<input[^>]*name="state"[^>]*value="New York"', address.text)
    assert not re.search(r'<input[^>]*name="state"[^>]*maxlength="2"', address.text)
    with site.container.uow() as uow:
        customer = uow.customers.get(job.company.id, job.booking.customer_id)
    assert customer.name == "Grace B. Hopper"
    assert customer.phone is None
    assert all(a.address.line1 != "1 Navy Way" for a in customer.addresses)


def test_inside_the_cutoff_a_visit_says_whom_to_email_as_its_tracking_page_does(site: Site):
    """The buttons give way to the tracking page's sentence, with the company's email
    address when it has one."""
    job = site.crew_job()
    with site.container.uow() as uow:
        company = uow.companies.get_for_update(job.company.id)
        uow.companies.save(attrs.evolve(company, notify_email="hello@brightside.example"))
        uow.commit()
    slug = job.company.slug
    app = portal_app(site, at=job.booking.start - timedelta(hours=2))

    async def scenario() -> None:
        async with client(app) as browser:
            await ask_for_link(browser, slug, job.customer_email)
            await browser.get(f"/{slug}/portal/link/{latest_token(site, job)}")
            home = await browser.get(f"/{slug}/portal")
            track = await browser.get(f"/{slug}/track/{job.booking.tracking_token}")
        sentence = (
            "Call or email Brightside Cleaning to change it. Their email address is "
            '<a href="mailto:hello@brightside.example">hello@brightside.example</a>.'
        )
        assert sentence in track.text
        assert sentence in home.text
        assert f"/{slug}/track/{job.booking.tracking_token}/reschedule" not in home.text

    run_async(scenario)
