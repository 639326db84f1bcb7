"""Quotes: a priced offer to a customer or lead that is sent, answered and converted.

Statuses (DECISIONS.md): ``draft`` -> ``sent`` -> ``accepted`` | ``declined`` | ``expired``;
``sent`` (in date) or ``accepted`` -> ``converted``. Expiry is decided from the instant
passed in: a sent quote whose ``expires_at`` has come is expired before any sweeper
stores that (``effective_status``, ``expire``). Every transition takes an aware ``at``
and returns a new quote with ``version`` one higher (or the same quote when it would
change nothing, e.g. pausing a paused quote), or raises ``InvalidTransition``.

Converting a quote into a booking lives in ``booking_core.conversion``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import attrs
from attrs import frozen

from booking_core.catalog import ONE_TIME
from booking_core.clock import require_aware
from booking_core.errors import (
    InvalidTransition,
    ValidationFailed,
)
from booking_core.ids import new_id, new_token
from booking_core.plain_text import NOT_ONE_LINE, has_hidden_characters
from booking_core.pricing import LineKind, PriceBreakdown, Selection

FOLLOW_UP_DELAYS = (timedelta(days=2), timedelta(days=5))
"""When follow-ups fall after sending; only those due before the expiry are scheduled."""

HAND_PRICED_FREQUENCY = ONE_TIME
"""A hand-priced quote names no plan, so its booking is a single visit."""

AWARE_TEXT = "Must carry a UTC offset, e.g. 2026-05-01T09:00:00-04:00."


class QuoteStatus(enum.StrEnum):
    """Where a quote stands."""

    DRAFT = "draft"
    SENT = "sent"
    ACCEPTED = "accepted"
    DECLINED = "declined"
    EXPIRED = "expired"
    CONVERTED = "converted"


class FollowUpStatus(enum.StrEnum):
    """Where one scheduled follow-up stands."""

    SCHEDULED = "scheduled"
    SENT = "sent"
    SKIPPED = "skipped"
    """It fell due while the quote's follow-ups were paused (or beside a later one due at
    the same sweep); it is never sent later."""
    CANCELLED = "cancelled"


@frozen
class ManualLine:
    """One hand-priced line of a quote that names no catalog service."""

    description: str
    amount_cents: int


@frozen
class FollowUp:
    """A reminder to the customer, due at ``due_at``."""

    due_at: datetime
    status: FollowUpStatus = FollowUpStatus.SCHEDULED


@frozen(kw_only=True)
class Quote:
    """A quote. ``selection`` is None for a hand-priced quote, priced by ``manual_lines``."""

    id: str
    company_id: str
    customer_id: str | None
    lead_id: str | None
    selection: Selection | None
    breakdown: PriceBreakdown | None
    manual_lines: tuple[ManualLine, ...] = ()
    total_cents: int
    expires_at: datetime | None
    public_token: str
    status: QuoteStatus = QuoteStatus.DRAFT
    follow_ups: tuple[FollowUp, ...] = ()
    follow_ups_paused: bool = False
    booking_id: str | None = None
    version: int = 1
    created_at: datetime
    updated_at: datetime
    sent_at: datetime | None = None
    accepted_at: datetime | None = None
    declined_at: datetime | None = None
    converted_at: datetime | None = None
    message: str = ""
    note: str = ""

    def __attrs_post_init__(self) -> None:
        if self.customer_id is None and self.lead_id is None:
            raise ValueError("a quote belongs to a customer or a lead")
        if (self.selection is None) != (self.breakdown is None):
            raise ValueError("a catalog-priced quote has a breakdown; a hand-priced one has none")

    @property
    def hand_priced(self) -> bool:
        """True when the quote was priced by hand and names no catalog service."""
        return self.selection is None

    @property
    def label(self) -> str:
        """What the quote is called on the customer's pages: its service's name; for a
        quote priced by hand, its lines' descriptions one after another ("Interior
        windows, 14 panes, Gutter"), as a job booked from it is called
        (``Booking.service_label``)."""
        if self.breakdown is None:
            return ", ".join(line.description for line in self.manual_lines) or "Your quote"
        base = (line.name for line in self.breakdown.lines if line.kind is LineKind.BASE)
        return next(base, "Your quote")


def create_quote(
    *,
    company_id: str,
    at: datetime,
    customer_id: str | None = None,
    lead_id: str | None = None,
    selection: Selection | None = None,
    breakdown: PriceBreakdown | None = None,
    manual_lines: Iterable[ManualLine] = (),
    expires_at: datetime | None = None,
    message: str = "",
    note: str = "",
) -> Quote:
    """A new draft: catalog-priced (``selection`` with its ``breakdown``) or by hand."""
    require_aware(at, "at")
    lines = tuple(manual_lines)
    errors: dict[str, str] = {}
    if customer_id is None and lead_id is None:
        errors["customer_id"] = "Give a customerId or a leadId."
    if selection is None and not lines:
        errors["manual_lines"] = "Give a catalog selection or at least one manual line."
    elif selection is not None and lines:
        errors["manual_lines"] = "A quote priced from the catalog takes no manual lines."
    for index, line in enumerate(lines):
        if not line.description.strip():
            errors[f"manual_lines.{index}.description"] = "Required."
        elif has_hidden_characters(line.description):  # a price line, as a catalog item's
            errors[f"manual_lines.{index}.description"] = NOT_ONE_LINE
        if line.amount_cents < 0:
            errors[f"manual_lines.{index}.amount_cents"] = "Must not be negative."
    if expires_at is not None:
        if expires_at.utcoffset() is None:
            errors["expires_at"] = AWARE_TEXT
        elif expires_at <= at:
            errors["expires_at"] = "Must be in the future."
    if errors:
        raise ValidationFailed(errors)
    if selection is not None and breakdown is None:
        raise ValueError("a catalog-priced quote needs the breakdown of its selection")
    total = breakdown.total_cents if breakdown is not None else sum(x.amount_cents for x in lines)
    return Quote(
        id=new_id("quo"),
        company_id=company_id,
        customer_id=customer_id,
        lead_id=lead_id,
        selection=selection,
        breakdown=breakdown,
        manual_lines=lines,
        total_cents=total,
        expires_at=expires_at,
        public_token=new_token(),
        created_at=at,
        updated_at=at,
        message=message,
        note=note,
    )


def effective_status(quote: Quote, at: datetime) -> QuoteStatus:
    """The status at instant ``at``: a sent quote whose expiry has come is expired."""
    if quote.status is QuoteStatus.SENT and quote.expires_at is not None and quote.expires_at <= at:
        return QuoteStatus.EXPIRED
    return quote.status


def last_day(quote: Quote, zone: ZoneInfo) -> date | None:
    """The last local day in ``zone`` on which the quote can still be answered: the day of
    the instant just before its expiry, since the expiry instant itself is past (a quote
    expiring at midnight ends the day before); None with no expiry."""
    if quote.expires_at is None:
        return None
    return (quote.expires_at - timedelta(microseconds=1)).astimezone(zone).date()


def send(quote: Quote, at: datetime) -> Quote:
    """Send a draft and schedule its follow-ups; refused once the expiry has passed."""
    require_aware(at, "at")
    if quote.status is not QuoteStatus.DRAFT:
        raise refusal(quote, at, "send", "only a draft can be sent")
    if quote.expires_at is not None and quote.expires_at <= at:
        raise refusal(quote, at, "send", "expiry date has passed")
    follow_ups = tuple(
        FollowUp(at + delay)
        for delay in FOLLOW_UP_DELAYS
        if quote.expires_at is None or at + delay < quote.expires_at
    )
    return evolved(quote, at, status=QuoteStatus.SENT, sent_at=at, follow_ups=follow_ups)


_ANSWER_REFUSALS = {
    QuoteStatus.DRAFT: "it has not been sent yet",
    QuoteStatus.ACCEPTED: "it has already been answered",
    QuoteStatus.DECLINED: "it has already been answered",
    QuoteStatus.EXPIRED: "its expiry date has passed",
    QuoteStatus.CONVERTED: "it has already been booked",
}


def accept(quote: Quote, at: datetime) -> Quote:
    """Record the customer's yes to a sent quote that is still in date."""
    _require_answerable(quote, at, "accept")
    return answered(quote, at, status=QuoteStatus.ACCEPTED, accepted_at=at)


