"""Customer portal use cases: ask for a sign-in link by email, claim it, and read what the
portal shows a signed-in customer (their jobs, plans, quotes and receipts).

Asking for a link (``request_portal_link``) makes one only when the email is a customer of
that company; the link is queued to that address as a ``portal.sign_in`` message in the
same transaction (``uow.messages.add``, dedupe key ``portal.sign_in:<link id>``), and the
caller answers the visitor the same either way. A link is claimed once, inside its own
company (``claim_portal_link``). Every read is scoped by the company and the customer
id the session carries; another company's customer is not found, like an unknown one.

Rescheduling and cancelling are the tracking link's own use cases
(``booking_core.services.self_service``); contact details and saved addresses are the
customer use cases (``booking_core.services.customers``).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from attrs import frozen

from booking_core import portal
from booking_core.bookings import Booking, BookingStatus
from booking_core.companies import Company
from booking_core.customers import Customer, email_errors, merge_survivor
from booking_core.errors import NotFoundError, ValidationFailed
from booking_core.ledger import PaymentEntry
from booking_core.notifications import Message, MessageKind, new_message
from booking_core.paging import PageRequest
from booking_core.ports import Clock, Composer, UnitOfWork
from booking_core.quotes import Quote, QuoteStatus
from booking_core.users import SignInRefused

PAST_SHOWN = 20
"""How many past jobs the portal lists (newest first)."""
QUOTES_SHOWN = 50
"""How many quotes the portal lists (newest first; drafts never)."""
OPEN_STATUSES = frozenset({BookingStatus.SCHEDULED, BookingStatus.IN_PROGRESS})


def request_portal_link(
    company_id: str,
    email: str,
    *,
    uow: UnitOfWork,
    clock: Clock,
    composer: Composer,
    base_url: str,
) -> bool:
    """Queue a sign-in link to ``email`` when it is a customer of the company; True when
    one was queued. The caller's answer must not depend on it. ``ValidationFailed`` on
    ``email`` for something that is not an email address (nothing is looked up then)."""
    errors = email_errors(email)
    if errors:
        raise ValidationFailed(errors)
    at = clock.now()
    with uow:
        company = uow.companies.get(company_id)
        found = uow.customers.by_email(company_id, email)
        if found is None:
            return False
        customer = merge_survivor(found, lambda other: uow.customers.get(company_id, other))
        issued = portal.issue_portal_link(customer, at)
        uow.customers.add_portal_link(issued.link)
        uow.messages.add(_sign_in_message(company, found, customer, issued, at, composer, base_url))
        uow.commit()
    return True


def _sign_in_message(
    company: Company,
    found: Customer,
    customer: Customer,
    issued: portal.IssuedPortalLink,
    at: datetime,
    composer: Composer,
    base_url: str,
) -> Message:
    """The email carrying the link, to the address that asked (the record holding it)."""
    url = portal.portal_link_url(base_url, company.slug, issued.token)
    context = {
        "customer_name": customer.name,
        "link_url": url,
        "minutes": int(portal.LINK_LIFETIME.total_seconds() // 60),
    }
    return new_message(
        company,
        MessageKind.PORTAL_SIGN_IN,
        to=found.email,
        composed=composer.compose(MessageKind.PORTAL_SIGN_IN, company, context),
        dedupe_key=f"portal.sign_in:{issued.link.id}",
        subject_id=customer.id,
        at=at,
    )


def claim_portal_link(company_id: str, token: str, *, uow: UnitOfWork, clock: Clock) -> Customer:
    """The customer a link was issued to, claiming the link for good; ``SignInRefused``
    with one message for an unknown, used, expired or another company's link."""
    at = clock.now()
    with uow:
        link = uow.customers.claim_portal_link(company_id, portal.hash_token(token), at)
        if link is None or at >= link.expires_at:
            uow.commit()  # an expired link is claimed too: it could never work again
            raise SignInRefused(portal.LINK_REFUSED)
        try:
            customer = uow.customers.get(company_id, link.customer_id)
        except NotFoundError:
            raise SignInRefused(portal.LINK_REFUSED) from None
        uow.commit()
    return customer


