"""Money in integer cents, rates in integer basis points, and the one rounding rule.

No float ever touches money: every amount is an ``int`` of cents and every rate an
``int`` of basis points (1 bp = 0.01 %). A computed amount is rounded exactly once,
half away from zero ("half-up" for the positive amounts pricing deals in).
"""

from __future__ import annotations

from collections.abc import Sequence

BPS_PER_UNIT = 10_000
"""Basis points in a whole (100 %)."""


def round_half_up(numerator: int, denominator: int) -> int:
    """Divide two integers and round the quotient half away from zero."""
    if denominator == 0:
        raise ZeroDivisionError("denominator must not be zero")
    if denominator < 0:
        numerator, denominator = -numerator, -denominator
    if numerator >= 0:  # the common case in pricing, kept branch-light
        return (2 * numerator + denominator) // (2 * denominator)
    return -((-2 * numerator + denominator) // (2 * denominator))


def apply_bps(amount_cents: int, bps: int) -> int:
    """Return ``bps`` basis points of ``amount_cents``, rounded once to whole cents."""
    return round_half_up(amount_cents * bps, BPS_PER_UNIT)


def allocate(total_cents: int, weights: Sequence[int]) -> list[int]:
    """Split ``total_cents`` in proportion to ``weights`` by largest remainder.

    The parts always sum to ``total_cents`` exactly. Ties in the remainder go to
    the earlier weight, so the split is deterministic. Weights must be
    non-negative and not all zero (unless the total is zero).
    """
    if any(w < 0 for w in weights):
        raise ValueError("weights must be non-negative")
    weight_sum = sum(weights)
    if weight_sum == 0:
        if total_cents != 0:
            raise ValueError("cannot allocate a non-zero total over zero weights")
        return [0 for _ in weights]
    sign = -1 if total_cents < 0 else 1
    magnitude = abs(total_cents)
    floors = []
    remainders = []
    for index, weight in enumerate(weights):
        share, remainder = divmod(magnitude * weight, weight_sum)
        floors.append(share)
        remainders.append((-remainder, index))
    leftover = magnitude - sum(floors)
    for _, index in sorted(remainders)[:leftover]:
        floors[index] += 1
    return [sign * part for part in floors]
