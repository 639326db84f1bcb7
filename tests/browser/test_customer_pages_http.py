"""The customer's tracking and quote pages over HTTP without a browser: who may see which
page, the self-service cutoff, the expired link, and answering a quote (its status and
its event), at instants set by a fixed clock."""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import attrs
import httpx
import pytest

from adapters.web.admin_booking import long_date
from booking_core.bookings import Booking, BookingStatus
from booking_core.clock import FixedClock
from booking_core.companies import RESERVED_SLUGS, SLUG_PATTERN
from booking_core.customers import Address
from booking_core.events import EventType
from booking_core.plans import CancelScope
from booking_core.pricing import Selection
from booking_core.quotes import ManualLine, Quote, QuoteStatus, public_url
from booking_core.services import scheduling
from booking_core.services.customers import CreateCustomer, create_customer
from booking_core.services.quotes import CreateQuote, create_quote
from booking_core.services.setup import UpdateCompanySettings, update_company_settings
from booking_core.users import Role
from tests.browser.support import PASSWORD, Job, Site
from tests.browser.test_pages_http import CSRF, app_with, client, run_async

CLOSED = (
    "Changes online close 24 hours before the visit. "
    "Call or email Brightside Cleaning to change it."
)


def fetch(
    site: Site, at: datetime, *steps: tuple[str, str, dict[str, str]]
) -> list[httpx.Response]:
    """Each (method, path, form) in one browser session, at instant ``at``; a POST carries
    the CSRF token of the page fetched before it."""
    app = app_with(site, clock=FixedClock(at))

    async def scenario() -> list[httpx.Response]:
        answers: list[httpx.Response] = []
        async with client(app) as browser:
            token = ""
            for method, path, form in steps:
                if method == "POST":
                    answer = await browser.post(path, data={"csrf_token": token, **form})
                else:
                    answer = await browser.get(path)
                found = CSRF.search(answer.text)
                token = found.group(1) if found else token
                answers.append(answer)
        return answers

    return run_async(scenario)


def signing_in(email: str) -> tuple[tuple[str, str, dict[str, str]], ...]:
    """The ``fetch`` steps that sign ``email`` in with ``PASSWORD`` (two answers)."""
    return (("GET", "/sign-in", {}), ("POST", "/sign-in", {"email": email, "password": PASSWORD}))


def get(site: Site, at: datetime, path: str) -> httpx.Response:
    return fetch(site, at, ("GET", path, {}))[0]


def track(job: Job, booking: Booking | None = None) -> str:
    return f"/{job.company.slug}/track/{(booking or job.booking).tracking_token}"


def events_of(site: Site, company_id: str, kind: EventType) -> list[str]:
    """Ids of the subjects of the company's recorded (undispatched) events of ``kind``."""
    with site.container.uow() as uow:
        events = uow.outbox.claim_undispatched(100_000)
    return [e.subject.id for e in events if e.company_id == company_id and e.type is kind]


def test_the_tracking_page_shows_the_visit_and_only_the_crew_s_first_names(site: Site):
    job = site.crew_job(name="Rosa Diaz")
    booking = job.booking
    page = get(site, booking.start - timedelta(days=3), track(job))
    assert page.status_code == 200
    text = page.text
    assert "Scheduled" in text
    assert booking.code in text
    assert "Rosa" in text
    assert "Diaz" not in text
    assert "9 Compiler Ct, Apt 4B" in text
    assert "New York, NY 10001" in text
    local = booking.local_start
    assert f"{local:%A}, {local:%B} {local.day}, {local.year}" in text
    assert f"{local:%Z}" in text  # EST or EDT
    assert "New York time" in text
    assert "Grace" not in text  # the customer's name is not on a page anyone with the link sees
    assert 'href="' + track(job) + '/reschedule"' in text
    assert 'href="' + track(job) + '/cancel"' in text
    assert "script-src" not in page.headers["content-security-policy"]


def test_a_company_name_ending_in_a_full_stop_closes_a_sentence_once(site: Site):
    job = site.crew_job()
    update_company_settings(
        UpdateCompanySettings(company_id=job.company.id, name="Brightside Cleaning Co."),
        uow=site.container.uow(),
    )
    text = get(site, job.booking.start - timedelta(days=3), track(job)).text
    assert "write to Brightside Cleaning Co. " in text
    assert "Co.." not in text


