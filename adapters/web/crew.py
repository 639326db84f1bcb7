"""The crew portal: ``/crew`` lists the signed-in crew member's jobs of today and the next
7 days in the company's timezone, and ``POST /crew/start`` and ``POST /crew/complete``
move one of them on (the domain's ``start_booking`` and ``complete_booking``, the only
ways a booking reaches ``in_progress`` and ``completed``).

A crew member sees only their own jobs, and of the customer only the first name. The job
is named in the form, never trusted: another crew member's job, or another company's,
answers the same 404 page as an id that never existed. A crew member made inactive sees
no job at all (a page saying so), and can start or complete none.

Starting a job whose start is more than an hour away asks first ("This job starts on
... Start it now?"): one tap on tomorrow's card is not a start.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from attrs import frozen
from starlette.responses import Response
from starlette.routing import BaseRoute

from adapters.web.deps import WebDeps
from adapters.web.nav import CREW
from adapters.web.pages import PageError, Visit, page
from adapters.web.time_text import clock_range, clock_time
from booking_core.bookings import Booking, BookingStatus, completion_problem
from booking_core.crew import CrewMember
from booking_core.errors import ConflictError, InvalidTransition, NotFoundError, RuleViolation
from booking_core.pricing import LineKind
from booking_core.services.scheduling import (
    complete_booking,
    crew_jobs,
    find_booking,
    start_booking,
)
from booking_core.users import first_name

DAYS = 8
"""Today and the next 7 days."""
ASK_BEFORE_START = timedelta(hours=1)
"""Starting a job whose start is further away than this asks first."""
STATUS_LABELS = {
    BookingStatus.SCHEDULED: "Scheduled",
    BookingStatus.IN_PROGRESS: "In progress",
    BookingStatus.COMPLETED: "Completed",
    BookingStatus.CANCELLED: "Cancelled",
}


@frozen
class JobCard:
    """What the portal shows of one job."""

    id: str
    code: str
    status: str
    status_label: str
    starts: str
    ends: str
    days: int
    street: str
    place: str
    access_notes: str
    customer: str
    service: str
    extras: tuple[str, ...]
    details: tuple[str, ...]
    can_start: bool
    can_complete: bool
    complete_from: str = ""
    """For a job started before its date: when it can be completed ("Complete it on
    Wednesday, November 25.")."""


@frozen
class Day:
    """One local date's jobs."""

    heading: str
    jobs: tuple[JobCard, ...]


def day_heading(day: date, today: date) -> str:
    """``Today · Tuesday, December 8``, ``Tomorrow · ...``, else the date alone."""
    label = f"{day:%A}, {day:%B} {day.day}"
    if day == today:
        return f"Today · {label}"
    if day == today + timedelta(days=1):
        return f"Tomorrow · {label}"
    return label


def job_card(booking: Booking, customer_name: str, at: datetime, zone: ZoneInfo) -> JobCard:
    """The card of one job as of ``at``, its times in ``zone`` (the company's timezone)."""
    local = booking.start.astimezone(zone)
    address = booking.address
    lines = booking.price.lines
    service = booking.service_label
    extras = tuple(
        line.name if line.quantity == 1 else f"{line.name} \u00d7 {line.quantity}"
        for line in lines
        if line.kind is LineKind.EXTRA
    )
    details = tuple(
        f"{line.name}: {line.quantity}" for line in lines if line.kind is LineKind.PARAMETER
    )
    street = ", ".join(part for part in (address.line1, address.line2) if part)
    starts, ends = clock_range(local, booking.end.astimezone(zone))
    in_progress = booking.status is BookingStatus.IN_PROGRESS
    early = in_progress and completion_problem(booking, at) is not None
    return JobCard(
        id=booking.id,
        code=booking.code,
        status=booking.status.value,
        status_label=STATUS_LABELS[booking.status],
        starts=starts,
        ends=ends,
        days=booking.days,
        street=street,
        place=f"{address.city}, {address.state} {address.zip}",
        access_notes=address.access_notes,
        customer=first_name(customer_name) or "Customer",
        service=service,
        extras=extras,
        details=details,
        can_start=booking.status is BookingStatus.SCHEDULED,
        # In progress, from its own date on (``completion_problem``): started early, a
        # later day's job shows when it can be completed instead of the button.
        can_complete=in_progress and not early,
        complete_from=f"Complete it on {local:%A}, {local:%B} {local.day}." if early else "",
    )


def crew_portal(visit: Visit) -> Response:
    """``GET /crew``: the member's jobs, day by day."""
    company = visit.signed_in_company
    member = _active_member(visit)
    zone = ZoneInfo(company.timezone)
    now = visit.deps.clock.now()
    today = now.astimezone(zone).date()
    jobs = crew_jobs(company.id, member.id, today, DAYS, uow=visit.deps.reader())
    with visit.deps.reader() as uow:
        names = {
            cid: uow.customers.get(company.id, cid).name for cid in {b.customer_id for b in jobs}
        }
    by_day: dict[date, list[JobCard]] = {}
    for booking in jobs:
        day = max(booking.start.astimezone(zone).date(), today)  # begun earlier: today
        card = job_card(booking, names[booking.customer_id], now, zone)
        by_day.setdefault(day, []).append(card)
    days = [Day(day_heading(day, today), tuple(cards)) for day, cards in sorted(by_day.items())]
    return visit.render(
        "crew.html", member=member, days=days, last_day=today + timedelta(days=DAYS - 1)
    )


def _active_member(visit: Visit) -> CrewMember:
    """The signed-in user's crew member; one made inactive is refused, at once, with a
    page saying so (403), so that none of their jobs (addresses, access notes) shows."""
    user, company = visit.signed_in_user, visit.signed_in_company
    if user.crew_member_id is None:  # the crew role always has one; a guard for the type checker
        raise NotFoundError("crew member", user.id)
    with visit.deps.reader() as uow:
        member = uow.crew.get(company.id, user.crew_member_id)
    if not member.active:
        raise PageError(
            403,
            "Your crew profile is inactive",
            f"{company.name} has made your crew profile inactive, so no jobs are shown here"
            " and none can be started or completed. If this is a mistake, ask the office to"
            " make it active again.",
            home_button=False,  # "Back to my jobs" is this page
        )
    return member


Move = Callable[..., Booking]


def _move(visit: Visit, move: Move, verb: str) -> Response:
    company = visit.signed_in_company
    member = _active_member(visit)
    booking_id = visit.field("booking").strip()
    if not booking_id:
        raise NotFoundError("booking", booking_id)
    deps = visit.deps
    try:
        moved = move(
            company.id,
            booking_id,
            crew_member_id=member.id,
            uow=deps.uow(),
            clock=deps.clock,
        )
    except InvalidTransition as refused:
        with deps.reader() as uow:
            found = find_booking(uow, company.id, booking_id)
        flash = f"Job {found.code} could not be {verb}: {refused.reason}."
        return visit.redirect(f"/crew#job-{found.id}", flash=flash)
    except ConflictError:
        return visit.redirect("/crew", flash="The job changed meanwhile; here it is as it is now.")
    except RuleViolation as refused:
        return visit.redirect("/crew", flash=refused.message)
    return visit.redirect(f"/crew#job-{moved.id}", flash=f"Job {moved.code} {verb}.")


def start(visit: Visit) -> Response:
    """``POST /crew/start``: scheduled -> in progress. A job whose start is more than an
    hour away is started only once confirmed (``confirmed=yes``, from the page that asks)."""
    if visit.field("confirmed") != "yes":
        asked = _ask_before_start(visit)
        if asked is not None:
            return asked
    return _move(visit, start_booking, "started")


def _ask_before_start(visit: Visit) -> Response | None:
    """The page asking "Start it now?" for one of the member's scheduled jobs that starts
    more than an hour from now; None to start it at once (anything else is left to the
    start itself: another's job is its 404 page, a started one its message)."""
    company = visit.signed_in_company
    member = _active_member(visit)
    booking_id = visit.field("booking").strip()
    with visit.deps.reader() as uow:
        try:
            booking = find_booking(uow, company.id, booking_id)
        except NotFoundError:
            return None
    now = visit.deps.clock.now()
    if (
        member.id not in booking.crew_ids
        or booking.status is not BookingStatus.SCHEDULED
        or booking.start - now <= ASK_BEFORE_START
    ):
        return None
    return visit.render(
        "crew_start_confirm.html",
        booking=booking,
        question=start_question(booking.start, ZoneInfo(company.timezone)),
    )


def start_question(start: datetime, zone: ZoneInfo) -> str:
    """``This job starts on Wednesday, November 25 at 8:30 AM. Start it now?``"""
    local = start.astimezone(zone)
    day = f"{local:%A}, {local:%B} {local.day}"
    return f"This job starts on {day} at {clock_time(local)}. Start it now?"


def complete(visit: Visit) -> Response:
    """``POST /crew/complete``: in progress -> completed."""
    return _move(visit, complete_booking, "completed")


def routes(deps: WebDeps) -> list[BaseRoute]:
    """The crew portal's page and its two actions."""
    return [
        page("/crew", deps, crew_portal, roles=CREW),
        page("/crew/start", deps, start, methods=("POST",), roles=CREW),
        page("/crew/complete", deps, complete, methods=("POST",), roles=CREW),
    ]
