"""Recurring plans, and the scoped changes of cancel and reschedule.

A plan is the visits of one recurring frequency: they share ``plan_id`` and are numbered
by ``visit_index`` (0 is the first, priced ``Visit.FIRST``; the rest ``Visit.LATER``).
Visits fall every ``interval_days`` local dates at the same wall-clock time in the
company's zone, so a DST change never moves the visit hour. They are materialised up to
a rolling horizon (``PLAN_HORIZON_DAYS`` local days) and ``extend_plan`` adds the missing
ones, priced on the terms the plan was booked with (``kept_coupon_terms``).

``cancel_visits`` and ``reschedule`` take the visits of the target's plan (or the single
booking) and return only the bookings they changed, in ``visit_index`` order, for the
caller to store in one transaction. Availability is the caller's check.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import attrs

from booking_core.booking_orders import (
    LAST_JOB_DATE,
    LAST_START,
    BookingOrder,
    PriceVisit,
    crew_errors,
    dates_errors,
    distinct_codes,
    make_visit,
    new_booking,
    new_multi_date,
    order_errors,
    order_of,
    start_problem,
)
from booking_core.bookings import (
    MAX_DAYS,
    ActivityKind,
    Booking,
    BookingStatus,
    DetailValue,
    cancel,
    local_wall,
    reason_errors,
    record,
    refusal,
    require_scheduled,
    wall_clock_instant,
)
from booking_core.catalog import Catalog
from booking_core.clock import require_aware
from booking_core.coupons import normalize_code
from booking_core.errors import NotFoundError, ValidationFailed
from booking_core.ids import new_id
from booking_core.pricing import LineKind, PriceBreakdown, Selection, Visit, redated

PLAN_HORIZON_DAYS = 56
"""Visits are materialised up to eight weeks (of local dates) ahead of now, or of a later
first visit."""


class CancelScope(enum.StrEnum):
    """Which visits a cancel reaches."""

    THIS = "this"
    THIS_AND_FUTURE = "this_and_future"
    PLAN_AFTER = "plan_after"


class RescheduleScope(enum.StrEnum):
    """Which visits a reschedule moves."""

    THIS = "this"
    THIS_AND_FUTURE = "this_and_future"


# --- The rhythm ------------------------------------------------------------------------


def plan_horizon_end(first_start: datetime, at: datetime, zone: ZoneInfo) -> datetime:
    """Where a plan's materialised visits stop (exclusive): ``PLAN_HORIZON_DAYS`` local
    dates in ``zone`` after the later of now and the first visit, at its wall-clock time.

    Counted in local days, not in 24-hour steps of UTC: across a DST change those would
    end the horizon an hour off the visits' wall clock, letting one more visit in (spring)
    than in any other eight weeks.
    """
    local = max(first_start, at).astimezone(zone)
    day = local.date() + timedelta(days=PLAN_HORIZON_DAYS)
    if day > LAST_JOB_DATE:  # no visit on a date the API cannot name
        end = wall_clock_instant(LAST_JOB_DATE + timedelta(days=1), time(0), zone)
    else:
        end = wall_clock_instant(day, local.time(), zone, fold=local.fold)
    return min(end, LAST_START)  # nor at an instant already in 2200 in UTC


def _rhythm(anchor: datetime, interval_days: int, zone: ZoneInfo, steps: int) -> Iterator[datetime]:
    """Instants ``steps``, ``steps + 1``, ... intervals after ``anchor``, on its wall clock."""
    local = anchor.astimezone(zone)
    wall: time = local.time()
    day: date = local.date()
    while True:
        yield wall_clock_instant(
            day + timedelta(days=steps * interval_days), wall, zone, fold=local.fold
        )
        steps += 1


def plan_visits(
    first_start: datetime, interval_days: int, horizon_end: datetime, zone: ZoneInfo
) -> list[datetime]:
    """The visit starts of a plan (UTC): ``first_start`` (always), then every
    ``interval_days`` local dates at its wall-clock time, while before ``horizon_end``.

    A wall-clock time a DST gap skips on some date moves forward by the gap that day.
    """
    if interval_days < 1:
        raise ValueError("interval_days must be >= 1")
    starts = [next(_rhythm(first_start, interval_days, zone, 0))]
    for start in _rhythm(first_start, interval_days, zone, 1):
        if start >= horizon_end:
            break
        starts.append(start)
    return starts


# --- Creating and extending ------------------------------------------------------------


def kept_plan_terms(catalog: Catalog, selection: Selection) -> Catalog:
    """``catalog`` as a plan booked with ``selection`` is priced from when it is extended:
    its coupon kept (``kept_coupon_terms``), and its service bookable even if the company
    has since retired it (``active: false``). Retiring a service stops new bookings of
    it, not the plans customers already have, as archiving a price does not end a
    subscription; a service removed from the catalog cannot be priced and the plan is
    reported, not extended (the catalog import refuses that removal while a plan is open).
    """
    kept = kept_coupon_terms(catalog, selection)
    service = kept.services_by_id.get(selection.service_id)
    if service is None or service.active:
        return kept
    industries = tuple(
        attrs.evolve(
            industry,
            services=tuple(
                attrs.evolve(s, active=True) if s.id == service.id else s for s in industry.services
            ),
        )
        for industry in kept.industries
    )
    return attrs.evolve(kept, industries=industries)


def kept_coupon_terms(catalog: Catalog, selection: Selection) -> Catalog:
    """``catalog`` as a plan booked with ``selection`` is priced from when it is extended:
    the plan's coupon keeps its discount with none of its rules judged again.

    The coupon was checked once, when the plan was booked (window, activity, redemption
    limits, service, frequency, minimum); a later visit is part of that booking, so a
    coupon that has since expired, been switched off or used up still applies to it. A
    coupon removed from the catalog cannot be priced and is refused as ``unknown``.
    """
    if selection.coupon_code is None:
        return catalog
    key = normalize_code(selection.coupon_code)
    coupons = tuple(
        attrs.evolve(
            coupon,
            active=True,
            valid_from=None,
            valid_until=None,
            max_redemptions=None,
            per_customer_limit=None,
            min_subtotal_cents=0,
            service_ids=frozenset(),
            frequency_slugs=frozenset(),
        )
        if coupon.normalized_code == key
        else coupon
        for coupon in catalog.coupons
    )
    return attrs.evolve(catalog, coupons=coupons)


def new_plan(
    order: BookingOrder,
    *,
    start: datetime,
    interval_days: int,
    price_visit: PriceVisit,
    at: datetime,
    horizon_end: datetime | None = None,
    rng: random.Random | None = None,
) -> list[Booking]:
    """The materialised visits of a new recurring plan, first visit at ``start``.

    Raises ``ValidationFailed`` like ``new_booking``, and on ``days`` when a multi-day
    job would not end before the next visit (``days`` > ``interval_days``).
    """
    require_aware(at, "at")
    if not order.recurring:
        raise ValueError("a one-time frequency is booked with new_booking")
    errors = order_errors(order)
    errors.update(request_errors(start, zone=order.zone, at=at, days=order.days,
                                 interval_days=interval_days))  # fmt: skip
    if errors:
        raise ValidationFailed(errors)
    horizon = horizon_end or plan_horizon_end(start, at, order.zone)
    plan_id = new_id("pln")
    visits = [
        make_visit(
            order,
            start=when,
            price=price_visit(when, Visit.FIRST if index == 0 else Visit.LATER),
            at=at,
            rng=rng,
            plan_id=plan_id,
            visit_index=index,
        )
        for index, when in enumerate(plan_visits(start, interval_days, horizon, order.zone))
    ]
    return distinct_codes(visits, rng=rng)


def plan_ends_on(visits: Sequence[Booking]) -> date | None:
    """The last local date a plan may visit on, once it was ended; None while it runs."""
    ends = [v.plan_ends_on for v in visits if v.plan_ends_on is not None]
    return min(ends) if ends else None


def extend_plan(
    visits: Sequence[Booking],
    until: datetime,
    *,
    interval_days: int,
    price_visit: PriceVisit,
    at: datetime,
    rng: random.Random | None = None,
) -> list[Booking]:
    """The visits missing after the plan's last one and before ``until`` (none when the
    plan has ended, or when they already exist: calling it again adds nothing).

    The rhythm continues from the last visit that is not cancelled (its ``planned_start``,
    so a visit moved alone does not move the plan); the crew, address, selection and notes
    are the last visit's; each new visit is priced ``Visit.LATER``. A date of the rhythm
    that a visit of the plan not cancelled was moved onto gets no second visit: that
    one takes its place (its index stays unused).
    """
    require_aware(at, "at")
    if not visits or visits[0].plan_id is None:
        raise ValueError("extend_plan takes the visits of one plan")
    if any(v.plan_id != visits[0].plan_id for v in visits):
        raise ValueError("extend_plan takes the visits of one plan")
    last = max(visits, key=lambda v: v.visit_index)
    live = [v for v in visits if v.status is not BookingStatus.CANCELLED]
    anchor = max(live or [last], key=lambda v: v.visit_index)
    taken = {start.astimezone(anchor.zone).date() for v in live for start, _ in v.day_blocks()}
    ends_on = plan_ends_on(visits)
    order = order_of(last)
    added: list[Booking] = []
    steps = last.visit_index - anchor.visit_index + 1
    rhythm = _rhythm(anchor.planned_start or anchor.start, interval_days, anchor.zone, steps)
    for index, when in enumerate(rhythm, start=last.visit_index + 1):
        if when >= until or (ends_on and when.astimezone(anchor.zone).date() > ends_on):
            break
        visit = make_visit(
            order,
            start=when,
            price=price_visit(when, Visit.LATER),
            at=at,
            rng=rng,
            plan_id=last.plan_id,
            visit_index=index,
            details={"planExtension": True},
        )
        if any(start.astimezone(anchor.zone).date() in taken for start, _ in visit.day_blocks()):
            continue  # a visit of the plan was moved onto this date already
        added.append(attrs.evolve(visit, plan_ends_on=ends_on))
    return distinct_codes(added, rng=rng)


def cancelled_alone(visit: Booking) -> bool:
    """Whether ``visit`` is a plan's visit cancelled on its own (scope ``this``), so the
    plan goes on, rather than with the later visits or by ending the plan."""
    if visit.plan_id is None or visit.status is not BookingStatus.CANCELLED:
        return False
    cancels = [a for a in visit.activity if a.kind is ActivityKind.CANCELLED]
    return bool(cancels) and cancels[-1].details.get("scope") in (None, CancelScope.THIS)


def next_visit(visits: Sequence[Booking], after: datetime) -> Booking | None:
    """The plan's earliest visit still scheduled and starting after ``after``, if any: what
    a customer whose one visit was cancelled still has booked."""
    later = [v for v in visits if v.status is BookingStatus.SCHEDULED and v.start > after]
    return min(later, key=lambda v: (v.start, v.id), default=None)


def days_past_interval(days: int, interval_days: int | None) -> str | None:
    """Why a job of ``days`` days cannot be a plan repeating every ``interval_days`` days
    (its visits would overlap), or None when it can (or the job does not repeat)."""
    if interval_days is not None and days > interval_days:
        return f"A job of {days} days cannot repeat every {interval_days} days."
    return None


def request_errors(
    start: datetime,
    *,
    zone: ZoneInfo,
    at: datetime,
    days: int = 1,
    interval_days: int | None = None,
    additional_starts: Sequence[datetime] = (),
) -> dict[str, str]:
    """What ``book`` would refuse in a create request's dates and day count, found without
    the calendar: a start off the quarter hour in ``zone``, in the past or without an
    offset; ``days`` past a plan's ``interval_days``; several dates on a plan, or dates
    ``dates_errors`` refuses. Callers check it before they look for a slot, so such a
    request is ``invalid_request`` on its field whatever the calendar holds."""
    if additional_starts:
        errors = dates_errors(start, additional_starts, zone, at)
        if interval_days is not None:
            errors["additional_start_isos"] = (
                "Only for one-time bookings: a plan books its own dates."
            )
        return errors
    problem = start_problem(start, zone, at)
    errors = {"start_iso": problem} if problem else {}
    if (too_long := days_past_interval(days, interval_days)) and days <= MAX_DAYS:
        errors["days"] = too_long
    elif (
        1 < days <= MAX_DAYS
        and problem is None
        and start.astimezone(zone).date() + timedelta(days=days - 1) > LAST_JOB_DATE
    ):
        errors["days"] = f"The job's last day would fall after {LAST_JOB_DATE.isoformat()}."
    return errors


def reschedule_errors(
    new_start: datetime, crew_ids: Sequence[str] | None, *, zone: ZoneInfo, at: datetime
) -> dict[str, str]:
    """What ``reschedule`` refuses in a request whatever the calendar holds: a new start
    ``start_problem`` refuses (no offset, off the quarter hour in ``zone``, in the past),
    crew ids ``crew_errors`` refuses. Callers check it before they look for a slot, so
    such a request is ``invalid_request`` on its field, as when booking."""
    errors = crew_errors(crew_ids) if crew_ids is not None else {}
    if problem := start_problem(new_start, zone, at):
        errors["start_iso"] = problem
    return errors


def book(
    order: BookingOrder,
    *,
    start: datetime,
    price_visit: PriceVisit,
    at: datetime,
    interval_days: int | None = None,
    additional_starts: Sequence[datetime] = (),
    horizon_end: datetime | None = None,
    rng: random.Random | None = None,
) -> list[Booking]:
    """A create request of any shape: a plan (``interval_days`` of a recurring frequency),
    several dates (``additional_starts``), or one booking; ``days`` applies to each."""
    if order.recurring != (interval_days is not None):
        raise ValueError("interval_days is given exactly for a recurring frequency")
    if interval_days is not None:
        if additional_starts:
            raise ValidationFailed(
                {"additional_start_isos": "Only for one-time bookings: a plan books its own dates."}
            )
        return new_plan(
            order,
            start=start,
            interval_days=interval_days,
            price_visit=price_visit,
            at=at,
            horizon_end=horizon_end,
            rng=rng,
        )
    if additional_starts:
        return new_multi_date(
            order,
            start=start,
            additional_starts=additional_starts,
            price_visit=price_visit,
            at=at,
            rng=rng,
        )
    return [new_booking(order, start=start, price=price_visit(start, Visit.FIRST), at=at, rng=rng)]


# --- Scoped changes --------------------------------------------------------------------


def _target(visits: Sequence[Booking], target_id: str) -> tuple[Booking, list[Booking]]:
    """The target and the later visits of its plan (by ``visit_index``; none outside one)."""
    target = next((v for v in visits if v.id == target_id), None)
    if target is None:
        raise NotFoundError("booking", target_id)
    later = sorted(
        (
            v
            for v in visits
            if target.plan_id is not None
            and v.plan_id == target.plan_id
            and v.visit_index > target.visit_index
        ),
        key=lambda v: v.visit_index,
    )
    return target, later


def _not_begun(visit: Booking, at: datetime) -> bool:
    return visit.status is BookingStatus.SCHEDULED and visit.start > at


def cancel_visits(
    visits: Sequence[Booking],
    target_id: str,
    scope: CancelScope,
    *,
    at: datetime,
    reason: str | None = None,
    after: date | None = None,
    by_customer: bool = False,
) -> list[Booking]:
    """Cancel with a scope; returns the changed bookings in ``visit_index`` order.

    ``this``: the target. ``this_and_future``: the target and every later visit of its
    plan that is scheduled and not yet begun; the plan ends. ``plan_after``: every visit
    of the target's plan that is scheduled, not yet begun and on a local date after
    ``after``; the plan ends on ``after``. Started, completed, cancelled and past visits are
    never cancelled. The end (``plan_ends_on``) goes on each visit cancelled and on the
    plan's last scheduled visit (a ``plan_ended`` entry when it is not cancelled with
    them); a completed or cancelled visit is never changed. ``InvalidTransition`` when the
    target cannot be cancelled (or, for ``plan_after``, belongs to no plan).
    ``by_customer``: the customer cancelled on their own page; the entries say so
    (``by: "customer"``).
    """
    require_aware(at, "at")
    errors = reason_errors(reason)
    if scope is CancelScope.PLAN_AFTER and after is None:
        errors["after"] = "Required with scope plan_after."
    elif scope is not CancelScope.PLAN_AFTER and after is not None:
        errors["after"] = "Only used with scope plan_after."
    if errors:
        raise ValidationFailed(errors)
    target, later = _target(visits, target_id)
    details: dict[str, DetailValue] = {"scope": scope.value}
    if by_customer:
        details["by"] = "customer"
    if scope is CancelScope.THIS or (
        target.plan_id is None and scope is CancelScope.THIS_AND_FUTURE
    ):
        return [cancel(target, at, reason, details=details)]
    mates = [v for v in visits if v.plan_id == target.plan_id]
    if scope is CancelScope.THIS_AND_FUTURE:
        require_scheduled(target, "cancel")
        doomed = [target, *(v for v in later if _not_begun(v, at))]
        ends = (target.planned_start or target.start).astimezone(target.zone).date()
        ends -= timedelta(days=1)
    else:
        if target.plan_id is None or after is None:
            raise refusal(target, "end the plan of", "it is not part of a recurring plan")
        zone = target.zone
        doomed = [v for v in mates if _not_begun(v, at) and v.start.astimezone(zone).date() > after]
        ends = after
    ended = plan_ends_on(mates)
    ends = min(ends, ended or ends)
    by_target: dict[str, DetailValue] = {"targetId": target.id}
    changed = {
        v.id: attrs.evolve(
            cancel(v, at, reason, details=details if v is target else details | by_target),
            plan_ends_on=ends,
        )
        for v in doomed
    }
    # A completed or cancelled visit keeps what it has; a plan without a scheduled visit
    # is never extended again (``plan_upkeep``), so it needs no end written.
    last = max(
        (v for v in mates if v.status is BookingStatus.SCHEDULED),
        key=lambda v: v.visit_index,
        default=None,
    )
    # Noted only when the end moves (earlier, or for the first time): ending a plan again
    # on a later date changes nothing.
    moved = ended is None or ends < ended
    if last is not None and last.id not in changed and last.plan_ends_on != ends and moved:
        changed[last.id] = record(
            last,
            at,
            ActivityKind.PLAN_ENDED,
            {"scope": scope.value, "endsOn": ends.isoformat(), "targetId": target.id},
            plan_ends_on=ends,
        )
    return sorted(changed.values(), key=lambda v: v.visit_index)


def reschedule(
    visits: Sequence[Booking],
    target_id: str,
    new_start: datetime,
    scope: RescheduleScope,
    *,
    at: datetime,
    cutoff_hours: int,
    crew_ids: Sequence[str] | None = None,
    catalog: Catalog | None = None,
    by_customer: bool = False,
) -> list[Booking]:
    """Move the target to ``new_start`` (and, for ``this_and_future``, every later visit of
    its plan that is scheduled and not yet begun by the same wall-clock shift, so each keeps
    its spacing and local time of day across DST). Returns the changed bookings.

    Admin-grade: never refused for the self-service cutoff; each moved visit's activity
    entry carries ``insideCutoff: true`` when its old or new start is less than
    ``cutoff_hours`` after ``at``. ``crew_ids`` reassigns every moved visit. With
    ``catalog`` each moved visit's price is re-dated (``moved_price``: its date fees
    follow it) and an entry whose total changed carries ``fromTotalCents`` and
    ``toTotalCents``; without it prices are kept. Durations are always kept.
    ``by_customer``: the customer moved it on their own page; each entry says so
    (``by: "customer"``).
    """
    require_aware(at, "at")
    target, later = _target(visits, target_id)
    zone = target.zone
    if errors := reschedule_errors(new_start, crew_ids, zone=zone, at=at):
        raise ValidationFailed(errors)
    require_scheduled(target, "reschedule")
    shift = local_wall(new_start, zone) - _meant_wall(
        target.start, zone, _rhythm_time(visits, target)
    )
    moving = [target]
    if scope is RescheduleScope.THIS_AND_FUTURE:
        moving += [v for v in later if _not_begun(v, at)]
    changed = []
    for visit in moving:
        rhythm = _rhythm_time(visits, visit)
        if visit is target:
            start = new_start.astimezone(UTC)
        else:
            start = _shifted(visit.start, shift, zone, rhythm)
        planned = visit.planned_start
        if planned is not None and scope is RescheduleScope.THIS_AND_FUTURE:
            planned = _shifted(planned, shift, zone, rhythm)
        crew = tuple(crew_ids) if crew_ids is not None else visit.crew_ids
        if start == visit.start and crew == visit.crew_ids and planned == visit.planned_start:
            continue
        breakdown = visit.price if catalog is None else moved_price(visit, start, catalog)
        minutes = visit.duration_minutes
        cutoff = at + timedelta(hours=cutoff_hours)
        details: dict[str, DetailValue] = {
            "scope": scope.value,
            "from": visit.local_start.isoformat(),
            "to": start.astimezone(zone).isoformat(),
            "insideCutoff": min(visit.start, start) < cutoff,
        }
        if visit is not target:
            details["targetId"] = target.id
        if by_customer:
            details["by"] = "customer"
        if crew != visit.crew_ids:
            details["crewIds"] = ",".join(crew)
        if breakdown.total_cents != visit.price.total_cents:
            details["fromTotalCents"] = visit.price.total_cents
            details["toTotalCents"] = breakdown.total_cents
        changed.append(
            record(
                visit,
                at,
                ActivityKind.RESCHEDULED,
                details,
                start=start,
                end=start + timedelta(minutes=minutes),
                duration_minutes=minutes,
                price=breakdown,
                selection=attrs.evolve(visit.selection, start=start),
                crew_ids=crew,
                planned_start=planned,
            )
        )
    return changed


def catalog_priced(visit: Booking) -> bool:
    """True when ``visit``'s price was made from the catalog: its first line is its
    service's own base line (discountable). A booking made from a hand-priced quote carries
    the quote's lines instead (``line_0``, ..., never discountable) and no date fees."""
    first = visit.price.lines[0] if visit.price.lines else None
    return (
        first is not None
        and first.kind is LineKind.BASE
        and first.id == visit.service_id
        and first.discountable
    )