def test_another_company_s_token_and_an_unknown_one_are_the_404_page(site: Site):
    job, other = site.crew_job(), site.crew_job()
    at = job.booking.start - timedelta(days=3)
    borrowed = get(site, at, f"/{other.company.slug}/track/{job.booking.tracking_token}")
    assert borrowed.status_code == 404
    unknown = get(site, at, f"/{job.company.slug}/track/{secrets.token_urlsafe(32)}")
    assert unknown.status_code == 404
    assert "There is nothing here" in borrowed.text
    assert "There is nothing here" in unknown.text
    for answer, company in ((borrowed, other.company), (unknown, job.company)):
        assert "Go to sign-in" not in answer.text
        assert f'href="/{company.slug}/book"' in answer.text  # its booking page instead
    no_company = get(site, at, f"/no-such-company-{secrets.token_hex(3)}/track/abc")
    assert no_company.status_code == 404
    assert "Go to sign-in" not in no_company.text


def test_inside_the_cutoff_the_buttons_give_way_to_a_sentence_and_posts_change_nothing(
    site: Site,
):
    job = site.crew_job()
    booking = job.booking
    inside = booking.start - timedelta(hours=23)
    page = get(site, inside, track(job))
    assert page.status_code == 200
    assert CLOSED in page.text
    assert "/reschedule" not in page.text
    assert "/cancel" not in page.text
    later = booking.start + timedelta(days=2)
    _, cancel, reschedule = fetch(
        site,
        inside,
        ("GET", "/sign-in", {}),  # a form opened earlier: the session's CSRF token
        ("POST", track(job) + "/cancel", {}),
        ("POST", track(job) + "/reschedule", {"start": later.isoformat()}),
    )
    for refused in (cancel, reschedule):
        assert refused.status_code == 409
        assert CLOSED in refused.text
    assert site.booking(job) == booking  # not even its version moved
    assert booking.id not in events_of(site, job.company.id, EventType.BOOKING_CANCELLED)
    # The forms themselves send the visitor back to the page with the sentence.
    form = get(site, inside, track(job) + "/cancel")
    assert form.status_code == 303
    assert form.headers["location"] == track(job)


def test_a_customer_cancels_from_the_link_and_the_event_is_recorded(site: Site):
    job = site.crew_job()
    at = job.booking.start - timedelta(days=2)
    confirm, done, after = fetch(
        site,
        at,
        ("GET", track(job) + "/cancel", {}),
        ("POST", track(job) + "/cancel", {}),
        ("GET", track(job), {}),
    )
    assert confirm.status_code == 200
    assert "Cancel this visit?" in confirm.text
    assert done.status_code == 303
    assert done.headers["location"] == track(job)
    assert "Your visit is cancelled." in after.text
    assert "Cancelled" in after.text
    assert "/cancel" not in after.text
    stored = site.booking(job)
    assert stored.status is BookingStatus.CANCELLED
    assert job.booking.id in events_of(site, job.company.id, EventType.BOOKING_CANCELLED)


def test_a_forged_cancel_without_the_page_s_token_is_refused(site: Site):
    job = site.crew_job()
    (refused,) = fetch(
        site, job.booking.start - timedelta(days=2), ("POST", track(job) + "/cancel", {})
    )
    assert refused.status_code == 403
    assert site.booking(job).status is BookingStatus.SCHEDULED


