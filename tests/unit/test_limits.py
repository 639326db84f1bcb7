"""Every limit of SPEC.md sections 3 and 8 and of DECISIONS.md that the core enforces, as
a property with ``@example``s on its boundary: the value at the limit is accepted and the
one just past it refused.

Each limit (document, section), then the test that pins it:

- Send refused once the expiry has passed; accept, reject, and convert of a sent quote
  refused past expiry (SPEC.md 3):
  ``test_a_quote_is_sent_and_answered_until_its_expiry_instant_and_refused_from_it_on``
- Key rate limit 10 to 6,000 a minute, default 120 (SPEC.md 5 and 8):
  ``test_a_key_rate_limit_from_10_to_6000_a_minute_is_kept_and_one_outside_is_refused``
- Name 200, email 254, phone 40 characters (SPEC.md 8):
  ``test_a_customer_field_at_its_ceiling_is_kept_and_one_character_more_is_refused``
- Street line 200, city 120, access notes 2,000 characters (SPEC.md 8):
  ``test_an_address_field_at_its_ceiling_is_kept_and_one_character_more_is_refused``
- One intake answer 500 characters (SPEC.md 8):
  ``test_an_intake_answer_of_500_characters_is_kept_and_501_is_refused``
- Answers 100 at most (SPEC.md 8):
  ``test_100_intake_answers_are_kept_and_101_are_refused``
- Parameter or extra selections 200 at most, counted together (SPEC.md 8):
  ``test_200_parameter_and_extra_selections_are_priced_and_201_are_refused``
- Coupon code 100 characters, on a coupon of the catalog (SPEC.md 8):
  ``test_a_catalog_coupon_code_of_100_characters_is_kept_and_101_is_refused``
- Tracking URL life, 90 days after completion or cancellation (SPEC.md 8, DECISIONS.md):
  ``test_tracking_works_until_90_days_after_the_job_ended_and_stops_then``
- Webhook URL public https only (SPEC.md 6 and 8, DECISIONS.md):
  ``test_a_webhook_url_is_accepted_with_https_only`` and
  ``test_a_webhook_address_at_the_edge_of_a_private_range_is_refused_inside_it_only``
- ``limit`` 1..200, default 50 (DECISIONS.md):
  ``test_a_page_of_1_to_200_rows_may_be_asked_for_and_0_or_201_may_not``
- Webhook retries after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (DECISIONS.md):
  ``test_a_failed_delivery_is_retried_after_its_scheduled_wait_up_to_the_seventh_retry_only``
- ``selfServiceCutoffHours``, default 24 (DECISIONS.md):
  ``test_a_customer_may_change_a_visit_until_exactly_the_cutoff_before_it``
- ``minNoticeMinutes``, default 120 (DECISIONS.md):
  ``test_a_start_exactly_the_minimum_notice_away_is_open_and_a_moment_later_notice_is_not``

And the limits the project chose in docs/decisions.md:

- A webhook URL of at most 2,000 characters:
  ``test_a_webhook_url_of_2000_characters_is_checked_and_2001_is_refused``
- A webhook description of at most 500 characters:
  ``test_a_webhook_description_of_500_characters_is_kept_and_501_is_refused``
- A waitlist entry of at most 62 dates, both ends included:
  ``test_a_waitlist_entry_of_62_dates_is_kept_and_63_are_refused``
- A password of 12 to 1,000 characters:
  ``test_a_password_of_12_to_1000_characters_is_accepted_and_11_or_1001_is_refused``

The HTTP edge's limits (64 KB public body, the fields' 422 on the public API, the
``Idempotency-Key`` length and retention, ``x-request-id``, 429 past the key's rate) are
in ``tests/e2e/test_limits_http.py``; docs/testing.md lists both.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from ipaddress import IPv4Address
from typing import Any

import attrs
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from booking_core import auth, bookings, quotes
from booking_core.availability import SlotQuery, check_slot
from booking_core.booking_forms import BookingForm, Question, check_answers
from booking_core.catalog import Catalog, Extra, Frequency, Industry, Parameter, Service
from booking_core.catalog_drafts import CatalogDraft, draft_of
from booking_core.catalog_rules import catalog_problems
from booking_core.companies import Company
from booking_core.conversion import ConvertRequest, begin_conversion
from booking_core.customers import Address, new_customer
from booking_core.demo import demo_catalog
from booking_core.drive import TableDriveTime
from booking_core.errors import (
    InvalidTransition,
    SlotUnavailable,
    TooManySelections,
    ValidationFailed,
)
from booking_core.paging import PageRequest
from booking_core.pricing import SelectedItem, Selection, price
from booking_core.quotes import ManualLine, QuoteStatus
from booking_core.services import self_service
from booking_core.services.webhooks import UrlPolicy
from booking_core.users import password_errors
from booking_core.waitlist import WaitlistRequest, request_errors
from booking_core.webhook_endpoints import description
from booking_core.webhook_urls import check_url
from booking_core.webhooks import MAX_ATTEMPTS, RETRY_DELAYS, next_attempt_at
from tests import factories
from tests.unit.bookings_support import single
from tests.unit.test_webhook_signing import SCHEDULE

AT = datetime(2026, 6, 1, 13, 0, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)
TWO_DAYS = timedelta(days=2)
around_an_instant = st.timedeltas(min_value=-TWO_DAYS, max_value=TWO_DAYS)
"""How far from a boundary instant something is asked: either side, to the microsecond."""


def refused_fields(call: Callable[[], object]) -> dict[str, str]:
    """The field errors ``call`` is refused with; empty when it is accepted."""
    try:
        call()
    except ValidationFailed as refused:
        return refused.field_errors
    return {}


# --- Quotes: SPEC.md section 3 ---------------------------------------------------------

EXPIRES = AT + timedelta(days=14)
CATALOG = demo_catalog()
STARTS_AFTER_EXPIRY = datetime(2026, 6, 22, 10, 15, tzinfo=CATALOG.zone)


def _draft() -> quotes.Quote:
    return quotes.create_quote(
        company_id="cmp_demo",
        at=AT,
        customer_id="cus_1",
        manual_lines=(ManualLine("Windows", 12_000),),
        expires_at=EXPIRES,
    )


def _convert(quote: quotes.Quote, at: datetime) -> quotes.Quote:
    request = ConvertRequest(start=STARTS_AFTER_EXPIRY, service_id="svc_standard_clean")
    return begin_conversion(quote, request, catalog=CATALOG, at=at)[0]


QUOTE_ACTIONS: dict[str, tuple[Callable[[quotes.Quote, datetime], quotes.Quote], QuoteStatus]] = {
    "send": (quotes.send, QuoteStatus.SENT),
    "accept": (quotes.accept, QuoteStatus.ACCEPTED),
    "reject": (quotes.reject, QuoteStatus.DECLINED),
    "convert": (_convert, QuoteStatus.CONVERTED),
}


@given(action=st.sampled_from(sorted(QUOTE_ACTIONS)), offset=around_an_instant)
@example(action="send", offset=-MICROSECOND)
@example(action="send", offset=timedelta(0))
@example(action="accept", offset=-MICROSECOND)
@example(action="accept", offset=timedelta(0))
@example(action="reject", offset=-MICROSECOND)
@example(action="reject", offset=timedelta(0))
@example(action="convert", offset=-MICROSECOND)
@example(action="convert", offset=timedelta(0))
def test_a_quote_is_sent_and_answered_until_its_expiry_instant_and_refused_from_it_on(
    action: str, offset: timedelta
) -> None:
    """The expiry instant itself counts as passed (docs/quotes.md): a draft is sent, and a
    sent quote accepted, rejected or converted, only before it."""
    act, result = QUOTE_ACTIONS[action]
    quote = _draft() if action == "send" else quotes.send(_draft(), AT)
    at = EXPIRES + offset

    if offset < timedelta(0):
        assert act(quote, at).status is result
    else:
        with pytest.raises(InvalidTransition) as refused:
            act(quote, at)
        assert refused.value.action == action
        assert refused.value.reason in ("expiry date has passed", "its expiry date has passed")


# --- Keys: SPEC.md sections 5 and 8 ----------------------------------------------------


@given(rate_limit=st.one_of(st.none(), st.integers(min_value=-100, max_value=10_000)))
@example(rate_limit=None)
@example(rate_limit=9)
@example(rate_limit=10)
@example(rate_limit=6_000)
@example(rate_limit=6_001)
def test_a_key_rate_limit_from_10_to_6000_a_minute_is_kept_and_one_outside_is_refused(
    rate_limit: int | None,
) -> None:
    def issue() -> auth.IssuedKey:
        return auth.issue_key(
            key_id="key_1", company_id="cmp_1", name="Website", at=AT, rate_limit=rate_limit
        )

    if rate_limit is None:
        assert issue().key.rate_limit_per_minute == 120
    elif 10 <= rate_limit <= 6_000:
        assert issue().key.rate_limit_per_minute == rate_limit
    else:
        assert refused_fields(issue) == {"rate_limit": "10 to 6,000 requests per minute."}


# --- Customers and addresses: SPEC.md section 8 ----------------------------------------

CUSTOMER_CEILINGS = {"name": 200, "email": 254, "phone": 40}
"""SPEC.md section 8, written out: the core's constants must agree with them."""
DOMAIN = "@example.com"


