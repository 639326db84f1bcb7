"""Pricing use case: price a selection against the company's catalog and coupon usage."""

from __future__ import annotations

from booking_core.catalog import Catalog
from booking_core.coupons import CouponUsage, normalize_code
from booking_core.ports import Clock, UnitOfWork
from booking_core.pricing import NO_USAGE, PlanPrice, Selection, price_plan


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


def price_selection(
    company_id: str,
    selection: Selection,
    *,
    customer_id: str | None = None,
    uow: UnitOfWork,
    clock: Clock,
) -> PlanPrice:
    """``POST /quote``: the first visit and, for a plan, a later visit, priced now."""
    with uow:
        catalog = uow.catalogs.get(company_id)
        usage = coupon_usage(uow, catalog, selection, customer_id)
    return price_plan(catalog, selection, at=clock.now(), coupon_usage=usage)