def test_a_customer_moves_the_visit_to_a_listed_time(site: Site):
    job = site.crew_job()
    booking = job.booking
    at = booking.start - timedelta(days=2)
    day = booking.local_start.date() + timedelta(days=1)
    listed = get(site, at, f"{track(job)}/reschedule?date={day.isoformat()}")
    assert listed.status_code == 200
    starts = re.findall(r'name="start" value="([^"]+)"', listed.text)
    assert starts, listed.text
    chosen = starts[-1]
    shown = re.search(r'name="price" value="(\d+)"', listed.text)  # the price the page shows
    assert shown is not None
    form = {"start": chosen, "date": day.isoformat(), "price": shown.group(1)}
    _, moved, after = fetch(
        site,
        at,
        ("GET", f"{track(job)}/reschedule?date={day.isoformat()}", {}),
        ("POST", f"{track(job)}/reschedule", form),
        ("GET", track(job), {}),
    )
    assert moved.status_code == 303
    stored = site.booking(job)
    assert stored.start == datetime.fromisoformat(chosen)
    assert "Your visit is moved to" in after.text
    assert booking.id in events_of(site, job.company.id, EventType.BOOKING_RESCHEDULED)
    owner = site.user(job.company, Role.OWNER)
    office = fetch(
        site, at, *signing_in(owner.email), ("GET", f"/admin/bookings/{booking.id}", {})
    )[-1]
    assert "by the customer on their page" in office.text  # the office sees who moved it
    bad = fetch(
        site,
        at,
        ("GET", f"{track(job)}/reschedule?date={day.isoformat()}", {}),
        ("POST", f"{track(job)}/reschedule", {"start": "tomorrow-ish"}),
    )[1]
    assert bad.status_code == 422
    assert "Choose one of the times listed." in bad.text


def test_an_ended_tracking_link_answers_410_with_what_to_do(site: Site):
    job = site.crew_job()
    cancelled_at = site.cancel(job)
    still = get(site, cancelled_at + timedelta(days=89), track(job))
    assert still.status_code == 200
    assert "Cancelled" in still.text
    gone = get(site, cancelled_at + timedelta(days=90), track(job))
    assert gone.status_code == 410
    assert "This tracking link has expired" in gone.text
    assert f"/{job.company.slug}/book" in gone.text
    assert job.booking.code not in gone.text
    assert "Compiler" not in gone.text


# --- Quotes -----------------------------------------------------------------------------


def quote_for(
    site: Site,
    job: Job,
    *,
    send: bool = True,
    expires_in: timedelta | None = timedelta(days=14),
    expires_at: datetime | None = None,
    frequency: str = "one_time",
) -> Quote:
    """A quote of a standard clean for a new customer of ``job``'s company (with a default
    address), sent unless told otherwise."""
    container = site.container
    customer, _ = create_customer(
        CreateCustomer(
            company_id=job.company.id,
            name="Quinn Quoted",
            email=f"quinn-{secrets.token_hex(3)}@example.com",
            address=Address("5 Elm St", "New York", "NY", "10001"),
        ),
        uow=container.uow(),
        clock=container.clock,
        phones=container.phones,
    )
    return create_quote(
        CreateQuote(
            company_id=job.company.id,
            customer_id=customer.id,
            selection=Selection(
                service_id="svc_standard_clean", frequency_slug=frequency, parameters=()
            ),
            send_now=send,
            expires_at=(
                expires_at
                if expires_at is not None or expires_in is None
                else container.clock.now() + expires_in
            ),
            message="Thanks for asking! Here is your price.",
        ),
        uow=container.uow(),
        clock=container.clock,
    )


def quote_path(job: Job, quote: Quote) -> str:
    return f"/{job.company.slug}/q/{quote.public_token}"


def dollars(cents: int) -> str:
    return f"${cents // 100:,}.{cents % 100:02d}"


