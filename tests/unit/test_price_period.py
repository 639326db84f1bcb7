"""``price_period``: two instants in the same period against every coupon's validity
window price every selection alike (what lets the HTTP layer send a quote's answer again)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import attrs
from hypothesis import given
from hypothesis import strategies as st

from booking_core.coupons import Coupon
from booking_core.demo import DEMO_SELECTION, demo_catalog
from booking_core.errors import RuleViolation
from booking_core.pricing import PlanPrice, price_period, price_plan

OPENS = datetime(2026, 3, 1, tzinfo=UTC)
CLOSES = datetime(2026, 4, 1, tzinfo=UTC)
WINDOWED = Coupon("cpn_window", "WINDOW", percent_bps=1_500, valid_from=OPENS, valid_until=CLOSES)
CATALOG = attrs.evolve(demo_catalog(), coupons=(*demo_catalog().coupons, WINDOWED))
SELECTION = attrs.evolve(DEMO_SELECTION, coupon_code="window")
instants = st.datetimes(
    min_value=datetime(2025, 12, 1), max_value=datetime(2026, 7, 1), timezones=st.just(UTC)
)


def priced(at: datetime) -> PlanPrice | str:
    try:
        return price_plan(CATALOG, SELECTION, at=at)
    except RuleViolation as refused:
        return type(refused).__name__ + str(refused)


def test_the_period_says_before_within_and_after_each_window():
    day = timedelta(days=1)
    assert price_period(CATALOG, OPENS - day)[-1] == 0
    assert price_period(CATALOG, OPENS)[-1] == 1
    assert price_period(CATALOG, CLOSES - day)[-1] == 1
    assert price_period(CATALOG, CLOSES)[-1] == 2


@given(instants, instants)
def test_instants_of_one_period_price_alike(a, b):
    if price_period(CATALOG, a) == price_period(CATALOG, b):
        assert priced(a) == priced(b)
