"""The worked example in docs/pricing.md is priced and every number in it is checked."""

from __future__ import annotations

import re
from pathlib import Path

from booking_core.demo import price_demo_selection
from booking_core.pricing import PriceBreakdown, price_plan

DOC = Path(__file__).resolve().parents[2] / "docs" / "pricing.md"


def documented_rows() -> list[tuple[str, int]]:
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- worked-example:start -->")[1].split("<!-- worked-example:end -->")[0]
    rows = re.findall(r"^\|[^|]+\|\s*(\d+)\s*\|\s*`([^`]+)`\s*\|$", block, flags=re.M)
    return [(key, int(cents)) for cents, key in rows]


def actual(b: PriceBreakdown, key: str) -> int:
    kind, _, ident = key.partition(":")
    match kind:
        case "line":
            return next(line.amount_cents for line in b.lines if line.id == ident)
        case "discount":
            return next(d.amount_cents for d in b.discounts if d.kind == ident)
        case "fee":
            return next(f.amount_cents for f in b.fees if f.id == ident)
        case _:
            return int(getattr(b, f"{key}_cents"))


def test_every_number_of_the_worked_example_is_what_price_returns():
    b = price_demo_selection()
    rows = documented_rows()
    assert len(rows) == 17
    assert {key: actual(b, key) for key, _ in rows} == dict(rows)
    # The table lists every line, discount and fee: nothing priced is missing from it.
    keys = {key for key, _ in rows}
    assert {f"line:{line.id}" for line in b.lines} <= keys
    assert {f"fee:{f.id}" for f in b.fees} <= keys
    assert {f"discount:{d.kind}" for d in b.discounts} <= keys


def test_later_visit_figures_in_the_docs_hold():
    from datetime import UTC, datetime

    from booking_core.demo import DEMO_SELECTION, demo_catalog

    later = price_plan(
        demo_catalog(), DEMO_SELECTION, at=datetime(2026, 11, 21, tzinfo=UTC)
    ).later_visits
    assert later is not None
    text = DOC.read_text(encoding="utf-8")
    expected = (
        f"subtotal {later.subtotal_cents}, discounts {later.discount_cents},\n"
        f"fees {later.fees_cents}, tax {later.tax_cents}, total {later.total_cents}."
    )
    assert expected in text