def reject(quote: Quote, at: datetime) -> Quote:
    """Record the customer's no to a sent quote that is still in date."""
    _require_answerable(quote, at, "reject")
    return answered(quote, at, status=QuoteStatus.DECLINED, declined_at=at)


def pause(quote: Quote, at: datetime) -> Quote:
    """Hold the follow-ups of a sent quote; pausing a paused quote changes nothing."""
    return _set_paused(quote, at, "pause", paused=True)


def resume(quote: Quote, at: datetime) -> Quote:
    """Let the follow-ups of a sent quote run again; resuming a running one changes nothing.
    A follow-up that fell due while paused is skipped, never sent late."""
    return _set_paused(quote, at, "resume", paused=False)


def settle_due_follow_ups(quote: Quote, at: datetime) -> tuple[Quote, int | None]:
    """``quote`` with its scheduled follow-ups due by ``at`` settled, and the index of the
    one to send now (None: none to send). Unchanged (the same quote, None) when no
    scheduled follow-up is due or the quote is not sent and in date (answering,
    converting and expiring cancel what is still scheduled).

    While the follow-ups are paused, every due one is skipped. Of several due at once (a
    worker that was down), only the latest is sent and the earlier ones are skipped.
    """
    require_aware(at, "at")
    if effective_status(quote, at) is not QuoteStatus.SENT:
        return quote, None
    due = [
        index
        for index, f in enumerate(quote.follow_ups)
        if f.status is FollowUpStatus.SCHEDULED and f.due_at <= at
    ]
    if not due:
        return quote, None
    send_now = None if quote.follow_ups_paused else due[-1]
    settled = tuple(
        attrs.evolve(f, status=FollowUpStatus.SENT if index == send_now else FollowUpStatus.SKIPPED)
        if index in due
        else f
        for index, f in enumerate(quote.follow_ups)
    )
    return evolved(quote, at, follow_ups=settled), send_now


