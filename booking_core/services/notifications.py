"""Email notices: queueing messages with their cause, reminders, and the send step.

Three steps, each run by the worker (``entrypoints.worker``):

- ``mail_events`` turns outbox events into messages: the outbox's second consumer, with
  its own marker (``claim_unmailed`` / ``mark_mailed``), never waiting for webhooks. Each
  event type with a notice has a handler in ``EVENT_NOTICES``; the rest are marked and
  skipped. The event was written in the transaction of its change, so a change that
  commits is never without its notice, and one that rolls back has none.
- ``queue_due_notices`` queues what time brings: a reminder ``reminder_hours`` before
  each visit.
- ``send_due`` claims the messages that are due (leased for ``SEND_LEASE``), hands each
  to the mailer outside any transaction, and stores the outcome: sent, retried after the
  next delay of ``RETRY_DELAYS``, or failed.

Every message has a ``dedupe_key`` naming its cause, unique per company: an event
claimed twice (a worker died before committing) or a reminder swept twice queues once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from email.utils import formataddr
from zoneinfo import ZoneInfo

import attrs
from attrs import define, frozen

from booking_core import plans, quotes
from booking_core.bookings import ActivityKind, Booking, BookingStatus, tracking_url
from booking_core.clock import zone_abbreviation
from booking_core.companies import Company
from booking_core.customers import Customer, merge_survivor
from booking_core.errors import NotFoundError, RuleViolation
from booking_core.events import Event, EventType
from booking_core.leads import Lead
from booking_core.notifications import (
    SEND_LEASE,
    MailRejected,
    Message,
    MessageKind,
    MessageStatus,
    after_failure,
    after_success,
    new_message,
    one_line,
)
from booking_core.paging import Page, PageRequest
from booking_core.plans import CancelScope, RescheduleScope
from booking_core.ports import Clock, Composer, Mailer, UnitOfWork
from booking_core.quotes import Quote, QuoteStatus, effective_status
from booking_core.services.follow_ups import quote_recipient, quote_sent_message, staff_address
from booking_core.services.self_service import can_change, changes_close_at

MAIL_BATCH = 100
"""Events one ``mail_events`` step claims."""
SEND_BATCH = 50
"""Messages one ``send_due`` step claims."""


@frozen
class Notices:
    """What turning a cause into a message needs: the unit of work it is queued in, the
    composer, the public address links start with, and the instant."""

    uow: UnitOfWork
    composer: Composer
    base_url: str
    at: datetime
    order: int = 0
    """The cause's place in its batch (``new_message``'s ``order``)."""

    def queue(
        self,
        company: Company,
        kind: MessageKind,
        *,
        to: str,
        context: Mapping[str, object],
        dedupe_key: str,
        subject_id: str | None = None,
        reply_to: str | None = None,
        to_office: bool = False,
    ) -> Message | None:
        """Compose and queue one message (due now); None when its cause already queued
        one. The reply-to is ``reply_to``, else (not ``to_office``) the company's
        ``notify_email``."""
        return queue_message(
            self.uow,
            self.composer,
            company,
            kind,
            to=to,
            context=context,
            dedupe_key=dedupe_key,
            subject_id=subject_id,
            at=self.at,
            order=self.order,
            reply_to=reply_to,
            to_office=to_office,
        )


def queue_message(
    uow: UnitOfWork,
    composer: Composer,
    company: Company,
    kind: MessageKind,
    *,
    to: str,
    context: Mapping[str, object],
    dedupe_key: str,
    subject_id: str | None = None,
    at: datetime,
    order: int = 0,
    reply_to: str | None = None,
    to_office: bool = False,
) -> Message | None:
    """Compose ``kind`` for ``company`` with ``context`` and queue it in ``uow`` (the
    caller's open unit, which commits), due at ``at``; None, queueing nothing, when the
    company already has a message for ``dedupe_key``. ``ValueError`` for an address with
    a line break (it would be a header). ``reply_to``: where replies go, when not to the
    company's ``notify_email`` (it is then the templates' ``reply_to`` too);
    ``to_office``: the message is to the company's own people (the templates are told,
    and replies never go to the company's own address)."""
    if reply_to or to_office:  # else the composer gives the company's notify_email
        context = {**context, "reply_to": reply_to or None, "to_office": to_office}
    message = new_message(
        company,
        kind,
        to=to,
        composed=composer.compose(kind, company, context),
        dedupe_key=dedupe_key,
        subject_id=subject_id,
        at=at,
        order=order,
        reply_to=reply_to,
        to_office=to_office,
    )
    return message if uow.messages.add(message) else None


