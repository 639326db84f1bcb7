"""``/availability`` and ``/bookings``: open slots, booking of every shape, fetch by id or
human code, cancel and reschedule with scopes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Annotated

from attrs import field, frozen

from adapters.http.endpoint import Context, Endpoint, Reply
from adapters.http.jsonschema import schema
from adapters.http.queries import PageQuery
from adapters.http.routes.catalog import Item, selected
from adapters.http.routes.customers import AddressBody
from adapters.http.structuring import (
    CancelReason,
    Code,
    Days,
    Email,
    Id,
    IntakeAnswer,
    ItemSpec,
    MaxItems,
    Note,
    PersonName,
    Phone,
    Zip,
    blank_as_none,
)
from adapters.http.views.bookings import (
    AvailabilityView,
    BookingView,
    BookingWithActivityView,
    CancelledBookingsView,
    CreatedBookingView,
    RescheduledBookingsView,
    availability_view,
    booking_view,
    booking_with_activity_view,
    cancelled_bookings_view,
    created_booking_view,
    rescheduled_bookings_view,
)
from booking_core.booking_forms import MAX_ANSWERS
from booking_core.booking_orders import MAX_ADDITIONAL_STARTS, crew_errors
from booking_core.bookings import Booking, BookingStatus
from booking_core.errors import ValidationFailed
from booking_core.ledger import LedgerTotals
from booking_core.paging import PageRequest
from booking_core.plans import CancelScope, RescheduleScope
from booking_core.pricing import SelectedItem
from booking_core.services import scheduling
from booking_core.services.payments import booking_totals


@frozen(kw_only=True)
class CustomerBody:
    """Who the job is for; an existing email books for that customer."""

    name: PersonName
    email: Email
    phone: Phone | None = None


@frozen(kw_only=True)
class AnswerBody:
    """One intake answer: the question's id on the booking form, and the answer (a
    choice question's answer is one of its choices)."""

    question_id: Id
    answer: IntakeAnswer


CREW_LIST = schema(minItems=1, uniqueItems=True)
"""A body's ``crewIds`` as the core's ``crew_errors`` takes it: at least one, none twice."""


@frozen(kw_only=True)
class BookingBody:
    """A booking: one job, a plan (a recurring ``frequencySlug``), a multi-day job
    (``days``), or several dates at once (``additionalStartIsos``, all or nothing)."""

    service_id: Id
    frequency_slug: Id
    start_iso: datetime
    customer: CustomerBody
    address: AddressBody
    parameters: tuple[Item, ...] = ()
    extras: tuple[Item, ...] = ()
    coupon_code: Code | None = field(default=None, converter=blank_as_none)
    referral_code: Code | None = field(
        default=None,
        converter=blank_as_none,
        metadata={
            "description": "another customer's referralCode: a new customer's first "
            "booking gets the company's referral discount off its first visit"
        },
    )
    notes: Note = ""
    crew_ids: tuple[Id, ...] | None = field(
        default=None,
        metadata={"description": "otherwise the best-ranked free crew", **CREW_LIST},
    )
    days: Days = 1
    # The core refuses more, naming this field ("At most 20 dates."): described, not checked.
    additional_start_isos: tuple[datetime, ...] = field(
        default=(), metadata=schema(maxItems=MAX_ADDITIONAL_STARTS)
    )
    form_id: Id | None = field(
        default=None,
        metadata={"description": "the booking form booked through (its offer is checked)"},
    )
    answers: Annotated[tuple[AnswerBody, ...], MaxItems(MAX_ANSWERS)] = field(
        default=(),
        metadata={"description": "answers to the form's questions (every required one answered)"},
    )


@frozen(kw_only=True)
class CancelBody:
    """``this``, ``this_and_future``, or ``plan_after`` (with ``after``, a local date)."""

    scope: CancelScope = CancelScope.THIS
    after: date | None = None
    reason: CancelReason | None = None


@frozen(kw_only=True)
class RescheduleBody:
    """A new start (checked against real availability) for this visit or this and later.
    Each moved visit whose local date changes is re-dated: its date fees (a holiday or
    weekend surcharge) become those of its new date, and tax and total follow; its lines,
    discounts, other fees and duration stay as booked. A visit booked from a hand-priced
    quote keeps its price. The rescheduled activity entry of a re-priced visit carries
    fromTotalCents and toTotalCents."""

    start_iso: datetime
    crew_ids: tuple[Id, ...] | None = field(
        default=None,
        metadata={
            "description": "reassigns every moved visit; otherwise each keeps its own crew",
            **CREW_LIST,
        },
    )
    scope: RescheduleScope = RescheduleScope.THIS


