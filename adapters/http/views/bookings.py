"""Scheduling answers (``/availability``, ``/bookings``): open slots, and bookings alone,
with their activity, as made, as cancelled and as moved."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime

from attrs import field, frozen

from adapters.http.jsonschema import schema
from adapters.http.views.base import (
    Cents,
    Count,
    Minutes,
    Positive,
    RenderContext,
    Url,
    copied,
    extend,
)
from adapters.http.views.booking_forms import AnswerView, answer_views
from adapters.http.views.customers import AddressView, address_view
from adapters.http.views.prices import PriceBreakdownView, price_breakdown_view
from booking_core.availability import Slot
from booking_core.bookings import (
    ActivityEntry,
    ActivityKind,
    Booking,
    BookingStatus,
    DetailValue,
)
from booking_core.ledger import NO_MONEY, LedgerTotals


@frozen
class SlotView:
    """An open start: the job's first day, the crew that would do it, and the longest of
    their drives from the previous stop."""

    start_iso: datetime
    end_iso: datetime
    crew_ids: tuple[str, ...]
    drive_minutes: Minutes


@frozen
class AvailabilityView:
    """Open start times, ranked by drive minutes, then by time."""

    data: tuple[SlotView, ...]


@frozen
class BookingView:
    """One booking (one visit of a plan, or one job)."""

    id: str
    code: str = field(metadata=schema(description="Human code, also accepted as the id."))
    status: BookingStatus
    customer_id: str
    service_id: str
    frequency_slug: str
    start_iso: datetime
    end_iso: datetime
    duration_minutes: Minutes
    days: Positive
    crew_ids: tuple[str, ...]
    address: AddressView
    price: PriceBreakdownView
    paid_cents: Cents = field(
        metadata=schema(
            description="The booking's paid total in its ledger (GET /payments?bookingId=): "
            "payments net of refunds, disputes and reversals, tips excluded."
        )
    )
    tips_cents: Cents = field(
        metadata=schema(
            description="Tip money in the booking's ledger, net of tip refunds and of "
            "disputed and reversed tips."
        )
    )
    notes: str
    plan_id: str | None
    visit_index: Count
    plan_ends_on: date | None = field(
        metadata=schema(
            description="The plan's last date once it was ended (a cancel with scope "
            "this_and_future or plan_after), on the visits that cancel changed: every visit "
            "it cancelled, and the plan's last visit made so far when the end left that one "
            "scheduled. Null on the visits before the end, which it left alone, and on a "
            "plan not ended. An end only ever moves "
            "earlier, and a visit cancelled by an earlier end keeps the date it was given: "
            "the plan's end is the earliest planEndsOn among its visits."
        )
    )
    group_id: str | None
    quote_id: str | None
    tracking_url: Url
    created_at: datetime
    updated_at: datetime
    completed_at: datetime | None
    cancelled_at: datetime | None
    cancel_reason: str | None
    form_id: str | None = field(
        metadata=schema(description="The booking form it was made through; null: none.")
    )
    answers: tuple[AnswerView, ...] = field(
        metadata=schema(description="Intake answers given on the booking form; [] for none.")
    )


@frozen
class ActivityEntryView:
    """One event in a booking's history."""

    at: datetime
    kind: ActivityKind
    details: dict[str, DetailValue]


@frozen
class BookingWithActivityView(BookingView):
    """A booking with its activity log, oldest event first."""

    activity: tuple[ActivityEntryView, ...]


@frozen
class CreatedBookingView(BookingWithActivityView):
    """The first booking made, with every booking made (plan visits, days, dates)."""

    bookings: tuple[BookingView, ...]


@frozen
class CancelledBookingsView:
    """Every booking the cancel changed."""

    data: tuple[BookingView, ...]


@frozen
class RescheduledBookingsView:
    """Every booking the reschedule moved, with its activity log."""

    data: tuple[BookingWithActivityView, ...]


def slot_view(s: Slot, ctx: RenderContext) -> SlotView:
    """The view of an open start."""
    return SlotView(
        start_iso=ctx.time(s.start),
        end_iso=ctx.time(s.end),
        crew_ids=s.crew_ids,
        drive_minutes=s.drive_minutes,
    )


def availability_view(slots: Sequence[Slot], ctx: RenderContext) -> AvailabilityView:
    """``GET /availability``: the slots in the order given (best first)."""
    return AvailabilityView(data=tuple(slot_view(s, ctx) for s in slots))


def booking_view(b: Booking, ctx: RenderContext, totals: LedgerTotals) -> BookingView:
    """The view of a booking, as lists show it, with its ledger's ``totals``."""
    return copied(
        BookingView,
        b,
        start_iso=ctx.time(b.start),
        end_iso=ctx.time(b.end),
        address=address_view(b.address),
        price=price_breakdown_view(b.price),
        paid_cents=totals.paid_cents,
        tips_cents=totals.tips_cents,
        tracking_url=ctx.tracking_url(b.tracking_token),
        created_at=ctx.time(b.created_at),
        updated_at=ctx.time(b.updated_at),
        completed_at=ctx.time(b.completed_at),
        cancelled_at=ctx.time(b.cancelled_at),
        answers=answer_views(b.answers),
    )


def activity_entry_view(entry: ActivityEntry, ctx: RenderContext) -> ActivityEntryView:
    """The view of one event of a booking's activity log."""
    return ActivityEntryView(at=ctx.time(entry.at), kind=entry.kind, details=entry.details)


def booking_with_activity_view(
    b: Booking, ctx: RenderContext, totals: LedgerTotals
) -> BookingWithActivityView:
    """The view of a booking fetched alone or moved: with its activity log."""
    activity = tuple(activity_entry_view(e, ctx) for e in b.activity)
    return extend(booking_view(b, ctx, totals), BookingWithActivityView, activity=activity)


def created_booking_view(made: Sequence[Booking], ctx: RenderContext) -> CreatedBookingView:
    """``POST /bookings``: the first booking made, with every booking made (no money has
    come in on a booking just made: its totals are 0, read from no ledger)."""
    first = booking_with_activity_view(made[0], ctx, NO_MONEY)
    everything = tuple(booking_view(b, ctx, NO_MONEY) for b in made)
    return extend(first, CreatedBookingView, bookings=everything)


def cancelled_bookings_view(
    changed: Sequence[Booking], ctx: RenderContext, totals: Mapping[str, LedgerTotals]
) -> CancelledBookingsView:
    """``POST /bookings/{id}/cancel``: every booking the cancel changed (``totals`` by id)."""
    return CancelledBookingsView(data=tuple(booking_view(b, ctx, totals[b.id]) for b in changed))


def rescheduled_bookings_view(
    moved: Sequence[Booking], ctx: RenderContext, totals: Mapping[str, LedgerTotals]
) -> RescheduledBookingsView:
    """``POST /bookings/{id}/reschedule``: every booking moved, with its activity log
    (``totals`` by id)."""
    return RescheduledBookingsView(
        data=tuple(booking_with_activity_view(b, ctx, totals[b.id]) for b in moved)
    )
