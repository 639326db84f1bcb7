"""The customer's tracking page: ``/{slug}/track/{token}`` (the booking's ``trackingUrl``).

Open to anyone holding the link (the token is its own authority), inside the company the
address names only: an unknown token and another company's answer the same 404 page. It
shows the visit's status, date and time in the company's timezone, its length, the crew's
first names, the address and the booking code. A link whose tracking has ended (90 days
after completion or cancellation, ``bookings.tracking_active``) answers 410 with a page
saying so and what to do.

While the visit is scheduled and its start at least the company's self-service cutoff
away (``self_service.can_change``), the customer may reschedule it (a date, then one of the
open starts ``self_service.reschedule_times`` lists for it, then POST) or cancel it (a
confirmation page, then POST). Past the cutoff the buttons give way to the sentence of
``SelfServiceClosed``, and a POST is refused with it by the core (nothing changes).
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from attrs import frozen
from starlette.responses import Response
from starlette.routing import BaseRoute

from adapters.web.admin_booking import long_date, price_change
from adapters.web.calendar import read_date, read_instant, service_name
from adapters.web.crew import STATUS_LABELS
from adapters.web.customer import NOT_FOUND, customer_page
from adapters.web.deps import WebDeps
from adapters.web.pages import Handler, Visit, crew_named
from adapters.web.setup_catalog import minutes_text
from adapters.web.time_text import clock_time, zoned_range
from booking_core import plans
from booking_core.availability import Slot
from booking_core.bookings import Booking, BookingStatus, tracking_active
from booking_core.companies import Company
from booking_core.errors import (
    ConflictError,
    InvalidTransition,
    PriceNotConfirmed,
    SelfServiceClosed,
    SlotTaken,
    SlotUnavailable,
    ValidationFailed,
)
from booking_core.services import self_service
from booking_core.users import first_name

DAYS_SHOWN = 14
"""How many dates the reschedule page offers at a glance (any later date can be typed)."""
STATUS_SENTENCES = {
    BookingStatus.SCHEDULED: "Your visit is booked.",
    BookingStatus.IN_PROGRESS: "The crew is at work on your visit now.",
    BookingStatus.COMPLETED: "Your visit is done. Thank you!",
    BookingStatus.CANCELLED: "This visit is cancelled.",
}


@frozen
class TimeChoice:
    """One open start the visit may move to."""

    value: str
    label: str


@frozen
class DayChoice:
    """One date of the reschedule page's quick picks."""

    value: str
    weekday: str
    label: str
    open: bool
    chosen: bool
    current: bool


def _company(visit: Visit) -> Company:
    if visit.company is None:  # customer_page always sets it; a guard for the type checker
        raise NOT_FOUND
    return visit.company


def _token(visit: Visit) -> str:
    return str(visit.request.path_params.get("token", ""))


def _href(company: Company, token: str, rest: str = "") -> str:
    return f"/{company.slug}/track/{token}{rest}"


def _expired(visit: Visit, company: Company, booking: Booking) -> Response:
    """The 410 page of a link whose tracking has ended."""
    ended = booking.completed_at or booking.cancelled_at
    return visit.render(
        "track_expired.html",
        status=410,
        ended=long_date(ended.astimezone(ZoneInfo(company.timezone)).date()) if ended else "",
        done=booking.status is BookingStatus.COMPLETED,
    )


def _load(visit: Visit) -> Booking:
    """The booking of the link, in the address's company only."""
    with visit.deps.reader() as uow:
        return self_service.tracked_booking(uow, _company(visit).id, _token(visit))


def _when(booking: Booking, company: Company) -> tuple[str, str]:
    """(the local date, ``9:00 AM - 12:00 PM EST`` with an en dash) of the visit's first
    day, in the company's timezone (its abbreviation: what customers read on a clock;
    one per end on the night the clocks change)."""
    zone = ZoneInfo(company.timezone)
    local = booking.start.astimezone(zone)
    return long_date(local.date()), zoned_range(local, booking.end.astimezone(zone))


def _crew_first_names(visit: Visit, booking: Booking) -> dict[str, str]:
    """The visit's crew by id, each by first name: all a customer is shown of them."""
    with visit.deps.reader() as uow:
        return {m: first_name(uow.crew.get(booking.company_id, m).name) for m in booking.crew_ids}