# --- Booking notices ---------------------------------------------------------------------


def service_name(booking: Booking) -> str:
    """What the booking is called (``Booking.service_label``)."""
    return booking.service_label


def when(instant: datetime, zone: ZoneInfo) -> str:
    """``Tuesday, March 3, 2026 at 9:00 AM EST`` in ``zone`` (the company's timezone, also
    for a booking made before the company changed it), always with the zone's abbreviation
    at that instant, so that a customer reading the email elsewhere (booking for a parent
    in another state, say) cannot take it for their own clock, and the night a clock falls
    back (``1:30 AM EDT``, ``1:30 AM EST``) names one instant."""
    local = instant.astimezone(zone)
    hour = local.hour % 12 or 12
    label = zone_abbreviation(local)
    return (
        f"{local:%A}, {local:%B} {local.day}, {local.year} at"
        f" {hour}:{local:%M} {'AM' if local.hour < 12 else 'PM'} {label}"
    ).rstrip()


def booking_context(
    booking: Booking, customer: Customer, base_url: str, company: Company
) -> dict[str, object]:
    """What a booking's templates are given (documented in docs/notifications.md)."""
    address = booking.address
    street = ", ".join(p for p in (address.line1, address.line2) if p)
    day_starts = [start for start, _ in booking.day_blocks()]
    zone = ZoneInfo(company.timezone)
    return {
        "customer_name": customer.name,
        "booking_code": booking.code,
        "service": service_name(booking),
        "starts": when(booking.start, zone),
        "address": f"{street}, {address.city}, {address.state} {address.zip}",
        "tracking_url": tracking_url(base_url, company.slug, booking.tracking_token),
        "portal_url": f"{base_url.rstrip('/')}/{company.slug}/portal",
        "total_cents": booking.price.total_cents,
        "is_plan": booking.plan_id is not None,
        "days": booking.days,
        # Each day's start, when a multi-day job's days do not all start at one wall
        # clock time (a day across a DST change); else none.
        "day_starts": (
            [when(start, zone) for start in day_starts]
            if len({s.astimezone(zone).time() for s in day_starts}) > 1
            else []
        ),
    }


def change_context(company: Company, booking: Booking, at: datetime) -> dict[str, object]:
    """Whether the customer may still change the visit online at ``at`` (the tracking
    page's rule, ``self_service.can_change``), and until when."""
    return {
        "can_change": can_change(company, booking, at),
        "changes_close": when(changes_close_at(company, booking), ZoneInfo(company.timezone)),
    }


def _customer(uow: UnitOfWork, company_id: str, customer_id: str) -> Customer | None:
    """The customer to write to (a merged record's survivor); None if there is none."""
    try:
        customer = merge_survivor(
            uow.customers.get(company_id, customer_id),
            lambda other: uow.customers.get(company_id, other),
        )
    except (NotFoundError, RuleViolation):  # gone, or a chain past MAX_MERGE_HOPS
        return None
    return customer if customer.email.strip() else None


def _last_detail(booking: Booking, kind: ActivityKind) -> Mapping[str, object]:
    found = [a for a in booking.activity if a.kind is kind]
    return found[-1].details if found else {}


def _change_key(booking: Booking, event: Event) -> str:
    """One change: the booking (or, for bookings changed together in one unit of work,
    their plan or multi-date request) and the instant of the change. The visits of a
    plan moved or cancelled together share it and get one notice; each later change of
    a booking has its own."""
    together = booking.plan_id or booking.group_id or booking.id
    return f"{together}:{event.created_at.isoformat()}"


