"""The customer portal: ``/{slug}/portal``, a customer's jobs, plans, quotes and receipts
with one company, opened by a one-time link sent by email.

``GET /{slug}/portal`` is the sign-in form until the browser holds a portal session of
this company; ``POST`` it with an email and the answer is the same page whether the email
is a customer of the company or not ("If that address has bookings with ..."), while a
link is queued only for a customer (``portal.request_portal_link``). Requests are counted
per email and per client address (``WebDeps.portal_throttle``); past the limit the answer
is a 429 page, the same for every email. ``GET /{slug}/portal/link/{token}`` claims the
link once and begins a customer session (``sessions.new_customer_session``: a new
session id, no user), then redirects so that the token leaves the address bar.

A customer session names its company and customer only: the staff pages see no user in
it (sign-in required), and a staff session opens no portal (the sign-in form). Every
read goes through the session's company and customer id, and a session of another
company's portal is the sign-in form here.

Signed in, the home lists upcoming and past visits (each linking to its tracking page,
whose reschedule and cancel flows are the self-service use cases, offered while
``self_service.can_change``), plans, quotes (their ``/{slug}/q/{token}`` pages), receipts
from the ledger, and the customer's details; ``/{slug}/portal/details`` updates the name
and phone, and ``/{slug}/portal/addresses/...`` the saved addresses, through the customer
use cases (errors beside their fields). ``POST /{slug}/portal/sign-out`` ends the session.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from attrs import frozen
from starlette.responses import Response
from starlette.routing import BaseRoute

from adapters import phone
from adapters.web.admin_booking import ENTRY_LABELS, METHOD_LABELS, long_date, money
from adapters.web.calendar import service_name
from adapters.web.crew import STATUS_LABELS
from adapters.web.customer import NOT_FOUND, customer_page
from adapters.web.deps import WebDeps
from adapters.web.pages import Handler, PageError, Visit
from adapters.web.quote_page import STATE_LABELS
from adapters.web.sessions import new_customer_session, new_session
from adapters.web.time_text import zoned_range
from booking_core.bookings import Booking, BookingStatus, tracking_active
from booking_core.companies import Company
from booking_core.customers import Address, Customer
from booking_core.errors import RuleViolation, ValidationFailed
from booking_core.quotes import Quote, effective_status
from booking_core.services import portal as cases
from booking_core.services import self_service
from booking_core.services.customers import (
    SaveAddress,
    UpdateCustomer,
    remove_customer_address,
    save_customer_address,
    update_customer,
)
from booking_core.users import SignInRefused

SIGNED_OUT = "You are signed out."
SIGN_IN_AGAIN = "Please sign in again to see your account."
STILL_SIGNED_IN = (
    "That sign-in link has expired or was already used. You are still signed in as {}."
)
"""A used link opened again in a browser already signed in (a second click on the mail)."""
ADDRESS_FIELDS = ("line1", "line2", "city", "state", "zip", "access_notes")


def sent_sentence(company: Company) -> str:
    """The one answer to a link request, whether the email is known or not."""
    return (
        f"If that address has bookings with {company.name}, we've emailed you a link."
        " It works once, for 15 minutes."
    )


# --- Who is signed in ---------------------------------------------------------------------


def _company(visit: Visit) -> Company:
    if visit.company is None:  # customer_page always sets it; a guard for the type checker
        raise NOT_FOUND
    return visit.company


def _home(company: Company, rest: str = "") -> str:
    return f"/{company.slug}/portal{rest}"


def _customer(visit: Visit) -> Customer | None:
    """The customer whose portal session this is, in the address's company only."""
    company = _company(visit)
    customer_id = visit.session.customer_of(company.id)
    if customer_id is None:
        return None
    return cases.portal_customer(company.id, customer_id, uow=visit.deps.reader())


def _signed_in(handler: Callable[[Visit, Customer], Response]) -> Handler:
    """A page for the signed-in customer only; anyone else goes to the sign-in form."""

    def guarded(visit: Visit) -> Response:
        customer = _customer(visit)
        if customer is None:
            company = _company(visit)
            ended = SIGN_IN_AGAIN if visit.session.customer_of(company.id) else None
            if ended:
                visit.replace_session(new_session(visit.deps.clock.now()))
            return visit.redirect(_home(company), flash=ended)
        return handler(visit, customer)

    return guarded


# --- Sign-in ------------------------------------------------------------------------------


