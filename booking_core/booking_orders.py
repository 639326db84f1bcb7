"""Creating bookings: one visit (``new_booking``, multi-day with ``days``) or several dates
booked together (``new_multi_date``, all or nothing). Plans live in ``booking_core.plans``,
whose ``book`` picks the right builder for a create request.

A ``BookingOrder`` says what is booked apart from when; a ``PriceVisit`` prices one visit
at its start (date fees depend on the date). Builders check every field first and raise
one ``ValidationFailed`` naming all dotted paths in snake_case (``start_iso``,
``additional_start_isos.2``, ``days``, ``notes``, ``address.zip``, ``crew_ids``);
availability is the caller's check.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import attrs
from attrs import frozen

from booking_core.booking_forms import Answer
from booking_core.bookings import (
    MAX_DAYS,
    MAX_DURATION_MINUTES,
    NOTES_MAX,
    ActivityKind,
    Booking,
    DetailValue,
    entry,
    human_code,
)
from booking_core.catalog import ONE_TIME, Catalog
from booking_core.clock import require_aware
from booking_core.coupons import CouponUsage
from booking_core.customers import Address
from booking_core.errors import RuleViolation, ValidationFailed
from booking_core.ids import new_id, new_token
from booking_core.pricing import NO_USAGE, PriceBreakdown, Selection, Visit, price
from booking_core.quotes import AWARE_TEXT

MAX_ADDITIONAL_STARTS = 20
"""At most this many ``additionalStartIsos`` besides ``startIso``."""

PriceVisit = Callable[[datetime, Visit], PriceBreakdown]
"""Prices one visit starting at the given instant. ``Visit.FIRST`` is asked for the first
visit of what is booked together (a plan's first visit, a multi-date request's
``startIso``), ``Visit.LATER`` for the others."""


@frozen(kw_only=True)
class BookingOrder:
    """What is booked, apart from when: shared by every visit a request creates.

    ``selection`` names the service and frequency (its ``start`` and ``zip_code`` are set
    per visit from the start and ``address``); ``crew_ids`` are already chosen, by the
    caller or by availability.
    """

    company_id: str
    code_prefix: str
    timezone: str
    customer_id: str
    selection: Selection
    address: Address
    crew_ids: tuple[str, ...]
    days: int = 1
    notes: str = ""
    quote_id: str | None = None
    form_id: str | None = None
    answers: tuple[Answer, ...] = ()
    referred_by: str | None = None
    """The customer whose referral code the request used: named as ``referredBy`` in the
    ``created`` entry of the visit the discount is taken on (``visit_index`` 0)."""

    @property
    def zone(self) -> ZoneInfo:
        """The company's timezone."""
        return ZoneInfo(self.timezone)

    @property
    def recurring(self) -> bool:
        """True when the order's frequency makes a plan (every slug but ``one_time``)."""
        return self.selection.frequency_slug != ONE_TIME


def order_of(booking: Booking) -> BookingOrder:
    """The order a booking was made from (what a plan's extension repeats)."""
    return BookingOrder(
        company_id=booking.company_id,
        code_prefix=booking.code.partition("-")[0],
        timezone=booking.timezone,
        customer_id=booking.customer_id,
        selection=booking.selection,
        address=booking.address,
        crew_ids=booking.crew_ids,
        days=booking.days,
        notes=booking.notes,
        quote_id=booking.quote_id,
        form_id=booking.form_id,
        answers=booking.answers,
    )


def catalog_pricer(
    catalog: Catalog, order: BookingOrder, *, at: datetime, coupon_usage: CouponUsage = NO_USAGE
) -> PriceVisit:
    """A ``PriceVisit`` pricing the order's selection from the catalog at instant ``at``.

    A later visit of a plan loses first-visit extras and the referral discount (pricing's
    rule). A later date of a one-time multi-date request is its own one-time job, so it
    keeps first-visit extras; the one-time referral discount is taken on ``startIso`` only.
    """

    def price_visit(start: datetime, visit: Visit) -> PriceBreakdown:
        chosen = attrs.evolve(order.selection, start=start, zip_code=order.address.zip)
        if visit is Visit.LATER:
            chosen = attrs.evolve(chosen, referral_discount_cents=0)
        return price(catalog, chosen, at=at, visit=visit, coupon_usage=coupon_usage)

    return price_visit


def fixed_pricer(first: PriceBreakdown, later: PriceBreakdown | None = None) -> PriceVisit:
    """A ``PriceVisit`` that ignores the date: ``first`` for the first visit, ``later``
    (default ``first``) for the others."""
    return lambda _start, visit: first if visit is Visit.FIRST or later is None else later


def agreed_first(first: PriceBreakdown, later: PriceVisit) -> PriceVisit:
    """A ``PriceVisit`` for a booking whose first visit's price was agreed beforehand (a
    converted quote's): ``first`` for the first visit, whatever its date; ``later`` prices
    the others."""
    return lambda start, visit: first if visit is Visit.FIRST else later(start, visit)


