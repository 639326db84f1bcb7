"""Quotes: every row of SPEC.md section 3's quote table, the convert field rules, and
the use cases over the memory unit of work."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import attrs
import pytest

from adapters.memory import MemoryStore, MemoryUnitOfWork
from booking_core import conversion, quotes
from booking_core.bookings import Booking
from booking_core.catalog import (
    Catalog,
    Extra,
    FeeDefinition,
    FeeKind,
    Frequency,
    Industry,
    Parameter,
    Service,
)
from booking_core.clock import FixedClock
from booking_core.companies import Company
from booking_core.conversion import (
    BookingRequest,
    ConvertRequest,
)
from booking_core.coupons import Coupon
from booking_core.customers import Customer
from booking_core.drive import TableDriveTime
from booking_core.errors import (
    ConflictError,
    CouponRejected,
    DuplicateSelection,
    InvalidTransition,
    ManualFeeRefused,
    NotFoundError,
    UnknownCatalogItem,
    ValidationFailed,
)
from booking_core.leads import Lead
from booking_core.pricing import SelectedItem, Selection, price
from booking_core.quotes import (
    FollowUp,
    FollowUpStatus,
    ManualLine,
    Quote,
    QuoteStatus,
)
from booking_core.services import conversions
from booking_core.services.quotes import (
    ActOnQuote,
    CreateQuote,
    QuoteAction,
    act_on_quote,
    create_quote,
)
from tests import factories
from tests.unit.bookings_support import booked, order

COMPANY = "cmp_acme"
OTHER_COMPANY = "cmp_other"
NEW_YORK = ZoneInfo("America/New_York")
AT = datetime(2026, 6, 1, 13, 0, tzinfo=UTC)  # 09:00 in New York, a Monday
EXPIRES = AT + timedelta(days=14)
IN_DATE = AT + timedelta(days=1)
PAST_EXPIRY = EXPIRES + timedelta(hours=1)
START = datetime(2026, 6, 20, 10, 15, tzinfo=NEW_YORK)  # after expiry too, on the quarter hour

SELECTION = Selection(
    service_id="svc_standard",
    frequency_slug="weekly",
    parameters=(SelectedItem("par_bedrooms", 3),),
    extras=(SelectedItem("ext_oven"),),
    manual_fee_ids=("fee_pets",),
)


def make_catalog(company_id: str = COMPANY) -> Catalog:
    standard = Service(
        "svc_standard",
        "Standard clean",
        base_price_cents=12_000,
        base_duration_minutes=120,
        parameters=(Parameter("par_bedrooms", "Bedrooms", 2_000, 30, 1, 6),),
        extras=(Extra("ext_oven", "Inside the oven", 3_000, 30),),
    )
    deep = Service("svc_deep", "Deep clean", base_price_cents=25_000, base_duration_minutes=240)
    retired = Service("svc_retired", "Retired", 1_000, 60, active=False)
    return Catalog(
        company_id=company_id,
        timezone="America/New_York",
        tax_rate_bps=800,
        industries=(Industry("ind_cleaning", "Cleaning", (standard, deep, retired)),),
        frequencies=(
            Frequency("one_time", "One time", None),
            Frequency("weekly", "Weekly", 7, discount_bps=1_500),
        ),
        fees=(
            FeeDefinition("fee_pets", "Pets", FeeKind.MANUAL, amount_cents=1_500),
            FeeDefinition("fee_stairs", "Stairs", FeeKind.MANUAL, amount_cents=900),
            FeeDefinition("fee_old", "Old", FeeKind.MANUAL, amount_cents=100, active=False),
            FeeDefinition(
                "fee_weekend", "Weekend", FeeKind.DATE, amount_cents=2_000, weekdays=frozenset({6})
            ),
        ),
        coupons=(Coupon("cpn_spring", "SPRING", percent_bps=1_000, max_redemptions=1),),
    )


CATALOG = make_catalog()


def draft(*, hand_priced: bool = False, expires_at: datetime | None = EXPIRES) -> Quote:
    if hand_priced:
        return quotes.create_quote(
            company_id=COMPANY,
            at=AT,
            customer_id="cus_1",
            manual_lines=(
                ManualLine("Post-renovation clean", 40_000),
                ManualLine("Windows", 5_000),
            ),
            expires_at=expires_at,
        )
    return quotes.create_quote(
        company_id=COMPANY,
        at=AT,
        customer_id="cus_1",
        selection=SELECTION,
        breakdown=price(CATALOG, SELECTION, at=AT),
        expires_at=expires_at,
    )


def sent(*, hand_priced: bool = False, expires_at: datetime | None = EXPIRES) -> Quote:
    return quotes.send(draft(hand_priced=hand_priced, expires_at=expires_at), AT)


def accepted(*, hand_priced: bool = False) -> Quote:
    return quotes.accept(sent(hand_priced=hand_priced), IN_DATE)


def declined() -> Quote:
    return quotes.reject(sent(), IN_DATE)


def converted() -> Quote:
    claimed, _ = conversion.begin_conversion(
        accepted(), ConvertRequest(start=START), catalog=CATALOG, at=IN_DATE
    )
    return conversion.complete_conversion(claimed, "bkg_1", IN_DATE)


def expired_materialised() -> Quote:
    return quotes.expire(sent(), PAST_EXPIRY)


# (quote, instant to act at): the states in which accept, reject and convert are refused.
REFUSED_STATES = {
    "draft": lambda: (draft(), IN_DATE),
    "declined": lambda: (declined(), IN_DATE),
    "sent_past_expiry": lambda: (sent(), PAST_EXPIRY),
    "expired": lambda: (expired_materialised(), PAST_EXPIRY),
    "converted": lambda: (converted(), IN_DATE),
    "claimed_not_yet_booked": lambda: (
        conversion.begin_conversion(
            accepted(), ConvertRequest(start=START), catalog=CATALOG, at=IN_DATE
        )[0],
        IN_DATE,
    ),
}


def convert(quote: Quote, at: datetime = IN_DATE, **fields: object) -> tuple[Quote, BookingRequest]:
    fields.setdefault("start", START)
    request = ConvertRequest(**fields)  # type: ignore[arg-type]
    return conversion.begin_conversion(quote, request, catalog=CATALOG, at=at)


# --- building and reading ---------------------------------------------------------------


def test_new_quote_is_a_draft_with_a_prefixed_id_and_a_256_bit_token() -> None:
    quote = draft()
    assert quote.status is QuoteStatus.DRAFT
    assert quote.id.startswith("quo_")
    assert len(quote.public_token) >= 43  # 32 random bytes, URL-safe base64
    assert quote.version == 1
    assert quote.created_at == quote.updated_at == AT


def test_catalog_priced_quote_totals_its_breakdown() -> None:
    quote = draft()
    assert not quote.hand_priced
    assert quote.breakdown is not None
    assert (
        quote.total_cents
        == quote.breakdown.total_cents
        == price(CATALOG, SELECTION, at=AT).total_cents
    )


def test_hand_priced_quote_totals_its_manual_lines() -> None:
    quote = draft(hand_priced=True)
    assert quote.hand_priced
    assert quote.breakdown is None
    assert quote.total_cents == 45_000


def test_quote_needs_a_customer_or_a_lead() -> None:
    with pytest.raises(ValidationFailed) as caught:
        quotes.create_quote(company_id=COMPANY, at=AT, manual_lines=(ManualLine("Job", 100),))
    assert set(caught.value.field_errors) == {"customer_id"}


def test_quote_for_a_lead_only_is_allowed() -> None:
    quote = quotes.create_quote(
        company_id=COMPANY, at=AT, lead_id="lead_1", manual_lines=(ManualLine("Job", 100),)
    )
    assert quote.customer_id is None
    assert quote.lead_id == "lead_1"


def test_quote_needs_either_a_selection_or_manual_lines() -> None:
    with pytest.raises(ValidationFailed) as neither:
        quotes.create_quote(company_id=COMPANY, at=AT, customer_id="cus_1")
    assert "manual_lines" in neither.value.field_errors
    with pytest.raises(ValidationFailed) as both:
        quotes.create_quote(
            company_id=COMPANY,
            at=AT,
            customer_id="cus_1",
            selection=SELECTION,
            breakdown=price(CATALOG, SELECTION, at=AT),
            manual_lines=(ManualLine("Job", 100),),
        )
    assert "manual_lines" in both.value.field_errors


def test_manual_lines_need_a_description_and_a_non_negative_amount() -> None:
    with pytest.raises(ValidationFailed) as caught:
        quotes.create_quote(
            company_id=COMPANY, at=AT, customer_id="cus_1", manual_lines=(ManualLine(" ", -1),)
        )
    assert set(caught.value.field_errors) == {
        "manual_lines.0.description",
        "manual_lines.0.amount_cents",
    }


@pytest.mark.parametrize(
    "expires_at", [AT, AT - timedelta(days=1), datetime(2026, 7, 1, 12, 0)], ids=str
)
def test_expiry_must_be_aware_and_in_the_future_when_created(expires_at: datetime) -> None:
    with pytest.raises(ValidationFailed) as caught:
        quotes.create_quote(
            company_id=COMPANY,
            at=AT,
            customer_id="cus_1",
            manual_lines=(ManualLine("Job", 100),),
            expires_at=expires_at,
        )
    assert set(caught.value.field_errors) == {"expires_at"}


def test_transitions_refuse_a_naive_instant() -> None:
    with pytest.raises(ValueError, match="UTC offset"):
        quotes.send(draft(), datetime(2026, 6, 2, 9, 0))


def test_public_url_uses_the_custom_domain_when_connected() -> None:
    url = quotes.public_url(
        base_url="https://book.example.com",
        company_slug="acme",
        custom_domain="quotes.acme.test",
        token="tok",
    )
    assert url == "https://quotes.acme.test/q/tok"


def test_public_url_falls_back_to_the_company_path_on_the_service_address() -> None:
    url = quotes.public_url(
        base_url="https://book.example.com/", company_slug="acme", custom_domain=None, token="tok"
    )
    assert url == "https://book.example.com/acme/q/tok"


# --- expiry -----------------------------------------------------------------------------


def test_sent_quote_is_expired_from_its_expiry_instant_on() -> None:
    quote = sent()
    assert quotes.effective_status(quote, EXPIRES - timedelta(microseconds=1)) is QuoteStatus.SENT
    assert quotes.effective_status(quote, EXPIRES) is QuoteStatus.EXPIRED


def test_draft_past_expiry_stays_a_draft() -> None:
    assert quotes.effective_status(draft(), PAST_EXPIRY) is QuoteStatus.DRAFT


def test_quote_without_expiry_never_expires() -> None:
    quote = sent(expires_at=None)
    assert quotes.effective_status(quote, AT + timedelta(days=3650)) is QuoteStatus.SENT


def test_expire_stores_the_expiry_and_cancels_follow_ups() -> None:
    quote = sent()
    stored = quotes.expire(quote, PAST_EXPIRY)
    assert stored.status is QuoteStatus.EXPIRED
    assert stored.version == quote.version + 1
    assert all(f.status is FollowUpStatus.CANCELLED for f in stored.follow_ups)
    assert quotes.expire(stored, PAST_EXPIRY + timedelta(days=1)) is stored


@pytest.mark.parametrize("make", [draft, sent, accepted], ids=["draft", "sent", "accepted"])
def test_expire_of_quote_not_past_expiry_is_refused(make: object) -> None:
    quote = make()  # type: ignore[operator]
    at = IN_DATE if quote.status is not QuoteStatus.DRAFT else PAST_EXPIRY
    with pytest.raises(InvalidTransition):
        quotes.expire(quote, at)


# --- send -------------------------------------------------------------------------------


def test_send_of_draft_marks_it_sent_and_bumps_the_version() -> None:
    quote = draft()
    out = quotes.send(quote, IN_DATE)
    assert out.status is QuoteStatus.SENT
    assert out.sent_at == out.updated_at == IN_DATE
    assert out.version == quote.version + 1
    assert quote.status is QuoteStatus.DRAFT  # the original is untouched


def test_send_schedules_follow_ups_two_and_five_days_later() -> None:
    out = quotes.send(draft(expires_at=None), AT)
    assert out.follow_ups == (FollowUp(AT + timedelta(days=2)), FollowUp(AT + timedelta(days=5)))
    assert not out.follow_ups_paused


def test_send_schedules_only_follow_ups_due_before_expiry() -> None:
    out = quotes.send(draft(expires_at=AT + timedelta(days=3)), AT)
    assert [f.due_at for f in out.follow_ups] == [AT + timedelta(days=2)]


def test_send_of_draft_past_expiry_is_refused() -> None:
    with pytest.raises(InvalidTransition) as caught:
        quotes.send(draft(), EXPIRES)
    assert caught.value.reason == "expiry date has passed"
    assert caught.value.status == "draft"
    assert caught.value.action == "send"


@pytest.mark.parametrize("make", [sent, accepted, declined, converted])
def test_send_of_a_quote_that_is_not_a_draft_is_refused(make: object) -> None:
    with pytest.raises(InvalidTransition, match="only a draft"):
        quotes.send(make(), IN_DATE)  # type: ignore[operator]


# --- accept and reject ------------------------------------------------------------------


def test_accept_of_sent_quote_in_date_accepts_it_and_cancels_follow_ups() -> None:
    quote = sent()
    out = quotes.accept(quote, IN_DATE)
    assert out.status is QuoteStatus.ACCEPTED
    assert out.accepted_at == IN_DATE
    assert out.version == quote.version + 1
    assert out.follow_ups
    assert all(f.status is FollowUpStatus.CANCELLED for f in out.follow_ups)


def test_reject_of_sent_quote_in_date_declines_it() -> None:
    out = quotes.reject(sent(), IN_DATE)
    assert out.status is QuoteStatus.DECLINED
    assert out.declined_at == IN_DATE
    assert out.accepted_at is None


@pytest.mark.parametrize("state", REFUSED_STATES)
def test_accept_of_already_answered_booked_or_expired_quote_is_refused(state: str) -> None:
    quote, at = REFUSED_STATES[state]()
    with pytest.raises(InvalidTransition) as caught:
        quotes.accept(quote, at)
    assert caught.value.action == "accept"


def test_accept_of_already_accepted_quote_is_refused() -> None:
    with pytest.raises(InvalidTransition, match="already been answered"):
        quotes.accept(accepted(), IN_DATE)


def test_accept_of_sent_quote_past_expiry_is_refused() -> None:
    with pytest.raises(InvalidTransition, match="expiry date has passed") as caught:
        quotes.accept(sent(), EXPIRES)
    assert caught.value.status == "expired"


@pytest.mark.parametrize("state", REFUSED_STATES)
def test_reject_of_already_answered_booked_or_expired_quote_is_refused(state: str) -> None:
    quote, at = REFUSED_STATES[state]()
    with pytest.raises(InvalidTransition) as caught:
        quotes.reject(quote, at)
    assert caught.value.action == "reject"


def test_reject_of_already_answered_quote_is_refused() -> None:
    with pytest.raises(InvalidTransition, match="already been answered"):
        quotes.reject(accepted(), IN_DATE)
    with pytest.raises(InvalidTransition, match="already been answered"):
        quotes.reject(declined(), IN_DATE)


def test_reject_of_booked_quote_is_refused_rather_than_recording_a_decline() -> None:
    """Before 2026-10-13 reject recorded the decline over any status; no longer."""
    with pytest.raises(InvalidTransition, match="already been booked"):
        quotes.reject(converted(), IN_DATE)


def test_reject_of_draft_is_refused() -> None:
    with pytest.raises(InvalidTransition, match="not been sent"):
        quotes.reject(draft(), IN_DATE)


# --- pause and resume -------------------------------------------------------------------


def test_pause_holds_the_follow_ups_of_a_sent_quote() -> None:
    quote = sent()
    out = quotes.pause(quote, IN_DATE)
    assert out.follow_ups_paused
    assert out.version == quote.version + 1
    assert out.follow_ups == quote.follow_ups


def test_pausing_a_paused_quote_is_a_no_op_success() -> None:
    paused = quotes.pause(sent(), IN_DATE)
    assert quotes.pause(paused, IN_DATE) is paused


def test_resume_lets_follow_ups_run_again() -> None:
    paused = quotes.pause(sent(), IN_DATE)
    out = quotes.resume(paused, IN_DATE)
    assert not out.follow_ups_paused
    assert out.version == paused.version + 1


def test_resuming_a_running_quote_is_a_no_op_success() -> None:
    quote = sent()
    assert quotes.resume(quote, IN_DATE) is quote


@pytest.mark.parametrize("state", [*REFUSED_STATES, "accepted"])
@pytest.mark.parametrize("action", [quotes.pause, quotes.resume], ids=["pause", "resume"])
def test_pause_and_resume_are_refused_unless_the_quote_is_sent_and_in_date(
    state: str, action: object
) -> None:
    quote, at = (accepted(), IN_DATE) if state == "accepted" else REFUSED_STATES[state]()
    with pytest.raises(InvalidTransition, match="sent and in date"):
        action(quote, at)  # type: ignore[operator]


# --- convert: the states of SPEC.md section 3 -------------------------------------------


def test_convert_of_accepted_quote_without_booking_claims_it_and_asks_for_a_booking() -> None:
    quote = accepted()
    claimed, booking = convert(quote, manual_fee_ids=("fee_stairs",))
    assert claimed.status is QuoteStatus.CONVERTED
    assert claimed.converted_at == IN_DATE
    assert claimed.accepted_at == quote.accepted_at
    assert claimed.booking_id is None
    assert claimed.version == quote.version + 1
    assert booking == BookingRequest(
        quote_id=quote.id,
        company_id=COMPANY,
        customer_id="cus_1",
        lead_id=None,
        service_id="svc_standard",
        frequency_slug="weekly",
        parameters=SELECTION.parameters,
        extras=SELECTION.extras,
        coupon_code=None,
        start=START,
        manual_fee_ids=("fee_pets", "fee_stairs"),
        added_fee_ids=("fee_stairs",),
        quoted=quote.breakdown,
        quoted_total_cents=quote.total_cents,
    )


def test_convert_then_complete_records_the_booking_on_the_quote() -> None:
    claimed, _ = convert(accepted())
    done = conversion.complete_conversion(claimed, "bkg_9", IN_DATE)
    assert done.booking_id == "bkg_9"
    assert done.status is QuoteStatus.CONVERTED
    assert done.version == claimed.version + 1


def test_convert_of_sent_quote_marks_it_accepted_then_converted_in_one_step() -> None:
    quote = sent()
    claimed, booking = convert(quote)
    assert claimed.status is QuoteStatus.CONVERTED
    assert claimed.accepted_at == claimed.converted_at == IN_DATE
    assert claimed.version == quote.version + 1
    assert booking.start == START


def test_convert_cancels_the_remaining_follow_ups() -> None:
    claimed, _ = convert(sent())
    assert all(f.status is FollowUpStatus.CANCELLED for f in claimed.follow_ups)


def test_convert_of_accepted_quote_past_expiry_is_allowed() -> None:
    """Expiry bounds the customer's answer; once accepted, the quote can be booked."""
    claimed, _ = convert(accepted(), at=PAST_EXPIRY)
    assert claimed.status is QuoteStatus.CONVERTED


