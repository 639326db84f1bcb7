"""The whole breakdown, field by field, and the exact words of every pricing refusal
(docs/pricing.md). test_pricing.py checks the price order by its amounts; this module pins
what else a customer or an integrator reads: names, kinds, quantities, durations,
discountable flags, fee kinds and taxability, and each refusal's fields and message."""

from __future__ import annotations

from datetime import datetime, timedelta

import attrs
import pytest

from booking_core.catalog import FeeDefinition, FeeKind
from booking_core.coupons import Coupon, CouponUsage
from booking_core.demo import DEMO_SELECTION
from booking_core.errors import (
    CouponRejected,
    DuplicateSelection,
    ExtraNotOffered,
    ManualFeeRefused,
    QuantityOutOfBounds,
    TooManySelections,
    UnknownCatalogItem,
    ValidationFailed,
)
from booking_core.pricing import (
    MAX_SELECTIONS,
    DiscountKind,
    DiscountLine,
    FeeLine,
    LineKind,
    PriceBreakdown,
    PriceLine,
    SelectedItem,
    Selection,
    Visit,
    check_manual_fees,
    price,
    price_plan,
)
from tests.unit.test_pricing import AT, CATALOG, standard


def with_coupons(*coupons: Coupon):
    return attrs.evolve(CATALOG, coupons=coupons)


BASE = PriceLine(LineKind.BASE, "svc_standard_clean", "Standard clean", 1, 9_000, 9_000, True, 90)
BEDROOMS_3 = PriceLine(LineKind.PARAMETER, "par_bedrooms", "Bedrooms", 3, 2_500, 7_500, True, 90)
BATHROOMS_2 = PriceLine(LineKind.PARAMETER, "par_bathrooms", "Bathrooms", 2, 2_000, 4_000, True, 50)
OVEN = PriceLine(LineKind.EXTRA, "ext_oven", "Inside the oven", 1, 3_500, 3_500, True, 30)
WINDOWS_4 = PriceLine(LineKind.EXTRA, "ext_windows", "Interior windows", 4, 1_500, 6_000, True, 60)
SUPPLIES = PriceLine(LineKind.EXTRA, "ext_supplies", "Eco supplies", 1, 1_200, 1_200, False, 0)
FIRST_DEEP = PriceLine(
    LineKind.EXTRA, "ext_first_deep", "First-visit deep clean", 1, 6_000, 6_000, True, 60
)


# --- the whole breakdown ---------------------------------------------------------------


def test_the_demo_first_visit_is_priced_field_by_field():
    assert price(CATALOG, DEMO_SELECTION, at=AT) == PriceBreakdown(
        visit=Visit.FIRST,
        lines=(BASE, BEDROOMS_3, BATHROOMS_2, OVEN, WINDOWS_4, SUPPLIES, FIRST_DEEP),
        subtotal_cents=37_200,
        discounts=(
            DiscountLine(DiscountKind.FREQUENCY, "Every two weeks", 3_600),
            DiscountLine(DiscountKind.COUPON, "WELCOME10", 3_240, code="WELCOME10"),
        ),
        discount_cents=6_840,
        referral_discount_cents=0,
        discounted_subtotal_cents=30_360,
        fees=(
            FeeLine("fee_weekend", "Weekend surcharge", FeeKind.DATE, 3_036, True),
            FeeLine("fee_island", "Island travel", FeeKind.ZIP, 1_500, False),
            FeeLine("fee_pets", "Pet hair", FeeKind.MANUAL, 2_000, False),
        ),
        fees_cents=6_536,
        taxable_cents=33_396,
        tax_rate_bps=887,
        tax_cents=2_962,
        total_cents=39_858,
        duration_minutes=90 + 90 + 50 + 30 + 60 + 0 + 60,
    )


