"""Quote use cases: create, act on (send, accept, reject, pause, resume) and claim a convert.

Each runs in one unit of work and saves against the version it read, so a refused
action writes nothing and two requests racing on one quote cannot both change it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from datetime import datetime

from attrs import frozen

from booking_core import quotes
from booking_core.ports import Clock, UnitOfWork
from booking_core.pricing import Selection, price
from booking_core.quotes import ManualLine, Quote
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


def create_quote(cmd: CreateQuote, *, uow: UnitOfWork, clock: Clock) -> Quote:
    """Price and store a new draft; with ``send_now`` it is sent in the same transaction."""
    with uow:
        at = clock.now()
        # Referenced records must be the company's own: another company's id is not found.
        if cmd.customer_id is not None:
            uow.customers.get(cmd.company_id, cmd.customer_id)
        if cmd.lead_id is not None:
            uow.leads.get(cmd.company_id, cmd.lead_id)
        breakdown = None
        if cmd.selection is not None:
            catalog = uow.catalogs.get(cmd.company_id)
            # The quote is judged by the coupon's limits as they stand today.
            usage = coupon_usage(uow, catalog, cmd.selection, cmd.customer_id)
            breakdown = price(catalog, cmd.selection, at=at, coupon_usage=usage)
        quote = quotes.create_quote(
            company_id=cmd.company_id,
            at=at,
            customer_id=cmd.customer_id,
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
        uow.commit()
    return quote


def act_on_quote(cmd: ActOnQuote, *, uow: UnitOfWork, clock: Clock) -> Quote:
    """Send, accept, reject, pause or resume a quote; a refusal writes nothing."""
    transition = _TRANSITIONS[cmd.action]
    with uow:
        current = uow.quotes.get(cmd.company_id, cmd.quote_id)
        changed = transition(current, clock.now())
        if changed is not current:  # a no-op (pausing a paused quote) is not a change
            uow.quotes.save(changed, expected_version=current.version)
            uow.commit()
    return changed