def _sign_in_form(
    visit: Visit,
    *,
    email: str = "",
    error: str | None = None,
    sent: bool = False,
    alert: str | None = None,
    status: int = 200,
) -> Response:
    company = _company(visit)
    return visit.render(
        "portal_sign_in.html",
        status=status,
        email=email,
        error=error,
        sent=sent,
        sent_sentence=sent_sentence(company),
        alert=alert,
        action=_home(company),
    )


def request_link(visit: Visit) -> Response:
    """``POST /{slug}/portal``: ``email``; the same answer for every well-formed email."""
    company = _company(visit)
    deps = visit.deps
    email = visit.field("email").strip()[:254]
    throttle = deps.portal_throttle
    # Counted per company: one company's portal traffic never shuts another's.
    counted_email = f"{company.id}:{email}"
    address = f"{company.id}:{visit.client_address}"
    wait = throttle.wait_seconds(counted_email, address)
    if wait:
        minutes = math.ceil(wait / 60)
        return _throttled(
            visit,
            429,
            "Too many requests for a sign-in link for this email or from this network."
            f" Try again in {minutes} minute{'s' if minutes != 1 else ''}.",
            {"retry-after": str(wait)},
            email=email,
        )
    if deps.composer is None:
        raise PageError(503, "Sign-in is unavailable", "Email is not set up. Please call us.")
    try:
        throttle.hit(counted_email, address)
        cases.request_portal_link(
            company.id,
            email,
            uow=deps.uow(),
            clock=deps.clock,
            composer=deps.composer,
            base_url=deps.base_url,
        )
    except ValidationFailed as failed:
        error = failed.field_errors.get("email", "Not an email address.")
        return _sign_in_form(visit, email=email, error=error, status=422)
    return _sign_in_form(visit, email=email, sent=True)


def _throttled(
    visit: Visit, status: int, message: str, headers: dict[str, str], *, email: str
) -> Response:
    response = _sign_in_form(visit, email=email, alert=message, status=status)
    response.headers.update(headers)
    return response


def portal_page(visit: Visit) -> Response:
    """``/{slug}/portal``: the home when signed in, else the sign-in form (GET) or a link
    request (POST)."""
    if visit.request.method == "POST":
        return request_link(visit)
    customer = _customer(visit)
    if customer is None:
        return _sign_in_form(visit)
    return home(visit, customer)


def claim_link(visit: Visit) -> Response:
    """``GET /{slug}/portal/link/{token}``: claim once, begin a customer session, and
    redirect (the token leaves the address bar either way)."""
    company = _company(visit)
    token = str(visit.request.path_params.get("token", ""))
    deps = visit.deps
    try:
        customer = cases.claim_portal_link(company.id, token, uow=deps.uow(), clock=deps.clock)
    except SignInRefused as refused:  # whoever is signed in stays so: nothing was granted
        signed_in = _customer(visit)
        message = refused.message if signed_in is None else STILL_SIGNED_IN.format(signed_in.email)
        response = visit.redirect(_home(company), flash=message)
    else:
        visit.replace_session(new_customer_session(deps.clock.now(), company.id, customer.id))
        response = visit.redirect(_home(company))
    response.headers["referrer-policy"] = "no-referrer"  # the token is in this address
    return response


def sign_out(visit: Visit) -> Response:
    """``POST /{slug}/portal/sign-out``."""
    visit.replace_session(new_session(visit.deps.clock.now()))
    return visit.redirect(_home(_company(visit)), flash=SIGNED_OUT)


# --- Home ---------------------------------------------------------------------------------


@frozen
class VisitRow:
    """One visit as the portal lists it."""

    code: str
    service: str
    day: str
    hours: str
    status: str
    status_label: str
    place: str
    track: str
    """The tracking page ("" once its tracking has ended)."""
    can_change: bool
    closed: str


@frozen
class PlanRow:
    """One plan as the portal lists it."""

    name: str
    service: str
    next_visit: str
    ahead: int
    place: str


@frozen
class QuoteRow:
    """One quote as the portal lists it."""

    title: str
    sent: str
    state: str
    state_label: str
    total: str
    href: str


@frozen
class ReceiptRow:
    """One ledger entry as the portal lists it."""

    day: str
    code: str
    what: str
    method: str
    amount: str
    negative: bool


def _local_day(instant: datetime | None, zone: ZoneInfo) -> str:
    return long_date(instant.astimezone(zone).date()) if instant else ""