@pytest.mark.parametrize("state", REFUSED_STATES)
def test_convert_in_refused_state_is_refused(state: str) -> None:
    quote, at = REFUSED_STATES[state]()
    with pytest.raises(InvalidTransition) as caught:
        convert(quote, at=at)
    assert caught.value.action == "convert"


def test_convert_of_draft_is_refused() -> None:
    with pytest.raises(InvalidTransition, match="not been sent") as caught:
        convert(draft())
    assert caught.value.status == "draft"


def test_convert_of_declined_quote_is_refused() -> None:
    with pytest.raises(InvalidTransition, match="declined"):
        convert(declined())


def test_convert_of_sent_quote_past_expiry_is_refused() -> None:
    with pytest.raises(InvalidTransition, match="expiry date has passed") as caught:
        convert(sent(), at=PAST_EXPIRY)
    assert caught.value.status == "expired"


def test_convert_of_converted_quote_is_refused() -> None:
    with pytest.raises(InvalidTransition, match="already been booked"):
        convert(converted())


def test_convert_of_hand_priced_quote_without_service_is_refused() -> None:
    with pytest.raises(InvalidTransition, match="serviceId"):
        convert(accepted(hand_priced=True))


def test_convert_of_hand_priced_quote_without_service_is_refused_even_with_bad_fields() -> None:
    with pytest.raises(InvalidTransition, match="serviceId"):
        convert(sent(hand_priced=True), start=START.replace(minute=7))


