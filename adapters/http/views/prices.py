"""Prices as answers: a priced visit (``POST /quote``, a quote, a booking) and the plan
price of ``POST /quote``."""

from __future__ import annotations

from typing import Literal

from attrs import frozen

from adapters.http.views.base import Bps, Cents, Minutes
from booking_core.catalog import FeeKind
from booking_core.pricing import (
    DiscountKind,
    DiscountLine,
    FeeLine,
    LineKind,
    PlanPrice,
    PriceBreakdown,
    PriceLine,
    Visit,
)


@frozen
class PriceLineView:
    """One charged line: quantity x unitPriceCents = amountCents."""

    kind: LineKind
    id: str
    name: str
    quantity: int
    unit_price_cents: Cents
    amount_cents: Cents
    discountable: bool
    duration_minutes: Minutes


@frozen
class DiscountLineView:
    """One discount, positive, taken off the subtotal."""

    kind: DiscountKind
    name: str
    code: str | None
    amount_cents: Cents


@frozen
class FeeLineView:
    """One fee added after discounts."""

    id: str
    name: str
    kind: FeeKind
    amount_cents: Cents
    taxable: bool


@frozen
class PriceBreakdownView:
    """A priced visit: subtotal - discounts + fees + tax = total, to the cent."""

    visit: Visit
    lines: tuple[PriceLineView, ...]
    subtotal_cents: Cents
    discounts: tuple[DiscountLineView, ...]
    discount_cents: Cents
    referral_discount_cents: Cents
    discounted_subtotal_cents: Cents
    fees: tuple[FeeLineView, ...]
    fees_cents: Cents
    taxable_cents: Cents
    tax_rate_bps: Bps
    tax_cents: Cents
    total_cents: Cents
    duration_minutes: Minutes


@frozen
class PlanPriceView:
    """The first visit and, for a recurring frequency, each later visit."""

    currency: Literal["usd"]
    first_visit: PriceBreakdownView
    later_visits: PriceBreakdownView | None


def price_line_view(line: PriceLine) -> PriceLineView:
    """The view of a charged line."""
    return PriceLineView(
        kind=line.kind,
        id=line.id,
        name=line.name,
        quantity=line.quantity,
        unit_price_cents=line.unit_price_cents,
        amount_cents=line.amount_cents,
        discountable=line.discountable,
        duration_minutes=line.duration_minutes,
    )


def discount_line_view(line: DiscountLine) -> DiscountLineView:
    """The view of a discount."""
    return DiscountLineView(
        kind=line.kind, name=line.name, code=line.code, amount_cents=line.amount_cents
    )


def fee_line_view(line: FeeLine) -> FeeLineView:
    """The view of a charged fee."""
    return FeeLineView(
        id=line.id,
        name=line.name,
        kind=line.kind,
        amount_cents=line.amount_cents,
        taxable=line.taxable,
    )


def price_breakdown_view(b: PriceBreakdown) -> PriceBreakdownView:
    """The view of a priced visit; its parts sum to ``totalCents`` exactly."""
    return PriceBreakdownView(
        visit=b.visit,
        lines=tuple(price_line_view(x) for x in b.lines),
        subtotal_cents=b.subtotal_cents,
        discounts=tuple(discount_line_view(d) for d in b.discounts),
        discount_cents=b.discount_cents,
        referral_discount_cents=b.referral_discount_cents,
        discounted_subtotal_cents=b.discounted_subtotal_cents,
        fees=tuple(fee_line_view(f) for f in b.fees),
        fees_cents=b.fees_cents,
        taxable_cents=b.taxable_cents,
        tax_rate_bps=b.tax_rate_bps,
        tax_cents=b.tax_cents,
        total_cents=b.total_cents,
        duration_minutes=b.duration_minutes,
    )


def plan_price_view(plan: PlanPrice) -> PlanPriceView:
    """``POST /quote``: the plan's prices, in US dollars' cents."""
    later = plan.later_visits
    return PlanPriceView(
        currency="usd",
        first_visit=price_breakdown_view(plan.first_visit),
        later_visits=price_breakdown_view(later) if later else None,
    )
