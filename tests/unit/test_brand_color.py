"""A company's brand colour (booking_core.companies): ``#rrggbb`` lower-case, dark enough
that white text on it reaches WCAG 2's contrast of 4.5:1."""

from __future__ import annotations

import attrs
import pytest

from booking_core.companies import (
    TOO_LIGHT,
    brand_color_problem,
    contrast_with_white,
    darker,
    normalize_brand_color,
    validate_company,
)
from booking_core.errors import ValidationFailed
from tests import factories


@pytest.mark.parametrize(
    ("color", "ratio"),
    [("#000000", 21.0), ("#ffffff", 1.0), ("#767676", 4.54), ("#777777", 4.48)],
)
def test_contrast_with_white_is_wcag_2s(color: str, ratio: float):
    assert contrast_with_white(color) == pytest.approx(ratio, abs=0.01)


@pytest.mark.parametrize("color", ["#000000", "#767676", "#1d4ed8", "#4338ca", "#b91c1c"])
def test_a_dark_enough_colour_is_accepted(color: str):
    assert brand_color_problem(color) is None
    company = attrs.evolve(factories.company(), brand_color=color)
    assert validate_company(company).brand_color == color


@pytest.mark.parametrize("color", ["#777777", "#ffd700", "#ffffff", "#22c55e"])
def test_a_colour_too_light_for_white_text_is_refused_with_a_clear_sentence(color: str):
    with pytest.raises(ValidationFailed) as refused:
        validate_company(attrs.evolve(factories.company(), brand_color=color))
    assert refused.value.field_errors == {"brand_color": TOO_LIGHT}
    assert TOO_LIGHT == "Too light for white text; pick a darker colour."


@pytest.mark.parametrize("color", ["#1D4ED8", "1d4ed8", "#1d4ed", "#1d4ed80", "blue", "#12345g"])
def test_anything_but_lower_case_six_digit_hex_is_refused(color: str):
    assert brand_color_problem(color) == "A colour as #rrggbb, e.g. #1d4ed8."


def test_typed_colours_are_normalised_and_blank_is_none():
    assert normalize_brand_color(" #1D4ED8 ") == "#1d4ed8"
    assert normalize_brand_color("1d4ed8") == "#1d4ed8"
    assert normalize_brand_color("  ") is None
    assert normalize_brand_color(None) is None


def test_the_hover_shade_is_darker_and_still_hex():
    assert darker("#1d4ed8") == "#1942b8"
    assert contrast_with_white(darker("#767676")) > contrast_with_white("#767676")
    assert darker("#000000") == "#000000"
