"""Quotes as answers: as of the moment asked (a sent quote past expiry reads as
expired), in a list or alone with its follow-ups."""

from __future__ import annotations

from datetime import datetime

from attrs import field, frozen

from adapters.http.jsonschema import schema
from adapters.http.views.base import Cents, RenderContext, Url, extend
from adapters.http.views.prices import PriceBreakdownView, price_breakdown_view
from booking_core.quotes import (
    FollowUp,
    FollowUpStatus,
    ManualLine,
    Quote,
    QuoteStatus,
    effective_status,
)


@frozen
class ManualLineView:
    """A hand-priced line."""

    description: str
    amount_cents: Cents


@frozen
class FollowUpView:
    """A follow-up email to the customer, mailed by the worker at ``dueAt``."""

    due_at: datetime
    status: FollowUpStatus = field(
        metadata=schema(
            description=(
                "scheduled: not due yet; sent: mailed (queued) at its time; skipped: it"
                " came due while follow-ups were paused, or with no address to mail, and"
                " is never sent later; cancelled: the quote was answered, converted or"
                " expired first."
            )
        )
    )


@frozen
class QuoteView:
    """A quote as of now (a sent quote past expiry reads as expired)."""

    id: str
    status: QuoteStatus
    customer_id: str | None
    lead_id: str | None
    service_id: str | None
    hand_priced: bool
    frequency_slug: str | None
    manual_lines: tuple[ManualLineView, ...]
    price: PriceBreakdownView | None
    total_cents: Cents
    expires_at: datetime | None
    public_url: Url
    follow_ups_paused: bool
    booking_id: str | None
    message: str
    created_at: datetime
    updated_at: datetime
    sent_at: datetime | None
    accepted_at: datetime | None
    declined_at: datetime | None
    converted_at: datetime | None


@frozen
class QuoteWithFollowUpsView(QuoteView):
    """A quote and its follow-ups."""

    follow_ups: tuple[FollowUpView, ...]


def manual_line_view(line: ManualLine) -> ManualLineView:
    """The view of a hand-priced line."""
    return ManualLineView(description=line.description, amount_cents=line.amount_cents)


def follow_up_view(f: FollowUp, ctx: RenderContext) -> FollowUpView:
    """The view of a follow-up."""
    return FollowUpView(due_at=ctx.time(f.due_at), status=f.status)


def quote_view(q: Quote, at: datetime, ctx: RenderContext) -> QuoteView:
    """The view of a quote as of ``at``, as lists show it."""
    selection = q.selection
    return QuoteView(
        id=q.id,
        status=effective_status(q, at),
        customer_id=q.customer_id,
        lead_id=q.lead_id,
        service_id=selection.service_id if selection else None,
        hand_priced=q.hand_priced,
        frequency_slug=selection.frequency_slug if selection else None,
        manual_lines=tuple(manual_line_view(x) for x in q.manual_lines),
        price=price_breakdown_view(q.breakdown) if q.breakdown else None,
        total_cents=q.total_cents,
        expires_at=ctx.time(q.expires_at),
        public_url=ctx.quote_url(q.public_token),
        follow_ups_paused=q.follow_ups_paused,
        booking_id=q.booking_id,
        message=q.message,
        created_at=ctx.time(q.created_at),
        updated_at=ctx.time(q.updated_at),
        sent_at=ctx.time(q.sent_at),
        accepted_at=ctx.time(q.accepted_at),
        declined_at=ctx.time(q.declined_at),
        converted_at=ctx.time(q.converted_at),
    )


def quote_with_follow_ups_view(
    q: Quote, at: datetime, ctx: RenderContext
) -> QuoteWithFollowUpsView:
    """The view of a quote fetched alone, created or acted on: with its follow-ups."""
    follow_ups = tuple(follow_up_view(f, ctx) for f in q.follow_ups)
    return extend(quote_view(q, at, ctx), QuoteWithFollowUpsView, follow_ups=follow_ups)