def _to_customer(
    notices: Notices,
    company: Company,
    booking: Booking,
    kind: MessageKind,
    *,
    dedupe_key: str,
    extra: Mapping[str, object],
) -> Message | None:
    """Queue ``kind`` about ``booking`` to its customer (a merged record's survivor), with
    the booking's context and ``extra``; None when there is no one to write to."""
    customer = _customer(notices.uow, company.id, booking.customer_id)
    if customer is None:
        return None
    context = booking_context(booking, customer, notices.base_url, company)
    context.update(change_context(company, booking, notices.at))
    context.update(extra)
    return notices.queue(
        company,
        kind,
        to=customer.email,
        context=context,
        dedupe_key=dedupe_key,
        subject_id=booking.id,
    )


def booking_created(notices: Notices, event: Event) -> Message | None:
    """The confirmation: one per booking, or one per plan or multi-date request (the
    first visit named, the rest listed in the message). Written from the visits as they
    are when it is written: none once every one of them was cancelled (or has begun) in
    the meantime, so a visit cancelled before its confirmation went out is not
    confirmed after its cancellation notice."""
    booking = event.subject
    if not isinstance(booking, Booking) or booking.status is not BookingStatus.SCHEDULED:
        return None
    if booking.start <= notices.at:
        return None
    company = notices.uow.companies.get(event.company_id)
    together = booking.plan_id or booking.group_id
    if booking.plan_id is not None:
        visits = notices.uow.bookings.of_plan(company.id, booking.plan_id)
    elif booking.group_id is not None:
        visits = notices.uow.bookings.of_group(company.id, booking.group_id)
    else:
        visits = [notices.uow.bookings.get(company.id, booking.id)]
    upcoming = sorted(
        (v for v in visits if v.status is BookingStatus.SCHEDULED and v.start > notices.at),
        key=lambda v: (v.start, v.id),
    )
    if not upcoming:
        return None
    return _to_customer(
        notices,
        company,
        upcoming[0],
        MessageKind.BOOKING_CONFIRMED,
        dedupe_key=f"booking.confirmed:{together or booking.id}",
        extra=confirmation_context(upcoming, ZoneInfo(company.timezone)),
    )


LISTED_VISITS = 12
"""Visits a confirmation lists by date; the rest are counted (``more_visits``)."""


def confirmation_context(upcoming: Sequence[Booking], zone: ZoneInfo) -> dict[str, object]:
    """What ``booking.confirmed`` adds for ``upcoming`` (the visits still to come, first
    first): the dates listed (in ``zone``, the company's timezone) and each one's total,
    and the totals to the cent. A plan's first visit may cost more than the later ones
    (first-visit extras), so it has ``first_visit_cents`` and ``later_visit_cents``;
    several dates booked together have
    ``total_cents`` for all of them (a single visit's stays its own)."""
    first, later = upcoming[0], upcoming[1:]
    later_totals = {v.price.total_cents for v in later}
    context: dict[str, object] = {
        "visits": [when(v.start, zone) for v in upcoming[:LISTED_VISITS]],
        "visit_totals": [v.price.total_cents for v in upcoming[:LISTED_VISITS]],
        "more_visits": max(0, len(upcoming) - LISTED_VISITS),
        "first_visit_cents": first.price.total_cents,
        "later_visit_cents": later[0].price.total_cents if later else 0,
        "later_visits_vary": len(later_totals) > 1,
        "all_visits_cents": sum(v.price.total_cents for v in upcoming),
    }
    if first.plan_id is None and later:
        context["total_cents"] = context["all_visits_cents"]
    return context


def booking_rescheduled(notices: Notices, event: Event) -> Message | None:
    """The reschedule notice: not for a change of crew alone; one per move of several
    visits of a plan (the visit the customer moved named); none for a visit cancelled
    (or begun) since, whose cancellation notice says what counts."""
    booking = event.subject
    if not isinstance(booking, Booking) or booking.status is not BookingStatus.SCHEDULED:
        return None
    now = notices.uow.bookings.get(event.company_id, booking.id)
    if now.status is not BookingStatus.SCHEDULED:
        return None
    moved = _last_detail(booking, ActivityKind.RESCHEDULED)
    if moved.get("from") == moved.get("to") or booking.start <= notices.at:
        return None  # another crew only, or the visit has begun
    previous = moved.get("from")
    company = notices.uow.companies.get(event.company_id)
    return _to_customer(
        notices,
        company,
        booking,
        MessageKind.BOOKING_RESCHEDULED,
        dedupe_key=f"booking.rescheduled:{_change_key(booking, event)}",
        extra={
            "previous_starts": (
                when(datetime.fromisoformat(previous), ZoneInfo(company.timezone))
                if isinstance(previous, str)
                else ""
            ),
            "later_visits_moved": moved.get("scope") == RescheduleScope.THIS_AND_FUTURE,
            # The visit's date fees followed it (plans.moved_price): the old total, if changed.
            "previous_total_cents": moved.get("fromTotalCents"),
        },
    )


