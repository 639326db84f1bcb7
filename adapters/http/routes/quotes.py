"""``/quotes``: create (optionally sending at once), list, fetch, and act on a quote."""

from __future__ import annotations

import enum
from datetime import datetime

from attrs import field, frozen

from adapters.http.deprecation import CONVERT_BY_BOOKING_ID, names
from adapters.http.endpoint import Context, Endpoint, Reply
from adapters.http.queries import PageQuery
from adapters.http.routes.catalog import Item, selection_of
from adapters.http.structuring import Code, Id, Note, PriceCents, ShortText, Zip, blank_as_none
from adapters.http.views.quotes import (
    QuoteView,
    QuoteWithFollowUpsView,
    quote_view,
    quote_with_follow_ups_view,
)
from booking_core import conversion, quotes
from booking_core.errors import ValidationFailed
from booking_core.pricing import Selection
from booking_core.quotes import ManualLine, QuoteStatus
from booking_core.services import conversions
from booking_core.services import quotes as cases


@frozen(kw_only=True)
class ManualLineBody:
    """A hand-priced line."""

    description: ShortText
    amount_cents: PriceCents


@frozen(kw_only=True)
class QuoteBody:
    """A quote priced from the catalog (``serviceId`` and selection) or by hand
    (``manualLines``), for a customer or a lead; ``send`` sends it at once."""

    customer_id: Id | None = None
    lead_id: Id | None = None
    service_id: Id | None = None
    frequency_slug: Id = "one_time"
    parameters: tuple[Item, ...] = ()
    extras: tuple[Item, ...] = ()
    coupon_code: Code | None = field(default=None, converter=blank_as_none)
    zip: Zip | None = None
    start_iso: datetime | None = None
    manual_fee_ids: tuple[Id, ...] = ()
    manual_lines: tuple[ManualLineBody, ...] = ()
    expires_at: datetime | None = None
    message: Note = ""
    note: Note = ""
    send: bool = False

    def selection(self, at: datetime) -> Selection | None:
        """The catalog selection, if the quote is priced from the catalog. A hand-priced
        quote (no ``serviceId``) sent any part of a selection is refused naming each part:
        dropping a coupon or a fee without a word would quote another price than meant."""
        if self.service_id is None:
            given = {
                "frequency_slug": self.frequency_slug != "one_time",
                "parameters": bool(self.parameters),
                "extras": bool(self.extras),
                "coupon_code": self.coupon_code is not None,
                "zip": self.zip is not None,
                "start_iso": self.start_iso is not None,
                "manual_fee_ids": bool(self.manual_fee_ids),
            }
            if any(given.values()):
                problems = {name: HAND_PRICED for name, sent in given.items() if sent}
                raise ValidationFailed(
                    {**self._other_problems(at), **problems},
                    "A hand-priced quote (no serviceId) takes no part of a catalog selection: "
                    "give serviceId to price it from the catalog, or leave these out.",
                )
            return None
        return selection_of(self.service_id, self)

    def _other_problems(self, at: datetime) -> dict[str, str]:
        """What the quote's own rules refuse in this body besides its selection (no
        customer or lead, no lines, an expiry in the past), named in the same answer."""
        try:
            quotes.create_quote(
                company_id="-",
                at=at,
                customer_id=self.customer_id,
                lead_id=self.lead_id,
                manual_lines=[ManualLine(x.description, x.amount_cents) for x in self.manual_lines],
                expires_at=self.expires_at,
            )
        except ValidationFailed as failed:
            return dict(failed.field_errors)
        return {}


HAND_PRICED = "Only with serviceId: a hand-priced quote is priced by its manualLines alone."


class Action(enum.StrEnum):
    """What to do to a quote."""

    SEND = "send"
    ACCEPT = "accept"
    REJECT = "reject"
    CONVERT = "convert"
    PAUSE = "pause"
    RESUME = "resume"


@frozen(kw_only=True)
class ActionBody:
    """An action; ``convert`` takes ``startIso`` (and ``serviceId`` for a hand-priced
    quote, optional ``manualFeeIds``), or the deprecated ``bookingId``. Convert books the
    quote at its own price, exactly as quoted (lines, discounts, coupon, fees, tax, total,
    duration), whatever the date or address booked, plus only the manual fees
    ``manualFeeIds`` adds (tax worked out again on them); a plan's later visits are priced
    from the catalog at their dates. A quote's coupon is not refused for limits reached
    since; its redemption is recorded. A quote for a lead alone is booked for the customer
    with the lead's email, else its phone (422 while there is none), and records that
    customer. docs/quotes.md, "Convert"."""

    action: Action
    start_iso: datetime | None = None
    service_id: Id | None = field(
        default=None,
        metadata={"description": "convert: the service a hand-priced quote is booked under"},
    )
    manual_fee_ids: tuple[Id, ...] = field(
        default=(),
        metadata={
            "description": "convert: manual fees added to the quoted price (one already on "
            "the quote is not charged twice)"
        },
    )
    booking_id: Id | None = field(
        default=None,
        metadata={
            "deprecated": True,
            "description": "deprecated: convert with startIso. Links a booking of the "
            "quote's customer made separately; a cancelled one is refused (422)",
        },
    )