def _short_day(instant: datetime, zone: ZoneInfo) -> str:
    """``Nov 23, 2026`` in the company's timezone."""
    day = instant.astimezone(zone).date()
    return f"{day:%b} {day.day}, {day.year}"


def _visit_row(company: Company, booking: Booking, at: datetime) -> VisitRow:
    zone = ZoneInfo(company.timezone)
    local = booking.start.astimezone(zone)
    changeable = self_service.can_change(company, booking, at)
    closed = booking.status is BookingStatus.SCHEDULED and not changeable
    address = booking.address
    return VisitRow(
        code=booking.code,
        service=service_name(booking),
        day=long_date(local.date()),
        hours=zoned_range(local, booking.end.astimezone(zone)),
        status=booking.status.value,
        status_label=STATUS_LABELS[booking.status],
        place=", ".join(p for p in (address.line1, address.line2, address.city) if p),
        track=(
            f"/{company.slug}/track/{booking.tracking_token}"
            if tracking_active(booking, at)
            else ""
        ),
        can_change=changeable,
        closed=self_service.closed_message(company) if closed else "",
    )


def _quote_row(company: Company, quote: Quote, at: datetime) -> QuoteRow:
    zone = ZoneInfo(company.timezone)
    state = effective_status(quote, at)
    return QuoteRow(
        title=quote.label,
        sent=_local_day(quote.sent_at, zone),
        state=state.value,
        state_label=STATE_LABELS.get(state, state.value.capitalize()),
        total=money(quote.total_cents),
        href=f"/{company.slug}/q/{quote.public_token}",
    )


def home(visit: Visit, customer: Customer) -> Response:
    """The signed-in customer's home: visits, plans, quotes, receipts, details."""
    company = _company(visit)
    deps = visit.deps
    at = deps.clock.now()
    overview = cases.portal_overview(company.id, customer.id, uow=deps.reader(), at=at)
    zone = ZoneInfo(company.timezone)
    with deps.reader() as uow:
        frequencies = uow.catalogs.get(company.id).frequencies_by_slug
    plans = []
    for plan in overview.plans:
        frequency = frequencies.get(plan.frequency_slug)
        nxt = plan.next_visit
        plans.append(
            PlanRow(
                name=frequency.name if frequency else plan.frequency_slug,
                service=service_name(plan.first),
                next_visit=_visit_row(company, nxt, at).day if nxt else "",
                ahead=plan.visits_ahead,
                place=plan.first.address.line1,
            )
        )
    receipts = [
        ReceiptRow(
            day=_short_day(entry.created_at, zone),
            code=booking.code,
            what=ENTRY_LABELS.get(entry.kind, entry.kind.value.capitalize()),
            method=METHOD_LABELS.get(entry.method, entry.method.value.capitalize()),
            amount=money(entry.amount_cents),
            negative=entry.amount_cents < 0,
        )
        for entry, booking in overview.receipts
    ]
    return visit.render(
        "portal.html",
        customer=overview.customer,
        default_address=overview.customer.default_address,
        upcoming=[_visit_row(company, b, at) for b in overview.upcoming],
        past=[_visit_row(company, b, at) for b in overview.past],
        plans=plans,
        quotes=[_quote_row(company, q, at) for q in overview.quotes],
        receipts=receipts,
        home=_home(company),
        book_href=f"/{company.slug}/book",
        referral=money(company.referral_discount_cents) if company.referral_discount_cents else "",
    )


# --- Details and addresses ----------------------------------------------------------------


def _details_page(
    visit: Visit,
    customer: Customer,
    *,
    values: dict[str, str] | None = None,
    errors: dict[str, str] | None = None,
    status: int = 200,
) -> Response:
    company = _company(visit)
    shown = values or {"name": customer.name, "phone": phone.shown(customer.phone or "")}
    return visit.render(
        "portal_details.html",
        status=status,
        customer=customer,
        values=shown,
        errors=errors or {},
        addresses=customer.addresses,
        home=_home(company),
    )


def details(visit: Visit, customer: Customer) -> Response:
    """``/{slug}/portal/details``: name and phone (GET the form, POST it), and the list of
    saved addresses."""
    if visit.request.method != "POST":
        return _details_page(visit, customer)
    company = _company(visit)
    deps = visit.deps
    values = {"name": visit.field("name")[:300], "phone": visit.field("phone")[:60]}
    try:
        update_customer(
            UpdateCustomer(
                company_id=company.id,
                customer_id=customer.id,
                name=values["name"],
                phone=values["phone"],
            ),
            uow=deps.uow(),
            clock=deps.clock,
            phones=deps.phones,
        )
    except ValidationFailed as failed:
        return _details_page(visit, customer, values=values, errors=failed.field_errors, status=422)
    return visit.redirect(_home(company, "/details"), flash="Your details are saved.")


