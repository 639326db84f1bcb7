"""Bookings: one job at one address for one customer, done by one or more crew members.

This module holds the record, its lifecycle, human codes and tracking; creating bookings
is ``booking_core.booking_orders``, plans and scoped cancel/reschedule ``booking_core.plans``.

A booking is a frozen value. Every change goes through a function here or in
``booking_core.plans`` that takes the instant ``at`` and returns a new booking with
``version`` one higher, ``updated_at == at`` and one more entry in its activity log.

Statuses (DECISIONS.md): ``scheduled`` -> ``in_progress`` -> ``completed``, and
``scheduled`` -> ``cancelled``. A scheduled job may also be completed directly once its
start has come (a crew that never pressed start). Nothing leaves ``completed`` or
``cancelled``; a refused transition raises ``InvalidTransition`` and changes nothing.

Instants are stored in UTC. ``timezone`` is the company's zone: local dates, wall-clock
times, the days of a multi-day job and the rhythm of a plan are reckoned in it.
"""

from __future__ import annotations

import enum
import random
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import attrs
from attrs import field, frozen

from booking_core.booking_forms import Answer
from booking_core.clock import require_aware
from booking_core.customers import Address, VisitStatus
from booking_core.customers import Visit as CustomerVisit
from booking_core.errors import InvalidTransition, ValidationFailed
from booking_core.ids import CROCKFORD, crockford_code  # noqa: F401 (the codes' alphabet)
from booking_core.pricing import LineKind, PriceBreakdown, Selection

CODE_LENGTH = 5
CODE_PATTERN = re.compile(r"^[A-Z]{2}-[0-9A-HJKMNP-TV-Z]{5}\Z")
"""A canonical human booking code, e.g. ``SC-7K3QX``."""
NOTES_MAX = 2_000
CANCEL_REASON_MAX = 500
MAX_DAYS = 14
"""A multi-day job spans at most this many consecutive local dates."""
MAX_DURATION_MINUTES = 23 * 60
"""Longest block of one day: shorter than the shortest (23-hour) day, so the blocks of a
multi-day job never overlap."""
TRACKING_DAYS = 90
"""The tracking page stops working this many days after completion or cancellation."""

_PREFIX_PATTERN = re.compile(r"^[A-Z]{2}\Z")
_CROCKFORD_ALIASES = str.maketrans({"O": "0", "I": "1", "L": "1"})

DetailValue = str | int | bool


# --- Human codes ---------------------------------------------------------------------


def human_code(prefix: str, rng: random.Random | None = None) -> str:
    """A fresh code: the company's two-letter ``codePrefix``, a hyphen, five Crockford
    characters (``SC-7K3QX``). ``rng`` defaults to the operating system's randomness."""
    if not _PREFIX_PATTERN.match(prefix):
        raise ValueError(f"a code prefix is two capital letters, got {prefix!r}")
    return f"{prefix}-{crockford_code(CODE_LENGTH, rng)}"


def is_human_code(text: str) -> bool:
    """True when ``text`` is a code in canonical form (capitals, no look-alikes)."""
    return CODE_PATTERN.match(text) is not None


def normalize_human_code(text: str) -> str | None:
    """The canonical code a person meant, forgiving case, surrounding spaces and Crockford's
    look-alikes in the five characters (O for 0, I and L for 1); None if it is no code."""
    prefix, sep, body = text.strip().upper().partition("-")
    candidate = f"{prefix}{sep}{body.translate(_CROCKFORD_ALIASES)}"
    return candidate if is_human_code(candidate) else None


# --- Values ----------------------------------------------------------------------------


class BookingStatus(enum.StrEnum):
    """Where a booking stands (DECISIONS.md)."""

    SCHEDULED = "scheduled"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    CANCELLED = "cancelled"


OPEN_STATUSES = frozenset({BookingStatus.SCHEDULED, BookingStatus.IN_PROGRESS})
"""Statuses of a job still to be done (it occupies its crew's time)."""


class ActivityKind(enum.StrEnum):
    """What an activity entry records."""

    CREATED = "created"
    STARTED = "started"
    START_UNDONE = "start_undone"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    RESCHEDULED = "rescheduled"
    PLAN_ENDED = "plan_ended"
    QUOTE_LINKED = "quote_linked"
    CUSTOMER_MERGED = "customer_merged"