def test_the_demo_later_visit_drops_the_first_visit_extra_and_keeps_the_rest():
    plan = price_plan(CATALOG, attrs.evolve(DEMO_SELECTION, referral_discount_cents=1_000), at=AT)
    assert plan.later_visits == PriceBreakdown(
        visit=Visit.LATER,
        lines=(BASE, BEDROOMS_3, BATHROOMS_2, OVEN, WINDOWS_4, SUPPLIES),
        subtotal_cents=31_200,
        discounts=(
            # 10 % of the discountable 30000; coupon 10 % of 27000.
            DiscountLine(DiscountKind.FREQUENCY, "Every two weeks", 3_000),
            DiscountLine(DiscountKind.COUPON, "WELCOME10", 2_700, code="WELCOME10"),
        ),
        discount_cents=5_700,
        referral_discount_cents=0,
        discounted_subtotal_cents=25_500,
        fees=(
            FeeLine("fee_weekend", "Weekend surcharge", FeeKind.DATE, 2_550, True),
            FeeLine("fee_island", "Island travel", FeeKind.ZIP, 1_500, False),
            FeeLine("fee_pets", "Pet hair", FeeKind.MANUAL, 2_000, False),
        ),
        fees_cents=6_050,
        taxable_cents=28_050,
        tax_rate_bps=887,
        tax_cents=2_488,  # 8.87 % of 28050 = 2488.035
        total_cents=34_038,
        duration_minutes=320,
    )


def test_a_referral_discount_comes_after_the_coupon_and_before_fees_and_tax():
    first = price(CATALOG, attrs.evolve(DEMO_SELECTION, referral_discount_cents=1_000), at=AT)
    assert first.discounts[-1] == DiscountLine(DiscountKind.REFERRAL, "Referral discount", 1_000)
    assert first.referral_discount_cents == 1_000
    assert (first.discount_cents, first.discounted_subtotal_cents) == (7_840, 29_360)
    # The weekend fee is 10 % of 29360; tax 8.87 % of 29360 + 2936 = 2864.6552 -> 2865.
    assert [f.amount_cents for f in first.fees] == [2_936, 1_500, 2_000]
    assert (first.taxable_cents, first.tax_cents) == (32_296, 2_865)
    assert first.total_cents == 29_360 + 6_436 + 2_865


def test_a_one_time_clean_lists_no_frequency_discount_line_and_no_fees():
    breakdown = price(with_coupons(Coupon("c", "Five", amount_cents=500)), standard(
        coupon_code="five"), at=AT)  # fmt: skip
    assert breakdown.discounts == (DiscountLine(DiscountKind.COUPON, "Five", 500, code="Five"),)
    assert breakdown.fees == ()
    assert breakdown.fees_cents == 0
    assert breakdown.referral_discount_cents == 0
    assert breakdown.visit is Visit.FIRST


def test_a_parameter_at_quantity_zero_adds_no_line_and_an_untaxed_service_no_tax():
    hour = price(CATALOG, Selection("svc_handyman_hour"), at=AT)
    assert hour.lines == (
        PriceLine(LineKind.BASE, "svc_handyman_hour", "Handyman hour", 1, 8_500, 8_500, True, 60),
    )
    assert (hour.taxable_cents, hour.tax_cents, hour.total_cents) == (0, 0, 8_500)
    longer = price(
        CATALOG, Selection("svc_handyman_hour", parameters=(SelectedItem("par_extra_hours", 2),)),
        at=AT,
    )  # fmt: skip
    assert longer.lines[1] == PriceLine(
        LineKind.PARAMETER, "par_extra_hours", "Extra hours", 2, 7_500, 15_000, True, 120
    )
    assert (longer.subtotal_cents, longer.duration_minutes) == (23_500, 180)


def test_a_plan_price_is_none_for_later_visits_of_a_one_time_job():
    plan = price_plan(CATALOG, standard(), at=AT)
    assert plan.first_visit == price(CATALOG, standard(), at=AT)
    assert plan.later_visits is None


# --- referral ----------------------------------------------------------------------------


def test_a_referral_discount_is_capped_at_what_the_other_discounts_left():
    selection = standard(
        frequency_slug="weekly", coupon_code="welcome10", referral_discount_cents=10**6,
        extras=(SelectedItem("ext_supplies"),),
    )  # fmt: skip
    breakdown = price(CATALOG, selection, at=AT)
    # 17200: weekly 2400, coupon 1360; the referral takes the 13440 left, exempt supplies too.
    assert [d.amount_cents for d in breakdown.discounts] == [2_400, 1_360, 13_440]
    assert breakdown.referral_discount_cents == 13_440
    assert (breakdown.discounted_subtotal_cents, breakdown.total_cents) == (0, 0)


