"""Keeping recurring plans materialised over the rolling horizon.

A plan's visits exist as bookings up to ``plans.PLAN_HORIZON_DAYS`` ahead; run
``extend_plans`` (``booking plans extend``, daily from cron or a scheduler) to add the
visits that came within reach. Each plan is extended in its own unit of work, so one
plan whose next visit collides with another job does not hold back the others.
"""

from __future__ import annotations

from collections.abc import Callable

from attrs import frozen

from booking_core import plans
from booking_core.booking_orders import catalog_pricer, order_of
from booking_core.bookings import BookingStatus
from booking_core.errors import ConflictError
from booking_core.paging import MAX_LIMIT, PageRequest
from booking_core.ports import Clock, UnitOfWork
from booking_core.services.scheduling import store_new


@frozen
class PlanExtension:
    """What extending one plan did: visits added, or why it could not."""

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
    company_id: str, *, uow_factory: Callable[[], UnitOfWork], clock: Clock
) -> list[PlanExtension]:
    """Add every plan's visits up to the horizon from now; idempotent."""
    make = uow_factory
    with make() as uow:
        plan_ids = _open_plan_ids(uow, company_id)
    results = []
    for plan_id in plan_ids:
        at = clock.now()
        try:
            with make() as uow:
                visits = uow.bookings.of_plan(company_id, plan_id)
                catalog = uow.catalogs.get(company_id)
                last = max(visits, key=lambda v: v.visit_index)
                frequency = catalog.frequencies_by_slug[last.frequency_slug]
                if frequency.interval_days is None:
                    continue
                added = plans.extend_plan(
                    visits,
                    plans.plan_horizon_end(visits[0].start, at),
                    interval_days=frequency.interval_days,
                    price_visit=catalog_pricer(catalog, order_of(last), at=at),
                    at=at,
                )
                if added:
                    store_new(uow, added)
                    uow.commit()
            results.append(PlanExtension(plan_id, len(added)))
        except ConflictError as clash:
            results.append(PlanExtension(plan_id, 0, clash.message))
    return results