def order_errors(order: BookingOrder) -> dict[str, str]:
    """Field errors of an order (``days``, ``notes``, ``address.*``, ``crew_ids``)."""
    errors = order.address.errors()
    if not 1 <= order.days <= MAX_DAYS:
        errors["days"] = f"A whole number of days from 1 to {MAX_DAYS}."
    if len(order.notes) > NOTES_MAX:
        errors["notes"] = f"At most {NOTES_MAX} characters."
    errors.update(crew_errors(order.crew_ids))
    return errors


def crew_errors(crew_ids: Sequence[str]) -> dict[str, str]:
    """Field errors of a crew list: at least one member, none twice."""
    if not crew_ids:
        return {"crew_ids": "At least one crew member."}
    errors: dict[str, str] = {}
    for index, crew_id in enumerate(crew_ids):
        if crew_id in crew_ids[:index]:
            errors[f"crew_ids.{index}"] = "Listed twice."
    return errors


LAST_JOB_DATE = date(2199, 12, 31)
"""The last local date a job may fall on (a plan's visit, a multi-day job's last day):
requests name dates of the years 1970 to 2199 only, so a job after it could not be
listed or moved."""
LAST_START = datetime(2200, 1, 1, tzinfo=UTC)
"""Every start (a booking's, a plan visit's) is before this instant too: requests name
instants whose UTC year is 1970 to 2199 only, so a start late on ``LAST_JOB_DATE`` west
of UTC (already 2200 there) could not be booked or moved."""


def start_problem(start: datetime, zone: ZoneInfo, at: datetime) -> str | None:
    """What is wrong with a requested start (no offset, off the quarter hour in the
    company's zone, in the past, after ``LAST_JOB_DATE``), or None."""
    if start.utcoffset() is None:
        return AWARE_TEXT
    local = start.astimezone(zone)
    if local.minute % 15 or local.second or local.microsecond:
        return "Must be on the quarter hour (:00, :15, :30 or :45)."
    if start < at:
        return "Must not be in the past."
    if local.date() > LAST_JOB_DATE or start >= LAST_START:
        return f"Must not be after {LAST_JOB_DATE.isoformat()}, nor in 2200 in UTC."
    return None


def dates_errors(
    start: datetime, additional_starts: Sequence[datetime], zone: ZoneInfo, at: datetime
) -> dict[str, str]:
    """What is wrong with the dates of a several-dates request: more than
    ``MAX_ADDITIONAL_STARTS``, a start ``start_problem`` refuses, a date given twice."""
    errors: dict[str, str] = {}
    if len(additional_starts) > MAX_ADDITIONAL_STARTS:
        errors["additional_start_isos"] = f"At most {MAX_ADDITIONAL_STARTS} dates."
    starts = (start, *additional_starts)
    for index, when in enumerate(starts):
        path = "start_iso" if index == 0 else f"additional_start_isos.{index - 1}"
        problem = start_problem(when, zone, at)
        if problem is None and index:
            earlier = next(i for i, other in enumerate(starts) if other == when)
            if earlier < index:
                problem = "Same as startIso." if earlier == 0 else "Listed twice."
        if problem:
            errors[path] = problem
    return errors


def job_minutes(breakdown: PriceBreakdown, service_id: str) -> int:
    """The duration a priced visit books; ``RuleViolation`` when the catalog gives none
    or more than a day's block."""
    minutes = breakdown.duration_minutes
    if not 1 <= minutes <= MAX_DURATION_MINUTES:
        raise RuleViolation(
            f"Service {service_id!r} gives a job of {minutes} minutes; "
            f"a job lasts 1 to {MAX_DURATION_MINUTES} minutes a day."
        )
    return minutes


def new_booking(
    order: BookingOrder,
    *,
    start: datetime,
    price: PriceBreakdown,
    at: datetime,
    rng: random.Random | None = None,
) -> Booking:
    """A single one-time booking (``days`` may make it multi-day) after checking its fields.

    Raises ``ValidationFailed`` on ``start_iso``, ``days``, ``notes``, ``address.*`` or
    ``crew_ids``. A recurring frequency is booked with ``plans.new_plan``.
    """
    require_aware(at, "at")
    if order.recurring:
        raise ValueError("a recurring frequency is booked with plans.new_plan")
    errors = order_errors(order)
    problem = start_problem(start, order.zone, at)
    if problem:
        errors["start_iso"] = problem
    if errors:
        raise ValidationFailed(errors)
    return make_visit(order, start=start, price=price, at=at, rng=rng)