@frozen
class ActivityEntry:
    """One event in a booking's history; ``data`` holds JSON-ready details (camelCase keys)."""

    at: datetime
    kind: ActivityKind
    data: tuple[tuple[str, DetailValue], ...] = ()

    @property
    def details(self) -> dict[str, DetailValue]:
        """``data`` as a dict."""
        return dict(self.data)


def _utc(value: datetime) -> datetime:
    return require_aware(value).astimezone(UTC)


def _utc_or_none(value: datetime | None) -> datetime | None:
    return None if value is None else _utc(value)


@frozen(kw_only=True)
class Booking:
    """One job. ``price`` is the breakdown of this visit; ``end == start + duration``.

    A plan's visits share ``plan_id`` (``visit_index`` 0 is the first visit); dates booked
    together share ``group_id`` (``visit_index`` is then the position in the request:
    0 for ``startIso``, ``n + 1`` for ``additionalStartIsos.n``). ``planned_start`` is
    where the plan's rhythm puts a plan visit (it differs from ``start`` after the visit
    alone was moved); ``plan_ends_on`` is the last local date the plan may visit on.
    ``form_id`` is the booking form it was made through, if any, and ``answers`` the
    intake answers given there (``booking_core.booking_forms``).
    """

    id: str
    company_id: str
    code: str
    customer_id: str
    service_id: str
    frequency_slug: str
    selection: Selection
    price: PriceBreakdown
    timezone: str
    start: datetime = field(converter=_utc)
    end: datetime = field(converter=_utc)
    duration_minutes: int
    crew_ids: tuple[str, ...]
    address: Address
    tracking_token: str
    created_at: datetime = field(converter=_utc)
    updated_at: datetime = field(converter=_utc)
    status: BookingStatus = BookingStatus.SCHEDULED
    days: int = 1
    notes: str = ""
    plan_id: str | None = None
    visit_index: int = 0
    planned_start: datetime | None = field(default=None, converter=_utc_or_none)
    plan_ends_on: date | None = None
    group_id: str | None = None
    quote_id: str | None = None
    completed_at: datetime | None = field(default=None, converter=_utc_or_none)
    cancelled_at: datetime | None = field(default=None, converter=_utc_or_none)
    cancel_reason: str | None = None
    activity: tuple[ActivityEntry, ...] = ()
    version: int = 1
    form_id: str | None = None
    answers: tuple[Answer, ...] = ()

    def __attrs_post_init__(self) -> None:
        ZoneInfo(self.timezone)  # refuses an unknown zone early
        if not 1 <= self.duration_minutes <= MAX_DURATION_MINUTES:
            raise ValueError(f"duration_minutes must be 1..{MAX_DURATION_MINUTES}")
        if self.end - self.start != timedelta(minutes=self.duration_minutes):
            raise ValueError("end must be start + duration_minutes")
        if not 1 <= self.days <= MAX_DAYS:
            raise ValueError(f"days must be 1..{MAX_DAYS}")
        if not self.crew_ids:
            raise ValueError("a booking has at least one crew member")
        if self.visit_index < 0 or self.version < 1:
            raise ValueError("visit_index must be >= 0 and version >= 1")
        if (self.status is BookingStatus.COMPLETED) != (self.completed_at is not None):
            raise ValueError("completed_at is set exactly when the booking is completed")
        if (self.status is BookingStatus.CANCELLED) != (self.cancelled_at is not None):
            raise ValueError("cancelled_at is set exactly when the booking is cancelled")

    @property
    def zone(self) -> ZoneInfo:
        """The zone the booking was made in (the company's then): its days and a plan's
        rhythm are reckoned in it. Pages and emails show its times in the company's
        timezone now, which a change of the company's zone may make another."""
        return ZoneInfo(self.timezone)

    @property
    def local_start(self) -> datetime:
        """``start`` in the booking's own zone (``zone``)."""
        return self.start.astimezone(self.zone)

    @property
    def is_open(self) -> bool:
        """True while the job is still to be done (scheduled or in progress)."""
        return self.status in OPEN_STATUSES

    @property
    def service_label(self) -> str:
        """What the job is called on pages and in emails: its service's name (the base
        line priced for ``service_id``); for a job priced by hand on a quote, whose base
        lines are the quote's own, those lines' descriptions, one after another."""
        base = [line for line in self.price.lines if line.kind is LineKind.BASE]
        named = next((line.name for line in base if line.id == self.service_id), None)
        return named if named is not None else ", ".join(line.name for line in base)

    def day_blocks(self) -> tuple[tuple[datetime, datetime], ...]:
        """Each day's (start, end), half-open, in UTC: the start's wall-clock time on
        ``days`` consecutive local dates, each for the whole ``duration_minutes``.

        A wall-clock time a DST gap skips on a later date moves forward by the gap.
        """
        local = self.local_start
        length = timedelta(minutes=self.duration_minutes)
        blocks = []
        for offset in range(self.days):
            start = wall_clock_instant(
                local.date() + timedelta(days=offset), local.time(), self.zone, fold=local.fold
            )
            blocks.append((start, start + length))
        return tuple(blocks)

    @property
    def last_end(self) -> datetime:
        """End of the last day's block (``end`` for a one-day job)."""
        return self.day_blocks()[-1][1]


