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

# --- Keys, customers, leads, idempotency -------------------------------------------------

from datetime import UTC, datetime, timedelta  # noqa: E402

from booking_core.auth import SCOPES  # noqa: E402
from booking_core.customers import Visit, VisitStatus  # noqa: E402

__all__ += [
    "BASE62",
    "churn_instants",
    "json_values",
    "key_bodies",
    "scope_sets",
    "visit_histories",
    "visits",
]

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
"""The base62 alphabet of API keys: digits, capitals, then small letters."""

key_bodies = st.text(alphabet=BASE62, min_size=40, max_size=40)
"""The 40 random characters between an API key's prefix and its checksum."""

scope_sets = st.frozensets(st.sampled_from(SCOPES), min_size=1)
"""Any non-empty set of SPEC.md scopes."""

_VISITS_FROM = datetime(2025, 1, 1, tzinfo=UTC)
_VISITS_SPAN_MINUTES = 3 * 365 * 24 * 60

churn_instants = st.integers(min_value=0, max_value=_VISITS_SPAN_MINUTES).map(
    lambda m: _VISITS_FROM + timedelta(minutes=m)
)
"""Aware instants over three years, on the whole minute."""

visits = st.builds(Visit, start=churn_instants, status=st.sampled_from(VisitStatus))
"""One visit of any status, in the past or the future of any ``churn_instants``."""

visit_histories = st.lists(visits, max_size=30)
"""A customer's visits, in no particular order; possibly none."""

_json_text = st.text(st.characters(exclude_categories=()))
"""Any text a JSON string can parse to, lone surrogates (``"\\ud800"``) included."""

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _json_text,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_json_text, inner, max_size=5),
    max_leaves=20,
)
"""Any value a JSON request body can parse to."""