def test_convert_of_hand_priced_quote_files_the_booking_under_the_given_service() -> None:
    quote = accepted(hand_priced=True)
    claimed, booking = convert(quote, service_id="svc_deep")
    assert claimed.status is QuoteStatus.CONVERTED
    assert booking.service_id == "svc_deep"
    assert booking.frequency_slug == "one_time"
    assert booking.parameters == booking.extras == ()
    assert booking.manual_lines == quote.manual_lines
    assert booking.quoted_total_cents == 45_000


@pytest.mark.parametrize("service_id", ["svc_nope", "svc_retired"])
def test_convert_of_hand_priced_quote_under_unknown_service_is_invalid(service_id: str) -> None:
    with pytest.raises(UnknownCatalogItem) as caught:
        convert(accepted(hand_priced=True), service_id=service_id)
    assert set(caught.value.field_errors) == {"service_id"}


def test_convert_of_catalog_priced_quote_under_another_service_is_invalid() -> None:
    with pytest.raises(ValidationFailed) as caught:
        convert(accepted(), service_id="svc_deep")
    assert set(caught.value.field_errors) == {"service_id"}


def test_convert_of_catalog_priced_quote_naming_its_own_service_is_allowed() -> None:
    _, booking = convert(accepted(), service_id="svc_standard")
    assert booking.service_id == "svc_standard"