def test_a_referral_with_nothing_left_to_discount_adds_no_line():
    full = Coupon("c", "Free", percent_bps=10_000)
    breakdown = price(
        with_coupons(full), standard(coupon_code="free", referral_discount_cents=500), at=AT
    )
    assert [d.kind for d in breakdown.discounts] == [DiscountKind.COUPON]
    assert breakdown.referral_discount_cents == 0
    assert breakdown.total_cents == 0


def test_a_negative_referral_discount_is_refused_on_its_field():
    with pytest.raises(ValidationFailed) as caught:
        price(CATALOG, standard(referral_discount_cents=-1), at=AT)
    assert caught.value.field_errors == {"referral_discount_cents": "Must not be negative."}


# --- fees --------------------------------------------------------------------------------


def test_a_zero_percent_fee_charges_nothing():
    free = FeeDefinition("fee_free", "Free", FeeKind.MANUAL, amount_bps=0)
    catalog = attrs.evolve(CATALOG, fees=(free,))
    breakdown = price(catalog, standard(manual_fee_ids=("fee_free",)), at=AT)
    assert breakdown.fees == (FeeLine("fee_free", "Free", FeeKind.MANUAL, 0, False),)
    assert breakdown.total_cents == 16_000 + 1_419


def test_fees_follow_catalog_order_whatever_the_order_of_manual_ids():
    selection = standard(manual_fee_ids=("fee_rush", "fee_pets"), zip_code="02557")
    assert [f.id for f in price(CATALOG, selection, at=AT).fees] == [
        "fee_island",
        "fee_pets",
        "fee_rush",
    ]


def test_manual_fee_ids_are_checked_and_kept_in_the_order_given():
    assert check_manual_fees(CATALOG, ("fee_rush", "fee_pets")) == ("fee_rush", "fee_pets")
    assert check_manual_fees(CATALOG, ()) == ()


def test_an_unknown_manual_fee_is_refused_on_its_index():
    with pytest.raises(UnknownCatalogItem) as caught:
        check_manual_fees(CATALOG, ("fee_pets", "fee_nope"))
    assert caught.value.field_errors == {"manual_fee_ids.1": "No fee with id 'fee_nope'."}
    assert caught.value.message == "Unknown fee 'fee_nope'."


def test_a_manual_fee_given_twice_is_refused_on_the_second():
    with pytest.raises(DuplicateSelection) as caught:
        check_manual_fees(CATALOG, ("fee_pets", "fee_rush", "fee_pets"))
    assert (caught.value.field, caught.value.item_kind, caught.value.item_id) == (
        "manual_fee_ids.2",
        "fee",
        "fee_pets",
    )
    assert caught.value.message == "Fee 'fee_pets' is selected more than once."


def test_an_inactive_manual_fee_is_refused():
    off = FeeDefinition("fee_off", "Off", FeeKind.MANUAL, amount_cents=1, active=False)
    catalog = attrs.evolve(CATALOG, fees=(off,))
    with pytest.raises(ManualFeeRefused) as caught:
        price(catalog, standard(manual_fee_ids=("fee_off",)), at=AT)
    assert caught.value.message == "Fee 'fee_off' is not an active manual fee."


# --- refusals and their words ------------------------------------------------------------