def test_the_quote_page_shows_the_priced_lines_tax_and_total_and_accepts(site: Site):
    job = site.crew_job()
    quote = quote_for(site, job)
    assert quote.breakdown is not None
    now = site.container.clock.now()
    page = get(site, now, quote_path(job, quote))
    assert page.status_code == 200
    for line in quote.breakdown.lines:
        assert line.name in page.text
        assert dollars(line.amount_cents) in page.text
    assert dollars(quote.breakdown.tax_cents) in page.text
    assert dollars(quote.total_cents) in page.text
    assert "Thanks for asking!" in page.text
    assert 'value="accept"' in page.text
    assert 'value="decline"' in page.text
    _, accepted, after = fetch(
        site,
        now,
        ("GET", quote_path(job, quote), {}),
        ("POST", quote_path(job, quote), {"action": "accept"}),
        ("GET", quote_path(job, quote), {}),
    )
    assert accepted.status_code == 303
    with site.container.uow() as uow:
        assert uow.quotes.get(job.company.id, quote.id).status is QuoteStatus.ACCEPTED
    assert quote.id in events_of(site, job.company.id, EventType.QUOTE_ACCEPTED)
    assert "You accepted this quote" in after.text
    assert 'value="accept"' not in after.text
    assert 'value="decline"' not in after.text
    again, twice = fetch(
        site,
        now,
        ("GET", "/sign-in", {}),  # the answered page has no form: a token from another
        ("POST", quote_path(job, quote), {"action": "decline"}),
        ("POST", quote_path(job, quote), {"action": "accept"}),
    )[1:]
    assert again.status_code == 409
    assert "already been answered" in again.text
    # Accept pressed again (a double click, a second tab) is the thank-you, not a failure.
    assert twice.status_code == 303
    with site.container.uow() as uow:
        assert uow.quotes.get(job.company.id, quote.id).status is QuoteStatus.ACCEPTED
    assert events_of(site, job.company.id, EventType.QUOTE_ACCEPTED).count(quote.id) == 1


def test_a_hand_priced_quote_declined_and_an_expired_one_show_no_buttons(site: Site):
    job = site.crew_job()
    container = site.container
    hand = create_quote(
        CreateQuote(
            company_id=job.company.id,
            customer_id=quote_for(site, job, send=False).customer_id,
            manual_lines=(ManualLine("Move-out deep clean", 45_000), ManualLine("Fridge", 3_550)),
            send_now=True,
        ),
        uow=container.uow(),
        clock=container.clock,
    )
    now = container.clock.now()
    page = get(site, now, quote_path(job, hand))
    assert "Move-out deep clean" in page.text
    assert "$450.00" in page.text
    assert "$485.50" in page.text
    declined = fetch(
        site,
        now,
        ("GET", quote_path(job, hand), {}),
        ("POST", quote_path(job, hand), {"action": "decline"}),
        ("GET", quote_path(job, hand), {}),
    )[2]
    assert "You declined this quote" in declined.text
    assert 'value="accept"' not in declined.text
    assert hand.id in events_of(site, job.company.id, EventType.QUOTE_DECLINED)
    dated = quote_for(site, job, expires_in=timedelta(days=1))
    expired = get(site, now + timedelta(days=2), quote_path(job, dated))
    assert expired.status_code == 200
    assert "This quote expired on" in expired.text
    assert 'value="accept"' not in expired.text


def test_a_quote_expiring_at_local_midnight_is_valid_until_the_day_before(site: Site):
    """The expiry instant itself is past (docs/quotes.md): a quote expiring at 00:00 on
    Tuesday, December 1 can last be answered on Monday, November 30."""
    job = site.crew_job()
    zone = ZoneInfo(job.company.timezone)
    now = site.container.clock.now()
    midnight = datetime.combine(
        now.astimezone(zone).date() + timedelta(days=10), datetime.min.time(), tzinfo=zone
    )
    quote = quote_for(site, job, expires_at=midnight)
    last = (midnight - timedelta(days=1)).date()
    last_text = f"{last:%A}, {last:%B} {last.day}, {last.year}"
    expiry_text = f"{midnight:%A}, {midnight:%B} {midnight.day}, {midnight.year}"

    page = get(site, now, quote_path(job, quote))
    assert f"Valid until <strong>{last_text}</strong>." in page.text
    assert expiry_text not in page.text
    expired = get(site, midnight, quote_path(job, quote))
    assert f"Was valid until <strong>{last_text}</strong>." in expired.text
    assert f"This quote expired on {expiry_text}." in expired.text


def test_a_draft_another_company_s_and_an_unknown_quote_are_the_404_page(site: Site):
    job, other = site.crew_job(), site.crew_job()
    now = site.container.clock.now()
    draft = quote_for(site, job, send=False)
    sent = quote_for(site, job)
    assert get(site, now, quote_path(job, draft)).status_code == 404
    assert get(site, now, f"/{other.company.slug}/q/{sent.public_token}").status_code == 404
    assert get(site, now, f"/{job.company.slug}/q/{secrets.token_urlsafe(32)}").status_code == 404
    posted = fetch(
        site,
        now,
        ("GET", quote_path(job, sent), {}),
        ("POST", f"/{other.company.slug}/q/{sent.public_token}", {"action": "accept"}),
    )[1]
    assert posted.status_code == 404
    with site.container.uow() as uow:
        assert uow.quotes.get(job.company.id, sent.id).status is QuoteStatus.SENT


