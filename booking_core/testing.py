"""Hypothesis strategies for catalogs and selections, for property-testing pricing.

A company's own service can use these to check its pricing rules::

    from hypothesis import given
    from booking_core.testing import catalogs_and_selections, PRICING_INSTANT
    from booking_core.pricing import price

    @given(catalogs_and_selections())
    def test_total_is_never_negative(case):
        catalog, selection = case
        assert price(catalog, selection, at=PRICING_INSTANT).total_cents >= 0

Requires the ``testing`` extra (``pip install 'booking-service[testing]'``).
Every strategy draws valid, priceable values: catalogs whose invariants hold and
selections that respect quantities, frequencies and coupon rules.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from hypothesis import strategies as st

from booking_core.catalog import (
    ONE_TIME,
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
from booking_core.pricing import SelectedItem, Selection

PRICING_INSTANT = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
"""The instant strategies' coupons are valid at; price with ``at=PRICING_INSTANT``."""

ZIPS = ("02554", "10001", "60614", "94110", "73301")
TIMEZONES = ("America/New_York", "America/Chicago", "America/Los_Angeles", "Pacific/Honolulu")

# Hypothesis bounds datetimes with naive values and attaches the zone itself.
_NAIVE_FROM = datetime(2026, 1, 1)  # noqa: DTZ001
_NAIVE_UNTIL = datetime(2027, 12, 31)  # noqa: DTZ001

cents = st.integers(min_value=0, max_value=500_000)
"""Whole-cent amounts up to $5,000."""
bps = st.integers(min_value=0, max_value=10_000)
"""Rates from 0 % to 100 % in basis points."""
minutes = st.integers(min_value=0, max_value=240)


def _ids(prefix: str, count: int) -> list[str]:
    return [f"{prefix}_{i}" for i in range(count)]


@st.composite
def frequencies(draw: st.DrawFn) -> tuple[Frequency, ...]:
    """``one_time`` plus up to three recurring plans with their discounts."""
    intervals = draw(st.lists(st.sampled_from([7, 14, 28]), max_size=3, unique=True))
    recurring = tuple(
        Frequency(f"every_{days}_days", f"Every {days} days", days, draw(bps)) for days in intervals
    )
    return (Frequency(ONE_TIME, "One time", None, 0), *recurring)


@st.composite
def parameters(draw: st.DrawFn, prefix: str = "par") -> tuple[Parameter, ...]:
    """Up to four parameters with sane quantity bounds."""
    count = draw(st.integers(0, 4))
    result = []
    for param_id in _ids(prefix, count):
        low = draw(st.integers(0, 3))
        high = draw(st.integers(low, low + 8))
        result.append(Parameter(param_id, param_id, draw(cents), draw(minutes), low, high))
    return tuple(result)


@st.composite
def extras(
    draw: st.DrawFn, frequency_slugs: tuple[str, ...], prefix: str = "ext"
) -> tuple[Extra, ...]:
    """Up to eight extras; some limited to plans, exempt from discounts or first-visit only."""
    count = draw(st.integers(0, 8))
    return tuple(
        Extra(
            extra_id,
            extra_id,
            draw(cents),
            draw(minutes),
            max_quantity=draw(st.integers(1, 5)),
            frequency_slugs=tuple(draw(st.lists(st.sampled_from(frequency_slugs), unique=True))),
            discount_exempt=draw(st.booleans()),
            first_visit_only=draw(st.booleans()),
        )
        for extra_id in _ids(prefix, count)
    )


@st.composite
def services(draw: st.DrawFn, frequency_slugs: tuple[str, ...]) -> tuple[Service, ...]:
    """One to three services, each with its own parameters and extras."""
    count = draw(st.integers(1, 3))
    return tuple(
        Service(
            service_id,
            service_id,
            base_price_cents=draw(cents),
            base_duration_minutes=draw(minutes),
            parameters=draw(parameters(prefix=f"{service_id}_par")),
            extras=draw(extras(frequency_slugs, prefix=f"{service_id}_ext")),
            taxable=draw(st.booleans()),
        )
        for service_id in _ids("svc", count)
    )