def selected_items(specs: tuple[ItemSpec, ...]) -> tuple[SelectedItem, ...]:
    """``id`` or ``id:quantity`` items of a query string as selected items."""
    items = []
    for spec in specs:
        item_id, _, quantity = spec.partition(":")
        items.append(SelectedItem(item_id, int(quantity) if quantity else 1))
    return tuple(items)


@frozen(kw_only=True)
class AvailabilityQuery:
    """What to find open starts for; ``parameters`` and ``extras`` set the job's length."""

    service_id: Id
    date: date = field(metadata={"description": "the local date, YYYY-MM-DD"})
    zip: Zip
    frequency_slug: Id = "one_time"
    parameters: tuple[ItemSpec, ...] = field(
        default=(), metadata={"description": "id:quantity,... (job length)"}
    )
    extras: tuple[ItemSpec, ...] = field(
        default=(), metadata={"description": "id:quantity,... (job length)"}
    )
    crew_ids: tuple[Id, ...] | None = field(
        default=None,
        metadata={"description": "only these members, all together", **schema(uniqueItems=True)},
    )
    days: Days = field(default=1, metadata={"description": "a multi-day job's length"})


def get_availability(ctx: Context) -> Reply:
    """Open start times for a service, date and zip, ranked by drive time."""
    query: AvailabilityQuery = ctx.query
    if query.crew_ids == ():  # ``crewIds=``: named, but no member in it
        raise ValidationFailed({"crewIds": "Comma-separated crew ids, at least one."})
    if query.crew_ids is not None and (twice := crew_errors(query.crew_ids)):
        raise ValidationFailed(twice)  # as a booking's crewIds: none twice
    slots = scheduling.list_availability(
        scheduling.AvailabilityRequest(
            company_id=ctx.company_id,
            service_id=query.service_id,
            local_date=query.date,
            zip_code=query.zip,
            frequency_slug=query.frequency_slug,
            parameters=selected_items(query.parameters),
            extras=selected_items(query.extras),
            crew_ids=query.crew_ids,
            days=query.days,
        ),
        uow=ctx.deps.read(),
        clock=ctx.deps.clock,
        drive=ctx.deps.drive,
    )
    return Reply(availability_view(slots, ctx.render()))


def post_booking(ctx: Context) -> Reply:
    """Book; the reply is the first booking, with every booking made under ``bookings``."""
    body: BookingBody = ctx.body
    made = scheduling.create_booking(
        scheduling.CreateBooking(
            company_id=ctx.company_id,
            service_id=body.service_id,
            frequency_slug=body.frequency_slug,
            start=body.start_iso,
            customer=scheduling.CustomerDetails(
                name=body.customer.name, email=body.customer.email, phone=body.customer.phone
            ),
            address=body.address.address(),
            parameters=selected(body.parameters),
            extras=selected(body.extras),
            coupon_code=body.coupon_code,
            referral_code=body.referral_code,
            notes=body.notes,
            crew_ids=body.crew_ids,
            days=body.days,
            additional_starts=body.additional_start_isos,
            form_id=body.form_id,
            answers=tuple((a.question_id, a.answer) for a in body.answers),
        ),
        uow=ctx.uow(),
        clock=ctx.deps.clock,
        drive=ctx.deps.drive,
        phones=ctx.deps.phones,
    )
    return Reply(created_booking_view(made, ctx.render()), 201)


@frozen(kw_only=True)
class BookingListQuery(PageQuery):
    """Bookings by status, customer, crew member, and start window ``[from, to)``."""

    status: BookingStatus | None = None
    customer_id: Id | None = field(default=None, metadata={"description": "one customer's"})
    crew_id: Id | None = field(
        default=None, metadata={"description": "a crew member's (team jobs included)"}
    )
    from_: datetime | None = field(
        default=None, metadata={"description": "starting at or after (ISO 8601 with offset)"}
    )
    to: datetime | None = field(
        default=None, metadata={"description": "starting before (ISO 8601 with offset)"}
    )