def _address_page(
    visit: Visit,
    customer: Customer,
    address_id: str | None,
    *,
    values: dict[str, str],
    errors: dict[str, str] | None = None,
    status: int = 200,
) -> Response:
    company = _company(visit)
    rest = f"/addresses/{address_id}" if address_id else "/addresses/new"
    return visit.render(
        "portal_address.html",
        status=status,
        customer=customer,
        values=values,
        errors=errors or {},
        is_new=address_id is None,
        action=_home(company, rest),
        remove=_home(company, f"/addresses/{address_id}/remove") if address_id else "",
        home=_home(company),
        details_href=_home(company, "/details"),
    )


def _address_values(address: Address | None, default: bool) -> dict[str, str]:
    if address is None:
        return dict.fromkeys(ADDRESS_FIELDS, "") | {"default": ""}
    return {
        "line1": address.line1,
        "line2": address.line2,
        "city": address.city,
        "state": address.state,
        "zip": address.zip,
        "access_notes": address.access_notes,
        "default": "1" if default else "",
    }


def address(visit: Visit, customer: Customer) -> Response:
    """``/{slug}/portal/addresses/new`` and ``/{slug}/portal/addresses/{address_id}``: a
    saved address's form (GET), saved (POST)."""
    company = _company(visit)
    address_id = visit.request.path_params.get("address_id")
    saved = None
    if address_id is not None:
        saved = next((a for a in customer.addresses if a.id == address_id), None)
        if saved is None:
            raise NOT_FOUND
    if visit.request.method != "POST":
        is_default = saved is not None and saved.id == customer.default_address_id
        values = _address_values(saved.address if saved else None, is_default)
        return _address_page(visit, customer, address_id, values=values)
    values = {name: visit.field(name).strip()[:2_100] for name in ADDRESS_FIELDS}
    values["default"] = "1" if visit.field("default") else ""
    typed = Address(
        line1=values["line1"],
        line2=values["line2"],
        city=values["city"],
        state=values["state"].upper(),
        zip=values["zip"],
        access_notes=values["access_notes"],
    )
    try:
        save_customer_address(
            SaveAddress(
                company_id=company.id,
                customer_id=customer.id,
                address=typed,
                address_id=address_id,
                default=bool(values["default"]),
            ),
            uow=visit.deps.uow(),
            clock=visit.deps.clock,
            drive=visit.deps.drive,
        )
    except ValidationFailed as failed:
        errors = {key.removeprefix("address."): text for key, text in failed.field_errors.items()}
        return _address_page(visit, customer, address_id, values=values, errors=errors, status=422)
    except RuleViolation:  # removed meanwhile (another tab)
        raise NOT_FOUND from None
    return visit.redirect(_home(company, "/details"), flash="Your address is saved.")


def remove(visit: Visit, customer: Customer) -> Response:
    """``POST /{slug}/portal/addresses/{address_id}/remove``."""
    company = _company(visit)
    address_id = str(visit.request.path_params.get("address_id", ""))
    try:
        remove_customer_address(
            company.id, customer.id, address_id, uow=visit.deps.uow(), clock=visit.deps.clock
        )
    except RuleViolation:
        raise NOT_FOUND from None
    return visit.redirect(_home(company, "/details"), flash="The address is removed.")


def routes(deps: WebDeps) -> list[BaseRoute]:
    """The portal: sign-in, the link, the home, details and addresses, sign-out."""
    both = ("GET", "POST")
    base = "/{slug}/portal"
    return [
        customer_page(base, deps, portal_page, methods=both),
        customer_page(f"{base}/link/{{token}}", deps, claim_link),
        customer_page(f"{base}/sign-out", deps, sign_out, methods=("POST",)),
        customer_page(f"{base}/details", deps, _signed_in(details), methods=both),
        customer_page(f"{base}/addresses/new", deps, _signed_in(address), methods=both),
        customer_page(f"{base}/addresses/{{address_id}}", deps, _signed_in(address), methods=both),
        customer_page(
            f"{base}/addresses/{{address_id}}/remove", deps, _signed_in(remove), methods=("POST",)
        ),
    ]