def _customer_value(field: str, length: int) -> str:
    if field == "email":
        return factories.email_of_length(length)
    return ("n" if field == "name" else "1") * length


@given(
    field=st.sampled_from(sorted(CUSTOMER_CEILINGS)),
    length=st.integers(min_value=len(DOMAIN) + 1, max_value=300),
)
@example(field="name", length=200)
@example(field="name", length=201)
@example(field="email", length=254)
@example(field="email", length=255)
@example(field="phone", length=40)
@example(field="phone", length=41)
def test_a_customer_field_at_its_ceiling_is_kept_and_one_character_more_is_refused(
    field: str, length: int
) -> None:
    fields: dict[str, Any] = {"name": "Ada Lovelace", "email": "ada@example.com", "phone": None}
    fields[field] = _customer_value(field, length)

    problems = refused_fields(
        lambda: new_customer(customer_id="cus_1", company_id="cmp_1", at=AT, **fields)
    )

    if length <= CUSTOMER_CEILINGS[field]:
        assert problems == {}
    else:
        assert set(problems) == {field}
        assert f"at most {CUSTOMER_CEILINGS[field]} characters" in problems[field].lower()


ADDRESS_CEILINGS = {"line1": 200, "line2": 200, "city": 120, "access_notes": 2_000}
HOME = Address("1 Main St", "New York", "NY", "10001")


