"""Prices as answers: a priced visit (``POST /quote``, a quote, a booking) and the plan
price of ``POST /quote``."""

from __future__ import annotations

from typing import Literal

from attrs import frozen

from adapters.http.views.base import Bps, Cents, Minutes, copied
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
    """The first visit and, for a recurring frequency, a later visit: the second, priced
    at its own date (``intervalDays`` local days after ``startIso``); a later visit on
    another fee date (a holiday) costs what that date's fees make it."""

    currency: Literal["usd"]
    first_visit: PriceBreakdownView
    later_visits: PriceBreakdownView | None


def price_line_view(line: PriceLine) -> PriceLineView:
    """The view of a charged line."""
    return copied(PriceLineView, line)


def discount_line_view(line: DiscountLine) -> DiscountLineView:
    """The view of a discount."""
    return copied(DiscountLineView, line)


def fee_line_view(line: FeeLine) -> FeeLineView:
    """The view of a charged fee."""
    return copied(FeeLineView, line)


def price_breakdown_view(b: PriceBreakdown) -> PriceBreakdownView:
    """The view of a priced visit; its parts sum to ``totalCents`` exactly."""
    return copied(
        PriceBreakdownView,
        b,
        lines=tuple(price_line_view(x) for x in b.lines),
        discounts=tuple(discount_line_view(d) for d in b.discounts),
        fees=tuple(fee_line_view(f) for f in b.fees),
    )


def plan_price_view(plan: PlanPrice) -> PlanPriceView:
    """``POST /quote``: the plan's prices, in US dollars' cents."""
    later = plan.later_visits
    return PlanPriceView(
        currency="usd",
        first_visit=price_breakdown_view(plan.first_visit),
        later_visits=price_breakdown_view(later) if later else None,
    )