def moved_price(visit: Booking, start: datetime, catalog: Catalog) -> PriceBreakdown:
    """The price of ``visit`` moved to ``start``: re-dated (``pricing.redated``) for its
    new local date in the company's timezone, as pricing picks date fees (a multi-day job
    by its first day). A move within the same local date, and a hand-priced visit, keep
    the price as agreed."""
    new_date = start.astimezone(catalog.zone).date()
    if not catalog_priced(visit) or new_date == visit.start.astimezone(catalog.zone).date():
        return visit.price
    return redated(visit.price, catalog, new_date)


def _rhythm_time(visits: Sequence[Booking], visit: Booking) -> time | None:
    """The time of day the plan kept just before ``visit``: the planned start of the
    plan's visit before it (by ``visit_index``), in the visit's zone; None for a first
    visit (or outside a plan)."""
    before = [
        v
        for v in visits
        if visit.plan_id is not None
        and v.plan_id == visit.plan_id
        and v.visit_index < visit.visit_index
    ]
    if not before:
        return None
    previous = max(before, key=lambda v: v.visit_index)
    return local_wall(previous.planned_start or previous.start, visit.zone).time()


def _meant_wall(instant: datetime, zone: ZoneInfo, rhythm: time | None) -> datetime:
    """The wall-clock reading a visit at ``instant`` stands for: the plan's time of day
    (``rhythm``, ``_rhythm_time``) when a DST gap pushed it on (02:30 shown as 03:30 on the
    night the clocks spring forward), else its own reading."""
    local = local_wall(instant, zone)
    if (
        rhythm is not None
        and rhythm != local.time()
        and wall_clock_instant(local.date(), rhythm, zone) == instant
    ):
        return datetime.combine(local.date(), rhythm)
    return local


def _shifted(instant: datetime, shift: timedelta, zone: ZoneInfo, rhythm: time | None) -> datetime:
    """``instant`` moved by ``shift`` of wall-clock time in ``zone``, from the reading it
    stands for (``_meant_wall``), so a visit a DST gap had pushed on lands at the plan's
    new time of day with the others."""
    moved = _meant_wall(instant, zone, rhythm) + shift
    return wall_clock_instant(moved.date(), moved.time(), zone)
