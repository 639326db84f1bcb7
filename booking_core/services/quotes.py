"""Quote use cases: create, act on (send, accept, reject, pause, resume), and store the
expiry of sent quotes past their date (``expire_due_quotes``, for a periodic sweep).

Each runs in one unit of work and saves against the version it read, so a refused
action writes nothing and two requests racing on one quote cannot both change it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from datetime import datetime

from attrs import frozen

from booking_core import quotes
from booking_core.errors import ConflictError
from booking_core.events import EventType, event, events_for
from booking_core.paging import MAX_LIMIT, PageRequest
from booking_core.ports import Clock, UnitOfWork
from booking_core.pricing import Selection, price_plan
from booking_core.quotes import ManualLine, Quote, QuoteStatus
from booking_core.services.customers import held_survivor
from booking_core.services.pricing import coupon_usage


@frozen(kw_only=True)
class CreateQuote:
    """Create a quote priced from ``selection`` or by hand from ``manual_lines``."""

    company_id: str
    customer_id: str | None = None
    lead_id: str | None = None
    selection: Selection | None = None
    manual_lines: tuple[ManualLine, ...] = ()
    expires_at: datetime | None = None
    message: str = ""
    note: str = ""
    send_now: bool = False


class QuoteAction(enum.StrEnum):
    """The actions on a quote other than convert, which has its own use case."""

    SEND = "send"
    ACCEPT = "accept"
    REJECT = "reject"
    PAUSE = "pause"
    RESUME = "resume"


@frozen(kw_only=True)
class ActOnQuote:
    """Apply ``action`` to one quote of a company."""

    company_id: str
    quote_id: str
    action: QuoteAction


_TRANSITIONS: dict[QuoteAction, Callable[[Quote, datetime], Quote]] = {
    QuoteAction.SEND: quotes.send,
    QuoteAction.ACCEPT: quotes.accept,
    QuoteAction.REJECT: quotes.reject,
    QuoteAction.PAUSE: quotes.pause,
    QuoteAction.RESUME: quotes.resume,
}

_EVENTS: dict[QuoteAction, EventType] = {
    QuoteAction.SEND: EventType.QUOTE_SENT,
    QuoteAction.ACCEPT: EventType.QUOTE_ACCEPTED,
    QuoteAction.REJECT: EventType.QUOTE_DECLINED,
}
"""The event each action records; pausing and resuming follow-ups record none."""


def create_quote(cmd: CreateQuote, *, uow: UnitOfWork, clock: Clock) -> Quote:
    """Price and store a new draft; with ``send_now`` it is sent in the same transaction
    (and records ``quote.sent``; a draft records nothing)."""
    with uow:
        at = clock.now()
        # Referenced records must be the company's own: another company's id is not found.
        # A merged customer's quote is its survivor's, as its bookings are.
        customer_id = cmd.customer_id
        if customer_id is not None:
            # Held, as a booking's: a merge at the same moment re-files this quote too.
            customer_id = held_survivor(uow, cmd.company_id, customer_id).id
        if cmd.lead_id is not None:
            uow.leads.get(cmd.company_id, cmd.lead_id)
        breakdown = None
        if cmd.selection is not None:
            catalog = uow.catalogs.get(cmd.company_id)
            # The quote is judged by the coupon's limits as they stand today, and by its
            # rules on a plan's later visits too, as POST /quote and a booking judge them
            # (a minimum subtotal only the first visit reaches is refused).
            usage = coupon_usage(uow, catalog, cmd.selection, customer_id)
            breakdown = price_plan(catalog, cmd.selection, at=at, coupon_usage=usage).first_visit
        quote = quotes.create_quote(
            company_id=cmd.company_id,
            at=at,
            customer_id=customer_id,
            lead_id=cmd.lead_id,
            selection=cmd.selection,
            breakdown=breakdown,
            manual_lines=cmd.manual_lines,
            expires_at=cmd.expires_at,
            message=cmd.message,
            note=cmd.note,
        )
        if cmd.send_now:
            quote = quotes.send(quote, at)
        uow.quotes.add(quote)
        if cmd.send_now:
            uow.outbox.add(event(EventType.QUOTE_SENT, quote, company_id=quote.company_id, at=at))
        uow.commit()
    return quote


def act_on_quote(cmd: ActOnQuote, *, uow: UnitOfWork, clock: Clock) -> Quote:
    """Send, accept, reject, pause or resume a quote; a refusal writes nothing. Sending
    records ``quote.sent``, accepting ``quote.accepted``, rejecting ``quote.declined``."""
    transition = _TRANSITIONS[cmd.action]
    at = clock.now()
    with uow:
        current = uow.quotes.get(cmd.company_id, cmd.quote_id)
        changed = transition(current, at)
        if changed is not current:  # a no-op (pausing a paused quote) is not a change
            uow.quotes.save(changed, expected_version=current.version)
            kind = _EVENTS.get(cmd.action)
            if kind is not None:
                uow.outbox.add(event(kind, changed, company_id=changed.company_id, at=at))
            uow.commit()
    return changed


def expire_due_quotes(
    company_id: str | None, *, uow_factory: Callable[[], UnitOfWork], clock: Clock
) -> list[Quote]:
    """Store the expiry of every sent quote whose ``expires_at`` has come, for one company
    or (``None``) every company, and record ``quote.expired`` for each; returns them.

    Until this runs, such a quote already reads as expired (``quotes.effective_status``)
    and can no longer be answered; this makes the expiry a stored change that webhooks
    hear of. Each company is one unit of work. A quote another sweeper expired (or that
    changed) meanwhile is skipped; calling it again expires nothing twice.
    """
    if company_id is None:
        with uow_factory() as uow:
            company_ids = [company.id for company in uow.companies.list_all()]
    else:
        company_ids = [company_id]
    expired: list[Quote] = []
    for one in company_ids:
        expired += _expire_due(one, uow_factory(), clock.now())
    return expired


def _expire_due(company_id: str, uow: UnitOfWork, at: datetime) -> list[Quote]:
    """Expire the company's lapsed sent quotes in one unit of work."""
    expired: list[Quote] = []
    with uow:
        after = None
        while True:
            # Stored ``sent``: the quotes still live, never the growing pile of stored
            # expiries that the status as of ``at`` would list too.
            page = uow.quotes.list(
                company_id, PageRequest(limit=MAX_LIMIT, after=after), status=QuoteStatus.SENT
            )
            for quote in page.items:
                if quotes.effective_status(quote, at) is not QuoteStatus.EXPIRED:
                    continue
                done = quotes.expire(quote, at)
                try:
                    uow.quotes.save(done, expected_version=quote.version)
                except ConflictError:
                    continue  # changed meanwhile: a sweeper beside this one expired it
                expired.append(done)
            if not page.has_more:
                break
            after = page.next_after
        uow.outbox.add_all(events_for(EventType.QUOTE_EXPIRED, expired, at=at))
        uow.commit()
    return expired