@pytest.mark.parametrize(
    ("selection", "field", "text", "message"),
    [
        (standard(service_id="svc_nope"), "service_id",
         "No service with id 'svc_nope'.", "Unknown service 'svc_nope'."),
        (standard(frequency_slug="daily"), "frequency_slug",
         "No frequency with id 'daily'.", "Unknown frequency 'daily'."),
        (standard(parameters=(SelectedItem("par_bedrooms"), SelectedItem("par_nope"))),
         "parameters.1.id", "No parameter with id 'par_nope'.", "Unknown parameter 'par_nope'."),
        (standard(extras=(SelectedItem("ext_nope"),)), "extras.0.id",
         "No extra with id 'ext_nope'.", "Unknown extra 'ext_nope'."),
        # An extra of another service is unknown on this one.
        (standard(extras=(SelectedItem("ext_baseboards"),)), "extras.0.id",
         "No extra with id 'ext_baseboards'.", "Unknown extra 'ext_baseboards'."),
    ],
)  # fmt: skip
def test_an_unknown_id_is_refused_with_its_path_and_words(selection, field, text, message):
    with pytest.raises(UnknownCatalogItem) as caught:
        price(CATALOG, selection, at=AT)
    assert caught.value.field_errors == {field: text}
    assert caught.value.message == message


def test_a_naive_start_is_refused_with_an_example_of_an_offset():
    with pytest.raises(ValidationFailed) as caught:
        price(CATALOG, standard(start=datetime(2026, 12, 5, 9)), at=AT)
    assert caught.value.field_errors == {
        "start_iso": "Must carry a UTC offset, e.g. 2026-05-01T09:00:00-04:00."
    }


@pytest.mark.parametrize(
    ("selection", "fields", "message"),
    [
        (standard(parameters=(SelectedItem("par_bathrooms", 1), SelectedItem("par_bedrooms", 9))),
         ("parameters.1.quantity", "parameter", "par_bedrooms", "Bedrooms", 9, 1, 8),
         "Quantity 9 of parameter 'Bedrooms' (par_bedrooms) is outside 1..8."),
        (standard(parameters=(SelectedItem("par_bathrooms", 0),)),
         ("parameters.0.quantity", "parameter", "par_bathrooms", "Bathrooms", 0, 1, 6),
         "Quantity 0 of parameter 'Bathrooms' (par_bathrooms) is outside 1..6."),
        (standard(extras=(SelectedItem("ext_oven"), SelectedItem("ext_windows", 21))),
         ("extras.1.quantity", "extra", "ext_windows", "Interior windows", 21, 1, 20),
         "Quantity 21 of extra 'Interior windows' (ext_windows) is outside 1..20."),
        (standard(extras=(SelectedItem("ext_windows", 0),)),
         ("extras.0.quantity", "extra", "ext_windows", "Interior windows", 0, 1, 20),
         "Quantity 0 of extra 'Interior windows' (ext_windows) is outside 1..20."),
    ],
)  # fmt: skip
def test_a_quantity_out_of_bounds_names_the_item_and_both_bounds(selection, fields, message):
    with pytest.raises(QuantityOutOfBounds) as caught:
        price(CATALOG, selection, at=AT)
    e = caught.value
    assert (e.field, e.item_kind, e.item_id, e.item_name, e.quantity, e.minimum, e.maximum) == (
        fields
    )
    assert e.message == message


def test_quantities_at_their_bounds_are_priced():
    selection = standard(
        parameters=(SelectedItem("par_bedrooms", 8), SelectedItem("par_bathrooms", 1)),
        extras=(SelectedItem("ext_windows", 20), SelectedItem("ext_oven", 1)),
    )
    breakdown = price(CATALOG, selection, at=AT)
    assert [(line.id, line.quantity) for line in breakdown.lines] == [
        ("svc_standard_clean", 1),
        ("par_bedrooms", 8),
        ("par_bathrooms", 1),
        ("ext_oven", 1),
        ("ext_windows", 20),
    ]
    assert breakdown.subtotal_cents == 9_000 + 20_000 + 2_000 + 3_500 + 30_000


def test_the_same_parameter_twice_is_refused_on_the_second():
    selection = standard(parameters=(SelectedItem("par_bedrooms"), SelectedItem("par_bedrooms")))
    with pytest.raises(DuplicateSelection) as caught:
        price(CATALOG, selection, at=AT)
    assert (caught.value.field, caught.value.item_kind, caught.value.item_id) == (
        "parameters.1.id",
        "parameter",
        "par_bedrooms",
    )
    assert caught.value.message == "Parameter 'par_bedrooms' is selected more than once."