@given(
    field=st.sampled_from(sorted(ADDRESS_CEILINGS)),
    length=st.integers(min_value=1, max_value=2_100),
)
@example(field="line1", length=200)
@example(field="line1", length=201)
@example(field="line2", length=200)
@example(field="line2", length=201)
@example(field="city", length=120)
@example(field="city", length=121)
@example(field="access_notes", length=2_000)
@example(field="access_notes", length=2_001)
def test_an_address_field_at_its_ceiling_is_kept_and_one_character_more_is_refused(
    field: str, length: int
) -> None:
    address = attrs.evolve(HOME, **{field: "x" * length})
    limit = ADDRESS_CEILINGS[field]

    expected = {} if length <= limit else {f"address.{field}": f"At most {limit} characters."}
    assert address.errors() == expected


# --- Booking forms: SPEC.md section 8 --------------------------------------------------

QUESTIONS = tuple(Question(id=f"q{n}", label=f"Question {n}?") for n in range(101))
FORM = BookingForm(
    id="bf_1",
    company_id="cmp_demo",
    name="Everything",
    service_ids=("svc_standard_clean",),
    frequency_slugs=(),
    extra_ids=(),
    questions=QUESTIONS,
    created_at=AT,
    updated_at=AT,
)
JOB = Selection(service_id="svc_standard_clean")


@given(length=st.integers(min_value=0, max_value=1_000))
@example(length=500)
@example(length=501)
def test_an_intake_answer_of_500_characters_is_kept_and_501_is_refused(length: int) -> None:
    answer = "x" * length

    problems = refused_fields(lambda: check_answers(FORM, JOB, (("q0", answer),)))

    if length <= 500:
        assert problems == {}
        kept = check_answers(FORM, JOB, (("q0", answer),))
        assert [a.answer for a in kept] == ([answer] if length else [])
    else:
        assert problems == {"answers.0.answer": "At most 500 characters."}


