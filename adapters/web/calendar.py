"""The admin calendar: ``/admin/calendar?view=day|week&date=YYYY-MM-DD`` shows the
company's bookings by crew member for one local date or the seven dates of its week
(Monday to Sunday), in the company's timezone.

The bookings of the range are read in one query (``crew_jobs`` for the whole crew); a
job of several crew members shows in each member's row, a multi-day job on each of its
days. Cancelled jobs are hidden unless ``cancelled=1``; then they are shown muted. Each
block links to the booking's page (``adapters.web.admin_booking``), where it is started,
completed, cancelled or rescheduled.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from attrs import frozen
from starlette.responses import Response
from starlette.routing import BaseRoute

from adapters.web.crew import STATUS_LABELS
from adapters.web.deps import WebDeps
from adapters.web.nav import ADMINS
from adapters.web.pages import FIRST_DATE, LAST_DATE, Visit, page
from adapters.web.time_text import DASH, clock_range, short_range
from booking_core.bookings import Booking, BookingStatus
from booking_core.crew import CrewMember
from booking_core.errors import NotFoundError
from booking_core.services.scheduling import active_crew, crew_jobs
from booking_core.users import first_name

VIEWS = ("day", "week")
DATE_ERROR = "Enter a date as YYYY-MM-DD, e.g. 2026-03-14, between 1970 and 2999."
ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


@frozen
class Block:
    """One booking on one date in one crew member's row."""

    id: str
    code: str
    status: str
    status_label: str
    starts: str
    ends: str
    customer: str
    service: str
    span: str
    """The times for a narrow cell: ``8:00\u201310:25 AM``, ``11:00 AM\u20131:25 PM``."""
    day_note: str
    """``Day 2 of 3`` for a multi-day job, else empty."""


@frozen
class Column:
    """One local date of the range."""

    day: date
    label: str
    short: str
    is_today: bool
    href: str
    """The day view of this date."""


@frozen
class Row:
    """One crew member and their blocks, one tuple per date of the range."""

    member_id: str
    name: str
    inactive: bool
    cells: tuple[tuple[Block, ...], ...]

    @property
    def count(self) -> int:
        """How many jobs the row holds: a multi-day job's days are one job."""
        return len({made.id for cell in self.cells for made in cell})


def read_date(text: str) -> date | None:
    """``YYYY-MM-DD`` as a date from 1970 to 2999 (the dates a calendar can step around
    without leaving what Python's dates hold); None for anything else."""
    text = text.strip()
    if not ISO_DATE.fullmatch(text):  # not the basic form (20261125) nor a week date
        return None
    try:
        day = date.fromisoformat(text)
    except ValueError:
        return None
    return day if FIRST_DATE <= day <= LAST_DATE else None


def read_instant(text: str) -> datetime | None:
    """An ISO 8601 instant with its UTC offset, on a date ``read_date`` takes; None for
    anything else (year 1 or 9999 would overflow when moved to another timezone)."""
    try:
        instant = datetime.fromisoformat(text)
    except ValueError:
        return None
    if instant.utcoffset() is None or not FIRST_DATE <= instant.date() <= LAST_DATE:
        return None
    return instant


def service_name(booking: Booking) -> str:
    """What the booking is called (``Booking.service_label``)."""
    return booking.service_label


def block(booking: Booking, customer_name: str, index: int, zone: ZoneInfo) -> Block:
    """The block of day ``index`` (0-based) of ``booking``, its times in ``zone`` (the
    company's: a booking made before the company changed its timezone keeps its own for
    its days, but is shown on the company's clock like every other)."""
    start, end = (instant.astimezone(zone) for instant in booking.day_blocks()[index])
    starts, ends = clock_range(start, end)
    return Block(
        id=booking.id,
        code=booking.code,
        status=booking.status.value,
        status_label=STATUS_LABELS[booking.status],
        starts=starts,
        ends=ends,
        span=short_range(start, end),
        customer=first_name(customer_name) or "Customer",
        service=service_name(booking),
        day_note=f"Day {index + 1} of {booking.days}" if booking.days > 1 else "",
    )


def range_title(first: date, days: int) -> str:
    """``Monday, March 14, 2026`` or ``March 9 \u2013 15, 2026`` (across months and years too)."""
    if days == 1:
        return f"{first:%A}, {first:%B} {first.day}, {first.year}"
    last = first + timedelta(days=days - 1)
    if first.year != last.year:
        return f"{first:%B} {first.day}, {first.year} {DASH} {last:%B} {last.day}, {last.year}"
    if first.month != last.month:
        return f"{first:%B} {first.day} {DASH} {last:%B} {last.day}, {last.year}"
    return f"{first:%B} {first.day} {DASH} {last.day}, {last.year}"