# --- convert: field rules ---------------------------------------------------------------


def test_start_is_required_in_the_current_form() -> None:
    with pytest.raises(ValidationFailed) as caught:
        convert(accepted(), start=None)
    assert set(caught.value.field_errors) == {"start_iso"}


@pytest.mark.parametrize(
    "start",
    [
        START.replace(minute=7),
        START.replace(second=30),
        START.replace(microsecond=1),
        datetime(2026, 6, 20, 10, 15, tzinfo=ZoneInfo("Asia/Kolkata")) + timedelta(minutes=10),
    ],
    ids=["minute", "second", "microsecond", "other-zone"],
)
def test_start_not_on_quarter_hour_is_invalid(start: datetime) -> None:
    with pytest.raises(ValidationFailed) as caught:
        convert(accepted(), start=start)
    assert caught.value.field_errors["start_iso"].startswith("Must be on the quarter hour")


def test_start_on_quarter_hour_given_in_another_offset_is_allowed() -> None:
    _, booking = convert(
        accepted(), start=datetime(2026, 6, 20, 19, 45, tzinfo=ZoneInfo("Asia/Kolkata"))
    )
    assert booking.start.astimezone(UTC).minute % 15 == 0


def test_start_without_an_offset_is_invalid() -> None:
    with pytest.raises(ValidationFailed) as caught:
        convert(accepted(), start=datetime(2026, 6, 20, 10, 15))
    assert "UTC offset" in caught.value.field_errors["start_iso"]