def booking_cancelled(notices: Notices, event: Event) -> Message | None:
    """The cancellation notice: one per cancellation (the visits of a plan cancelled
    together get one, naming the earliest of them and saying the later ones are
    cancelled too)."""
    booking = event.subject
    if not isinstance(booking, Booking) or booking.start <= notices.at:
        return None
    cancelled = _last_detail(booking, ActivityKind.CANCELLED)
    if cancelled.get("scope") not in (None, CancelScope.THIS) and booking.plan_id:
        booking = _first_cancelled_with(notices, booking)
    kept = None  # one visit of a plan cancelled alone: the plan goes on
    if plans.cancelled_alone(booking) and booking.plan_id:
        kept = plans.next_visit(
            notices.uow.bookings.of_plan(booking.company_id, booking.plan_id), notices.at
        )
    company = notices.uow.companies.get(event.company_id)
    return _to_customer(
        notices,
        company,
        booking,
        MessageKind.BOOKING_CANCELLED,
        dedupe_key=f"booking.cancelled:{_change_key(booking, event)}",
        extra={
            "later_visits_cancelled": cancelled.get("scope") not in (None, CancelScope.THIS),
            "next_visit": when(kept.start, ZoneInfo(company.timezone)) if kept else "",
            "reason": booking.cancel_reason or "",
        },
    )


def _first_cancelled_with(notices: Notices, booking: Booking) -> Booking:
    """The earliest visit of ``booking``'s plan cancelled in the same change as it (the
    same instant): the one a notice of that change names, whichever visit's event comes
    first (each carries the change's one notice)."""
    when = _last_at(booking, ActivityKind.CANCELLED)
    together = [
        visit
        for visit in notices.uow.bookings.of_plan(booking.company_id, booking.plan_id or "")
        if visit.status is BookingStatus.CANCELLED
        and _last_at(visit, ActivityKind.CANCELLED) == when
    ]
    return min(together, key=lambda visit: (visit.start, visit.id), default=booking)


def _last_at(booking: Booking, kind: ActivityKind) -> datetime | None:
    found = [a.at for a in booking.activity if a.kind is kind]
    return found[-1] if found else None


def quote_sent(notices: Notices, event: Event) -> Message | None:
    """The quote with its page link, to its customer (or lead): only while it is still
    sent and in date (one answered or booked meanwhile needs no email)."""
    quote = event.subject
    if not isinstance(quote, Quote):
        return None
    try:
        current = notices.uow.quotes.get(event.company_id, quote.id)
    except NotFoundError:
        return None
    if effective_status(current, notices.at) is not QuoteStatus.SENT:
        return None
    company = notices.uow.companies.get(event.company_id)
    message = quote_sent_message(
        notices.uow,
        company,
        current,
        at=notices.at,
        composer=notices.composer,
        base_url=notices.base_url,
    )
    return message if message is not None and notices.uow.messages.add(message) else None


