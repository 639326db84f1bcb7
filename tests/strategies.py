"""Shared hypothesis strategies for our own tests.

The catalog and selection strategies are the public ones of ``booking_core.testing``
(so the strategies companies use are the ones we test with); this module adds what
only our tests need.
"""

from __future__ import annotations

from hypothesis import strategies as st

from booking_core.testing import (
    PRICING_INSTANT,
    catalogs,
    catalogs_and_selections,
    coupons,
    extras,
    fee_definitions,
    frequencies,
    parameters,
    selections,
    services,
)

__all__ = [
    "PRICING_INSTANT",
    "catalogs",
    "catalogs_and_selections",
    "coupons",
    "extras",
    "fee_definitions",
    "frequencies",
    "parameters",
    "selections",
    "services",
    "weights",
]

weights = st.lists(st.integers(min_value=0, max_value=1_000_000), min_size=1, max_size=20).filter(
    lambda ws: sum(ws) > 0
)
"""Non-negative allocation weights, not all zero."""