def portal_customer(company_id: str, customer_id: str, *, uow: UnitOfWork) -> Customer | None:
    """The customer a portal session stands for now (the survivor of a merge), or None when
    there is none of that id in the company."""
    with uow:
        try:
            found = uow.customers.get(company_id, customer_id)
            return merge_survivor(found, lambda other: uow.customers.get(company_id, other))
        except NotFoundError:
            return None


@frozen
class PlanSummary:
    """One recurring plan of the customer: its visits still ahead."""

    plan_id: str
    frequency_slug: str
    first: Booking
    """The plan's earliest visit on record (its service, address and terms)."""
    next_visit: Booking | None
    visits_ahead: int


@frozen
class PortalOverview:
    """What the portal's home shows a customer."""

    customer: Customer
    upcoming: tuple[Booking, ...]
    """Scheduled or in progress, soonest first."""
    past: tuple[Booking, ...]
    """Done or cancelled, newest first (at most ``PAST_SHOWN``)."""
    plans: tuple[PlanSummary, ...]
    quotes: tuple[Quote, ...]
    """Sent and later, newest first; never drafts."""
    receipts: tuple[tuple[PaymentEntry, Booking], ...]
    """Ledger entries of the customer's bookings, newest first."""


def portal_overview(
    company_id: str, customer_id: str, *, uow: UnitOfWork, at: datetime
) -> PortalOverview:
    """The customer's jobs, plans, quotes and receipts in the company (``NotFoundError``
    for another company's customer)."""
    with uow:
        customer = uow.customers.get(company_id, customer_id)
        bookings = uow.bookings.for_customer(company_id, customer.id)
        entries = uow.payments.for_bookings(company_id, [b.id for b in bookings])
        quotes = uow.quotes.list(company_id, PageRequest(QUOTES_SHOWN), customer_id=customer.id)
    upcoming = sorted((b for b in bookings if b.status in OPEN_STATUSES), key=_by_start)
    past = sorted((b for b in bookings if b.status not in OPEN_STATUSES), key=_by_start)
    by_id = {b.id: b for b in bookings}
    receipts = sorted(
        ((entry, by_id[booking_id]) for booking_id, rows in entries.items() for entry in rows),
        key=lambda pair: (pair[0].created_at, pair[0].id),
        reverse=True,
    )
    return PortalOverview(
        customer=customer,
        upcoming=tuple(upcoming),
        past=tuple(reversed(past))[:PAST_SHOWN],
        plans=_plans(bookings, at),
        quotes=tuple(q for q in quotes.items if q.status is not QuoteStatus.DRAFT),
        receipts=tuple(receipts),
    )


def _by_start(booking: Booking) -> tuple[datetime, str]:
    return booking.start, booking.id


def _plans(bookings: list[Booking], at: datetime) -> tuple[PlanSummary, ...]:
    visits: dict[str, list[Booking]] = defaultdict(list)
    for booking in bookings:
        if booking.plan_id is not None:
            visits[booking.plan_id].append(booking)
    summaries = []
    for plan_id, mine in visits.items():
        mine.sort(key=lambda b: (b.visit_index, b.id))
        ahead = sorted(
            (b for b in mine if b.status is BookingStatus.SCHEDULED and b.start >= at),
            key=_by_start,
        )
        summaries.append(
            PlanSummary(
                plan_id=plan_id,
                frequency_slug=mine[0].frequency_slug,
                first=mine[0],
                next_visit=ahead[0] if ahead else None,
                visits_ahead=len(ahead),
            )
        )
    summaries.sort(key=lambda s: (s.next_visit is None, _by_start(s.next_visit or s.first)))
    return tuple(summaries)