def calendar_href(view: str, day: date, cancelled: bool) -> str:
    """The calendar's address for a view, a date and the cancelled toggle."""
    query = {"view": view, "date": day.isoformat()}
    if cancelled:
        query["cancelled"] = "1"
    return f"/admin/calendar?{urlencode(query)}"


def _rows(
    jobs: list[Booking],
    crew: list[CrewMember],
    others: dict[str, CrewMember],
    names: dict[str, str],
    first: date,
    days: int,
    zone: ZoneInfo,
) -> list[Row]:
    """A row per active crew member (by name), then one per other member a job names."""
    placed: dict[str, list[list[tuple[datetime, str, Block]]]] = {}
    for booking in jobs:
        for index, (start, _) in enumerate(booking.day_blocks()):
            offset = (start.astimezone(zone).date() - first).days
            if not 0 <= offset < days:
                continue
            made = (start, booking.id, block(booking, names[booking.customer_id], index, zone))
            for member_id in booking.crew_ids:
                row = placed.setdefault(member_id, [[] for _ in range(days)])
                row[offset].append(made)
    # Each date's blocks in the order of that date's times (a multi-day job's later day
    # sorts by its start that day, not by the job's first).
    cells = {
        member_id: [[made for _, _, made in sorted(cell, key=lambda p: p[:2])] for cell in row]
        for member_id, row in placed.items()
    }
    members = sorted(crew, key=lambda m: m.name.casefold()) + sorted(
        others.values(), key=lambda m: m.name.casefold()
    )
    return [
        Row(
            member_id=member.id,
            name=member.name,
            inactive=not member.active or member.id in others,
            cells=tuple(tuple(cell) for cell in cells.get(member.id, [[] for _ in range(days)])),
        )
        for member in members
    ]


def calendar(visit: Visit) -> Response:
    """``GET /admin/calendar``: the day or week grid."""
    company = visit.signed_in_company
    zone = ZoneInfo(company.timezone)
    today = visit.deps.clock.now().astimezone(zone).date()
    params = visit.request.query_params
    view = params.get("view", "day")
    if view not in VIEWS:
        view = "day"
    show_cancelled = params.get("cancelled") == "1"
    asked = params.get("date", "").strip()
    errors: dict[str, str] = {}
    day = today
    if asked:
        found = read_date(asked)
        if found is None:
            errors["date"] = DATE_ERROR
        else:
            day = found
    days = 7 if view == "week" else 1
    first = day - timedelta(days=day.weekday()) if view == "week" else day
    step = timedelta(days=days)

    jobs = crew_jobs(company.id, None, first, days, uow=visit.deps.reader(), cancelled=True)
    hidden = sum(1 for b in jobs if b.status is BookingStatus.CANCELLED)
    if not show_cancelled:
        jobs = [b for b in jobs if b.status is not BookingStatus.CANCELLED]
    with visit.deps.reader() as uow:
        crew = active_crew(uow, company.id)
        active = {m.id for m in crew}
        others: dict[str, CrewMember] = {}
        for member_id in {m for b in jobs for m in b.crew_ids} - active:
            try:
                others[member_id] = uow.crew.get(company.id, member_id)
            except NotFoundError:  # never deleted today; a guard all the same
                continue
        names = {
            cid: uow.customers.get(company.id, cid).name for cid in {b.customer_id for b in jobs}
        }
    columns = [
        Column(
            day=d,
            label=f"{d:%A}, {d:%B} {d.day}",
            short=f"{d:%a} {d.day}",
            is_today=d == today,
            href=calendar_href("day", d, show_cancelled),
        )
        for d in (first + timedelta(days=i) for i in range(days))
    ]
    rows = _rows(jobs, crew, others, names, first, days, zone)
    return visit.render(
        "calendar.html",
        status=422 if errors else 200,
        view=view,
        title=range_title(first, days),
        day=day,
        asked=asked if errors else day.isoformat(),
        errors=errors,
        columns=columns,
        rows=rows,
        total=sum(row.count for row in rows),
        jobs=len(jobs),
        show_cancelled=show_cancelled,
        cancelled_count=hidden,
        is_today=first <= today < first + step,
        links={
            # None past the dates the calendar reads: no step leads to a refusal.
            "previous": calendar_href(view, first - step, show_cancelled)
            if first - step >= FIRST_DATE
            else None,
            "next": calendar_href(view, first + step, show_cancelled)
            if first + step <= LAST_DATE
            else None,
            "today": calendar_href(view, today, show_cancelled),
            "day": calendar_href("day", day, show_cancelled),
            "week": calendar_href("week", day, show_cancelled),
            "toggle": calendar_href(view, day, not show_cancelled),
        },
    )


def routes(deps: WebDeps) -> list[BaseRoute]:
    """The calendar page."""
    return [page("/admin/calendar", deps, calendar, roles=ADMINS)]
