"""Pricing use case: price a selection against the company's catalog and coupon usage."""

from __future__ import annotations

from datetime import datetime

import attrs

from booking_core import plans
from booking_core.booking_orders import BookingOrder, catalog_pricer
from booking_core.catalog import Catalog
from booking_core.companies import Company
from booking_core.coupons import CouponUsage, normalize_code
from booking_core.customers import Address, Customer, merge_survivor, referral_key
from booking_core.errors import NotFoundError
from booking_core.paging import PageRequest
from booking_core.ports import Clock, UnitOfWork
from booking_core.pricing import NO_USAGE, PlanPrice, PriceBreakdown, Selection, Visit, price_plan
from booking_core.referrals import check_referred, referral_discount


def coupon_usage(
    uow: UnitOfWork, catalog: Catalog, selection: Selection, customer_id: str | None
) -> CouponUsage:
    """Redemptions of the selection's coupon as they stand (none when no known coupon).

    Counted only for a coupon with a redemption limit: no other rule looks at them, so
    pricing with an unlimited coupon reads nothing but the catalog.
    """
    code = selection.coupon_code
    coupon = catalog.coupons_by_code.get(normalize_code(code)) if code else None
    if coupon is None or (coupon.max_redemptions is None and coupon.per_customer_limit is None):
        return NO_USAGE
    return uow.coupon_redemptions.usage(catalog.company_id, coupon.id, customer_id)


def referrer_of(uow: UnitOfWork, company: Company, code: str) -> tuple[int, Customer]:
    """The discount a typed referral code gives a first visit, and the customer whose
    code it is (the survivor of a merged record); ``ReferralRejected`` when the programme
    is off or no customer of the company has the code (``referrals.referral_discount``)."""
    holder = None
    if company.referral_discount_cents > 0:
        holder = uow.customers.by_referral_code(company.id, referral_key(code))
    if holder is not None:
        holder = merge_survivor(holder, lambda other: uow.customers.get(company.id, other))
    return referral_discount(company, code.strip(), holder)


def referral_for(
    uow: UnitOfWork, company: Company, code: str, customer: Customer | None
) -> tuple[int, Customer]:
    """``referrer_of``, then whether ``customer`` (the booking's; None: one the booking
    creates) may use the code: not their own, and only before their first booking (any
    status); ``ReferralRejected`` by ``booking_core.referrals``' rules."""
    discount, referrer = referrer_of(uow, company, code)
    if customer is not None:
        page = uow.bookings.list(company.id, PageRequest(limit=1), customer_id=customer.id)
        check_referred(code.strip(), referrer, customer, booked=bool(page.items))
    return discount, referrer


def _counted_as(uow: UnitOfWork, company_id: str, customer_id: str | None) -> str | None:
    """The customer whose coupon redemptions count for ``customer_id``: the survivor of a
    merged record (a merge re-files redemptions under it), else the id as given (an id
    that names no customer counts none)."""
    if customer_id is None:
        return None
    try:
        found = uow.customers.get(company_id, customer_id)
    except NotFoundError:
        return customer_id
    return merge_survivor(found, lambda other: uow.customers.get(company_id, other)).id


def price_selection(
    company_id: str,
    selection: Selection,
    *,
    customer_id: str | None = None,
    referral_code: str | None = None,
    uow: UnitOfWork,
    clock: Clock,
) -> PlanPrice:
    """``POST /quote``: the first visit and, for a plan, a later visit, priced now. A
    referral code is checked as far as it can be without a customer (the programme is
    on, some customer has the code) and its discount taken off the first visit."""
    with uow:
        catalog = uow.catalogs.get(company_id)
        usage = coupon_usage(uow, catalog, selection, _counted_as(uow, company_id, customer_id))
        if referral_code is not None:
            discount, _ = referrer_of(uow, uow.companies.get(company_id), referral_code)
            selection = attrs.evolve(selection, referral_discount_cents=discount)
    return price_plan(catalog, selection, at=clock.now(), coupon_usage=usage)


def price_booking_visits(
    company_id: str,
    selection: Selection,
    start: datetime,
    address: Address,
    *,
    customer_email: str,
    referral_code: str | None = None,
    uow: UnitOfWork,
    clock: Clock,
) -> list[tuple[datetime, PriceBreakdown]]:
    """Each visit a booking of ``selection`` from ``start`` would make now, priced as the
    booking prices it: a plan's visits up to its horizon, each at its own date
    (``catalog_pricer``), with the coupon's redemptions by the customer of
    ``customer_email`` (the survivor of a merge), so a coupon that customer has used up
    is refused here (``CouponRejected``) as the booking would refuse it; and
    ``referral_code`` checked for that customer as the booking checks it
    (``referral_for``: ``ReferralRejected`` for their own code or when they have booked
    before), its discount off the first visit."""
    at = clock.now()
    with uow:
        company = uow.companies.get(company_id)
        catalog = uow.catalogs.get(company_id)
        found = uow.customers.by_email(company_id, customer_email)
        if found is not None:
            found = merge_survivor(found, lambda other: uow.customers.get(company_id, other))
        usage = coupon_usage(uow, catalog, selection, found.id if found else None)
        if referral_code is not None:
            discount, _ = referral_for(uow, company, referral_code, found)
            selection = attrs.evolve(selection, referral_discount_cents=discount)
    order = BookingOrder(
        company_id=company.id,
        code_prefix=company.code_prefix,
        timezone=company.timezone,
        customer_id=found.id if found else "",
        selection=selection,
        address=address,
        crew_ids=(),
    )
    price_visit = catalog_pricer(catalog, order, at=at, coupon_usage=usage)
    frequency = catalog.frequencies_by_slug.get(selection.frequency_slug)
    starts = [start]
    if frequency is not None and frequency.interval_days is not None:
        horizon = plans.plan_horizon_end(start, at, order.zone)
        starts = plans.plan_visits(start, frequency.interval_days, horizon, order.zone)
    return [
        (when, price_visit(when, Visit.FIRST if index == 0 else Visit.LATER))
        for index, when in enumerate(starts)
    ]