def get_bookings(ctx: Context) -> Reply:
    """List bookings by status, customer, crew member (``crewId``), start window."""
    query: BookingListQuery = ctx.query
    filters = {
        "status": query.status,
        "customer_id": query.customer_id,
        "crew_id": query.crew_id,
        "starts_from": query.from_,
        "starts_until": query.to,
    }
    page: PageRequest = ctx.page_request("bookings", filters)
    with ctx.deps.read() as uow:
        result = uow.bookings.list(ctx.company_id, page, **filters)  # type: ignore[arg-type]
        totals = booking_totals(uow, ctx.company_id, [b.id for b in result.items])
    render = ctx.render()
    return ctx.page_reply(result, lambda b: booking_view(b, render, totals[b.id]))


def get_booking(ctx: Context) -> Reply:
    """One booking, by id or human code, with its activity log."""
    with ctx.deps.read() as uow:
        booking = scheduling.find_booking(uow, ctx.company_id, ctx.path_params["id"])
        totals = booking_totals(uow, ctx.company_id, [booking.id])[booking.id]
    return Reply(booking_with_activity_view(booking, ctx.render(), totals))


def post_cancel(ctx: Context) -> Reply:
    """Cancel one visit, this and future visits, or end a plan after a date."""
    body: CancelBody = ctx.body
    changed = scheduling.cancel_booking(
        ctx.company_id,
        ctx.path_params["id"],
        body.scope,
        after=body.after,
        reason=body.reason,
        uow=ctx.uow(),
        clock=ctx.deps.clock,
    )
    return Reply(cancelled_bookings_view(changed, ctx.render(), _totals(ctx, changed)))


def post_reschedule(ctx: Context) -> Reply:
    """Move a visit (or it and the later ones), checked against real availability."""
    body: RescheduleBody = ctx.body
    changed = scheduling.reschedule_booking(
        ctx.company_id,
        ctx.path_params["id"],
        body.start_iso,
        body.scope,
        crew_ids=body.crew_ids,
        uow=ctx.uow(),
        clock=ctx.deps.clock,
        drive=ctx.deps.drive,
    )
    return Reply(rescheduled_bookings_view(changed, ctx.render(), _totals(ctx, changed)))


def _totals(ctx: Context, changed: Sequence[Booking]) -> dict[str, LedgerTotals]:
    """The ledger totals of bookings a write changed, read once it committed (a cancel or
    a move writes no money)."""
    if not changed:
        return {}
    with ctx.deps.read() as uow:
        return booking_totals(uow, ctx.company_id, [b.id for b in changed])


ENDPOINTS = [
    Endpoint(
        method="GET",
        path="/availability",
        scope="catalog:read",
        handler=get_availability,
        response=AvailabilityView,
        query=AvailabilityQuery,
        tag="scheduling",
        summary="Open start times, ranked by drive time",
    ),
    Endpoint(
        method="GET",
        path="/bookings",
        scope="bookings:read",
        handler=get_bookings,
        response=BookingView,
        paginated=True,
        query=BookingListQuery,
        tag="scheduling",
        summary="List bookings",
    ),
    Endpoint(
        method="POST",
        path="/bookings",
        scope="bookings:write",
        handler=post_booking,
        response=CreatedBookingView,
        body=BookingBody,
        idempotent=True,
        success_status=201,
        tag="scheduling",
        summary="Create a booking: single, recurring, multi-day or several dates",
    ),
    Endpoint(
        method="GET",
        path="/bookings/{id}",
        scope="bookings:read",
        handler=get_booking,
        response=BookingWithActivityView,
        tag="scheduling",
        summary="Fetch a booking by id or human code",
    ),
    Endpoint(
        method="POST",
        path="/bookings/{id}/cancel",
        scope="bookings:write",
        handler=post_cancel,
        response=CancelledBookingsView,
        body=CancelBody,
        idempotent=True,
        tag="scheduling",
        summary="Cancel one visit, this and future visits, or end a plan after a date",
    ),
    Endpoint(
        method="POST",
        path="/bookings/{id}/reschedule",
        scope="bookings:write",
        handler=post_reschedule,
        response=RescheduledBookingsView,
        body=RescheduleBody,
        idempotent=True,
        tag="scheduling",
        summary="Move to a new slot, validated against real availability",
    ),
]