def _facts(visit: Visit, company: Company, booking: Booking) -> dict[str, Any]:
    """What every page of the link shows of the visit."""
    crew = list(_crew_first_names(visit, booking).values())
    day, hours = _when(booking, company)
    address = booking.address
    length = minutes_text(booking.duration_minutes)
    if booking.days > 1:
        length = f"{length} a day, {booking.days} days in a row"
    return {
        "booking": booking,
        "service": service_name(booking),
        "status_label": STATUS_LABELS[booking.status],
        "status_sentence": STATUS_SENTENCES[booking.status],
        "day": day,
        "hours": hours,
        "length": length,
        "zone_name": company.timezone.rsplit("/", 1)[-1].replace("_", " "),
        "crew": [name for name in crew if name],
        "street": ", ".join(part for part in (address.line1, address.line2) if part),
        "place": f"{address.city}, {address.state} {address.zip}",
        "home": _href(company, _token(visit)),
        "book_href": f"/{company.slug}/book",
        # Signed in to the portal as this visit's customer: the way back to it.
        "portal_href": (
            f"/{company.slug}/portal"
            if visit.session.customer_of(company.id) == booking.customer_id
            else ""
        ),
    }


def _render_track(
    visit: Visit, booking: Booking, *, alert: str | None = None, status: int = 200
) -> Response:
    company = _company(visit)
    now = visit.deps.clock.now()
    changeable = self_service.can_change(company, booking, now)
    closed = booking.status is BookingStatus.SCHEDULED and not changeable
    going_on = ""  # a plan's visit cancelled alone: when the plan's next visit is
    if plans.cancelled_alone(booking) and booking.plan_id:
        with visit.deps.reader() as uow:
            kept = plans.next_visit(uow.bookings.of_plan(company.id, booking.plan_id), now)
        if kept is not None:
            going_on = long_date(kept.start.astimezone(ZoneInfo(company.timezone)).date())
    return visit.render(
        "track.html",
        status=status,
        can_change=changeable,
        next_visit=going_on,
        closed_message=self_service.closed_message(company) if closed else "",
        alert=alert,
        **_facts(visit, company, booking),
    )


def track_page(visit: Visit) -> Response:
    """``GET /{slug}/track/{token}``."""
    booking = _load(visit)
    if not tracking_active(booking, visit.deps.clock.now()):
        return _expired(visit, _company(visit), booking)
    return _render_track(visit, booking)


def _changeable(visit: Visit) -> Booking | Response:
    """The booking when the customer may change it now; else the page that says why
    (expired link, or the tracking page with its sentence)."""
    booking = _load(visit)
    now = visit.deps.clock.now()
    if not tracking_active(booking, now):
        return _expired(visit, _company(visit), booking)
    if not self_service.can_change(_company(visit), booking, now):
        return visit.redirect(_href(_company(visit), _token(visit)))
    return booking


def _refused(visit: Visit, error: Exception) -> Response:
    """The tracking page as it is now, with the refusal at the top (nothing changed)."""
    booking = _load(visit)
    if not tracking_active(booking, visit.deps.clock.now()):
        return _expired(visit, _company(visit), booking)
    if isinstance(error, InvalidTransition):
        text = f"This visit can no longer be changed online: {error.reason}."
    elif isinstance(error, ConflictError):
        text = "The visit changed meanwhile; here it is as it is now."
    else:
        text = str(error)
    return _render_track(visit, booking, alert=text, status=409)


# --- Reschedule -------------------------------------------------------------------------


def _reschedule_page(
    visit: Visit,
    booking: Booking,
    chosen: date | None,
    *,
    errors: dict[str, str] | None = None,
    status: int = 200,
) -> Response:
    company = _company(visit)
    deps = visit.deps
    days = self_service.reschedule_days(
        company, booking, DAYS_SHOWN, uow=deps.reader(), clock=deps.clock, drive=deps.drive
    )
    first = days[0][0]
    last = first + timedelta(days=self_service.ONLINE_DAYS_AHEAD)
    errors = dict(errors or {})
    times: list[Slot] = []
    if chosen is not None and not first <= chosen <= last:
        errors.setdefault("date", f"Choose a date from {long_date(first)} to {long_date(last)}.")
        chosen = None
    if chosen is not None:
        times = self_service.reschedule_times(
            company, booking, chosen, uow=deps.reader(), clock=deps.clock, drive=deps.drive
        )
    moves = (
        self_service.priced_moves(
            company.id, booking.id, times[0].start, uow=deps.reader(), clock=deps.clock
        )
        if times
        else []
    )
    zone = ZoneInfo(company.timezone)
    choices = [
        DayChoice(
            value=day.isoformat(),
            weekday=f"{day:%a}",
            label=f"{day:%b} {day.day}",
            open=is_open,
            chosen=day == chosen,
            current=day == booking.start.astimezone(zone).date(),
        )
        for day, is_open in days
    ]
    return visit.render(
        "track_reschedule.html",
        status=status,
        days=choices,
        chosen=chosen,
        chosen_label=long_date(chosen) if chosen else "",
        times=[
            TimeChoice(s.start.isoformat(), clock_time(s.start.astimezone(zone))) for s in times
        ],
        first=first.isoformat(),
        last=last.isoformat(),
        errors=errors,
        price_change=price_change(booking.price, moves[0][1].price) if moves else "",
        price=moves[0][1].price.total_cents if moves else booking.price.total_cents,
        **_facts(visit, company, booking),
    )


