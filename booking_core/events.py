"""Domain events: what happened to a company's records, as frozen values.

A use case that changes something a company cares about records an ``Event`` on its
unit of work (``uow.outbox.add``, or ``add_all`` for several), in the same transaction as
the change and before it commits: a change that rolls back emits nothing, and a change
that commits is never without its event. Which use case records which event is listed in
docs/webhooks.md ("Which change records which event"). The webhook worker later renders
each event's ``subject`` exactly as the API renders that resource and delivers it to the
endpoints subscribed to its type.

The catalogue (``EventType``) is documented in docs/webhooks.md and listed under the
OpenAPI document's top-level ``webhooks`` key.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum

from attrs import frozen

from booking_core.bookings import Booking
from booking_core.customers import Customer, CustomerMerge
from booking_core.ids import new_id
from booking_core.leads import Lead
from booking_core.ledger import Kind, PaymentEntry, fires_payment_refunded, is_dispute
from booking_core.quotes import Quote
from booking_core.waitlist import WaitlistEntry


class EventType(StrEnum):
    """Every event type a webhook endpoint can subscribe to."""

    BOOKING_CREATED = "booking.created"
    BOOKING_RESCHEDULED = "booking.rescheduled"
    BOOKING_CANCELLED = "booking.cancelled"
    BOOKING_STARTED = "booking.started"
    BOOKING_START_UNDONE = "booking.start_undone"
    BOOKING_COMPLETED = "booking.completed"
    CUSTOMER_CREATED = "customer.created"
    CUSTOMER_UPDATED = "customer.updated"
    CUSTOMER_MERGED = "customer.merged"
    LEAD_CREATED = "lead.created"
    LEAD_UPDATED = "lead.updated"
    QUOTE_SENT = "quote.sent"
    QUOTE_ACCEPTED = "quote.accepted"
    QUOTE_DECLINED = "quote.declined"
    QUOTE_EXPIRED = "quote.expired"
    QUOTE_CONVERTED = "quote.converted"
    PAYMENT_RECORDED = "payment.recorded"
    PAYMENT_REVERSED = "payment.reversed"
    PAYMENT_REFUNDED = "payment.refunded"
    PAYMENT_DISPUTED = "payment.disputed"
    WAITLIST_CREATED = "waitlist.created"
    WEBHOOK_TEST = "webhook.test"


DESCRIPTIONS: dict[EventType, str] = {
    EventType.BOOKING_CREATED: "A booking was made (one event per booking; a plan's visits each).",
    EventType.BOOKING_RESCHEDULED: "A booking moved to another time or crew.",
    EventType.BOOKING_CANCELLED: "A booking was cancelled.",
    EventType.BOOKING_STARTED: "The crew started the job.",
    EventType.BOOKING_START_UNDONE: (
        "A start made by mistake was taken back: the job is scheduled again."
    ),
    EventType.BOOKING_COMPLETED: "The crew completed the job.",
    EventType.CUSTOMER_CREATED: "A customer record was created.",
    EventType.CUSTOMER_UPDATED: (
        "A customer record changed: its contact details or saved addresses, or it gained"
        " the history and addresses of a record merged into it."
    ),
    EventType.CUSTOMER_MERGED: (
        "A customer record was merged into another (data: survivorId, mergedId); its"
        " bookings, quotes, payments and coupon redemptions are now the survivor's."
    ),
    EventType.LEAD_CREATED: "A lead was created.",
    EventType.LEAD_UPDATED: "A lead changed (stage, owner, follow-up, or a folded enquiry).",
    EventType.QUOTE_SENT: "A quote was sent to its customer.",
    EventType.QUOTE_ACCEPTED: "A sent quote was accepted.",
    EventType.QUOTE_DECLINED: "A sent quote was declined.",
    EventType.QUOTE_EXPIRED: "A sent quote expired unanswered.",
    EventType.QUOTE_CONVERTED: "A quote was converted into a booking.",
    EventType.PAYMENT_RECORDED: "Money was received: a payment or a tip, by hand or by card.",
    EventType.PAYMENT_REVERSED: (
        "An entry was reversed: a hand entry by hand, or disputed job money the bank returned."
    ),
    EventType.PAYMENT_REFUNDED: (
        "A refund of job money (hand, service or processor dashboard; also on a"
        " disconnected processor account), or a refund of a card tip (kind TIP_REFUND)."
    ),
    EventType.PAYMENT_DISPUTED: "A cardholder disputed card money.",
    EventType.WAITLIST_CREATED: (
        "A customer asked, on the public API, for a date or range with no opening."
    ),
    EventType.WEBHOOK_TEST: "A test event asked for with POST /api/v1/webhooks/{id}/test.",
}
"""One line per event type, for docs/webhooks.md and the OpenAPI ``webhooks`` key."""

Subject = Booking | Customer | CustomerMerge | Lead | Quote | PaymentEntry | WaitlistEntry | None
"""The resource an event carries; None for ``webhook.test``."""


@frozen(kw_only=True)
class Event:
    """One thing that happened to a company's records."""

    id: str
    company_id: str
    type: EventType
    created_at: datetime
    subject: Subject

    def __attrs_post_init__(self) -> None:
        if self.created_at.tzinfo is None:
            raise ValueError("an event's created_at must be timezone-aware")


def event(type: EventType, subject: Subject, *, company_id: str, at: datetime) -> Event:
    """A new event with a fresh ``evt_`` id."""
    return Event(id=new_id("evt"), company_id=company_id, type=type, created_at=at, subject=subject)


def events_for(
    type: EventType, subjects: Iterable[Booking | Customer | Lead | Quote], *, at: datetime
) -> list[Event]:
    """One new event of ``type`` per subject, each for the subject's own company (for
    ``uow.outbox.add_all``: the visits of a plan, the bookings a reschedule moved)."""
    return [event(type, one, company_id=one.company_id, at=at) for one in subjects]


def payment_event(entry: PaymentEntry, *, at: datetime) -> Event | None:
    """The event a new ledger entry fires, if any.

    ``payment.refunded`` for every ``REFUND`` (hand, service or dashboard, connected or
    not) and every ``TIP_REFUND`` that gives a tip back (SPEC.md section 6; the ledger's
    ``fires_payment_refunded`` decides); ``payment.disputed`` for a dispute;
    ``payment.reversed`` for a ``REVERSAL``; ``payment.recorded`` for a ``PAYMENT`` or
    ``TIP``. A disputed tip, written as ``TIP_REFUND``, is ``payment.disputed``."""
    if fires_payment_refunded(entry):
        kind = EventType.PAYMENT_REFUNDED
    elif entry.kind is Kind.DISPUTE or is_dispute(entry):
        kind = EventType.PAYMENT_DISPUTED
    elif entry.kind is Kind.REVERSAL:
        kind = EventType.PAYMENT_REVERSED
    elif entry.kind in (Kind.PAYMENT, Kind.TIP):
        kind = EventType.PAYMENT_RECORDED
    else:
        return None
    return event(kind, entry, company_id=entry.company_id, at=at)
