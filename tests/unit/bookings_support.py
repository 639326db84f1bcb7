"""A small catalog and order builders shared by the booking and plan tests."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import attrs

from booking_core.booking_orders import BookingOrder, PriceVisit, catalog_pricer
from booking_core.bookings import Booking
from booking_core.catalog import Catalog, Extra, FeeDefinition, FeeKind, Frequency, Industry
from booking_core.catalog import Service as CatalogService
from booking_core.customers import Address
from booking_core.plans import book
from booking_core.pricing import SelectedItem, Selection

NY = ZoneInfo("America/New_York")
AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
"""Now, in these tests: a week before New York springs forward (2026-03-08)."""
HOLIDAY = date(2026, 3, 24)

CATALOG = Catalog(
    "cmp_acme",
    timezone="America/New_York",
    industries=(
        Industry(
            "ind_home",
            "Home cleaning",
            (
                CatalogService(
                    "svc_clean",
                    "Standard clean",
                    base_price_cents=12_000,
                    base_duration_minutes=120,
                    extras=(
                        Extra("ext_oven", "Oven", 3_000, 30, first_visit_only=True),
                        Extra("ext_fridge", "Fridge", 2_000, 15),
                    ),
                ),
                CatalogService("svc_quick", "Nothing", 1_000, 0),
            ),
        ),
    ),
    frequencies=(
        Frequency("one_time", "One time", None),
        Frequency("weekly", "Weekly", 7, 1_000),
        Frequency("biweekly", "Every two weeks", 14, 500),
        Frequency("every_four_weeks", "Every four weeks", 28),
    ),
    fees=(
        FeeDefinition(
            "fee_holiday", "Holiday", FeeKind.DATE, amount_cents=2_500, dates=frozenset({HOLIDAY})
        ),
    ),
)
INTERVALS = {"weekly": 7, "biweekly": 14, "every_four_weeks": 28}


def local(*args: int, zone: ZoneInfo = NY, fold: int = 0) -> datetime:
    """A wall-clock time in ``zone`` (New York by default)."""
    return datetime(*args, tzinfo=zone, fold=fold)  # type: ignore[arg-type, misc]


def order(frequency: str = "one_time", **changes: object) -> BookingOrder:
    """An order for a standard clean with the first-visit-only oven extra."""
    values: dict[str, object] = {
        "company_id": "cmp_acme",
        "code_prefix": "SC",
        "timezone": "America/New_York",
        "customer_id": "cus_ada",
        "selection": Selection(
            "svc_clean", frequency, extras=(SelectedItem("ext_oven"),), referral_discount_cents=500
        ),
        "address": Address("1 Main St", "New York", "NY", "10001"),
        "crew_ids": ("crew_a",),
    }
    values.update(changes)
    return BookingOrder(**values)  # type: ignore[arg-type]


def pricer(made: BookingOrder) -> PriceVisit:
    """Prices ``made`` from the test catalog at ``AT``."""
    return catalog_pricer(CATALOG, made, at=AT)


def booked(
    made: BookingOrder | None = None,
    start: datetime | None = None,
    at: datetime = AT,
    rng: random.Random | None = None,
    **kwargs: object,
) -> list[Booking]:
    """Every booking one create request makes (default: one clean on 2026-03-03 09:00)."""
    made = made or order()
    frequency = made.selection.frequency_slug
    return book(
        made,
        start=start or local(2026, 3, 3, 9),
        price_visit=pricer(made),
        at=at,
        interval_days=INTERVALS.get(frequency),
        rng=rng,
        **kwargs,  # type: ignore[arg-type]
    )


def single(**changes: object) -> Booking:
    """One one-time booking; ``changes`` are applied to the booking afterwards."""
    made = booked()[0]
    return attrs.evolve(made, **changes)  # type: ignore[arg-type]


class Scripted(random.Random):
    """Chooses the scripted characters first, then cycles through the alphabet."""

    def __init__(self, script: str) -> None:
        super().__init__(0)
        self.script = list(script)
        self.count = 0

    def choice(self, seq):  # type: ignore[no-untyped-def, override]
        if self.script:
            return self.script.pop(0)
        self.count += 1
        return seq[self.count % len(seq)]
