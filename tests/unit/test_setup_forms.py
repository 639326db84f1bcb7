"""The setup forms' own number reading (``adapters.web.setup_forms``): what a person types
into a money, percentage or whole-number field, read as the pages document it."""

from __future__ import annotations

import pytest

from adapters.web.setup_forms import FieldErrors, money, percent, whole


@pytest.mark.parametrize(
    ("typed", "cents"),
    [
        ("120", 12_000),
        ("$120.5", 12_050),
        ("0120.50", 12_050),
        ("0" * 30 + "1", 100),
        (".50", None),
    ],
)
def test_money_takes_zeros_in_front_however_many(typed: str, cents: int | None) -> None:
    """web.md: numbers "may carry zeros in front however many (they do not count)"."""
    errors = FieldErrors()
    read = money(errors, "price", typed)
    assert (read if not errors else None) == cents


def test_a_percentage_with_zeros_in_front_and_a_pasted_number_without() -> None:
    errors = FieldErrors()
    assert percent(errors, "tax_rate", "00000000000008.87") == 887
    assert not errors
    assert percent(errors, "tax_rate", "1" * 13) == 0
    assert errors["tax_rate"].startswith("Write the percentage as digits")


def test_a_whole_number_reads_zeros_in_front_as_nothing() -> None:
    errors = FieldErrors()
    assert whole(errors, "min_notice_minutes", "0" * 25 + "120") == 120
    assert not errors