# --- Wall-clock time -------------------------------------------------------------------


def wall_clock_instant(day: date, wall: time, zone: ZoneInfo, *, fold: int = 0) -> datetime:
    """The UTC instant the clocks of ``zone`` show ``wall`` on local ``day``.

    A wall-clock time skipped by a DST gap moves forward by the gap (02:30 on a
    spring-forward night becomes 03:30); an ambiguous one takes ``fold`` (0: the first).
    """
    local = datetime.combine(day, wall.replace(tzinfo=None), tzinfo=zone).replace(fold=fold)
    instant = local.astimezone(UTC)
    if fold and local_wall(instant, zone) != local.replace(tzinfo=None):
        instant = local.replace(fold=0).astimezone(UTC)
    return instant


def local_wall(instant: datetime, zone: ZoneInfo) -> datetime:
    """The naive wall-clock reading of ``instant`` in ``zone``."""
    return instant.astimezone(zone).replace(tzinfo=None)


# --- Changing --------------------------------------------------------------------------


def entry(at: datetime, kind: ActivityKind, details: Mapping[str, DetailValue]) -> ActivityEntry:
    """An activity entry; details are kept in the order given."""
    return ActivityEntry(_utc(at), kind, tuple(details.items()))


def record(
    booking: Booking,
    at: datetime,
    kind: ActivityKind,
    details: Mapping[str, DetailValue],
    **changes: Any,
) -> Booking:
    """``booking`` with ``changes`` and one activity entry, one version higher, at ``at``."""
    require_aware(at, "at")
    return attrs.evolve(
        booking,
        version=booking.version + 1,
        updated_at=at,
        activity=(*booking.activity, entry(at, kind, details)),
        **changes,
    )


def refiled(booking: Booking, customer_id: str, at: datetime) -> Booking:
    """``booking`` filed under another customer (the survivor of a merge of its own
    customer), with a ``customer_merged`` entry naming both records."""
    details = {"fromCustomerId": booking.customer_id, "toCustomerId": customer_id}
    return record(booking, at, ActivityKind.CUSTOMER_MERGED, details, customer_id=customer_id)


def refusal(booking: Booking, action: str, reason: str) -> InvalidTransition:
    """The ``InvalidTransition`` refusing ``action`` on ``booking``."""
    return InvalidTransition("booking", booking.id, booking.status.value, action, reason)


_NOT_CANCELLABLE = {
    BookingStatus.IN_PROGRESS: "the job has already started",
    BookingStatus.COMPLETED: "the job is already completed",
    BookingStatus.CANCELLED: "it is already cancelled",
}


def require_scheduled(booking: Booking, action: str) -> None:
    """Refuse ``action`` unless the booking is still scheduled, naming why."""
    if booking.status is not BookingStatus.SCHEDULED:
        raise refusal(booking, action, _NOT_CANCELLABLE[booking.status])