def office_customer_change(notices: Notices, event: Event) -> Message | None:
    """To the company's ``notify_email`` (none without one): a visit its customer moved
    or cancelled on their own page (the tracking page, or the portal's links to it),
    which no one in the office did and so no one there knows of. One per change."""
    booking = event.subject
    if not isinstance(booking, Booking):
        return None
    cancelled = event.type is EventType.BOOKING_CANCELLED
    change = _last_detail(
        booking, ActivityKind.CANCELLED if cancelled else ActivityKind.RESCHEDULED
    )
    if change.get("by") != "customer":
        return None
    office = _office(notices, event)
    if office is None:
        return None
    company, to = office
    customer = _customer(notices.uow, company.id, booking.customer_id)
    if customer is None:
        return None
    previous = change.get("from")
    context = booking_context(booking, customer, notices.base_url, company)
    context.update(
        {
            "change": "cancelled" if cancelled else "moved",
            "previous_starts": (
                when(datetime.fromisoformat(previous), ZoneInfo(company.timezone))
                if isinstance(previous, str)
                else ""
            ),
            "customer_email": customer.email or "",
            "customer_phone": customer.phone or "",
            "admin_url": f"{notices.base_url.rstrip('/')}/admin/bookings/{booking.id}",
            "previous_total_cents": change.get("fromTotalCents"),
        }
    )
    return notices.queue(
        company,
        MessageKind.OFFICE_CUSTOMER_CHANGE,
        to=to,
        context=context,
        dedupe_key=f"office.customer_change:{_change_key(booking, event)}",
        subject_id=booking.id,
        reply_to=customer.email or None,  # a reply writes to the customer
        to_office=True,
    )


def _office(notices: Notices, event: Event) -> tuple[Company, str] | None:
    """The event's company and the address its own notices go to (``notify_email``), or
    None when it has none: the office is then told nothing."""
    company = notices.uow.companies.get(event.company_id)
    to = staff_address(company)
    return None if to is None else (company, to)


def office_new_lead(notices: Notices, event: Event) -> Message | None:
    """To the company's ``notify_email`` (none without one): a new enquiry (a lead made by
    the website or any integration through the API), so that someone answers it without
    watching the API. One per lead; an enquiry folded into an open lead is not news of a
    new one. A reply writes to the lead's email when it gave one."""
    lead = event.subject
    if not isinstance(lead, Lead):
        return None
    office = _office(notices, event)
    if office is None:
        return None
    company, to = office
    service = ""
    if lead.service_id is not None:
        found = notices.uow.catalogs.get(company.id).services_by_id.get(lead.service_id)
        service = found.name if found is not None else ""
    return notices.queue(
        company,
        MessageKind.OFFICE_NEW_LEAD,
        to=to,
        context={
            "lead_name": lead.name,
            "lead_email": lead.email or "",
            "lead_phone": lead.phone_e164 or "",
            "lead_message": lead.message,
            "lead_service": service,
            "lead_source": lead.source,
            "lead_id": lead.id,
        },
        dedupe_key=f"office.new_lead:{lead.id}",
        subject_id=lead.id,
        reply_to=lead.email or None,
        to_office=True,
    )


def office_quote_answered(notices: Notices, event: Event) -> Message | None:
    """To the company's ``notify_email`` (none without one): a sent quote was accepted or
    declined (on the quote page, or through the API), with what to do next: an accepted
    one is booked with ``convert``. One per answer. A reply writes to the customer."""
    quote = event.subject
    if not isinstance(quote, Quote):
        return None
    office = _office(notices, event)
    if office is None:
        return None
    company, to = office
    recipient = quote_recipient(notices.uow, quote)
    email, name = recipient if recipient is not None else ("", "")
    accepted = event.type is EventType.QUOTE_ACCEPTED
    return notices.queue(
        company,
        MessageKind.OFFICE_QUOTE_ANSWERED,
        to=to,
        context={
            "accepted": accepted,
            "quote_id": quote.id,
            "quote_url": quotes.public_url(
                base_url=notices.base_url,
                company_slug=company.slug,
                custom_domain=company.custom_domain,
                token=quote.public_token,
            ),
            "customer_name": name,
            "customer_email": email,
            "total_cents": quote.total_cents,
        },
        dedupe_key=f"office.quote_answered:{quote.id}:{'accepted' if accepted else 'declined'}",
        subject_id=quote.id,
        reply_to=email or None,
        to_office=True,
    )


EventNotice = Callable[[Notices, Event], "Message | None"]

