"""Keeping recurring plans materialised over the rolling horizon.

A plan's visits exist as bookings up to ``plans.PLAN_HORIZON_DAYS`` local days ahead; run
``extend_plans`` (``booking plans extend``, daily from cron or a scheduler) to add the
visits that came within reach; each new visit records ``booking.created``, as the visits
booked with the plan did. Each plan is extended in its own unit of work, and a plan
that cannot be extended (its next visit collides with another job, its service left the
catalog, ...) is reported and skipped: one bad plan never holds back the others.

A plan keeps the price terms it was booked with: its later visits are priced from its own
selection with its coupon as accepted at booking (``plans.kept_coupon_terms``), never
refused because the coupon has since expired or run out of redemptions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from attrs import frozen

from booking_core import plans
from booking_core.booking_orders import catalog_pricer, order_of
from booking_core.bookings import Booking, BookingStatus
from booking_core.catalog import Catalog
from booking_core.errors import DomainError, RuleViolation, ValidationFailed
from booking_core.events import EventType, events_for
from booking_core.paging import MAX_LIMIT, PageRequest
from booking_core.ports import Clock, DriveTime, UnitOfWork
from booking_core.services.customers import held_survivor
from booking_core.services.scheduling import active_crew, check_visit, store_new


@frozen
class PlanExtension:
    """What extending one plan did: visits added, or why it was skipped (``problem``)."""

    plan_id: str
    added: int
    problem: str | None = None


def _open_plan_ids(uow: UnitOfWork, company_id: str) -> list[str]:
    """Plans that still have a scheduled visit."""
    found: dict[str, None] = {}
    after = None
    while True:
        page = uow.bookings.list(
            company_id,
            PageRequest(limit=MAX_LIMIT, after=after),
            status=BookingStatus.SCHEDULED,
        )
        for booking in page.items:
            if booking.plan_id is not None:
                found[booking.plan_id] = None
        if not page.has_more:
            return list(found)
        after = page.next_after


def extend_plans(
    company_id: str,
    *,
    uow_factory: Callable[[], UnitOfWork],
    clock: Clock,
    drive: DriveTime,
) -> list[PlanExtension]:
    """Add every plan's visits up to the horizon from now; idempotent.

    Every open plan gets one ``PlanExtension``, in the order the plans were found; a plan
    that fails is rolled back alone and reported with its ``problem``, and the others are
    still extended. Each new visit is checked as availability decides for its crew (on
    the roster, working then, not off, free with the drive from the job before):
    ``drive`` gives the drive times. A visit whose start has already passed when the plan
    is extended (runs were missed, or the plan was held up) is not made: it never took
    place.
    """
    with uow_factory() as uow:
        plan_ids = _open_plan_ids(uow, company_id)
    results = []
    for plan_id in plan_ids:
        try:
            added = _extend_one(
                company_id, plan_id, uow_factory=uow_factory, clock=clock, drive=drive
            )
        except Exception as error:
            # A batch: one plan's refusal or fault is reported beside the others' results
            # rather than ending the run.
            results.append(PlanExtension(plan_id, 0, _problem(error)))
        else:
            results.append(PlanExtension(plan_id, added))
    return results


def _extend_one(
    company_id: str,
    plan_id: str,
    *,
    uow_factory: Callable[[], UnitOfWork],
    clock: Clock,
    drive: DriveTime,
) -> int:
    """Extend one plan in its own unit of work; the number of visits added, each recorded
    as ``booking.created`` (a new visit is a new booking to a company's systems)."""
    at = clock.now()
    with uow_factory() as uow:
        catalog = uow.catalogs.get(company_id)
        added = _new_visits(uow.bookings.of_plan(company_id, plan_id), catalog, at)
        if added:
            # The plan's customer held, as a booking holds it, then the plan read again: a
            # merge of the customer waits for the new visits and re-files them, one that
            # committed first re-filed the visits now read, and another extension of this
            # plan that got there first is seen (it holds the customer too).
            held_survivor(uow, company_id, added[0].customer_id)
            added = _new_visits(uow.bookings.of_plan(company_id, plan_id), catalog, at)
        if added:
            company = uow.companies.get(company_id)
            crew = active_crew(uow, company_id)
            # Held before their jobs are read, as a booking holds them: a job booked
            # meanwhile beside a new visit waits for this unit and is checked against it.
            uow.bookings.hold_crew(company_id, {c for visit in added for c in visit.crew_ids})
            for visit in added:  # open for its crew, as availability decides
                check_visit(uow, company, catalog, visit, drive=drive, at=at, crew=crew)
            stored = store_new(uow, added)
            uow.outbox.add_all(events_for(EventType.BOOKING_CREATED, stored, at=at))
            uow.commit()
    return len(added)


def _new_visits(visits: Sequence[Booking], catalog: Catalog, at: datetime) -> list[Booking]:
    """The visits that extending the plan of ``visits`` up to its horizon would add (none
    whose start has passed: it never took place); ``RuleViolation`` when the plan's
    frequency is gone from the catalog or no longer repeats."""
    first = min(visits, key=lambda v: v.visit_index)
    last = max(visits, key=lambda v: v.visit_index)
    frequency = catalog.frequencies_by_slug.get(last.frequency_slug)
    if frequency is None:
        raise RuleViolation(
            f"Frequency {last.frequency_slug!r} is no longer in the catalog; "
            "the plan's rhythm is unknown."
        )
    if frequency.interval_days is None:
        raise RuleViolation(f"Frequency {frequency.slug!r} no longer repeats.")
    terms = plans.kept_plan_terms(catalog, last.selection)
    return [
        visit
        for visit in plans.extend_plan(
            visits,
            # From the first visit's place in the rhythm: a first visit moved alone
            # (months ahead, say) does not move the horizon.
            plans.plan_horizon_end(first.planned_start or first.start, at, last.zone),
            interval_days=frequency.interval_days,
            price_visit=catalog_pricer(terms, order_of(last), at=at),
            at=at,
        )
        if visit.start > at  # a start already passed never took place: not made
    ]


def _problem(error: Exception) -> str:
    """One line saying why a plan was skipped."""
    if isinstance(error, ValidationFailed):
        fields = "; ".join(f"{path}: {text}" for path, text in error.field_errors.items())
        return f"{error.message} {fields}".strip()
    if isinstance(error, DomainError):
        return error.message
    # Not a refusal: a fault. Its first line only, since storage errors go on with the
    # statement text.
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0][:200] if lines else ''}".rstrip(": ")