# --- Odd input: a page that says what is wrong, never a 500 -------------------------------

OUT_OF_RANGE_STARTS = [
    "tomorrow-ish",
    "2030-05-01T09:00:00",  # no offset
    "0001-01-01T00:00:00+14:00",  # before year 1 in UTC
    "0001-01-01T00:00:00+00:00",
    "9999-12-31T23:59:59-12:00",  # after year 9999 in UTC
    "9999-12-31T23:59:59+00:00",
    "a\x00",
]


@pytest.mark.parametrize("start", OUT_OF_RANGE_STARTS)
def test_a_reschedule_to_a_start_no_calendar_holds_is_422_and_moves_nothing(site: Site, start: str):
    job = site.crew_job()
    day = job.booking.local_start.date() + timedelta(days=1)
    listed = f"{track(job)}/reschedule?date={day.isoformat()}"
    _, refused = fetch(
        site,
        job.booking.start - timedelta(days=2),
        ("GET", listed, {}),
        ("POST", f"{track(job)}/reschedule", {"start": start, "date": day.isoformat()}),
    )
    if "\x00" in start:  # no form field may hold one, on any page
        assert refused.status_code == 400, refused.text
        assert "NUL character" in refused.text
    else:
        assert refused.status_code == 422, refused.text
        assert "Choose one of the times listed." in refused.text
    assert site.booking(job).start == job.booking.start


BOOK_QUERIES = [
    # (query string of /{slug}/book, status, text the page shows)
    ("param.par_bedrooms=%C2%B2", 422, "Choose 1 to 8."),  # "²": a digit to isdigit()
    ("param.par_bedrooms=99999999999999999999", 422, "Choose 1 to 8."),
    ("param.par_bedrooms=" + "9" * 5000, 422, "Choose 1 to 8."),  # past int()'s 4,300 digits
    ("extra.ext_windows=%D9%A3", 422, "Choose 0 to 20."),  # Arabic-Indic 3
    ("step=date&zip=10001&param.par_bedrooms=%C2%B2", 422, "Choose 1 to 8."),
    ("step=date&zip=10001&date=9999-12-31", 200, "Choose a date"),
    ("step=date&zip=10001&date=0001-01-01", 200, "Choose a date"),
    ("step=details&zip=10001&start=0001-01-01T00:00:00%2B14:00", 200, "Choose a date"),
    ("step=details&zip=10001&start=9999-12-31T23:59:59-12:00", 200, "Choose a date"),
    # an extra ticked on one time, then the plan switched to weekly: refused, not dropped
    (
        "service=svc_standard_clean&frequency=weekly&extra.ext_move_out=1&zip=10001&step=date",
        422,
        "Move-out detail is not offered on this frequency. Continue without it",
    ),
    ("service=svc_standard_clean&frequency=one_time&extra.ext_move_out=1", 200, "$120.00"),
]


@pytest.mark.parametrize(("query", "status", "text"), BOOK_QUERIES)
def test_the_booking_page_answers_an_odd_query_string_with_a_page(
    site: Site, query: str, status: int, text: str
):
    job = site.crew_job()
    answer = get(site, job.booking.start - timedelta(days=2), f"/{job.company.slug}/book?{query}")
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("text/html")
    assert text in answer.text


