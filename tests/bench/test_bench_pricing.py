"""``make bench``: price() of a 10-selection quote with a coupon, a date fee and tax.

Target: p50 at most 50 microseconds on this machine. The figure is printed, never
asserted: the machine is shared and noisy, so timing lives here and not in tests.
Under ``make test`` (benchmarks disabled) each benchmark runs once as a smoke test.
"""

from __future__ import annotations

from datetime import UTC, datetime

import attrs

from booking_core.catalog import Extra, Industry
from booking_core.demo import demo_catalog
from booking_core.pricing import SelectedItem, Selection, price

TARGET_P50_US = 50.0


def ten_selection_case():
    catalog = demo_catalog()
    service = catalog.services_by_id["svc_standard_clean"]
    more = tuple(Extra(f"ext_more_{i}", f"More {i}", 1_000 + i, 10) for i in range(3))
    service = attrs.evolve(service, extras=(*service.extras, *more))
    catalog = attrs.evolve(
        catalog,
        industries=(Industry("ind_cleaning", "Home cleaning", (service,)),),
    )
    selection = Selection(
        service_id=service.id,
        frequency_slug="one_time",
        parameters=(SelectedItem("par_bedrooms", 3), SelectedItem("par_bathrooms", 2)),
        extras=(
            SelectedItem("ext_oven"),
            SelectedItem("ext_fridge"),
            SelectedItem("ext_windows", 6),
            SelectedItem("ext_supplies"),
            SelectedItem("ext_move_out"),
            *(SelectedItem(e.id) for e in more),
        ),
        coupon_code="WELCOME10",
        zip_code="10001",
        start=datetime(2026, 12, 5, 14, tzinfo=UTC),  # Saturday: weekend date fee
    )
    assert len(selection.parameters) + len(selection.extras) == 10
    return catalog, selection


def test_bench_price_ten_selections(benchmark):
    catalog, selection = ten_selection_case()
    at = datetime(2026, 11, 21, tzinfo=UTC)
    result = benchmark(price, catalog, selection, at=at)
    assert result.tax_cents > 0
    assert [f.id for f in result.fees] == ["fee_weekend"]
    assert any(d.code == "WELCOME10" for d in result.discounts)
    if benchmark.enabled:
        p50_us = benchmark.stats.stats.median * 1e6
        verdict = "meets" if p50_us <= TARGET_P50_US else "MISSES"
        print(f"\nprice() 10 selections: p50 {p50_us:.1f} us ({verdict} target {TARGET_P50_US} us)")