EVENT_NOTICES: dict[EventType, EventNotice] = {
    EventType.BOOKING_CREATED: booking_created,
    EventType.BOOKING_RESCHEDULED: booking_rescheduled,
    EventType.BOOKING_CANCELLED: booking_cancelled,
    EventType.QUOTE_SENT: quote_sent,
}
"""The notice each event type queues to the customer; an event type not listed queues
none."""

OFFICE_NOTICES: dict[EventType, EventNotice] = {
    EventType.BOOKING_RESCHEDULED: office_customer_change,
    EventType.BOOKING_CANCELLED: office_customer_change,
    EventType.LEAD_CREATED: office_new_lead,
    EventType.QUOTE_ACCEPTED: office_quote_answered,
    EventType.QUOTE_DECLINED: office_quote_answered,
}
"""The notice each event type queues to the company itself, beside the customer's."""


def _preferred_first(events: Sequence[Event]) -> list[Event]:
    """Events of one change in the order their notices should be tried: the visit a
    change was made to (no ``targetId``) before the visits moved along with it."""

    def moved_along(event: Event) -> bool:
        subject = event.subject
        if not isinstance(subject, Booking) or not subject.activity:
            return False
        return "targetId" in subject.activity[-1].details

    return sorted(events, key=lambda e: (e.created_at, moved_along(e)))


@frozen
class Mailed:
    """What one ``mail_events`` step did."""

    claimed: int
    queued: int
    failed: tuple[tuple[Event, str], ...] = ()
    """Events whose notice could not be composed (a template error), with why; they are
    marked mailed all the same, so that one bad event does not hold up the rest."""


def mail_events(
    *,
    uow: UnitOfWork,
    composer: Composer,
    clock: Clock,
    base_url: str,
    limit: int = MAIL_BATCH,
) -> Mailed:
    """Claim up to ``limit`` unmailed events, queue their notices and mark them mailed,
    in one transaction."""
    at = clock.now()
    queued = 0
    failed: list[tuple[Event, str]] = []
    with uow:
        events = list(uow.outbox.claim_unmailed(limit))
        for order, one in enumerate(_preferred_first(events)):
            handlers = [
                handler
                for handler in (EVENT_NOTICES.get(one.type), OFFICE_NOTICES.get(one.type))
                if handler is not None
            ]
            # The messages of a batch are due together and go out in the order of their
            # causes (``order``), not in the order of their random ids.
            notices = Notices(uow, composer, base_url, at, order)
            for handler in handlers:
                try:
                    made = handler(notices, one)
                except (ValueError, LookupError) as error:  # a template or data problem
                    failed.append((one, f"{type(error).__name__}: {error}"))
                    continue
                queued += made is not None
        uow.outbox.mark_mailed([one.id for one in events], at)
        uow.commit()
    return Mailed(claimed=len(events), queued=queued, failed=tuple(failed))


# --- Reminders ---------------------------------------------------------------------------


def reminder_key(booking: Booking) -> str:
    """A visit's reminder: once per visit and start (a visit moved is reminded again)."""
    return f"reminder:{booking.id}:{booking.start.isoformat()}"


def queue_reminders(
    *,
    uow_factory: Callable[[], UnitOfWork],
    composer: Composer,
    clock: Clock,
    base_url: str,
) -> int:
    """Queue a reminder for every scheduled visit starting within its company's
    ``reminder_hours`` from now that has none yet; how many were queued.

    A visit booked (or moved) already inside that window is not reminded at its first
    start: its confirmation went out at most ``reminder_hours`` before it."""
    at = clock.now()
    with uow_factory() as uow:
        companies = list(uow.companies.list_all())
    queued = 0
    for company in companies:
        if company.reminder_hours <= 0:
            continue
        window = timedelta(hours=company.reminder_hours)
        with uow_factory() as uow:
            notices = Notices(uow, composer, base_url, at)
            page = PageRequest(limit=200)
            while True:
                found = uow.bookings.list(
                    company.id,
                    page,
                    status=BookingStatus.SCHEDULED,
                    starts_from=at,
                    starts_until=at + window,
                )
                for booking in found.items:
                    queued += _remind(notices, company, booking, window) is not None
                if not found.has_more:
                    break
                page = attrs.evolve(page, after=found.next_after)
            uow.commit()
    return queued