def test_start_in_the_past_is_invalid() -> None:
    with pytest.raises(ValidationFailed) as caught:
        convert(accepted(), at=START + timedelta(minutes=1))
    assert caught.value.field_errors == {"start_iso": "Must not be in the past."}


def test_start_at_the_current_instant_is_allowed() -> None:
    claimed, _ = convert(accepted(), at=START)
    assert claimed.status is QuoteStatus.CONVERTED


def test_state_is_checked_before_fields_so_a_draft_always_answers_422() -> None:
    with pytest.raises(InvalidTransition):
        convert(draft(), start=None, service_id="svc_nope", manual_fee_ids=("fee_nope",))


def test_convert_with_both_start_and_booking_id_is_invalid() -> None:
    with pytest.raises(ValidationFailed) as caught:
        convert(accepted(), booking_id="bkg_1")
    assert set(caught.value.field_errors) == {"booking_id"}


def test_convert_with_unknown_manual_fee_is_invalid() -> None:
    with pytest.raises(UnknownCatalogItem) as caught:
        convert(accepted(), manual_fee_ids=("fee_stairs", "fee_nope"))
    assert set(caught.value.field_errors) == {"manual_fee_ids.1"}


@pytest.mark.parametrize("fee_id", ["fee_old", "fee_weekend"], ids=["inactive", "automatic"])
def test_convert_with_a_fee_that_is_not_an_active_manual_fee_is_refused(fee_id: str) -> None:
    with pytest.raises(ManualFeeRefused):
        convert(accepted(), manual_fee_ids=(fee_id,))


def test_convert_with_the_same_manual_fee_twice_is_refused() -> None:
    with pytest.raises(DuplicateSelection):
        convert(accepted(), manual_fee_ids=("fee_stairs", "fee_stairs"))


def test_convert_adding_a_fee_already_on_the_quote_charges_it_once() -> None:
    _, booking = convert(accepted(), manual_fee_ids=("fee_pets",))
    assert booking.manual_fee_ids == ("fee_pets",)


def test_refused_convert_leaves_the_quote_unchanged() -> None:
    quote = accepted()
    snapshot = attrs.evolve(quote)
    with pytest.raises(ValidationFailed):
        convert(quote, start=START.replace(minute=1))
    assert quote == snapshot