def reschedule_page(visit: Visit) -> Response:
    """``GET /{slug}/track/{token}/reschedule[?date=YYYY-MM-DD]``: the dates, and the open
    starts of the chosen one."""
    booking = _changeable(visit)
    if isinstance(booking, Response):
        return booking
    text = visit.request.query_params.get("date", "").strip()
    chosen = read_date(text) if text else None
    errors = {"date": "Enter a date, e.g. 2026-03-14."} if text and chosen is None else {}
    return _reschedule_page(visit, booking, chosen, errors=errors, status=422 if errors else 200)


def reschedule(visit: Visit) -> Response:
    """``POST /{slug}/track/{token}/reschedule``: ``start`` (one of the listed starts)."""
    company = _company(visit)
    token = _token(visit)
    deps = visit.deps
    text = visit.field("start").strip()
    chosen = read_date(visit.field("date"))
    new_start = read_instant(text)
    if new_start is None:
        booking = _changeable(visit)
        if isinstance(booking, Response):
            return booking
        errors = {"start": "Choose one of the times listed."}
        return _reschedule_page(visit, booking, chosen, errors=errors, status=422)
    shown = visit.field("price").strip()  # the total the form showed for the new time
    try:
        changed = self_service.customer_reschedule(
            company.id,
            token,
            new_start,
            shown_total_cents=int(shown) if re.fullmatch(r"[0-9]{1,18}", shown) else None,
            uow=deps.uow(),
            clock=deps.clock,
            drive=deps.drive,
        )
    except (PriceNotConfirmed, SlotTaken, SlotUnavailable, ValidationFailed) as refused:
        booking = _changeable(visit)
        if isinstance(booking, Response):
            return booking
        if isinstance(refused, PriceNotConfirmed):  # the page again, showing it
            message = (
                "The price for this date is shown below. Choose a time again to move your visit."
            )
        elif isinstance(refused, SlotTaken):
            message = "That time was just taken. Choose another."
        elif isinstance(refused, SlotUnavailable):
            reason = crew_named(refused.reason, _crew_first_names(visit, booking))
            message = f"That time is not open: {reason}. Choose another."
        else:
            message = "Choose one of the times listed."
        day = new_start.astimezone(ZoneInfo(company.timezone)).date()
        return _reschedule_page(visit, booking, day, errors={"start": message}, status=409)
    except (SelfServiceClosed, InvalidTransition, ConflictError) as refused:
        return _refused(visit, refused)
    if not changed:
        return visit.redirect(_href(company, token), flash="That is already your visit's time.")
    local = changed[0].start.astimezone(ZoneInfo(company.timezone))
    flash = f"Your visit is moved to {long_date(local.date())}, {clock_time(local)}."
    return visit.redirect(_href(company, token), flash=flash)


# --- Cancel ------------------------------------------------------------------------------


def cancel_page(visit: Visit) -> Response:
    """``GET /{slug}/track/{token}/cancel``: are you sure?"""
    booking = _changeable(visit)
    if isinstance(booking, Response):
        return booking
    return visit.render("track_cancel.html", **_facts(visit, _company(visit), booking))


def cancel(visit: Visit) -> Response:
    """``POST /{slug}/track/{token}/cancel``."""
    company = _company(visit)
    token = _token(visit)
    deps = visit.deps
    try:
        self_service.customer_cancel(company.id, token, uow=deps.uow(), clock=deps.clock)
    except (SelfServiceClosed, InvalidTransition, ConflictError) as refused:
        return _refused(visit, refused)
    return visit.redirect(_href(company, token), flash="Your visit is cancelled.")


def _by_method(get: Handler, post: Handler) -> Handler:
    """One handler of a page that shows a form (GET) and takes it (POST)."""

    def handler(visit: Visit) -> Response:
        return post(visit) if visit.request.method == "POST" else get(visit)

    return handler


def routes(deps: WebDeps) -> list[BaseRoute]:
    """The tracking page, and its reschedule and cancel pages with their actions."""
    both = ("GET", "POST")
    base = "/{slug}/track/{token}"
    return [
        customer_page(base, deps, track_page),
        customer_page(
            f"{base}/reschedule", deps, _by_method(reschedule_page, reschedule), methods=both
        ),
        customer_page(f"{base}/cancel", deps, _by_method(cancel_page, cancel), methods=both),
    ]