@pytest.mark.parametrize("start", OUT_OF_RANGE_STARTS[2:])
def test_a_booking_form_posted_with_a_start_no_calendar_holds_is_the_400_page(
    site: Site, start: str
):
    job = site.crew_job()
    slug = job.company.slug
    app = app_with(site, clock=FixedClock(job.booking.start - timedelta(days=2)))
    good = job.booking.start + timedelta(days=1)

    async def scenario() -> httpx.Response:
        async with client(app) as browser:
            details = await browser.get(
                f"/{slug}/book",
                params={"step": "details", "zip": "10001", "start": good.isoformat()},
            )
            assert details.status_code == 200, details.text
            hidden = dict(re.findall(r'type="hidden" name="([^"]+)" value="([^"]*)"', details.text))
            form = {
                **hidden,
                "step": "review",
                "start": start,
                "name": "Ada Lovelace",
                "email": "ada@example.com",
                "line1": "1 Main St",
                "city": "New York",
                "state": "NY",
            }
            return await browser.post(f"/{slug}/book", data=form)

    refused = run_async(scenario)
    assert refused.status_code == 400, refused.text
    assert "That form could not be read" in refused.text


# --- The quote page on the company's own domain ----------------------------------------


def connect_domain(site: Site, job: Job, domain: str) -> None:
    update_company_settings(
        UpdateCompanySettings(company_id=job.company.id, custom_domain=domain),
        uow=site.container.uow(),
    )


def test_a_quote_s_public_url_on_the_company_s_own_domain_opens_the_page(site: Site):
    job = site.crew_job()
    domain = f"quotes-{secrets.token_hex(3)}.example.com"
    connect_domain(site, job, domain)
    quote = quote_for(site, job)
    own = public_url(
        base_url="http://testserver",
        company_slug=job.company.slug,
        custom_domain=domain,
        token=quote.public_token,
    )
    assert own == f"https://{domain}/q/{quote.public_token}"
    now = site.container.clock.now()
    page, accepted, after = fetch(
        site, now, ("GET", own, {}), ("POST", own, {"action": "accept"}), ("GET", own, {})
    )
    assert page.status_code == 200
    assert "Thanks for asking!" in page.text
    assert f'action="/q/{quote.public_token}"' in page.text
    assert accepted.status_code == 303
    assert accepted.headers["location"] == f"/q/{quote.public_token}"
    assert "You accepted this quote" in after.text
    with site.container.uow() as uow:
        assert uow.quotes.get(job.company.id, quote.id).status is QuoteStatus.ACCEPTED


def test_q_token_on_any_other_host_is_the_404_page(site: Site):
    job, other = site.crew_job(), site.crew_job()
    domain = f"quotes-{secrets.token_hex(3)}.example.com"
    connect_domain(site, job, domain)
    connect_domain(site, other, f"other-{domain}")
    quote = quote_for(site, job)
    draft = quote_for(site, job, send=False)
    now = site.container.clock.now()
    for url in (
        f"/q/{quote.public_token}",  # the service's own host
        f"https://other-{domain}/q/{quote.public_token}",  # another company's domain
        f"https://{domain}/q/{draft.public_token}",  # not sent yet
        f"https://{domain}/q/{secrets.token_urlsafe(32)}",
    ):
        answer = get(site, now, url)
        assert answer.status_code == 404, url
        assert answer.headers["content-type"].startswith("text/html")


def test_every_first_segment_of_the_service_s_addresses_is_a_reserved_slug(site: Site):
    first = set()
    routes = list(app_with(site).routes)
    while routes:
        route = routes.pop()
        path = getattr(route, "path", "")
        head = path.split("/")[1] if path.startswith("/") else ""
        if head and not head.startswith("{"):
            first.add(head)
        routes.extend(getattr(route, "routes", []) if not head else [])
    assert "admin" in first
    assert "q" in first
    assert "favicon.ico" in first  # no slug can be it (a dot): it needs no reserving
    assert {head for head in first if SLUG_PATTERN.match(head)} <= RESERVED_SLUGS


# --- Unknown addresses ------------------------------------------------------------------


def test_an_unknown_address_under_a_company_is_the_404_page_and_under_api_the_json_one(
    site: Site,
):
    job = site.crew_job()
    slug = job.company.slug
    now = site.container.clock.now()
    for path in (
        f"/{slug}/zzz",
        f"/{slug}/book/",
        f"{track(job)}/zzz",
        "/no-such-company/book/zzz",
    ):
        answer = get(site, now, path)
        assert answer.status_code == 404, path
        assert answer.headers["content-type"].startswith("text/html"), path
        assert "There is nothing here" in answer.text
    posted = fetch(site, now, ("POST", f"/{slug}/zzz", {"a": "b"}))[0]
    assert posted.status_code == 404  # not 403 for the missing CSRF token: nothing is there
    api = get(site, now, "/api/zzz")
    assert api.status_code == 404
    assert api.json()["error"]["code"] == "not_found"
    public = get(site, now, "/api/public")
    assert public.status_code == 404
    assert isinstance(public.json()["error"], str)
    assert public.headers["access-control-allow-origin"] == "*"