# --- convert: the deprecated bookingId form ---------------------------------------------


def link(quote: Quote, at: datetime = IN_DATE, **fields: object) -> Quote:
    request = ConvertRequest(booking_id="bkg_made_separately", **fields)  # type: ignore[arg-type]
    out, booking = conversion.convert_quote(quote, request, catalog=None, at=at)
    assert booking is None
    return out


def test_deprecated_booking_id_form_links_booking_on_accepted_quote() -> None:
    quote = accepted()
    out = link(quote)
    assert out.booking_id == "bkg_made_separately"
    assert out.status is QuoteStatus.CONVERTED
    assert out.accepted_at == quote.accepted_at
    assert out.version == quote.version + 1


def test_deprecated_booking_id_form_links_booking_on_sent_quote_in_date() -> None:
    out = link(sent())
    assert out.booking_id == "bkg_made_separately"
    assert out.accepted_at == out.converted_at == IN_DATE


def test_deprecated_booking_id_form_needs_no_service_on_a_hand_priced_quote() -> None:
    assert link(accepted(hand_priced=True)).booking_id == "bkg_made_separately"


@pytest.mark.parametrize("state", REFUSED_STATES)
def test_deprecated_booking_id_form_is_refused_in_any_other_state(state: str) -> None:
    quote, at = REFUSED_STATES[state]()
    with pytest.raises(InvalidTransition):
        link(quote, at=at)


def test_deprecated_booking_id_form_refuses_fields_of_the_current_form() -> None:
    with pytest.raises(ValidationFailed) as caught:
        link(accepted(), service_id="svc_deep", manual_fee_ids=("fee_pets",))
    assert set(caught.value.field_errors) == {"service_id", "manual_fee_ids"}


def test_deprecated_booking_id_form_refuses_a_blank_id() -> None:
    with pytest.raises(ValidationFailed):
        conversion.link_booking(accepted(), " ", IN_DATE)


def test_complete_conversion_of_unclaimed_quote_is_refused() -> None:
    with pytest.raises(InvalidTransition, match="not been claimed"):
        conversion.complete_conversion(accepted(), "bkg_1", IN_DATE)


def test_complete_conversion_never_records_a_second_booking() -> None:
    with pytest.raises(InvalidTransition, match="already been booked"):
        conversion.complete_conversion(converted(), "bkg_2", IN_DATE)


# --- use cases over the memory unit of work ---------------------------------------------


@pytest.fixture
def store() -> MemoryStore:
    store = MemoryStore()
    with MemoryUnitOfWork(store) as uow:
        uow.catalogs.save(CATALOG)
        uow.commit()
    return store


def add_customer(store: MemoryStore, company_id: str = COMPANY) -> Customer:
    """A real customer of ``company_id`` in the store."""
    customer = factories.customer(company_id)
    with MemoryUnitOfWork(store) as uow:
        uow.customers.add(customer)
        uow.commit()
    return customer


@pytest.fixture
def customer(store: MemoryStore) -> Customer:
    return add_customer(store)


@pytest.fixture
def lead(store: MemoryStore) -> Lead:
    made = factories.lead(COMPANY)
    with MemoryUnitOfWork(store) as uow:
        uow.leads.add(made)
        uow.commit()
    return made


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(AT)


def stored(store: MemoryStore, quote: Quote) -> Quote:
    """``quote`` stored, with its customer (a convert holds the quote's customer)."""
    with MemoryUnitOfWork(store) as uow:
        factories.ensure_customer(uow, quote.company_id, quote.customer_id)
        uow.quotes.add(quote)
        uow.commit()
    return quote


def test_create_quote_prices_the_selection_from_the_company_catalog(
    store: MemoryStore, clock: FixedClock, customer: Customer
) -> None:
    uow = MemoryUnitOfWork(store)
    quote = create_quote(
        CreateQuote(company_id=COMPANY, customer_id=customer.id, selection=SELECTION),
        uow=uow,
        clock=clock,
    )
    assert quote.customer_id == customer.id
    assert quote.total_cents == price(CATALOG, SELECTION, at=AT).total_cents
    assert store.values("quotes")[(COMPANY, quote.id)] == quote
    assert uow.commits == 1


def test_create_quote_by_hand_sums_its_manual_lines(
    store: MemoryStore, clock: FixedClock, lead: Lead
) -> None:
    cmd = CreateQuote(
        company_id=COMPANY, lead_id=lead.id, manual_lines=(ManualLine("Move-out clean", 30_000),)
    )
    quote = create_quote(cmd, uow=MemoryUnitOfWork(store), clock=clock)
    assert (quote.lead_id, quote.customer_id) == (lead.id, None)
    assert quote.hand_priced
    assert quote.total_cents == 30_000


def test_create_quote_with_send_now_sends_it_in_the_same_transaction(
    store: MemoryStore, clock: FixedClock, customer: Customer
) -> None:
    uow = MemoryUnitOfWork(store)
    cmd = CreateQuote(
        company_id=COMPANY,
        customer_id=customer.id,
        selection=SELECTION,
        expires_at=EXPIRES,
        send_now=True,
    )
    quote = create_quote(cmd, uow=uow, clock=clock)
    assert store.values("quotes")[(COMPANY, quote.id)].status is QuoteStatus.SENT
    assert quote.sent_at == AT
    assert uow.commits == 1


