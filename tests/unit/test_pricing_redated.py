"""``pricing.redated``: a visit's price moved to another date takes that date's date fees
and keeps everything else it was agreed at (docs/pricing.md, "Moving a visit")."""

from __future__ import annotations

from datetime import date, datetime, time

import attrs
from hypothesis import example, given
from hypothesis import strategies as st

from booking_core.catalog import Catalog, FeeKind
from booking_core.demo import DEMO_SELECTION, demo_catalog, price_demo_selection
from booking_core.pricing import PriceBreakdown, Selection, Visit, price, redated
from tests.strategies import PRICING_INSTANT, catalogs_and_selections

AT = PRICING_INSTANT
visits = st.sampled_from(list(Visit))
local_dates = st.dates(date(2026, 1, 1), date(2027, 12, 31))
DEMO = (demo_catalog(), DEMO_SELECTION)
SATURDAY = date(2026, 12, 5)
NEW_YEARS_EVE = date(2026, 12, 31)  # a Thursday, the demo catalog's holiday


def _on(catalog: Catalog, selection: Selection, day: date) -> Selection:
    """``selection`` starting at 10:00 local on ``day``."""
    return attrs.evolve(selection, start=datetime.combine(day, time(10), tzinfo=catalog.zone))


def _priced(catalog: Catalog, selection: Selection, visit: Visit) -> PriceBreakdown:
    return price(catalog, selection, at=AT, visit=visit)


@given(catalogs_and_selections(), visits, local_dates)
@example(DEMO, Visit.FIRST, NEW_YEARS_EVE)
def test_parts_sum_to_the_total_after_re_dating(case, visit, day):
    catalog, selection = case
    b = redated(_priced(catalog, selection, visit), catalog, day)
    assert b.fees_cents == sum(f.amount_cents for f in b.fees)
    assert b.subtotal_cents - b.discount_cents + b.fees_cents + b.tax_cents == b.total_cents
    assert b.total_cents >= 0
    assert all(type(f.amount_cents) is int for f in b.fees)


@given(catalogs_and_selections(), visits, local_dates)
@example(DEMO, Visit.FIRST, SATURDAY)
def test_re_dating_to_the_priced_date_changes_nothing(case, visit, day):
    catalog, selection = case
    b = _priced(catalog, _on(catalog, selection, day), visit)
    assert redated(b, catalog, day) == b


@given(catalogs_and_selections(), visits, local_dates, local_dates)
@example(DEMO, Visit.FIRST, NEW_YEARS_EVE, SATURDAY)
def test_re_dating_twice_is_re_dating_once_to_the_last_date(case, visit, first, second):
    catalog, selection = case
    b = _priced(catalog, selection, visit)
    once = redated(b, catalog, second)
    assert redated(once, catalog, second) == once
    assert redated(redated(b, catalog, first), catalog, second) == once


@given(catalogs_and_selections(), visits, local_dates, local_dates)
@example(DEMO, Visit.FIRST, SATURDAY, NEW_YEARS_EVE)
def test_re_dating_a_catalog_price_is_pricing_it_at_the_new_date(case, visit, old, new):
    catalog, selection = case
    b = _priced(catalog, _on(catalog, selection, old), visit)
    assert redated(b, catalog, new) == _priced(catalog, _on(catalog, selection, new), visit)


@given(catalogs_and_selections(), visits, local_dates)
def test_only_the_date_fees_change(case, visit, day):
    catalog, selection = case
    b = _priced(catalog, selection, visit)
    moved = redated(b, catalog, day)
    assert moved.lines == b.lines
    assert moved.discounts == b.discounts
    assert moved.discounted_subtotal_cents == b.discounted_subtotal_cents
    assert moved.duration_minutes == b.duration_minutes
    assert moved.tax_rate_bps == b.tax_rate_bps
    others = [f for f in moved.fees if f.kind is not FeeKind.DATE]
    assert sorted(others, key=lambda f: f.id) == sorted(
        (f for f in b.fees if f.kind is not FeeKind.DATE), key=lambda f: f.id
    )


def test_the_worked_example_moved_to_new_years_eve_swaps_the_weekend_for_the_holiday():
    b = price_demo_selection()
    assert "fee_weekend" in [f.id for f in b.fees]
    moved = redated(b, demo_catalog(), NEW_YEARS_EVE)
    names = [f.name for f in moved.fees]
    assert "Weekend surcharge" not in names
    assert "Holiday surcharge" in names
    assert [f for f in moved.fees if f.kind is not FeeKind.DATE] == [
        f for f in b.fees if f.kind is not FeeKind.DATE
    ]


def test_agreed_prices_stay_when_the_catalog_changed_since():
    """A dearer catalog and a new tax rate never leak into a moved visit: only its date
    fees are the catalog's (a fixed one; a percentage one of the agreed subtotal)."""
    catalog = demo_catalog()
    b = price(catalog, _on(catalog, DEMO_SELECTION, date(2026, 12, 7)), at=AT)  # a Monday
    dearer = attrs.evolve(catalog, tax_rate_bps=2_000)
    moved = redated(b, dearer, NEW_YEARS_EVE)
    assert moved.tax_rate_bps == b.tax_rate_bps
    (holiday,) = [f for f in moved.fees if f.kind is FeeKind.DATE]
    assert holiday.amount_cents == 2_500
    assert moved.taxable_cents == b.taxable_cents + 2_500
    assert moved.total_cents == moved.discounted_subtotal_cents + moved.fees_cents + (
        moved.tax_cents
    )


def test_a_kept_fee_the_catalog_no_longer_has_goes_after_the_catalog_fees():
    catalog = demo_catalog()
    b = price(catalog, _on(catalog, DEMO_SELECTION, SATURDAY), at=AT)
    gone = attrs.evolve(catalog, fees=tuple(f for f in catalog.fees if f.id != "fee_pets"))
    moved = redated(b, gone, NEW_YEARS_EVE)
    assert moved.fees[-1].id == "fee_pets"
    assert moved.fees_cents == sum(f.amount_cents for f in moved.fees)
