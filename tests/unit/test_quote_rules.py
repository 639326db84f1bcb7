"""Quotes (``booking_core.quotes``): the exact texts a refusal shows, the edges of the
follow-up schedule, and what a hand-priced quote keeps (docs/quotes.md)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import attrs
import pytest

from booking_core import conversion, quotes
from booking_core.conversion import ConvertRequest
from booking_core.errors import InvalidTransition, ValidationFailed
from booking_core.pricing import price
from booking_core.quotes import FollowUp, FollowUpStatus, ManualLine, Quote, QuoteStatus
from tests.unit.test_quotes import (
    AT,
    CATALOG,
    COMPANY,
    EXPIRES,
    IN_DATE,
    PAST_EXPIRY,
    SELECTION,
    START,
    accepted,
    draft,
    sent,
)

NAIVE = datetime(2026, 6, 2, 9, 0)
FIRST_DUE = AT + timedelta(days=2)
SECOND_DUE = AT + timedelta(days=5)


def by_hand(*lines: ManualLine, **fields: object) -> Quote:
    fields.setdefault("at", AT)
    return quotes.create_quote(
        company_id=COMPANY,
        customer_id="cus_1",
        manual_lines=lines,
        **fields,  # type: ignore[arg-type]
    )


def field_errors(make: Callable[[], object]) -> dict[str, str]:
    with pytest.raises(ValidationFailed) as caught:
        make()
    return caught.value.field_errors


def refused(make: Callable[[], object]) -> str:
    with pytest.raises(InvalidTransition) as caught:
        make()
    assert caught.value.entity == "quote"
    return str(caught.value)


# --- creating ---------------------------------------------------------------------------


def test_a_quote_naming_neither_customer_nor_lead_says_to_give_one() -> None:
    errors = field_errors(
        lambda: quotes.create_quote(company_id=COMPANY, at=AT, manual_lines=(ManualLine("Job", 1),))
    )
    assert errors == {"customer_id": "Give a customerId or a leadId."}


def test_a_quote_with_neither_selection_nor_lines_says_to_give_one() -> None:
    errors = field_errors(lambda: quotes.create_quote(company_id=COMPANY, at=AT, lead_id="lead_1"))
    assert errors == {"manual_lines": "Give a catalog selection or at least one manual line."}


def test_a_catalog_priced_quote_with_manual_lines_is_refused_with_the_reason() -> None:
    errors = field_errors(
        lambda: quotes.create_quote(
            company_id=COMPANY,
            at=AT,
            customer_id="cus_1",
            selection=SELECTION,
            breakdown=price(CATALOG, SELECTION, at=AT),
            manual_lines=(ManualLine("Job", 100),),
        )
    )
    assert errors == {"manual_lines": "A quote priced from the catalog takes no manual lines."}


def test_each_bad_manual_line_is_named_by_its_position() -> None:
    errors = field_errors(
        lambda: by_hand(ManualLine("Windows", 5_000), ManualLine("  ", -1), ManualLine("Oven", 0))
    )
    assert errors == {
        "manual_lines.1.description": "Required.",
        "manual_lines.1.amount_cents": "Must not be negative.",
    }


def test_a_zero_cent_manual_line_is_accepted_and_kept() -> None:
    """docs/quotes.md: hand-priced lines take ``amountCents`` >= 0, so a free line is fine."""
    lines = (ManualLine("Post-renovation clean", 40_000), ManualLine("Window check", 0))
    quote = by_hand(*lines)
    assert quote.manual_lines == lines
    assert quote.total_cents == 40_000


def test_a_hand_priced_quote_of_only_a_free_line_totals_zero() -> None:
    quote = by_hand(ManualLine("Estimate visit", 0))
    assert quote.total_cents == 0
    assert quote.manual_lines == (ManualLine("Estimate visit", 0),)


def test_a_hand_priced_quote_keeps_its_manual_lines_through_send_accept_and_convert() -> None:
    lines = (ManualLine("Post-renovation clean", 40_000), ManualLine("Window check", 0))
    quote = quotes.accept(quotes.send(by_hand(*lines, expires_at=EXPIRES), AT), IN_DATE)
    assert quote.manual_lines == lines
    claimed, booking = conversion.begin_conversion(
        quote, ConvertRequest(start=START, service_id="svc_deep"), catalog=CATALOG, at=IN_DATE
    )
    assert claimed.manual_lines == lines
    assert booking.manual_lines == lines
    assert booking.quoted_total_cents == 40_000


@pytest.mark.parametrize(
    ("expires_at", "text"),
    [
        (datetime(2026, 7, 1, 12, 0), "Must carry a UTC offset, e.g. 2026-05-01T09:00:00-04:00."),
        (AT, "Must be in the future."),
    ],
    ids=["naive", "now"],
)
def test_a_bad_expiry_is_refused_with_the_reason(expires_at: datetime, text: str) -> None:
    errors = field_errors(lambda: by_hand(ManualLine("Job", 100), expires_at=expires_at))
    assert errors == {"expires_at": text}


def test_a_quote_keeps_its_message_and_note() -> None:
    quote = by_hand(ManualLine("Job", 100), message="Thanks for asking!", note="Gate code 1234")
    assert (quote.message, quote.note) == ("Thanks for asking!", "Gate code 1234")


def test_a_quote_without_message_or_note_has_empty_ones() -> None:
    quote = by_hand(ManualLine("Job", 100))
    assert (quote.message, quote.note) == ("", "")


def test_a_selection_without_its_breakdown_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match=r"^a catalog-priced quote needs the breakdown of its"):
        quotes.create_quote(company_id=COMPANY, at=AT, customer_id="cus_1", selection=SELECTION)


def test_a_quote_of_nobody_cannot_be_built() -> None:
    with pytest.raises(ValueError, match=r"^a quote belongs to a customer or a lead$"):
        attrs.evolve(draft(), customer_id=None)


def test_a_quote_with_a_selection_but_no_breakdown_cannot_be_built() -> None:
    text = r"^a catalog-priced quote has a breakdown; a hand-priced one has none$"
    with pytest.raises(ValueError, match=text):
        attrs.evolve(draft(), breakdown=None)


@pytest.mark.parametrize(
    "act",
    [
        lambda: by_hand(ManualLine("Job", 100), at=NAIVE),
        lambda: quotes.send(draft(), NAIVE),
        lambda: quotes.accept(sent(), NAIVE),
        lambda: quotes.reject(sent(), NAIVE),
        lambda: quotes.pause(sent(), NAIVE),
        lambda: quotes.resume(sent(), NAIVE),
        lambda: quotes.settle_due_follow_ups(sent(), NAIVE),
        lambda: quotes.expire(sent(), NAIVE),
    ],
    ids=["create", "send", "accept", "reject", "pause", "resume", "settle", "expire"],
)
def test_every_quote_transition_refuses_a_naive_instant_naming_at(
    act: Callable[[], object],
) -> None:
    with pytest.raises(ValueError, match=r"^at must carry a UTC offset$"):
        act()


# --- refusals name the action, the quote, its status and why ----------------------------


def test_sending_a_sent_quote_is_refused_with_the_full_text() -> None:
    quote = sent()
    text = refused(lambda: quotes.send(quote, IN_DATE))
    assert text == f"Cannot send quote {quote.id} (sent): only a draft can be sent"


def test_sending_a_draft_past_expiry_is_refused_with_the_full_text() -> None:
    quote = draft()
    text = refused(lambda: quotes.send(quote, EXPIRES))
    assert text == f"Cannot send quote {quote.id} (draft): expiry date has passed"


@pytest.mark.parametrize("action", ["pause", "resume"])
def test_pause_and_resume_of_an_accepted_quote_are_refused_with_the_full_text(
    action: str,
) -> None:
    quote = accepted()
    text = refused(lambda: getattr(quotes, action)(quote, IN_DATE))
    assert text == (
        f"Cannot {action} quote {quote.id} (accepted): "
        "follow-ups run only while a quote is sent and in date"
    )


def test_expiring_a_quote_in_date_is_refused_with_the_full_text() -> None:
    quote = sent()
    text = refused(lambda: quotes.expire(quote, IN_DATE))
    assert text == (
        f"Cannot expire quote {quote.id} (sent): only a sent quote past its expiry date expires"
    )


def test_accepting_a_quote_past_expiry_is_refused_with_the_full_text() -> None:
    quote = sent()
    text = refused(lambda: quotes.accept(quote, PAST_EXPIRY))
    assert text == f"Cannot accept quote {quote.id} (expired): its expiry date has passed"


# --- follow-ups -------------------------------------------------------------------------


def test_a_follow_up_falling_exactly_on_the_expiry_is_not_scheduled() -> None:
    out = quotes.send(draft(expires_at=SECOND_DUE), AT)
    assert out.follow_ups == (FollowUp(FIRST_DUE),)


def test_no_follow_up_is_scheduled_when_the_first_falls_exactly_on_the_expiry() -> None:
    out = quotes.send(draft(expires_at=FIRST_DUE), AT)
    assert out.follow_ups == ()


def test_a_follow_up_just_before_the_expiry_is_scheduled() -> None:
    out = quotes.send(draft(expires_at=SECOND_DUE + timedelta(microseconds=1)), AT)
    assert out.follow_ups == (FollowUp(FIRST_DUE), FollowUp(SECOND_DUE))


def test_settling_a_due_follow_up_is_a_change_made_at_that_instant() -> None:
    quote = sent()
    out, index = quotes.settle_due_follow_ups(quote, FIRST_DUE)
    assert index == 0
    assert out.follow_ups[0].status is FollowUpStatus.SENT
    assert out.updated_at == FIRST_DUE
    assert out.version == quote.version + 1


def _with_first_follow_up_sent() -> Quote:
    out, _ = quotes.settle_due_follow_ups(sent(), FIRST_DUE)
    return out


def _with_first_follow_up_skipped() -> Quote:
    paused = quotes.pause(sent(), IN_DATE)
    out, index = quotes.settle_due_follow_ups(paused, FIRST_DUE)
    assert index is None
    return quotes.resume(out, FIRST_DUE + timedelta(hours=1))


def _convert(quote: Quote, at: datetime) -> Quote:
    claimed, _ = conversion.begin_conversion(
        quote, ConvertRequest(start=START), catalog=CATALOG, at=at
    )
    return claimed


@pytest.mark.parametrize(
    ("finish", "at"),
    [
        (quotes.accept, FIRST_DUE + timedelta(days=1)),
        (quotes.reject, FIRST_DUE + timedelta(days=1)),
        (_convert, FIRST_DUE + timedelta(days=1)),
        (quotes.expire, PAST_EXPIRY),
    ],
    ids=["accept", "reject", "convert", "expire"],
)
@pytest.mark.parametrize(
    ("settle", "settled"),
    [
        (_with_first_follow_up_sent, FollowUpStatus.SENT),
        (_with_first_follow_up_skipped, FollowUpStatus.SKIPPED),
    ],
    ids=["sent", "skipped"],
)
def test_a_settled_follow_up_is_never_re_marked_cancelled(
    finish: Callable[[Quote, datetime], Quote],
    at: datetime,
    settle: Callable[[], Quote],
    settled: FollowUpStatus,
) -> None:
    quote = settle()
    assert [f.status for f in quote.follow_ups] == [settled, FollowUpStatus.SCHEDULED]
    out = finish(quote, at)
    assert [f.status for f in out.follow_ups] == [settled, FollowUpStatus.CANCELLED]
    assert out.status is not QuoteStatus.SENT


def test_resuming_exactly_when_a_follow_up_falls_due_skips_it() -> None:
    paused = quotes.pause(sent(), IN_DATE)
    out = quotes.resume(paused, FIRST_DUE)
    assert [f.status for f in out.follow_ups] == [
        FollowUpStatus.SKIPPED,
        FollowUpStatus.SCHEDULED,
    ]


def test_resuming_just_before_a_follow_up_falls_due_keeps_it() -> None:
    paused = quotes.pause(sent(), IN_DATE)
    out = quotes.resume(paused, FIRST_DUE - timedelta(microseconds=1))
    assert [f.status for f in out.follow_ups] == [FollowUpStatus.SCHEDULED] * 2


# --- public address ---------------------------------------------------------------------


def test_public_url_drops_only_the_spaces_and_trailing_slash_of_a_custom_domain() -> None:
    url = quotes.public_url(
        base_url="https://book.example.com",
        company_slug="acme",
        custom_domain=" quotes.acme.TAX/ ",
        token="tok",
    )
    assert url == "https://quotes.acme.TAX/q/tok"


def test_public_url_drops_only_the_trailing_slash_of_the_service_address() -> None:
    url = quotes.public_url(
        base_url="https://book.example.TAX/", company_slug="acme", custom_domain="", token="tok"
    )
    assert url == "https://book.example.TAX/acme/q/tok"


# --- every change records its instant ---------------------------------------------------


def _claimed(at: datetime) -> Quote:
    return _convert(accepted(), at)


CHANGES: dict[str, tuple[Callable[[], Quote], Callable[[Quote, datetime], Quote], datetime]] = {
    "send": (draft, quotes.send, IN_DATE),
    "accept": (sent, quotes.accept, IN_DATE),
    "reject": (sent, quotes.reject, IN_DATE),
    "pause": (sent, quotes.pause, IN_DATE),
    "resume": (lambda: quotes.pause(sent(), AT), quotes.resume, IN_DATE),
    "settle": (sent, lambda q, at: quotes.settle_due_follow_ups(q, at)[0], FIRST_DUE),
    "expire": (sent, quotes.expire, PAST_EXPIRY),
    "convert": (accepted, _convert, IN_DATE),
    "complete": (
        lambda: _claimed(IN_DATE),
        lambda q, at: conversion.complete_conversion(q, "bkg_1", at),
        IN_DATE + timedelta(minutes=1),
    ),
    "link": (accepted, lambda q, at: conversion.link_booking(q, "bkg_1", at), IN_DATE),
}


@pytest.mark.parametrize("change", CHANGES)
def test_every_change_is_stamped_with_its_instant_and_bumps_the_version(change: str) -> None:
    make, act, at = CHANGES[change]
    quote = make()
    out = act(quote, at)
    assert out.updated_at == at
    assert out.version == quote.version + 1


def test_completing_a_sent_quote_that_was_never_claimed_is_refused() -> None:
    quote = sent()
    text = refused(lambda: conversion.complete_conversion(quote, "bkg_1", IN_DATE))
    assert text == (
        f"Cannot complete conversion of quote {quote.id} (sent): "
        "it has not been claimed for booking"
    )


NEW_YORK = ZoneInfo("America/New_York")


@pytest.mark.parametrize(
    ("expires_at", "last"),
    [
        (datetime(2026, 12, 1, 0, 0, tzinfo=NEW_YORK), date(2026, 11, 30)),
        (datetime(2026, 12, 1, 0, 0, 1, tzinfo=NEW_YORK), date(2026, 12, 1)),
        (datetime(2026, 12, 1, 23, 59, tzinfo=NEW_YORK), date(2026, 12, 1)),
        (datetime(2026, 12, 1, 5, 0, tzinfo=UTC), date(2026, 11, 30)),  # midnight in New York
    ],
)
def test_the_last_day_of_a_quote_is_the_local_day_before_its_expiry_instant(
    expires_at: datetime, last: date
) -> None:
    """The expiry instant itself is past: a quote expiring at local midnight ends the day
    before."""
    assert quotes.last_day(sent(expires_at=expires_at), NEW_YORK) == last
    assert quotes.last_day(sent(expires_at=None), NEW_YORK) is None


def test_a_quote_is_called_by_its_service_or_by_its_hand_priced_lines() -> None:
    """The portal lists quotes by this name: two hand-priced quotes of one customer are
    told apart by what they quote, not both called "Your quote"."""
    two = by_hand(ManualLine("Interior windows", 9_000), ManualLine("Gutter", 3_000))
    assert two.label == "Interior windows, Gutter"
    assert draft().label == "Standard clean"