@given(count=st.integers(min_value=0, max_value=101))
@example(count=100)
@example(count=101)
def test_100_intake_answers_are_kept_and_101_are_refused(count: int) -> None:
    given_answers = tuple((q.id, "yes") for q in QUESTIONS[:count])

    problems = refused_fields(lambda: check_answers(FORM, JOB, given_answers))

    if count <= 100:
        assert problems == {}
        assert len(check_answers(FORM, JOB, given_answers)) == count
    else:
        assert problems == {"answers": "At most 100 items."}


# --- Pricing: SPEC.md section 8 --------------------------------------------------------

MANY = Catalog(
    "cmp_1",
    industries=(
        Industry(
            "ind_home",
            "Home",
            (
                Service(
                    "svc_big",
                    "Everything",
                    base_price_cents=10_000,
                    base_duration_minutes=60,
                    parameters=tuple(Parameter(f"par_{n}", f"P{n}", 100) for n in range(201)),
                    extras=tuple(Extra(f"ext_{n}", f"E{n}", 100) for n in range(201)),
                ),
            ),
        ),
    ),
    frequencies=(Frequency("one_time", "One time", None),),
)


@given(
    parameters=st.integers(min_value=0, max_value=201),
    extras=st.integers(min_value=0, max_value=201),
)
@example(parameters=0, extras=200)
@example(parameters=0, extras=201)
@example(parameters=200, extras=0)
@example(parameters=201, extras=0)
@example(parameters=120, extras=80)
@example(parameters=120, extras=81)
def test_200_parameter_and_extra_selections_are_priced_and_201_are_refused(
    parameters: int, extras: int
) -> None:
    """The ceiling counts parameters and extras together."""
    selection = Selection(
        "svc_big",
        parameters=tuple(SelectedItem(f"par_{n}", 1) for n in range(parameters)),
        extras=tuple(SelectedItem(f"ext_{n}") for n in range(extras)),
    )

    if parameters + extras <= 200:
        breakdown = price(MANY, selection, at=AT)
        assert breakdown.subtotal_cents == 10_000 + 100 * (parameters + extras)
    else:
        with pytest.raises(TooManySelections) as refused:
            price(MANY, selection, at=AT)
        assert (refused.value.count, refused.value.limit) == (parameters + extras, 200)


def _with_coupon_code(code: str) -> CatalogDraft:
    draft = draft_of(demo_catalog())
    (first, *rest) = draft.coupons
    return attrs.evolve(draft, coupons=(attrs.evolve(first, code=code), *rest))


@given(length=st.integers(min_value=1, max_value=300))
@example(length=100)
@example(length=101)
def test_a_catalog_coupon_code_of_100_characters_is_kept_and_101_is_refused(length: int) -> None:
    problems = catalog_problems(_with_coupon_code("C" * length))

    if length <= 100:
        assert problems == {}
    else:
        assert list(problems) == ["coupons.0.code"]
        assert "100" in problems["coupons.0.code"]


# --- Tracking: SPEC.md section 8, DECISIONS.md -----------------------------------------

BOOKED = single()


def _ended(how: str, at: datetime) -> bookings.Booking:
    if how == "cancelled":
        return bookings.cancel(BOOKED, at)
    return bookings.complete_job(bookings.start_job(BOOKED, at), at)


@given(how=st.sampled_from(["cancelled", "completed"]), offset=around_an_instant)
@example(how="cancelled", offset=-MICROSECOND)
@example(how="cancelled", offset=timedelta(0))
@example(how="completed", offset=-MICROSECOND)
@example(how="completed", offset=timedelta(0))
def test_tracking_works_until_90_days_after_the_job_ended_and_stops_then(
    how: str, offset: timedelta
) -> None:
    ended_at = BOOKED.start + timedelta(hours=3)
    ended = _ended(how, ended_at)

    assert bookings.tracking_ends_at(ended) == ended_at + timedelta(days=90)
    assert bookings.tracking_active(ended, ended_at + timedelta(days=90) + offset) is (
        offset < timedelta(0)
    )


def test_tracking_of_an_open_job_never_stops() -> None:
    assert bookings.tracking_ends_at(BOOKED) is None
    assert bookings.tracking_active(BOOKED, BOOKED.start + timedelta(days=3_650))


