from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from booking_core.money import allocate, apply_bps, round_half_up
from tests.strategies import weights


@pytest.mark.parametrize(
    ("numerator", "denominator", "expected"),
    [
        (5, 10, 1),
        (4, 10, 0),
        (15, 10, 2),
        (25, 10, 3),
        (-5, 10, -1),
        (-4, 10, 0),
        (7, -2, -4),
        (7, 1, 7),
        (-7, -1, 7),
    ],
)
def test_round_half_up_rounds_halves_away_from_zero(
    numerator: int, denominator: int, expected: int
) -> None:
    assert round_half_up(numerator, denominator) == expected


def test_apply_bps_rounds_the_exact_product_once() -> None:
    # 8.87 % of $333.96 is 2962.2252 cents: 2962.
    assert apply_bps(33_396, 887) == 2_962
    # 12.5 % of 1 cent is half a cent: rounds up to 1.
    assert apply_bps(4, 1_250) == 1


@given(st.integers(-(10**12), 10**12), weights)
def test_allocate_parts_always_sum_to_the_total(total: int, ws: list[int]) -> None:
    parts = allocate(total, ws)
    assert sum(parts) == total
    assert all(isinstance(p, int) for p in parts)


@given(st.integers(0, 10**9), weights)
def test_allocate_gives_each_part_within_one_cent_of_its_exact_share(
    total: int, ws: list[int]
) -> None:
    for part, weight in zip(allocate(total, ws), ws, strict=True):
        exact = total * weight / sum(ws)
        assert abs(part - exact) < 1


def test_allocate_splits_a_cent_remainder_deterministically() -> None:
    assert allocate(100, [1, 1, 1]) == [34, 33, 33]
    assert allocate(-100, [1, 1, 1]) == [-34, -33, -33]


def test_allocate_gives_leftover_cents_to_the_largest_remainders_first() -> None:
    # 10 over 1:2 is 3.33 and 6.67: the cent left over goes to the 0.67, not the 0.33.
    assert allocate(10, [1, 2]) == [3, 7]
    # 5 over 2:1:1 is 2.5, 1.25, 1.25: the half beats the quarters.
    assert allocate(5, [2, 1, 1]) == [3, 1, 1]
    assert allocate(-10, [1, 2]) == [-3, -7]


def test_allocate_refuses_negative_weights_and_nonzero_over_zero_weights() -> None:
    with pytest.raises(ValueError, match=r"^weights must be non-negative$"):
        allocate(10, [1, -1])
    with pytest.raises(ValueError, match=r"^cannot allocate a non-zero total over zero weights$"):
        allocate(10, [0, 0])
    assert allocate(0, [0, 0]) == [0, 0]


def test_round_half_up_refuses_a_zero_denominator_by_name() -> None:
    with pytest.raises(ZeroDivisionError, match=r"^denominator must not be zero$"):
        round_half_up(5, 0)