def test_an_extra_off_its_frequencies_is_refused_naming_extra_and_frequency():
    selection = standard(frequency_slug="biweekly", extras=(SelectedItem("ext_move_out"),))
    with pytest.raises(ExtraNotOffered) as caught:
        price(CATALOG, selection, at=AT)
    e = caught.value
    assert (e.extra_id, e.extra_name, e.frequency_slug) == (
        "ext_move_out",
        "Move-out detail",
        "biweekly",
    )
    assert (
        e.message
        == "Extra 'Move-out detail' (ext_move_out) is not offered on frequency 'biweekly'."
    )


def test_parameters_and_extras_count_together_towards_the_selection_limit():
    assert MAX_SELECTIONS == 200
    too_many = standard(extras=tuple(SelectedItem(f"ext_{i}") for i in range(199)))
    with pytest.raises(TooManySelections) as caught:
        price(CATALOG, too_many, at=AT)
    assert (caught.value.count, caught.value.limit) == (201, 200)
    assert caught.value.message == ("201 parameter and extra selections; at most 200 are allowed.")


# --- a plan's coupon ----------------------------------------------------------------------


def test_a_plan_judges_its_coupon_by_the_usage_given_for_both_visits():
    limited = Coupon("c", "Limited", percent_bps=1_000, max_redemptions=2, per_customer_limit=1)
    catalog = with_coupons(limited)
    selection = standard(frequency_slug="weekly", coupon_code="limited")
    plan = price_plan(catalog, selection, at=AT, coupon_usage=CouponUsage(1, 0))
    assert plan.later_visits is not None
    for visit in (plan.first_visit, plan.later_visits):
        assert [(d.code, d.amount_cents) for d in visit.discounts[1:]] == [("Limited", 1_360)]
    with pytest.raises(CouponRejected) as caught:
        price_plan(catalog, selection, at=AT, coupon_usage=CouponUsage(2, 0))
    assert caught.value.rule == "max_redemptions"


def test_a_one_time_plan_price_judges_its_coupon_by_the_usage_given():
    once = Coupon("c", "Once", percent_bps=1_000, per_customer_limit=1)
    with pytest.raises(CouponRejected) as caught:
        price_plan(with_coupons(once), standard(coupon_code="once"), at=AT,
                   coupon_usage=CouponUsage(1, 1))  # fmt: skip
    assert caught.value.rule == "per_customer_limit"


def test_a_plan_judges_its_coupon_window_at_the_pricing_instant_for_both_visits():
    window = Coupon(
        "c", "Window", amount_cents=300, valid_from=AT, valid_until=AT + timedelta(days=1)
    )
    selection = standard(frequency_slug="biweekly", coupon_code="window")
    plan = price_plan(with_coupons(window), selection, at=AT)
    assert plan.later_visits is not None
    assert plan.first_visit.discounts[-1].amount_cents == 300
    assert plan.later_visits.discounts[-1].amount_cents == 300
    with pytest.raises(CouponRejected) as caught:
        price_plan(with_coupons(window), selection, at=AT + timedelta(days=1))
    assert caught.value.rule == "expired"


def test_every_unknown_id_of_a_selection_is_named_at_once():
    """An unknown frequency, parameter and extras are all named, each on its path (one
    at a time before: a caller fixed one and met the next)."""
    selection = standard(
        frequency_slug="fortnightly",
        parameters=(SelectedItem("par_nope"),),
        extras=(SelectedItem("ext_one"), SelectedItem("ext_two")),
    )
    with pytest.raises(ValidationFailed) as caught:
        price(CATALOG, selection, at=AT)
    assert caught.value.field_errors == {
        "frequency_slug": "No frequency with id 'fortnightly'.",
        "parameters.0.id": "No parameter with id 'par_nope'.",
        "extras.0.id": "No extra with id 'ext_one'.",
        "extras.1.id": "No extra with id 'ext_two'.",
    }
    assert caught.value.message == (
        "Unknown frequency 'fortnightly', parameter 'par_nope', extra 'ext_one', extra 'ext_two'."
    )