# --- Webhook URLs: SPEC.md sections 6 and 8, DECISIONS.md ------------------------------


class NoLookups:
    """A resolver for URLs whose host is an address literal: nothing is looked up."""

    def addresses(self, host: str, port: int) -> list[str]:
        raise AssertionError(f"an address literal is not looked up ({host}:{port})")


@given(scheme=st.sampled_from(["https", "http", "HTTPS", "ftp", "ws", "wss", "file"]))
@example(scheme="https")
@example(scheme="http")
def test_a_webhook_url_is_accepted_with_https_only(scheme: str) -> None:
    url = f"{scheme}://93.184.215.14/hooks"

    problems = refused_fields(lambda: check_url(url, NoLookups()))

    if scheme.lower() == "https":
        assert problems == {}
    else:
        assert problems == {"url": "Webhook URLs must use https."}


PRIVATE_RANGES = {
    "private": (IPv4Address("172.16.0.0"), IPv4Address("172.31.255.255")),
    "carrier-grade NAT": (IPv4Address("100.64.0.0"), IPv4Address("100.127.255.255")),
}


@given(
    kind=st.sampled_from(sorted(PRIVATE_RANGES)),
    offset=st.integers(min_value=-(2**16), max_value=2**22 + 2**16),
)
@example(kind="private", offset=-1)
@example(kind="private", offset=0)
@example(kind="private", offset=2**20 - 1)
@example(kind="private", offset=2**20)
@example(kind="carrier-grade NAT", offset=-1)
@example(kind="carrier-grade NAT", offset=0)
@example(kind="carrier-grade NAT", offset=2**22 - 1)
@example(kind="carrier-grade NAT", offset=2**22)
def test_a_webhook_address_at_the_edge_of_a_private_range_is_refused_inside_it_only(
    kind: str, offset: int
) -> None:
    """172.16.0.0/12 and 100.64.0.0/10 lie between public addresses: the first and last
    address of each range are refused, their neighbours outside accepted."""
    first, last = PRIVATE_RANGES[kind]
    address = first + offset

    problems = refused_fields(lambda: check_url(f"https://{address}/hooks", NoLookups()))

    if first <= address <= last:
        assert set(problems) == {"url"}
        assert problems["url"].startswith(f"{address} is a")
    else:
        assert problems == {}


# --- Lists: DECISIONS.md ----------------------------------------------------------------


@given(limit=st.integers(min_value=-10, max_value=1_000))
@example(limit=0)
@example(limit=1)
@example(limit=200)
@example(limit=201)
def test_a_page_of_1_to_200_rows_may_be_asked_for_and_0_or_201_may_not(limit: int) -> None:
    assert PageRequest().limit == 50
    if 1 <= limit <= 200:
        assert PageRequest(limit=limit).limit == limit
    else:
        with pytest.raises(ValueError, match=r"1\.\.200"):
            PageRequest(limit=limit)


# --- Webhook deliveries: DECISIONS.md ---------------------------------------------------


@given(attempt=st.integers(min_value=1, max_value=30))
@example(attempt=1)
@example(attempt=7)
@example(attempt=8)
def test_a_failed_delivery_is_retried_after_its_scheduled_wait_up_to_the_seventh_retry_only(
    attempt: int,
) -> None:
    """A middle draw (0.5) waits exactly the schedule; the eighth attempt is the last."""
    assert list(RETRY_DELAYS) == SCHEDULE
    assert MAX_ATTEMPTS == 8

    retry = next_attempt_at(attempt, AT, lambda: 0.5)

    if attempt <= len(SCHEDULE):
        assert retry == AT + SCHEDULE[attempt - 1]
    else:
        assert retry is None


# --- Self-service and notice: DECISIONS.md ----------------------------------------------

COMPANY: Company = factories.company()


@given(offset=around_an_instant)
@example(offset=timedelta(0))
@example(offset=MICROSECOND)
def test_a_customer_may_change_a_visit_until_exactly_the_cutoff_before_it(
    offset: timedelta,
) -> None:
    """DECISIONS.md: ``selfServiceCutoffHours`` defaults to 24; a start exactly the
    cutoff away may still be changed (docs/decisions.md)."""
    assert COMPANY.self_service_cutoff_hours == 24
    at = BOOKED.start - timedelta(hours=24) + offset

    assert self_service.can_change(COMPANY, BOOKED, at) is (offset <= timedelta(0))