@frozen(kw_only=True)
class QuoteListQuery(PageQuery):
    """Quotes by status, lead or customer."""

    status: QuoteStatus | None = None
    lead_id: Id | None = field(default=None, metadata={"description": "one lead's"})
    customer_id: Id | None = field(default=None, metadata={"description": "one customer's"})


def get_quotes(ctx: Context) -> Reply:
    """List quotes by status, lead or customer."""
    query: QuoteListQuery = ctx.query
    filters = {
        "status": query.status,
        "lead_id": query.lead_id,
        "customer_id": query.customer_id,
    }
    page = ctx.page_request("quotes", filters)
    with ctx.deps.read() as uow:
        result = uow.quotes.list(
            ctx.company_id,
            page,
            as_of=ctx.now(),
            **filters,  # type: ignore[arg-type]
        )
    now, render = ctx.now(), ctx.render()
    return ctx.page_reply(result, lambda q: quote_view(q, now, render))


def post_quote(ctx: Context) -> Reply:
    """Create a quote, optionally sending it immediately."""
    body: QuoteBody = ctx.body
    quote = cases.create_quote(
        cases.CreateQuote(
            company_id=ctx.company_id,
            customer_id=body.customer_id,
            lead_id=body.lead_id,
            selection=body.selection(ctx.now()),
            manual_lines=tuple(
                ManualLine(x.description, x.amount_cents) for x in body.manual_lines
            ),
            expires_at=body.expires_at,
            message=body.message,
            note=body.note,
            send_now=body.send,
        ),
        uow=ctx.uow(),
        clock=ctx.deps.clock,
    )
    return Reply(quote_with_follow_ups_view(quote, ctx.now(), ctx.render()), 201)


def get_quote(ctx: Context) -> Reply:
    """One quote and its scheduled follow-ups."""
    with ctx.deps.read() as uow:
        quote = uow.quotes.get(ctx.company_id, ctx.path_params["id"])
    return Reply(quote_with_follow_ups_view(quote, ctx.now(), ctx.render()))


def post_quote_action(ctx: Context) -> Reply:
    """Send, accept, reject, pause, resume, or convert a quote."""
    body: ActionBody = ctx.body
    quote_id = ctx.path_params["id"]
    if body.action is Action.CONVERT:
        request = conversion.ConvertRequest(
            start=body.start_iso,
            service_id=body.service_id,
            manual_fee_ids=body.manual_fee_ids,
            booking_id=body.booking_id,
        )
        converted, _ = conversions.convert_quote(
            ctx.company_id,
            quote_id,
            request,
            uow=ctx.uow(),
            clock=ctx.deps.clock,
            drive=ctx.deps.drive,
        )
        return Reply(quote_with_follow_ups_view(converted, ctx.now(), ctx.render()))
    unused = {
        "startIso": body.start_iso is not None,
        "serviceId": body.service_id is not None,
        "manualFeeIds": bool(body.manual_fee_ids),
        "bookingId": body.booking_id is not None,
    }
    errors = {name: "Only used with action convert." for name, given in unused.items() if given}
    if errors:
        raise ValidationFailed(errors)
    quote = cases.act_on_quote(
        cases.ActOnQuote(
            company_id=ctx.company_id, quote_id=quote_id, action=cases.QuoteAction(body.action)
        ),
        uow=ctx.uow(),
        clock=ctx.deps.clock,
    )
    return Reply(quote_with_follow_ups_view(quote, ctx.now(), ctx.render()))


ENDPOINTS = [
    Endpoint(
        method="GET",
        path="/quotes",
        scope="quotes:read",
        handler=get_quotes,
        response=QuoteView,
        paginated=True,
        query=QuoteListQuery,
        tag="quotes",
        summary="List quotes by status, lead, or customer",
    ),
    Endpoint(
        method="POST",
        path="/quotes",
        scope="quotes:write",
        handler=post_quote,
        response=QuoteWithFollowUpsView,
        body=QuoteBody,
        body_required=True,
        idempotent=True,
        success_status=201,
        tag="quotes",
        summary="Create a quote, optionally sending it immediately",
    ),
    Endpoint(
        method="GET",
        path="/quotes/{id}",
        scope="quotes:read",
        handler=get_quote,
        response=QuoteWithFollowUpsView,
        tag="quotes",
        summary="One quote and its scheduled follow-ups",
    ),
    Endpoint(
        method="POST",
        path="/quotes/{id}",
        scope="quotes:write",
        handler=post_quote_action,
        response=QuoteWithFollowUpsView,
        body=ActionBody,
        body_scopes=lambda raw: (
            ("bookings:write",)
            if isinstance(raw, dict) and raw.get("action") == Action.CONVERT.value
            else ()
        ),
        deprecation=lambda raw: CONVERT_BY_BOOKING_ID if names(raw, "bookingId") else None,
        idempotent=True,
        tag="quotes",
        summary="Act on a quote: send, accept, reject, convert (also bookings:write), "
        "pause, resume",
    ),
]
