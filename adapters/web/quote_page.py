"""The customer's quote page: ``/{slug}/q/{token}``, and ``/q/{token}`` on the company's
own domain (the quote's ``publicUrl`` is ``https://{customDomain}/q/{token}`` once a domain
is connected).

Open to anyone holding the link (the public token is its own authority), inside the
company the address names only: by its slug, or by the host the request was sent to,
which must be that company's connected domain. An unknown token, another company's, a
draft (not sent yet), and ``/q/{token}`` on any other host answer the same 404 page.

It shows what is quoted line by line, the discounts, fees, tax and total exactly as the
core priced them (``admin_booking.breakdown_rows`` over the stored breakdown; a
hand-priced quote's lines and total as stored), the company's message and the expiry
date, all as of now (``quotes.effective_status``: a sent quote past its date reads as
expired).

A sent quote still in date has Accept and Decline buttons (``POST`` with ``action``),
which go through ``act_on_quote`` exactly as ``POST /api/v1/quotes/:id`` does, so
``quote.accepted`` / ``quote.declined`` are recorded as through the API. An answered,
expired or booked quote says so in a sentence, without buttons.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from starlette.responses import Response
from starlette.routing import BaseRoute

from adapters.web.admin_booking import PriceRow, breakdown_rows, long_date, money
from adapters.web.customer import NOT_FOUND, customer_page
from adapters.web.deps import WebDeps
from adapters.web.pages import Visit
from booking_core.bookings import tracking_active
from booking_core.companies import Company
from booking_core.errors import ConflictError, InvalidTransition, NotFoundError
from booking_core.quotes import Quote, QuoteStatus, effective_status, last_day
from booking_core.services.quotes import ActOnQuote, QuoteAction, act_on_quote

ACTIONS = {"accept": QuoteAction.ACCEPT, "decline": QuoteAction.REJECT}
ANSWERED = {QuoteAction.ACCEPT: QuoteStatus.ACCEPTED, QuoteAction.REJECT: QuoteStatus.DECLINED}
"""The status each answer leaves a quote in."""
DONE = {
    QuoteAction.ACCEPT: (
        "Thank you: you accepted this quote. {company} will be in touch to book it."
    ),
    QuoteAction.REJECT: "You declined this quote. Thank you for letting {company} know.",
}


STATE_LABELS = {
    QuoteStatus.SENT: "Open",
    QuoteStatus.ACCEPTED: "Accepted",
    QuoteStatus.DECLINED: "Declined",
    QuoteStatus.EXPIRED: "Expired",
    QuoteStatus.CONVERTED: "Booked",
}


def _company(visit: Visit) -> Company:
    if visit.company is None:  # customer_page always sets it; a guard for the type checker
        raise NOT_FOUND
    return visit.company


def _token(visit: Visit) -> str:
    return str(visit.request.path_params.get("token", ""))


def _on_own_domain(visit: Visit) -> Company:
    """The company of ``/q/{token}``: the quote's, when the request was sent to the
    domain that company connected; the 404 page otherwise."""
    token = _token(visit)
    with visit.deps.reader() as uow:
        quote = uow.quotes.by_public_token(token) if token else None
        company = uow.companies.get(quote.company_id) if quote is not None else None
    host = (visit.request.url.hostname or "").lower()
    if company is None or company.custom_domain is None or host != company.custom_domain:
        raise NOT_FOUND
    return company


def _home(visit: Visit) -> str:
    """This page's own address: on the company's domain, or under its slug."""
    if "slug" not in visit.request.path_params:
        return f"/q/{_token(visit)}"
    return f"/{_company(visit).slug}/q/{_token(visit)}"


def _load(visit: Visit) -> Quote:
    """The sent (or later) quote of the link, in the address's company only."""
    company = _company(visit)
    token = _token(visit)
    with visit.deps.reader() as uow:
        quote = uow.quotes.by_public_token(token) if token else None
    if quote is None or quote.company_id != company.id or quote.status is QuoteStatus.DRAFT:
        raise NOT_FOUND
    return quote


def _day(instant: datetime | None, company: Company) -> str:
    if instant is None:
        return ""
    return long_date(instant.astimezone(ZoneInfo(company.timezone)).date())


def _last_day(quote: Quote, company: Company) -> str:
    """The last day the quote can be answered (the expiry instant itself is past)."""
    day = last_day(quote, ZoneInfo(company.timezone))
    return "" if day is None else long_date(day)


