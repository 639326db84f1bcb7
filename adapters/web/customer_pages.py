"""The customers pages (``/admin/customers``): the company's customers, newest first, found
by name or email, each with its churn risk and lifetime figures as ``GET /api/v1/customers``
gives them (``customer_standings``); one customer with contact, addresses, visits, quotes
and the ledger entries of its bookings (``portal_overview``, what the customer's own portal
shows), each visit linked to its admin booking page.

Owners and dispatchers, as the calendar. Read-only: a customer's details are the customer's
to change (the portal) or an integration's (the API).
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from attrs import frozen
from starlette.responses import Response
from starlette.routing import BaseRoute

from adapters.web.admin_booking import ENTRY_LABELS, METHOD_LABELS, money
from adapters.web.crew import STATUS_LABELS
from adapters.web.deps import WebDeps
from adapters.web.nav import ADMINS
from adapters.web.pages import Visit, page, pager_links, read_position
from adapters.web.time_text import moment
from booking_core.bookings import Booking
from booking_core.customers import ChurnLevel, Customer, merge_survivor
from booking_core.paging import PageRequest
from booking_core.quotes import effective_status
from booking_core.services import customers as cases
from booking_core.services.portal import portal_overview

CUSTOMERS = "/admin/customers"
PAGE_SIZE = 50
SEARCH_MAX = 200
"""A search longer than a name or an email could be is cut to this."""
CHURN_LABELS = {ChurnLevel.LOW: "Low", ChurnLevel.MEDIUM: "Medium", ChurnLevel.HIGH: "High"}


@frozen
class CustomerRow:
    """One line of the list."""

    id: str
    name: str
    email: str
    phone: str | None
    churn: ChurnLevel
    churn_label: str
    bookings: int
    paid: str
    last_visit: str
    next_visit: str


@frozen
class VisitRow:
    """One of a customer's visits."""

    id: str
    code: str
    when: str
    service: str
    status: str
    status_label: str
    total: str


def _when(instant: datetime | None, zone: ZoneInfo) -> str:
    return moment(instant, zone) if instant is not None else ""


def customers_page(visit: Visit) -> Response:
    """``GET /admin/customers``: newest first; ``?q=`` a name or email to find;
    ``?after=`` the page after a position (the "Older" link)."""
    company = visit.signed_in_company
    query = visit.request.query_params
    # As GET /api/v1/customers reads it; a NUL, which no name or email holds (and
    # PostgreSQL takes in no text), is dropped.
    search = query.get("q", "").replace("\x00", "").strip()[:SEARCH_MAX]
    after = read_position(query.get("after", ""))
    deps = visit.deps
    found = cases.list_customers(
        company.id,
        PageRequest(limit=PAGE_SIZE, after=after),
        search=search or None,
        uow=deps.reader(),
    )
    with deps.reader() as uow:
        standings = cases.customer_standings(found.items, uow=uow, at=deps.clock.now())
    zone = ZoneInfo(company.timezone)
    rows = []
    for customer in found.items:
        life, churn = standings[customer.id]
        rows.append(
            CustomerRow(
                id=customer.id,
                name=customer.name,
                email=customer.email,
                phone=customer.phone,
                churn=churn.level,
                churn_label=CHURN_LABELS[churn.level],
                bookings=life.bookings,
                paid=money(life.paid_cents),
                last_visit=_when(life.last_visit_at, zone),
                next_visit=_when(life.next_visit_at, zone),
            )
        )
    older, newest = pager_links(CUSTOMERS, found, [("q", search)] if search else [])
    return visit.render(
        "customers.html",
        rows=rows,
        search=search,
        older=older,
        first_page=after is None,
        newest=newest,
    )


def _visit_row(booking: Booking, zone: ZoneInfo) -> VisitRow:
    return VisitRow(
        id=booking.id,
        code=booking.code,
        when=moment(booking.start, zone),
        service=booking.service_label,
        status=booking.status.value,
        status_label=STATUS_LABELS[booking.status],
        total=money(booking.price.total_cents),
    )


def customer_page(visit: Visit) -> Response:
    """``GET /admin/customers/{id}``: one customer; a record merged into another is sent
    to the one it was merged into."""
    company = visit.signed_in_company
    deps = visit.deps
    at = deps.clock.now()
    customer_id = visit.request.path_params["customer_id"]
    overview = portal_overview(company.id, customer_id, uow=deps.reader(), at=at)
    customer: Customer = overview.customer
    if customer.merged_into is not None:
        with deps.reader() as uow:
            survivor = merge_survivor(customer, lambda other: uow.customers.get(company.id, other))
        return visit.redirect(
            f"{CUSTOMERS}/{survivor.id}",
            flash=f"That record was merged into {survivor.name}'s.",
        )
    with deps.reader() as uow:
        life, churn = cases.customer_standing(customer, uow=uow, at=at)
    zone = ZoneInfo(company.timezone)
    quotes = [
        (quote, effective_status(quote, at).value.capitalize(), money(quote.total_cents))
        for quote in overview.quotes
    ]
    receipts = [
        (
            moment(entry.created_at, zone),
            booking,
            ENTRY_LABELS.get(entry.kind, entry.kind.value.capitalize()),
            METHOD_LABELS.get(entry.method, entry.method.value.capitalize()),
            money(entry.amount_cents),
        )
        for entry, booking in overview.receipts
    ]
    return visit.render(
        "customer_admin.html",
        customer=customer,
        churn=churn,
        churn_label=CHURN_LABELS[churn.level],
        life=life,
        paid=money(life.paid_cents),
        added=moment(customer.created_at, zone),
        first_visit=_when(life.first_visit_at, zone),
        last_visit=_when(life.last_visit_at, zone),
        next_visit=_when(life.next_visit_at, zone),
        upcoming=[_visit_row(b, zone) for b in overview.upcoming],
        past=[_visit_row(b, zone) for b in overview.past],
        quotes=quotes,
        receipts=receipts,
    )


def routes(deps: WebDeps) -> list[BaseRoute]:
    """The customers list and one customer."""
    return [
        page(CUSTOMERS, deps, customers_page, roles=ADMINS),
        page(f"{CUSTOMERS}/{{customer_id}}", deps, customer_page, roles=ADMINS),
    ]