def expire(quote: Quote, at: datetime) -> Quote:
    """Store the expiry of a sent quote past its expiry date (for a sweeper); idempotent."""
    require_aware(at, "at")
    if quote.status is QuoteStatus.EXPIRED:
        return quote
    if effective_status(quote, at) is not QuoteStatus.EXPIRED:
        raise refusal(quote, at, "expire", "only a sent quote past its expiry date expires")
    return answered(quote, at, status=QuoteStatus.EXPIRED)


def public_url(*, base_url: str, company_slug: str, custom_domain: str | None, token: str) -> str:
    """Address of the page the customer reads: on the company's own domain if connected."""
    if custom_domain:
        return f"https://{custom_domain.strip().rstrip('/')}/q/{token}"
    return f"{base_url.rstrip('/')}/{company_slug}/q/{token}"


def evolved(quote: Quote, at: datetime, **changes: Any) -> Quote:
    """``quote`` with ``changes``, one version higher, updated at ``at``."""
    return attrs.evolve(quote, version=quote.version + 1, updated_at=at, **changes)


def refusal(quote: Quote, at: datetime, action: str, reason: str) -> InvalidTransition:
    """The ``InvalidTransition`` refusing ``action`` on ``quote`` (effective status) at ``at``."""
    return InvalidTransition("quote", quote.id, effective_status(quote, at).value, action, reason)


def answered(quote: Quote, at: datetime, **changes: Any) -> Quote:
    """``evolved`` with every still-scheduled follow-up cancelled."""
    # Answered, booked or expired: a quote in any of these needs no more chasing.
    return evolved(quote, at, follow_ups=_cancelled(quote.follow_ups), **changes)


def _cancelled(follow_ups: tuple[FollowUp, ...]) -> tuple[FollowUp, ...]:
    return tuple(
        attrs.evolve(f, status=FollowUpStatus.CANCELLED)
        if f.status is FollowUpStatus.SCHEDULED
        else f
        for f in follow_ups
    )


def _require_answerable(quote: Quote, at: datetime, action: str) -> None:
    require_aware(at, "at")
    status = effective_status(quote, at)
    if status is not QuoteStatus.SENT:
        raise refusal(quote, at, action, _ANSWER_REFUSALS[status])


def _set_paused(quote: Quote, at: datetime, action: str, *, paused: bool) -> Quote:
    require_aware(at, "at")
    if effective_status(quote, at) is not QuoteStatus.SENT:
        raise refusal(quote, at, action, "follow-ups run only while a quote is sent and in date")
    if quote.follow_ups_paused is paused:
        return quote
    follow_ups = quote.follow_ups
    if not paused:  # what fell due while paused is skipped, not sent late on resuming
        follow_ups = tuple(
            attrs.evolve(f, status=FollowUpStatus.SKIPPED)
            if f.status is FollowUpStatus.SCHEDULED and f.due_at <= at
            else f
            for f in follow_ups
        )
    return evolved(quote, at, follow_ups_paused=paused, follow_ups=follow_ups)