def test_create_quote_applies_coupon_limits_as_they_stand(
    store: MemoryStore, clock: FixedClock, customer: Customer
) -> None:
    earlier = add_customer(store)
    (redeemed,) = booked(order(company_id=COMPANY, customer_id=earlier.id))
    with MemoryUnitOfWork(store) as uow:
        uow.bookings.add_all([redeemed])
        uow.coupon_redemptions.add(COMPANY, "cpn_spring", earlier.id, redeemed.id)
        uow.commit()
    selection = attrs.evolve(SELECTION, coupon_code="spring")
    with pytest.raises(CouponRejected) as caught:
        create_quote(
            CreateQuote(company_id=COMPANY, customer_id=customer.id, selection=selection),
            uow=MemoryUnitOfWork(store),
            clock=clock,
        )
    assert caught.value.rule == "max_redemptions"
    assert store.values("quotes") == {}


def test_refused_create_writes_nothing(store: MemoryStore, clock: FixedClock) -> None:
    uow = MemoryUnitOfWork(store)
    with pytest.raises(ValidationFailed):
        create_quote(
            CreateQuote(company_id=COMPANY, selection=SELECTION, send_now=True),
            uow=uow,
            clock=clock,
        )
    assert store.values("quotes") == {}
    assert uow.commits == 0


def test_create_quote_without_a_catalog_is_not_found(clock: FixedClock) -> None:
    no_catalog = MemoryStore()
    customer = add_customer(no_catalog)
    with pytest.raises(NotFoundError) as caught:
        create_quote(
            CreateQuote(company_id=COMPANY, customer_id=customer.id, selection=SELECTION),
            uow=MemoryUnitOfWork(no_catalog),
            clock=clock,
        )
    assert caught.value.kind == "catalog"
    assert no_catalog.values("quotes") == {}


def test_create_quote_for_a_customer_or_lead_the_company_lacks_is_not_found(
    store: MemoryStore, clock: FixedClock
) -> None:
    theirs = add_customer(store, OTHER_COMPANY)
    their_lead = factories.lead(OTHER_COMPANY)
    with MemoryUnitOfWork(store) as uow:
        uow.leads.add(their_lead)
        uow.commit()
    for refs, kind in (
        ({"customer_id": theirs.id}, "customer"),
        ({"customer_id": "cus_nothing"}, "customer"),
        ({"lead_id": their_lead.id}, "lead"),
    ):
        with pytest.raises(NotFoundError) as caught:
            create_quote(
                CreateQuote(company_id=COMPANY, selection=SELECTION, **refs),  # type: ignore[arg-type]
                uow=MemoryUnitOfWork(store),
                clock=clock,
            )
        assert caught.value.kind == kind
    assert store.values("quotes") == {}


def test_act_on_quote_stores_each_change(store: MemoryStore, clock: FixedClock) -> None:
    quote = stored(store, draft())
    for action in (QuoteAction.SEND, QuoteAction.PAUSE, QuoteAction.RESUME, QuoteAction.ACCEPT):
        clock.advance(timedelta(hours=1))
        out = act_on_quote(
            ActOnQuote(company_id=COMPANY, quote_id=quote.id, action=action),
            uow=MemoryUnitOfWork(store),
            clock=clock,
        )
        assert store.values("quotes")[(COMPANY, quote.id)] == out
    assert out.status is QuoteStatus.ACCEPTED
    assert out.version == 5


def test_act_on_quote_reject_declines_a_sent_quote(store: MemoryStore, clock: FixedClock) -> None:
    quote = stored(store, sent())
    out = act_on_quote(
        ActOnQuote(company_id=COMPANY, quote_id=quote.id, action=QuoteAction.REJECT),
        uow=MemoryUnitOfWork(store),
        clock=clock,
    )
    assert store.values("quotes")[(COMPANY, quote.id)].status is QuoteStatus.DECLINED == out.status


def test_refused_action_writes_nothing(store: MemoryStore, clock: FixedClock) -> None:
    quote = stored(store, draft())
    uow = MemoryUnitOfWork(store)
    with pytest.raises(InvalidTransition):
        act_on_quote(
            ActOnQuote(company_id=COMPANY, quote_id=quote.id, action=QuoteAction.ACCEPT),
            uow=uow,
            clock=clock,
        )
    assert store.values("quotes")[(COMPANY, quote.id)] is quote
    assert uow.commits == 0


def test_no_op_pause_writes_nothing(store: MemoryStore, clock: FixedClock) -> None:
    quote = stored(store, quotes.pause(sent(), AT))
    uow = MemoryUnitOfWork(store)
    out = act_on_quote(
        ActOnQuote(company_id=COMPANY, quote_id=quote.id, action=QuoteAction.PAUSE),
        uow=uow,
        clock=clock,
    )
    assert out is quote
    assert uow.commits == 0