def new_multi_date(
    order: BookingOrder,
    *,
    start: datetime,
    additional_starts: Sequence[datetime],
    price_visit: PriceVisit,
    at: datetime,
    rng: random.Random | None = None,
) -> list[Booking]:
    """Several one-time bookings made together, all or nothing, sharing a ``group_id``:
    ``start`` (``visit_index`` 0, priced as the first visit) and each additional start
    (``visit_index`` n + 1, priced as a later one). No two of their day blocks overlap."""
    require_aware(at, "at")
    if not additional_starts:
        raise ValueError("a multi-date booking has additional starts; use new_booking")
    errors = order_errors(order)
    if order.recurring:
        errors["additional_start_isos"] = "Only for one-time bookings: a plan books its own dates."
    errors.update(dates_errors(start, additional_starts, order.zone, at))
    if errors:
        raise ValidationFailed(errors)
    starts = (start, *additional_starts)
    group_id = new_id("grp")
    visits = [
        make_visit(
            order,
            start=when,
            price=price_visit(when, Visit.FIRST if index == 0 else Visit.LATER),
            at=at,
            rng=rng,
            group_id=group_id,
            visit_index=index,
        )
        for index, when in enumerate(starts)
    ]
    overlaps = {
        f"additional_start_isos.{later.visit_index - 1}": (
            f"Its days overlap those of the job at {earlier.local_start.isoformat()}."
        )
        for later in visits
        for earlier in visits[: later.visit_index]
        if blocks_overlap(earlier, later)
    }
    if overlaps:
        raise ValidationFailed(overlaps)
    return distinct_codes(visits, rng=rng)


def blocks_overlap(first: Booking, second: Booking) -> bool:
    """True when a day block of one booking overlaps one of the other (half-open)."""
    return any(
        a_start < b_end and b_start < a_end
        for a_start, a_end in first.day_blocks()
        for b_start, b_end in second.day_blocks()
    )


def make_visit(
    order: BookingOrder,
    *,
    start: datetime,
    price: PriceBreakdown,
    at: datetime,
    rng: random.Random | None = None,
    plan_id: str | None = None,
    visit_index: int = 0,
    group_id: str | None = None,
    details: Mapping[str, DetailValue] | None = None,
) -> Booking:
    """A scheduled booking from an order whose fields were already checked, with a new id,
    code and tracking token; its duration is the price's. A plan visit's ``planned_start``
    is its ``start``. ``details`` go into the ``created`` activity entry."""
    duration = job_minutes(price, order.selection.service_id)
    # In UTC before adding: arithmetic on a ZoneInfo datetime is wall-clock arithmetic.
    start = require_aware(start, "start").astimezone(UTC)
    written: dict[str, DetailValue] = {"quoteId": order.quote_id} if order.quote_id else {}
    if order.referred_by and visit_index == 0:
        written["referredBy"] = order.referred_by
    written.update(details or {})
    return Booking(
        id=new_id("bkg"),
        company_id=order.company_id,
        code=human_code(order.code_prefix, rng),
        customer_id=order.customer_id,
        service_id=order.selection.service_id,
        frequency_slug=order.selection.frequency_slug,
        selection=attrs.evolve(order.selection, start=start, zip_code=order.address.zip),
        price=price,
        timezone=order.timezone,
        start=start,
        end=start + timedelta(minutes=duration),
        duration_minutes=duration,
        crew_ids=tuple(order.crew_ids),
        address=order.address,
        tracking_token=new_token(),
        created_at=at,
        updated_at=at,
        days=order.days,
        notes=order.notes,
        plan_id=plan_id,
        visit_index=visit_index,
        planned_start=start if plan_id is not None else None,
        group_id=group_id,
        quote_id=order.quote_id,
        activity=(entry(at, ActivityKind.CREATED, written),),
        form_id=order.form_id,
        answers=order.answers,
    )


def distinct_codes(
    bookings: Sequence[Booking], *, rng: random.Random | None = None
) -> list[Booking]:
    """``bookings`` with any code that repeats an earlier one in the list drawn again."""
    seen: set[str] = set()
    kept = []
    for booking in bookings:
        kept_one = booking
        if booking.code in seen:
            kept_one = redraw_codes([booking], rng=rng, avoid=seen)[0]
        seen.add(kept_one.code)
        kept.append(kept_one)
    return kept


def redraw_codes(
    bookings: Iterable[Booking], *, rng: random.Random | None = None, avoid: Iterable[str] = ()
) -> list[Booking]:
    """The same not-yet-stored bookings with fresh codes, distinct from each other and from
    ``avoid``: what to do when storage reports a code already taken in the company."""
    taken = set(avoid)
    fresh = []
    for booking in bookings:
        prefix = booking.code.partition("-")[0]
        code = human_code(prefix, rng)
        while code in taken:
            code = human_code(prefix, rng)
        taken.add(code)
        fresh.append(attrs.evolve(booking, code=code))
    return fresh