NOTICE_DAY = datetime(2026, 11, 2, 12, 0, tzinfo=CATALOG.zone)  # a Monday, noon
ROSA = factories.all_week_crew("cmp_1", AT)


@given(
    notice=st.integers(min_value=0, max_value=180),
    offset=st.timedeltas(min_value=-timedelta(hours=1), max_value=timedelta(hours=1)),
)
@example(notice=120, offset=timedelta(0))
@example(notice=120, offset=MICROSECOND)
@example(notice=0, offset=timedelta(0))
@example(notice=0, offset=MICROSECOND)
def test_a_start_exactly_the_minimum_notice_away_is_open_and_a_moment_later_notice_is_not(
    notice: int, offset: timedelta
) -> None:
    """DECISIONS.md: ``minNoticeMinutes`` defaults to 120; a start is open when it is at
    least that far from now. ``offset`` moves now: past 0 the notice is short."""
    assert attrs.fields(Company).min_notice_minutes.default == 120
    now = NOTICE_DAY - timedelta(minutes=notice) + offset
    query = SlotQuery(
        service_id="svc_standard_clean",
        zip_code="10001",
        local_date=NOTICE_DAY.date(),
        zone=CATALOG.zone,
        duration_minutes=60,
        now=now,
        min_notice_minutes=notice,
    )

    def noon() -> object:
        return check_slot(query, NOTICE_DAY, crew=[ROSA], busy={}, drive=TableDriveTime({}))

    if offset <= timedelta(0):
        slot = noon()
        assert getattr(slot, "start", None) == NOTICE_DAY
    else:
        with pytest.raises(SlotUnavailable):
            noon()


# --- The project's own limits: docs/decisions.md ----------------------------------------

PUBLIC_HOOK = "https://93.184.215.14/"


@given(length=st.integers(min_value=len(PUBLIC_HOOK), max_value=2_100))
@example(length=2_000)
@example(length=2_001)
def test_a_webhook_url_of_2000_characters_is_checked_and_2001_is_refused(length: int) -> None:
    url = PUBLIC_HOOK + "p" * (length - len(PUBLIC_HOOK))

    problems = refused_fields(lambda: UrlPolicy(resolver=NoLookups()).check(url))

    if length <= 2_000:
        assert problems == {}
    else:
        assert problems == {"url": "Must be at most 2000 characters."}


@given(length=st.integers(min_value=0, max_value=1_000))
@example(length=500)
@example(length=501)
def test_a_webhook_description_of_500_characters_is_kept_and_501_is_refused(length: int) -> None:
    text = "d" * length

    problems = refused_fields(lambda: description(text))

    if length <= 500:
        assert description(text) == text
    else:
        assert problems == {"description": "Must be at most 500 characters."}


TODAY = date(2030, 3, 4)


@given(days=st.integers(min_value=1, max_value=120))
@example(days=62)
@example(days=63)
def test_a_waitlist_entry_of_62_dates_is_kept_and_63_are_refused(days: int) -> None:
    """Both ends included: 62 dates end 61 days after the first."""
    asked = WaitlistRequest(
        service_id="svc_standard_clean",
        zip="60601",
        date_from=TODAY,
        date_to=TODAY + timedelta(days=days - 1),
        name="Ana Pérez",
        email="ana@example.com",
    )

    problems = request_errors(asked, today=TODAY, catalog=CATALOG)

    if days <= 62:
        assert problems == {}
    else:
        assert problems == {"date_to": "A range of at most 62 days, both ends included."}


@given(length=st.integers(min_value=0, max_value=1_100))
@example(length=11)
@example(length=12)
@example(length=1_000)
@example(length=1_001)
def test_a_password_of_12_to_1000_characters_is_accepted_and_11_or_1001_is_refused(
    length: int,
) -> None:
    problems = password_errors("p" * length)

    if length < 12:
        assert problems == {"password": "At least 12 characters."}
    elif length <= 1_000:
        assert problems == {}
    else:
        assert problems == {"password": "At most 1,000 characters."}
