"""``/availability`` and ``/bookings``: open slots, booking of every shape, fetch by id or
human code, cancel and reschedule with scopes."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from attrs import field, frozen

from adapters.http.booking_schemas import (
    AVAILABILITY_SCHEMA,
    BOOKING_SCHEMA,
    BOOKING_WITH_ACTIVITY_SCHEMA,
    CANCELLED_BOOKINGS_SCHEMA,
    CREATED_BOOKING_SCHEMA,
    RESCHEDULED_BOOKINGS_SCHEMA,
)
from adapters.http.endpoint import Context, Endpoint, QueryParam, Reply
from adapters.http.routes.catalog import Item, selected
from adapters.http.routes.customers import AddressBody
from adapters.http.structuring import Code, Email, Id, Name, Note, Phone, ShortText, Zip, structure
from booking_core.availability import Slot
from booking_core.bookings import Booking, BookingStatus, tracking_url
from booking_core.errors import RuleViolation, ValidationFailed
from booking_core.paging import PageRequest
from booking_core.plans import CancelScope, RescheduleScope
from booking_core.pricing import SelectedItem
from booking_core.services import scheduling


@frozen(kw_only=True)
class CustomerBody:
    """Who the job is for; an existing email books for that customer."""

    name: Name
    email: Email
    phone: Phone | None = None


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
    coupon_code: Code | None = None
    referral_code: Code | None = None
    notes: Note = ""
    crew_ids: tuple[Id, ...] | None = field(
        default=None, metadata={"description": "otherwise the best-ranked free crew"}
    )
    days: int = 1
    additional_start_isos: tuple[datetime, ...] = ()


@frozen(kw_only=True)
class CancelBody:
    """``this``, ``this_and_future``, or ``plan_after`` (with ``after``, a local date)."""

    scope: CancelScope = CancelScope.THIS
    after: date | None = None
    reason: ShortText | None = None


@frozen(kw_only=True)
class RescheduleBody:
    """A new start (checked against real availability) for this visit or this and later."""

    start_iso: datetime
    crew_ids: tuple[Id, ...] | None = None
    scope: RescheduleScope = RescheduleScope.THIS


def render_booking(ctx: Context, b: Booking, *, activity: bool = False) -> dict[str, Any]:
    """One booking as the API shows it."""
    render = ctx.render()
    out: dict[str, Any] = {
        "id": b.id,
        "code": b.code,
        "status": b.status.value,
        "customerId": b.customer_id,
        "serviceId": b.service_id,
        "frequencySlug": b.frequency_slug,
        "startIso": render.time(b.start),
        "endIso": render.time(b.end),
        "durationMinutes": b.duration_minutes,
        "days": b.days,
        "crewIds": list(b.crew_ids),
        "address": render.address(b.address),
        "price": render.breakdown(b.price),
        "notes": b.notes,
        "planId": b.plan_id,
        "visitIndex": b.visit_index,
        "groupId": b.group_id,
        "quoteId": b.quote_id,
        "trackingUrl": tracking_url(render.base_url, render.slug, b.tracking_token),
        "createdAt": render.time(b.created_at),
        "updatedAt": render.time(b.updated_at),
        "completedAt": render.time(b.completed_at),
        "cancelledAt": render.time(b.cancelled_at),
        "cancelReason": b.cancel_reason,
    }
    if activity:
        out["activity"] = [
            {"at": render.time(e.at), "kind": e.kind.value, "details": e.details}
            for e in b.activity
        ]
    return out


def _items(text: str | None, name: str) -> tuple[SelectedItem, ...]:
    """``id:quantity,id`` in a query string."""
    if not text:
        return ()
    items = []
    for index, part in enumerate(text.split(",")):
        item_id, _, quantity = part.strip().partition(":")
        if not item_id or (quantity and not quantity.isdigit()):
            raise ValidationFailed({f"{name}.{index}": "Use id or id:quantity."})
        items.append(SelectedItem(item_id, int(quantity) if quantity else 1))
    return tuple(items)


@frozen(kw_only=True)
class _AvailabilityQuery:
    service_id: Id
    date: date
    zip: Zip
    frequency_slug: Id = "one_time"
    days: str = "1"


def get_availability(ctx: Context) -> Reply:
    """Open start times for a service, date and zip, ranked by drive time."""
    known = {"serviceId", "date", "zip", "frequencySlug", "days"}
    query = structure({k: v for k, v in ctx.query.items() if k in known}, _AvailabilityQuery)
    if not query.days.isdigit() or not 1 <= int(query.days) <= 14:
        raise ValidationFailed({"days": "A whole number from 1 to 14."})
    crew = ctx.query.get("crewIds")
    crew_ids = tuple(c for c in crew.split(",") if c) if crew else None
    if crew_ids == ():  # e.g. ``crewIds=,``: named, but no member in it
        raise ValidationFailed({"crewIds": "Comma-separated crew ids, at least one."})
    slots = scheduling.list_availability(
        scheduling.AvailabilityRequest(
            company_id=ctx.company_id,
            service_id=query.service_id,
            local_date=query.date,
            zip_code=query.zip,
            frequency_slug=query.frequency_slug,
            parameters=_items(ctx.query.get("parameters"), "parameters"),
            extras=_items(ctx.query.get("extras"), "extras"),
            crew_ids=crew_ids,
            days=int(query.days),
        ),
        uow=ctx.deps.read(),
        clock=ctx.deps.clock,
        drive=ctx.deps.drive,
    )
    render = ctx.render()

    def slot(s: Slot) -> dict[str, Any]:
        return {
            "startIso": render.time(s.start),
            "endIso": render.time(s.end),
            "crewIds": list(s.crew_ids),
            "driveMinutes": s.drive_minutes,
        }

    return Reply({"data": [slot(s) for s in slots]})


def post_booking(ctx: Context) -> Reply:
    """Book; the reply is the first booking, with every booking made under ``bookings``."""
    body: BookingBody = ctx.body
    if body.referral_code is not None:
        raise RuleViolation("Referral codes are not enabled for this company.")
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
            notes=body.notes,
            crew_ids=body.crew_ids,
            days=body.days,
            additional_starts=body.additional_start_isos,
        ),
        uow=ctx.uow(),
        clock=ctx.deps.clock,
        drive=ctx.deps.drive,
        phones=ctx.deps.phones,
    )
    first = render_booking(ctx, made[0], activity=True)
    return Reply({**first, "bookings": [render_booking(ctx, b) for b in made]}, 201)


def _status(ctx: Context) -> BookingStatus | None:
    raw = ctx.query.get("status")
    if raw is None:
        return None
    try:
        return BookingStatus(raw)
    except ValueError:
        options = ", ".join(s.value for s in BookingStatus)
        raise ValidationFailed({"status": f"One of {options}."}) from None


def _instant(ctx: Context, name: str) -> datetime | None:
    raw = ctx.query.get(name)
    if raw is None:
        return None
    try:
        value: datetime = structure({"t": raw}, _T).t
    except ValidationFailed as failed:
        raise ValidationFailed({name: failed.field_errors["t"]}) from None
    return value


@frozen
class _T:
    t: datetime


def get_bookings(ctx: Context) -> Reply:
    """List bookings by status, customer, crew member (``crewId``), start window."""
    starts_from, starts_until = _instant(ctx, "from"), _instant(ctx, "to")
    filters = {
        "status": _status(ctx),
        "customer_id": ctx.query.get("customerId") or None,
        "crew_id": ctx.query.get("crewId") or None,
        "starts_from": starts_from,
        "starts_until": starts_until,
    }
    page: PageRequest = ctx.page_request("bookings", filters)
    with ctx.deps.read() as uow:
        result = uow.bookings.list(ctx.company_id, page, **filters)  # type: ignore[arg-type]
    return ctx.page_reply(result, lambda b: render_booking(ctx, b))


def get_booking(ctx: Context) -> Reply:
    """One booking, by id or human code, with its activity log."""
    with ctx.deps.read() as uow:
        booking = scheduling.find_booking(uow, ctx.company_id, ctx.path_params["id"])
    return Reply(render_booking(ctx, booking, activity=True))


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
    return Reply({"data": [render_booking(ctx, b) for b in changed]})


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
    return Reply({"data": [render_booking(ctx, b, activity=True) for b in changed]})


ENDPOINTS = [
    Endpoint(
        method="GET",
        path="/availability",
        scope="catalog:read",
        handler=get_availability,
        response=AVAILABILITY_SCHEMA,
        query=(
            QueryParam("serviceId", "the service (required)"),
            QueryParam("date", "local date, YYYY-MM-DD (required)"),
            QueryParam("zip", "5-digit zip of the job (required)"),
            QueryParam("frequencySlug", "the plan; default one_time"),
            QueryParam("parameters", "id:quantity,... (job length)"),
            QueryParam("extras", "id:quantity,... (job length)"),
            QueryParam("crewIds", "only these members, all together"),
            QueryParam("days", "multi-day job: 1..14"),
        ),
        tag="scheduling",
        summary="Open start times, ranked by drive time",
    ),
    Endpoint(
        method="GET",
        path="/bookings",
        scope="bookings:read",
        handler=get_bookings,
        response=BOOKING_SCHEMA,
        paginated=True,
        query=(
            QueryParam("status", "scheduled, in_progress, completed or cancelled"),
            QueryParam("customerId", "bookings of one customer"),
            QueryParam("crewId", "a crew member's bookings (team jobs included)"),
            QueryParam("from", "starting at or after (ISO 8601 with offset)"),
            QueryParam("to", "starting before (ISO 8601 with offset)"),
        ),
        tag="scheduling",
        summary="List bookings",
    ),
    Endpoint(
        method="POST",
        path="/bookings",
        scope="bookings:write",
        handler=post_booking,
        response=CREATED_BOOKING_SCHEMA,
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
        response=BOOKING_WITH_ACTIVITY_SCHEMA,
        tag="scheduling",
        summary="Fetch a booking by id or human code",
    ),
    Endpoint(
        method="POST",
        path="/bookings/{id}/cancel",
        scope="bookings:write",
        handler=post_cancel,
        response=CANCELLED_BOOKINGS_SCHEMA,
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
        response=RESCHEDULED_BOOKINGS_SCHEMA,
        body=RescheduleBody,
        idempotent=True,
        tag="scheduling",
        summary="Move to a new slot, validated against real availability",
    ),
]