def test_every_field_of_the_details_step_is_described_only_by_what_is_on_the_page(site: Site):
    job = site.crew_job()
    slug = job.company.slug
    app = app_with(site, clock=FixedClock(job.booking.start - timedelta(days=2)))
    good = job.booking.start + timedelta(days=1)

    def dangling(html: str) -> set[str]:
        named = {i for ids in re.findall(r'aria-describedby="([^"]*)"', html) for i in ids.split()}
        return named - set(re.findall(r' id="([^"]+)"', html))

    async def scenario() -> tuple[httpx.Response, httpx.Response]:
        async with client(app) as browser:
            details = await browser.get(
                f"/{slug}/book",
                params={"step": "details", "zip": "10001", "start": good.isoformat()},
            )
            hidden = dict(re.findall(r'type="hidden" name="([^"]+)" value="([^"]*)"', details.text))
            refused = await browser.post(
                f"/{slug}/book", data={**hidden, "step": "review", "email": "not an email"}
            )
            return details, refused

    details, refused = run_async(scenario)
    assert details.status_code == 200, details.text
    assert dangling(details.text) == set()
    assert refused.status_code == 422, refused.text
    assert 'aria-describedby="email-hint email-error"' in refused.text
    assert dangling(refused.text) == set()


@pytest.mark.parametrize("email", ["hello@brightside.example", None])
def test_a_zip_no_one_serves_says_how_to_reach_the_company(site: Site, email: str | None):
    job = site.crew_job()
    with site.container.uow() as uow:
        uow.companies.save(attrs.evolve(job.company, notify_email=email))
        uow.commit()
    answer = get(
        site, job.booking.start - timedelta(days=2), f"/{job.company.slug}/book?zip=90210&step=date"
    )
    assert answer.status_code == 200, answer.text
    assert "There are no open times in the next three weeks for this job in 90210." in answer.text
    assert "Please call us" not in answer.text
    if email:
        assert f'<a href="mailto:{email}">{email}</a> to find a time.' in answer.text
    else:
        assert f"Try another zip code, or call or email {job.company.name}." in answer.text


def test_a_plans_visit_cancelled_alone_says_when_the_next_visit_is(site: Site):
    job = site.crew_job()
    first = site.book(
        job.company, job.customer_email, "Grace Hopper", days_ahead=3, frequency="weekly"
    )
    scheduling.cancel_booking(
        job.company.id, first.id, CancelScope.THIS, uow=site.container.uow(),
        clock=site.container.clock,
    )  # fmt: skip
    page = get(site, first.start - timedelta(days=2), track(job, first)).text
    week_on = long_date(first.local_start.date() + timedelta(days=7))
    assert f"This visit is cancelled. Your other visits stay booked: the next is on {week_on}." in (
        page
    )
    with site.container.uow() as uow:
        visits = uow.bookings.of_plan(job.company.id, first.plan_id or "")
    third = sorted(visits, key=lambda v: v.visit_index)[2]
    scheduling.cancel_booking(
        job.company.id, third.id, CancelScope.THIS_AND_FUTURE, uow=site.container.uow(),
        clock=site.container.clock,
    )  # fmt: skip
    ended = get(site, first.start - timedelta(days=2), track(job, third)).text
    assert "This visit is cancelled." in ended
    assert "other visits" not in ended  # cancelled with the later ones: the plan ended
    scheduling.cancel_booking(
        job.company.id, job.booking.id, CancelScope.THIS, uow=site.container.uow(),
        clock=site.container.clock,
    )  # fmt: skip
    alone = get(site, first.start - timedelta(days=2), track(job)).text
    assert "This visit is cancelled." in alone
    assert "other visits" not in alone  # a one-time job: no plan goes on