def test_act_on_quote_of_another_company_is_not_found(
    store: MemoryStore, clock: FixedClock
) -> None:
    quote = stored(store, sent())
    with pytest.raises(NotFoundError) as caught:
        act_on_quote(
            ActOnQuote(company_id=OTHER_COMPANY, quote_id=quote.id, action=QuoteAction.ACCEPT),
            uow=MemoryUnitOfWork(store),
            clock=clock,
        )
    assert str(caught.value) == str(NotFoundError("quote", quote.id))


def test_act_on_quote_judges_expiry_by_the_clock(store: MemoryStore, clock: FixedClock) -> None:
    quote = stored(store, sent())
    clock.advance(EXPIRES - AT)
    with pytest.raises(InvalidTransition, match="expiry date has passed"):
        act_on_quote(
            ActOnQuote(company_id=COMPANY, quote_id=quote.id, action=QuoteAction.ACCEPT),
            uow=MemoryUnitOfWork(store),
            clock=clock,
        )


def bookable(store: MemoryStore) -> None:
    """The company, the quotes' customer (``cus_1``, with a default address) and a crew
    member who serves it every day 08:00-18:00: what converting into a booking needs."""
    with MemoryUnitOfWork(store) as uow:
        uow.companies.add(
            Company(
                id=COMPANY,
                slug="acme",
                name="Acme Maids",
                timezone="America/New_York",
                code_prefix="AC",
                created_at=AT,
            )
        )
        uow.customers.add(attrs.evolve(factories.customer(COMPANY), id="cus_1"))
        uow.crew.add(factories.all_week_crew(COMPANY, AT))
        uow.commit()


def claim(
    store: MemoryStore, clock: FixedClock, quote: Quote, **fields: object
) -> tuple[Quote, Booking | None]:
    """Convert through the use case the API calls: claim and book in one transaction."""
    fields.setdefault("start", START)
    request = ConvertRequest(**fields)  # type: ignore[arg-type]
    return conversions.convert_quote(
        COMPANY,
        quote.id,
        request,
        uow=MemoryUnitOfWork(store),
        clock=clock,
        drive=TableDriveTime(default=10),
    )


def test_convert_stores_the_converted_quote_with_its_new_booking(
    store: MemoryStore, clock: FixedClock
) -> None:
    bookable(store)
    quote = stored(store, sent())
    clock.advance(timedelta(days=1))
    converted, booking = claim(store, clock, quote)
    assert store.values("quotes")[(COMPANY, quote.id)] == converted
    assert converted.status is QuoteStatus.CONVERTED
    assert booking is not None
    assert booking.quote_id == quote.id
    assert converted.booking_id == booking.id
    assert booking.start == START


def test_convert_in_deprecated_form_links_the_booking(
    store: MemoryStore, clock: FixedClock
) -> None:
    quote = stored(store, accepted())
    (made,) = booked(order(company_id=COMPANY, customer_id=quote.customer_id))
    with MemoryUnitOfWork(store) as uow:
        uow.bookings.add_all([made])
        uow.commit()
    claimed, booking = claim(store, clock, quote, start=None, booking_id=made.id)
    assert booking is None
    assert store.values("quotes")[(COMPANY, quote.id)].booking_id == made.id == claimed.booking_id
    assert store.values("bookings")[(COMPANY, made.id)].quote_id == quote.id


@pytest.mark.parametrize("state", REFUSED_STATES)
def test_convert_of_refused_state_claims_nothing(
    state: str, store: MemoryStore, clock: FixedClock
) -> None:
    quote, at = REFUSED_STATES[state]()
    stored(store, quote)
    clock.current = at
    with pytest.raises(InvalidTransition):
        claim(store, clock, quote)
    assert store.values("quotes")[(COMPANY, quote.id)] is quote


def test_convert_of_expired_quote_is_refused_and_claims_nothing(
    store: MemoryStore, clock: FixedClock
) -> None:
    quote = stored(store, sent())
    clock.current = PAST_EXPIRY
    with pytest.raises(InvalidTransition, match="expiry date has passed"):
        claim(store, clock, quote)
    assert store.values("quotes")[(COMPANY, quote.id)] is quote


def test_convert_with_invalid_fields_claims_nothing(store: MemoryStore, clock: FixedClock) -> None:
    quote = stored(store, accepted())
    with pytest.raises(ValidationFailed):
        claim(store, clock, quote, start=START.replace(minute=20))
    assert store.values("quotes")[(COMPANY, quote.id)] is quote


def test_two_claims_at_the_same_moment_exactly_one_wins(
    store: MemoryStore, clock: FixedClock
) -> None:
    bookable(store)
    quote = stored(store, accepted())
    barrier = threading.Barrier(2)
    wins: list[Quote] = []
    losses: list[Exception] = []

    def attempt() -> None:
        barrier.wait()
        try:
            wins.append(claim(store, clock, quote)[0])
        except (InvalidTransition, ConflictError) as error:
            losses.append(error)

    threads = [threading.Thread(target=attempt) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(wins) == 1
    assert len(losses) == 1
    assert store.values("quotes")[(COMPANY, quote.id)] == wins[0]
    assert wins[0].version == quote.version + 2  # claimed, then given its booking
    made = list(store.values("bookings").values())
    # One conversion: every booking is the winner's plan, made from this quote.
    assert {b.quote_id for b in made} == {quote.id}
    assert len({b.plan_id for b in made}) == 1
