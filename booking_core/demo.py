"""A realistic demo catalog for a home-cleaning company, and one priced selection.

Used by ``make core-check`` (the core prices this on its own, with only attrs and
the standard library installed), by the demo data loader, the docs and the tests.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

from booking_core.catalog import (
    Catalog,
    Extra,
    FeeDefinition,
    FeeKind,
    Frequency,
    Industry,
    Parameter,
    Service,
)
from booking_core.coupons import Coupon
from booking_core.pricing import PriceBreakdown, SelectedItem, Selection, price

FREQUENCIES = (
    Frequency("one_time", "One time", None, 0),
    Frequency("weekly", "Weekly", 7, 1_500),
    Frequency("biweekly", "Every two weeks", 14, 1_000),
    Frequency("every_four_weeks", "Every four weeks", 28, 500),
)


def demo_catalog(company_id: str = "cmp_demo", *, timezone: str = "America/New_York") -> Catalog:
    """The demo cleaning catalog: services, parameters, extras, frequencies, fees, coupons."""
    bedrooms = Parameter("par_bedrooms", "Bedrooms", 2_500, 30, 1, 8)
    bathrooms = Parameter("par_bathrooms", "Bathrooms", 2_000, 25, 1, 6)
    standard = Service(
        "svc_standard_clean",
        "Standard clean",
        base_price_cents=9_000,
        base_duration_minutes=90,
        parameters=(bedrooms, bathrooms),
        extras=(
            Extra("ext_oven", "Inside the oven", 3_500, 30),
            Extra("ext_fridge", "Inside the fridge", 3_000, 30),
            Extra("ext_windows", "Interior windows", 1_500, 15, max_quantity=20),
            # A heavy job the crews only take on as a one-off.
            Extra("ext_move_out", "Move-out detail", 12_000, 120, frequency_slugs=("one_time",)),
            # Supplies at cost: never discounted.
            Extra("ext_supplies", "Eco supplies", 1_200, 0, discount_exempt=True),
            # A plan's first visit needs a reset clean; later visits do not.
            Extra("ext_first_deep", "First-visit deep clean", 6_000, 60, first_visit_only=True),
        ),
        description="Kitchen, bathrooms, dusting, floors.",
    )
    deep = Service(
        "svc_deep_clean",
        "Deep clean",
        base_price_cents=16_000,
        base_duration_minutes=180,
        parameters=(bedrooms, bathrooms),
        extras=(
            Extra("ext_oven", "Inside the oven", 3_000, 30),
            Extra("ext_baseboards", "Baseboards", 4_000, 45),
        ),
    )
    handyman = Service(
        "svc_handyman_hour",
        "Handyman hour",
        base_price_cents=8_500,
        base_duration_minutes=60,
        parameters=(Parameter("par_extra_hours", "Extra hours", 7_500, 60, 0, 7),),
        extras=(Extra("ext_materials", "Materials run", 2_500, 30, discount_exempt=True),),
        taxable=False,
    )
    return Catalog(
        company_id=company_id,
        timezone=timezone,
        tax_rate_bps=887,
        industries=(
            Industry("ind_cleaning", "Home cleaning", (standard, deep)),
            Industry("ind_handyman", "Handyman", (handyman,)),
        ),
        frequencies=FREQUENCIES,
        fees=(
            FeeDefinition(
                "fee_weekend",
                "Weekend surcharge",
                FeeKind.DATE,
                amount_bps=1_000,
                weekdays=frozenset({6, 7}),
                taxable=True,
            ),
            FeeDefinition(
                "fee_holiday",
                "Holiday surcharge",
                FeeKind.DATE,
                amount_cents=2_500,
                dates=frozenset({date(2026, 12, 24), date(2026, 12, 31)}),
                taxable=True,
            ),
            FeeDefinition(
                "fee_island",
                "Island travel",
                FeeKind.ZIP,
                amount_cents=1_500,
                zips=frozenset({"02554", "02557"}),
            ),
            FeeDefinition(
                "fee_deep_kit",
                "Deep-clean kit",
                FeeKind.SERVICE,
                amount_cents=900,
                service_ids=frozenset({"svc_deep_clean"}),
                taxable=True,
            ),
            FeeDefinition("fee_pets", "Pet hair", FeeKind.MANUAL, amount_cents=2_000),
            FeeDefinition("fee_rush", "Same-week rush", FeeKind.MANUAL, amount_bps=1_500),
        ),
        coupons=(
            Coupon("cpn_welcome", "WELCOME10", percent_bps=1_000),
            Coupon(
                "cpn_spring",
                "SPRING25",
                amount_cents=2_500,
                min_subtotal_cents=15_000,
                valid_until=datetime(2027, 6, 1, tzinfo=UTC),
            ),
            Coupon(
                "cpn_first",
                "FIRSTCLEAN",
                amount_cents=2_000,
                per_customer_limit=1,
                max_redemptions=500,
                service_ids=frozenset({"svc_standard_clean"}),
            ),
        ),
    )


DEMO_SELECTION = Selection(
    service_id="svc_standard_clean",
    frequency_slug="biweekly",
    parameters=(SelectedItem("par_bedrooms", 3), SelectedItem("par_bathrooms", 2)),
    extras=(
        SelectedItem("ext_oven"),
        SelectedItem("ext_windows", 4),
        SelectedItem("ext_supplies"),
        SelectedItem("ext_first_deep"),
    ),
    coupon_code="welcome10",
    zip_code="02554",
    # A Saturday morning in New York: the weekend surcharge applies.
    start=datetime(2026, 12, 5, 14, 0, tzinfo=UTC),
    manual_fee_ids=("fee_pets",),
)
"""The selection docs/pricing.md works through, to the cent."""


def price_demo_selection() -> PriceBreakdown:
    """Price ``DEMO_SELECTION`` against ``demo_catalog()`` at a fixed instant."""
    return price(demo_catalog(), DEMO_SELECTION, at=datetime(2026, 11, 21, tzinfo=UTC))