def _rows(visit: Visit, quote: Quote) -> tuple[str, str, list[PriceRow]]:
    """(what is quoted, its frequency, the price rows to the total)."""
    if quote.breakdown is None or quote.selection is None:
        rows = [PriceRow(line.description, money(line.amount_cents)) for line in quote.manual_lines]
        rows.append(PriceRow("Total", money(quote.total_cents), "total"))
        return "Your quote", "", rows
    service = quote.label
    with visit.deps.reader() as uow:
        catalog = uow.catalogs.get(quote.company_id)
    frequency = catalog.frequencies_by_slug.get(quote.selection.frequency_slug)
    plan = ""
    if frequency is not None and frequency.interval_days is not None:
        plan = f"Repeats: {frequency.name}. This is the price of the first visit."
    return service, plan, breakdown_rows(quote.breakdown)


def _tracking_href(visit: Visit, quote: Quote) -> str:
    """The tracking page of the booking a converted quote became, while it works."""
    if quote.booking_id is None:
        return ""
    company = _company(visit)
    try:
        with visit.deps.reader() as uow:
            booking = uow.bookings.get(company.id, quote.booking_id)
    except NotFoundError:
        return ""
    if not tracking_active(booking, visit.deps.clock.now()):
        return ""
    return f"/{company.slug}/track/{booking.tracking_token}"


def _sentence(quote: Quote, status: QuoteStatus, company: Company) -> str:
    """What an answered, expired or booked quote says instead of the buttons."""
    if status is QuoteStatus.ACCEPTED:
        when = _day(quote.accepted_at, company)
        return f"You accepted this quote on {when}. {company.name} will be in touch to book it."
    if status is QuoteStatus.DECLINED:
        when = _day(quote.declined_at, company)
        return f"You declined this quote on {when}. Ask {company.name} if you change your mind."
    if status is QuoteStatus.EXPIRED:
        when = _day(quote.expires_at, company)
        return f"This quote expired on {when}. Ask {company.name} for a new one."
    if status is QuoteStatus.CONVERTED:
        return "This quote is booked. Thank you!"
    return ""


def _render(visit: Visit, quote: Quote, *, alert: str | None = None, status: int = 200) -> Response:
    company = _company(visit)
    now = visit.deps.clock.now()
    current = effective_status(quote, now)
    service, frequency, rows = _rows(visit, quote)
    return visit.render(
        "quote_page.html",
        status=status,
        quote=quote,
        service=service,
        frequency=frequency,
        rows=rows,
        hand_priced=quote.hand_priced,
        total=money(quote.total_cents),
        expires=_last_day(quote, company),
        sent=_day(quote.sent_at, company),
        open=current is QuoteStatus.SENT,
        state=current.value,
        state_label=STATE_LABELS.get(current, current.value.capitalize()),
        sentence=_sentence(quote, current, company),
        tracking=_tracking_href(visit, quote),
        home=_home(visit),
        alert=alert,
    )


def quote_page(visit: Visit) -> Response:
    """``GET /{slug}/q/{token}`` (or ``/q/{token}`` on the company's domain); ``POST``
    with ``action`` ``accept`` or ``decline``."""
    quote = _load(visit)
    if visit.request.method != "POST":
        return _render(visit, quote)
    action = ACTIONS.get(visit.field("action"))
    if action is None:
        return _render(visit, quote, alert="Choose Accept or Decline.", status=422)
    company = _company(visit)
    deps = visit.deps
    try:
        act_on_quote(
            ActOnQuote(company_id=company.id, quote_id=quote.id, action=action),
            uow=deps.uow(),
            clock=deps.clock,
        )
    except InvalidTransition as refused:
        now = _load(visit)
        if effective_status(now, deps.clock.now()) is ANSWERED[action]:
            # The same answer twice (a double click, a second tab): it stands, and the
            # page says so as it did the first time, not that it failed.
            return visit.redirect(_home(visit), flash=DONE[action].format(company=company.name))
        alert = f"This quote can no longer be answered: {refused.reason}."
        return _render(visit, now, alert=alert, status=409)
    except ConflictError:
        alert = "This quote changed meanwhile; here it is as it is now."
        return _render(visit, _load(visit), alert=alert, status=409)
    return visit.redirect(_home(visit), flash=DONE[action].format(company=company.name))


def routes(deps: WebDeps) -> list[BaseRoute]:
    """The quote page and its answer, under the company's slug and on its own domain."""
    return [
        customer_page("/{slug}/q/{token}", deps, quote_page, methods=("GET", "POST")),
        customer_page(
            "/q/{token}", deps, quote_page, methods=("GET", "POST"), company=_on_own_domain
        ),
    ]