def start_job(booking: Booking, at: datetime) -> Booking:
    """The crew starts the job: ``scheduled`` -> ``in_progress`` (early starts allowed)."""
    require_scheduled(booking, "start")
    return record(booking, at, ActivityKind.STARTED, {}, status=BookingStatus.IN_PROGRESS)


def undo_start(booking: Booking, at: datetime) -> Booking:
    """A start made by mistake taken back: ``in_progress`` -> ``scheduled`` (the job can
    then be moved or cancelled again); anything but a job in progress is refused."""
    if booking.status is not BookingStatus.IN_PROGRESS:
        raise refusal(booking, "undo the start of", "only a job in progress can be taken back")
    return record(booking, at, ActivityKind.START_UNDONE, {}, status=BookingStatus.SCHEDULED)


def completion_problem(booking: Booking, at: datetime) -> str | None:
    """Why ``booking`` cannot be completed at ``at``, or None. A job in progress can be
    completed from its own date on (company time; started early that day, it may end
    before its start time), not on an earlier day: a job done on another day is moved
    there first, so its record says when it took place. A scheduled job can be completed
    once its start has come (the crew never pressed start)."""
    if booking.status is BookingStatus.SCHEDULED:
        return "the job has not started yet" if at < booking.start else None
    if booking.status is not BookingStatus.IN_PROGRESS:
        return _NOT_CANCELLABLE[booking.status]
    day = booking.local_start.date()
    if at.astimezone(booking.zone).date() < day:
        return f"the job is not until {day.strftime('%A, %B')} {day.day}"
    return None


def complete_job(booking: Booking, at: datetime) -> Booking:
    """The crew finishes: ``in_progress`` -> ``completed``; also ``scheduled`` ->
    ``completed`` once the start has come (``skippedStart`` in the activity); refused
    as ``completion_problem`` says."""
    if problem := completion_problem(booking, at):
        raise refusal(booking, "complete", problem)
    details: dict[str, DetailValue] = {}
    if booking.status is BookingStatus.SCHEDULED:
        details["skippedStart"] = True
    return record(
        booking,
        at,
        ActivityKind.COMPLETED,
        details,
        status=BookingStatus.COMPLETED,
        completed_at=at,
    )


def reason_errors(reason: str | None) -> dict[str, str]:
    """Field errors of a cancellation reason."""
    if reason is not None and len(reason) > CANCEL_REASON_MAX:
        return {"reason": f"At most {CANCEL_REASON_MAX} characters."}
    return {}


def cancel(
    booking: Booking,
    at: datetime,
    reason: str | None = None,
    *,
    details: Mapping[str, DetailValue] | None = None,
) -> Booking:
    """Cancel one scheduled booking; refused once started, completed or cancelled."""
    errors = reason_errors(reason)
    if errors:
        raise ValidationFailed(errors)
    require_scheduled(booking, "cancel")
    written = dict(details or {})
    if reason:
        written["reason"] = reason
    return record(
        booking,
        at,
        ActivityKind.CANCELLED,
        written,
        status=BookingStatus.CANCELLED,
        cancelled_at=at,
        cancel_reason=reason or None,
    )


# --- Tracking and statistics -----------------------------------------------------------


def tracking_ends_at(booking: Booking) -> datetime | None:
    """When the tracking page stops working: ``TRACKING_DAYS`` after completion or
    cancellation; None while the job is open."""
    ended = booking.completed_at or booking.cancelled_at
    return None if ended is None else ended + timedelta(days=TRACKING_DAYS)


def tracking_active(booking: Booking, at: datetime) -> bool:
    """True while the tracking page works at instant ``at``."""
    ends = tracking_ends_at(booking)
    return ends is None or require_aware(at, "at") < ends


def tracking_url(base_url: str, slug: str, token: str) -> str:
    """The customer's tracking page: ``{base}/{slug}/track/{token}``."""
    return f"{base_url.rstrip('/')}/{slug}/track/{token}"


def customer_visits(bookings: Iterable[Booking]) -> list[CustomerVisit]:
    """The visits customer lifetime and churn statistics count: one per booking (a
    multi-day job is one visit), at its start, with its status."""
    return [CustomerVisit(b.start, VisitStatus(b.status.value)) for b in bookings]