def _remind(
    notices: Notices, company: Company, booking: Booking, window: timedelta
) -> Message | None:
    moved = [a.at for a in booking.activity if a.kind is ActivityKind.RESCHEDULED]
    if max([booking.created_at, *moved]) > booking.start - window:
        return None  # booked or moved inside the window: its email is fresh
    key = reminder_key(booking)
    if any(m.dedupe_key == key for m in notices.uow.messages.for_subject(company.id, booking.id)):
        return None
    return _to_customer(
        notices,
        company,
        booking,
        MessageKind.BOOKING_REMINDER,
        dedupe_key=key,
        extra={"hours": company.reminder_hours},
    )


def queue_due_notices(
    *,
    uow_factory: Callable[[], UnitOfWork],
    composer: Composer,
    clock: Clock,
    base_url: str,
) -> int:
    """Everything time brings, queued: reminders before visits; how many."""
    return queue_reminders(
        uow_factory=uow_factory, composer=composer, clock=clock, base_url=base_url
    )


# --- Sending -----------------------------------------------------------------------------


def sender_address(company: Company, mail_from: str) -> str:
    """The From header: the company's name (one line) at the service's address."""
    return formataddr((one_line(company.name), mail_from))


@define
class SendOutcome:
    """What one ``send_due`` step did; ``tried`` holds each message after its try."""

    claimed: int = 0
    tried: list[Message] = attrs.Factory(list)
    handed_back: int = 0

    @property
    def sent(self) -> int:
        return sum(1 for m in self.tried if m.status is MessageStatus.SENT)

    @property
    def given_up(self) -> int:
        return sum(1 for m in self.tried if m.status is MessageStatus.FAILED)


def send_due(
    *,
    uow_factory: Callable[[], UnitOfWork],
    mailer: Mailer,
    clock: Clock,
    mail_from: str,
    limit: int = SEND_BATCH,
    lease: timedelta = SEND_LEASE,
    stop: Callable[[], bool] = lambda: False,
) -> SendOutcome:
    """Claim up to ``limit`` due messages (leased until ``lease`` from now) and send each.

    The claim commits before any mail goes out, and each outcome is stored in its own unit
    as soon as it is known: a worker that dies mid-send leaves the message leased, and it
    is sent again when the lease ends (with the same ``Message-ID``). A mailer error other
    than ``MailRejected`` counts as a transient failure. On ``stop()`` the messages not
    yet tried are handed back, due at once."""
    now = clock.now()
    with uow_factory() as uow:
        claimed = list(uow.messages.claim_due(now, now + lease, limit))
        companies = {m.company_id: uow.companies.get(m.company_id) for m in claimed}
        uow.commit()
    outcome = SendOutcome(claimed=len(claimed))
    for index, message in enumerate(claimed):
        if stop():
            _hand_back(uow_factory, claimed[index:], clock.now())
            outcome.handed_back = len(claimed) - index
            break
        sender = sender_address(companies[message.company_id], mail_from)
        try:
            mailer.send(message, sender)
        except MailRejected as rejected:
            tried = after_failure(
                message, clock.now(), rejected.reason, permanent=rejected.permanent
            )
        except Exception as error:  # a bug or an unexpected library error: retried
            tried = after_failure(
                message, clock.now(), f"{type(error).__name__}: {error}", permanent=False
            )
        else:
            tried = after_success(message, clock.now())
        with uow_factory() as uow:
            uow.messages.save(tried)
            uow.commit()
        outcome.tried.append(tried)
    return outcome


def _hand_back(
    uow_factory: Callable[[], UnitOfWork], messages: Sequence[Message], at: datetime
) -> None:
    with uow_factory() as uow:
        for message in messages:
            uow.messages.save(attrs.evolve(message, next_attempt_at=at))
        uow.commit()


# --- Reading -----------------------------------------------------------------------------


def list_messages(
    company_id: str, page: PageRequest, *, subject_id: str | None = None, uow: UnitOfWork
) -> Page[Message]:
    """A page of the company's messages, newest first, optionally about one booking,
    quote, lead or customer: what was sent, what waits for a retry and why, what failed."""
    with uow:
        return uow.messages.list(company_id, page, subject_id=subject_id)