@st.composite
def fee_definitions(draw: st.DrawFn, service_ids: tuple[str, ...]) -> tuple[FeeDefinition, ...]:
    """Date, zip, service and manual fees, fixed or a percentage, taxable or not."""
    count = draw(st.integers(0, 6))
    fees = []
    for fee_id in _ids("fee", count):
        kind = draw(st.sampled_from(list(FeeKind)))
        fixed = draw(st.booleans())
        fees.append(
            FeeDefinition(
                fee_id,
                fee_id,
                kind,
                amount_cents=draw(st.integers(0, 20_000)) if fixed else None,
                amount_bps=None if fixed else draw(st.integers(0, 5_000)),
                taxable=draw(st.booleans()),
                active=draw(st.booleans()) if kind is not FeeKind.MANUAL else True,
                weekdays=draw(st.frozensets(st.integers(1, 7)))
                if kind is FeeKind.DATE
                else frozenset(),
                dates=(
                    draw(st.frozensets(st.dates(date(2026, 1, 1), date(2027, 12, 31))))
                    if kind is FeeKind.DATE
                    else frozenset()
                ),
                zips=draw(st.frozensets(st.sampled_from(ZIPS)))
                if kind is FeeKind.ZIP
                else frozenset(),
                service_ids=(
                    draw(st.frozensets(st.sampled_from(service_ids)))
                    if kind is FeeKind.SERVICE
                    else frozenset()
                ),
            )
        )
    return tuple(fees)


@st.composite
def coupons(draw: st.DrawFn) -> tuple[Coupon, ...]:
    """Up to three coupons usable at ``PRICING_INSTANT`` by anyone, on anything."""
    count = draw(st.integers(0, 3))
    result = []
    for index in range(count):
        percent = draw(st.booleans())
        result.append(
            Coupon(
                f"cpn_{index}",
                f"CODE{index}",
                percent_bps=draw(st.integers(1, 10_000)) if percent else None,
                amount_cents=None if percent else draw(st.integers(1, 100_000)),
                valid_from=PRICING_INSTANT - timedelta(days=30),
                valid_until=PRICING_INSTANT + timedelta(days=30),
            )
        )
    return tuple(result)


@st.composite
def catalogs(draw: st.DrawFn) -> Catalog:
    """A whole valid catalog with a tax rate and timezone."""
    plans = draw(frequencies())
    slugs = tuple(f.slug for f in plans)
    catalog_services = draw(services(slugs))
    return Catalog(
        company_id="cmp_test",
        timezone=draw(st.sampled_from(TIMEZONES)),
        tax_rate_bps=draw(st.integers(0, 2_500)),
        industries=(Industry("ind_0", "Industry", catalog_services),),
        frequencies=plans,
        fees=draw(fee_definitions(tuple(s.id for s in catalog_services))),
        coupons=draw(coupons()),
    )


@st.composite
def selections(draw: st.DrawFn, catalog: Catalog) -> Selection:
    """A priceable selection for ``catalog``, its items in any order."""
    service = draw(st.sampled_from(list(catalog.services())))
    frequency = draw(st.sampled_from(catalog.frequencies))
    chosen_params = (
        [
            SelectedItem(p.id, draw(st.integers(p.min_quantity, p.max_quantity)))
            for p in draw(st.lists(st.sampled_from(service.parameters), unique=True))
        ]
        if service.parameters
        else []
    )
    offered = [e for e in service.extras if e.offered_on(frequency.slug)]
    chosen_extras = [
        SelectedItem(e.id, draw(st.integers(1, e.max_quantity)))
        for e in (draw(st.lists(st.sampled_from(offered), unique=True)) if offered else [])
    ]
    manual = [f.id for f in catalog.fees if f.kind is FeeKind.MANUAL and f.active]
    coupon_codes = [c.code for c in catalog.coupons]
    return Selection(
        service_id=service.id,
        frequency_slug=frequency.slug,
        parameters=tuple(draw(st.permutations(chosen_params))),
        extras=tuple(draw(st.permutations(chosen_extras))),
        coupon_code=draw(st.none() | st.sampled_from(coupon_codes)) if coupon_codes else None,
        referral_discount_cents=draw(st.sampled_from([0, 0, 500, 2_500, 10_000_000])),
        zip_code=draw(st.none() | st.sampled_from(ZIPS)),
        start=draw(st.none() | st.datetimes(_NAIVE_FROM, _NAIVE_UNTIL, timezones=st.just(UTC))),
        manual_fee_ids=tuple(draw(st.lists(st.sampled_from(manual), unique=True)))
        if manual
        else (),
    )


@st.composite
def catalogs_and_selections(draw: st.DrawFn) -> tuple[Catalog, Selection]:
    """A catalog and a priceable selection from it."""
    catalog = draw(catalogs())
    return catalog, draw(selections(catalog))
