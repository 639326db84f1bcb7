"""Example tests of the price order and every refusal, on the demo catalog."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import attrs
import pytest

from booking_core.catalog import Catalog, Extra, FeeDefinition, FeeKind, Industry, Service
from booking_core.coupons import Coupon, CouponUsage
from booking_core.demo import DEMO_SELECTION, demo_catalog
from booking_core.errors import (
    CouponRejected,
    DuplicateSelection,
    ExtraNotOffered,
    ManualFeeRefused,
    QuantityOutOfBounds,
    RuleViolation,
    TooManySelections,
    UnknownCatalogItem,
    ValidationFailed,
)
from booking_core.pricing import (
    DiscountKind,
    SelectedItem,
    Selection,
    Visit,
    price,
    price_plan,
)

AT = datetime(2026, 11, 21, 12, tzinfo=UTC)
CATALOG = demo_catalog()


def standard(**changes: object) -> Selection:
    """A plain one-time standard clean: 2 bedrooms, 1 bathroom, no fees."""
    base = Selection(
        service_id="svc_standard_clean",
        parameters=(SelectedItem("par_bedrooms", 2), SelectedItem("par_bathrooms", 1)),
    )
    return attrs.evolve(base, **changes)


def test_plain_selection_is_base_plus_parameters_plus_tax():
    breakdown = price(CATALOG, standard(), at=AT)
    # 9000 + 2 x 2500 + 1 x 2000 = 16000; tax 8.87 % = 1419.2 -> 1419.
    assert breakdown.subtotal_cents == 16_000
    assert breakdown.tax_cents == 1_419
    assert breakdown.total_cents == 17_419
    assert breakdown.duration_minutes == 90 + 60 + 25


def test_unselected_parameter_is_priced_at_its_minimum():
    breakdown = price(CATALOG, standard(parameters=()), at=AT)
    assert [(line.id, line.quantity) for line in breakdown.lines] == [
        ("svc_standard_clean", 1),
        ("par_bedrooms", 1),
        ("par_bathrooms", 1),
    ]


def test_extra_on_a_frequency_outside_its_slugs_is_refused_naming_the_extra():
    selection = standard(frequency_slug="weekly", extras=(SelectedItem("ext_move_out"),))
    with pytest.raises(ExtraNotOffered) as caught:
        price(CATALOG, selection, at=AT)
    assert isinstance(caught.value, RuleViolation)
    assert caught.value.extra_id == "ext_move_out"
    assert "Move-out detail" in caught.value.message


def test_extra_limited_to_one_time_is_priced_on_one_time():
    breakdown = price(CATALOG, standard(extras=(SelectedItem("ext_move_out"),)), at=AT)
    assert "ext_move_out" in [line.id for line in breakdown.lines]


@pytest.mark.parametrize(
    ("selection", "field", "bound"),
    [
        (standard(parameters=(SelectedItem("par_bedrooms", 9),)), "parameters.0.quantity", 8),
        (standard(parameters=(SelectedItem("par_bedrooms", 0),)), "parameters.0.quantity", 1),
        (standard(extras=(SelectedItem("ext_oven", 2),)), "extras.0.quantity", 1),
        (standard(extras=(SelectedItem("ext_oven", 0),)), "extras.0.quantity", 1),
    ],
)
def test_quantity_outside_bounds_is_refused_naming_item_and_bound(selection, field, bound):
    with pytest.raises(QuantityOutOfBounds) as caught:
        price(CATALOG, selection, at=AT)
    assert caught.value.field == field
    assert bound in (caught.value.minimum, caught.value.maximum)


@pytest.mark.parametrize(
    ("selection", "field"),
    [
        (standard(service_id="svc_nope"), "service_id"),
        (standard(frequency_slug="daily"), "frequency_slug"),
        (standard(parameters=(SelectedItem("par_nope"),)), "parameters.0.id"),
        (standard(extras=(SelectedItem("ext_oven"), SelectedItem("ext_nope"))), "extras.1.id"),
        (standard(manual_fee_ids=("fee_nope",)), "manual_fee_ids.0"),
    ],
)
def test_unknown_id_is_an_invalid_field_naming_it(selection, field):
    with pytest.raises(UnknownCatalogItem) as caught:
        price(CATALOG, selection, at=AT)
    assert list(caught.value.field_errors) == [field]


def test_inactive_service_is_not_priced():
    catalog = demo_catalog()
    service = catalog.services_by_id["svc_deep_clean"]
    inactive = attrs.evolve(
        catalog,
        industries=(Industry("ind_x", "X", (attrs.evolve(service, active=False),)),),
        fees=(),
    )
    with pytest.raises(UnknownCatalogItem):
        price(inactive, standard(service_id="svc_deep_clean", parameters=()), at=AT)


def test_same_extra_twice_is_refused():
    selection = standard(extras=(SelectedItem("ext_oven"), SelectedItem("ext_oven")))
    with pytest.raises(DuplicateSelection) as caught:
        price(CATALOG, selection, at=AT)
    assert caught.value.field == "extras.1.id"


def many_extras_catalog(count: int) -> Catalog:
    extras = tuple(Extra(f"ext_{i}", f"Extra {i}", 100) for i in range(count))
    service = Service("svc_big", "Big", 1_000, 60, extras=extras)
    return attrs.evolve(CATALOG, industries=(Industry("ind", "I", (service,)),), fees=())


def test_two_hundred_selections_are_priced_and_two_hundred_and_one_refused():
    catalog = many_extras_catalog(201)
    items = tuple(SelectedItem(f"ext_{i}") for i in range(201))
    ok = price(catalog, Selection("svc_big", extras=items[:200]), at=AT)
    assert ok.subtotal_cents == 1_000 + 200 * 100
    with pytest.raises(TooManySelections) as caught:
        price(catalog, Selection("svc_big", extras=items), at=AT)
    assert (caught.value.count, caught.value.limit) == (201, 200)


def test_naive_start_is_refused():
    with pytest.raises(ValidationFailed) as caught:
        price(CATALOG, standard(start=datetime(2026, 12, 5, 9)), at=AT)
    assert "start_iso" in caught.value.field_errors


# --- discounts -----------------------------------------------------------------------


def test_frequency_discount_spares_exempt_extras():
    selection = standard(frequency_slug="weekly", extras=(SelectedItem("ext_supplies"),))
    breakdown = price(CATALOG, selection, at=AT)
    # Discountable 16000 at 15 % = 2400; the 1200 of supplies is not discounted.
    assert [(d.kind, d.amount_cents) for d in breakdown.discounts] == [
        (DiscountKind.FREQUENCY, 2_400)
    ]
    assert breakdown.discounted_subtotal_cents == 16_000 + 1_200 - 2_400


def test_coupon_applies_to_the_discounted_discountable_amount():
    selection = standard(frequency_slug="weekly", coupon_code="welcome10")
    breakdown = price(CATALOG, selection, at=AT)
    # 16000 - 15 % = 13600; 10 % of that = 1360.
    assert [d.amount_cents for d in breakdown.discounts] == [2_400, 1_360]


def test_coupon_code_matches_case_insensitively():
    for code in ("WELCOME10", "welcome10", "  Welcome10 "):
        assert price(CATALOG, standard(coupon_code=code), at=AT).discount_cents == 1_600


def test_fixed_coupon_never_takes_more_than_the_discountable_amount():
    big = Coupon("cpn_big", "BIG", amount_cents=1_000_000)
    catalog = attrs.evolve(CATALOG, coupons=(big,))
    selection = standard(coupon_code="big", extras=(SelectedItem("ext_supplies"),))
    breakdown = price(catalog, selection, at=AT)
    # Only the exempt supplies (1200) are left to pay before tax.
    assert breakdown.discounted_subtotal_cents == 1_200


@pytest.mark.parametrize(
    ("coupon", "usage", "selection", "rule"),
    [
        (None, CouponUsage(), standard(coupon_code="NOPE"), "unknown"),
        (Coupon("c", "X", percent_bps=100, active=False), CouponUsage(), None, "inactive"),
        (Coupon("c", "X", percent_bps=100, valid_from=AT + timedelta(seconds=1)), CouponUsage(),
         None, "not_yet_valid"),
        (Coupon("c", "X", percent_bps=100, valid_until=AT), CouponUsage(), None, "expired"),
        (Coupon("c", "X", percent_bps=100, max_redemptions=3), CouponUsage(total=3), None,
         "max_redemptions"),
        (Coupon("c", "X", percent_bps=100, per_customer_limit=1), CouponUsage(5, 1), None,
         "per_customer_limit"),
        (Coupon("c", "X", percent_bps=100, service_ids=frozenset({"svc_deep_clean"})),
         CouponUsage(), None, "service"),
        (Coupon("c", "X", percent_bps=100, frequency_slugs=frozenset({"weekly"})),
         CouponUsage(), None, "frequency"),
        (Coupon("c", "X", percent_bps=100, min_subtotal_cents=16_001), CouponUsage(), None,
         "min_subtotal"),
    ],
)  # fmt: skip
def test_coupon_that_fails_a_rule_is_refused_naming_the_rule(coupon, usage, selection, rule):
    catalog = attrs.evolve(CATALOG, coupons=(coupon,) if coupon else ())
    with pytest.raises(CouponRejected) as caught:
        price(catalog, selection or standard(coupon_code="x"), at=AT, coupon_usage=usage)
    assert caught.value.rule == rule
    assert isinstance(caught.value, RuleViolation)


def test_coupon_at_its_limits_is_still_accepted():
    coupon = Coupon(
        "c", "X", percent_bps=100, valid_from=AT, valid_until=AT + timedelta(seconds=1),
        max_redemptions=3, per_customer_limit=1, min_subtotal_cents=16_000,
    )  # fmt: skip
    catalog = attrs.evolve(CATALOG, coupons=(coupon,))
    breakdown = price(catalog, standard(coupon_code="x"), at=AT, coupon_usage=CouponUsage(2, 0))
    assert breakdown.discount_cents == 160


def test_referral_discount_is_taken_before_tax_on_the_first_visit_only():
    selection = standard(frequency_slug="weekly", referral_discount_cents=2_000)
    plan = price_plan(CATALOG, selection, at=AT)
    assert plan.first_visit.referral_discount_cents == 2_000
    assert plan.later_visits is not None
    assert plan.later_visits.referral_discount_cents == 0
    # 16000 - 2400 - 2000 = 11600 taxed at 8.87 % = 1028.92 -> 1029.
    assert plan.first_visit.tax_cents == 1_029
    assert plan.first_visit.total_cents == 11_600 + 1_029


def test_referral_discount_never_takes_the_total_below_zero():
    breakdown = price(CATALOG, standard(referral_discount_cents=10**9), at=AT)
    assert breakdown.referral_discount_cents == 16_000
    assert breakdown.total_cents == 0


def test_negative_referral_discount_is_invalid():
    with pytest.raises(ValidationFailed):
        price(CATALOG, standard(referral_discount_cents=-1), at=AT)


def test_first_visit_only_extras_are_charged_on_the_first_visit_of_a_plan_only():
    selection = standard(frequency_slug="biweekly", extras=(SelectedItem("ext_first_deep"),))
    plan = price_plan(CATALOG, selection, at=AT)
    assert plan.later_visits is not None
    first_ids = [line.id for line in plan.first_visit.lines]
    later_ids = [line.id for line in plan.later_visits.lines]
    assert "ext_first_deep" in first_ids
    assert "ext_first_deep" not in later_ids
    assert plan.first_visit.duration_minutes - plan.later_visits.duration_minutes == 60


def test_one_time_job_is_always_priced_as_a_first_visit():
    selection = standard(extras=(SelectedItem("ext_first_deep"),), referral_discount_cents=500)
    breakdown = price(CATALOG, selection, at=AT, visit=Visit.LATER)
    assert breakdown.visit is Visit.FIRST
    assert breakdown.referral_discount_cents == 500
    assert price_plan(CATALOG, selection, at=AT).later_visits is None


# --- fees and tax --------------------------------------------------------------------


def test_date_fee_uses_the_local_date_in_the_company_timezone():
    # 02:00 UTC on Saturday 5 December is still Friday evening in New York.
    friday_evening = datetime(2026, 12, 5, 2, tzinfo=UTC)
    saturday_morning = datetime(2026, 12, 5, 14, tzinfo=UTC)
    assert price(CATALOG, standard(start=friday_evening), at=AT).fees == ()
    weekend = price(CATALOG, standard(start=saturday_morning), at=AT).fees
    assert [(f.id, f.amount_cents) for f in weekend] == [("fee_weekend", 1_600)]


def test_calendar_date_fee_applies_on_its_date():
    christmas_eve = datetime(2026, 12, 24, 15, tzinfo=UTC)  # a Thursday
    fees = price(CATALOG, standard(start=christmas_eve), at=AT).fees
    assert [f.id for f in fees] == ["fee_holiday"]


def test_zip_and_service_fees_apply_to_their_zips_and_services():
    island = price(CATALOG, standard(zip_code="02554"), at=AT)
    assert [f.id for f in island.fees] == ["fee_island"]
    deep = price(CATALOG, standard(service_id="svc_deep_clean", zip_code="10001"), at=AT)
    assert [f.id for f in deep.fees] == ["fee_deep_kit"]


def test_percentage_fee_is_taken_on_the_post_discount_subtotal():
    selection = standard(frequency_slug="weekly", manual_fee_ids=("fee_rush",))
    breakdown = price(CATALOG, selection, at=AT)
    # Post-discount subtotal 13600; 15 % rush = 2040.
    assert [(f.id, f.amount_cents) for f in breakdown.fees] == [("fee_rush", 2_040)]


def test_automatic_fee_cannot_be_added_as_a_manual_fee():
    with pytest.raises(ManualFeeRefused) as caught:
        price(CATALOG, standard(manual_fee_ids=("fee_weekend",)), at=AT)
    assert caught.value.fee_id == "fee_weekend"


def test_inactive_fee_never_applies():
    catalog = attrs.evolve(
        CATALOG,
        fees=(FeeDefinition("f", "Off", FeeKind.ZIP, amount_cents=100, active=False,
                            zips=frozenset({"10001"})),),
    )  # fmt: skip
    assert price(catalog, standard(zip_code="10001"), at=AT).fees == ()
    assert catalog.active_fees() == ()


def test_tax_applies_to_taxable_service_and_taxable_fees_only():
    # Handyman hour is not taxable; the Saturday surcharge is.
    saturday = datetime(2026, 12, 5, 14, tzinfo=UTC)
    breakdown = price(
        CATALOG, Selection("svc_handyman_hour", zip_code="02554", start=saturday), at=AT
    )
    # 8500 base; weekend 10 % = 850 (taxable); island 1500 (not taxable).
    assert breakdown.taxable_cents == 850
    assert breakdown.tax_cents == 75  # 8.87 % of 850 = 75.395
    assert breakdown.total_cents == 8_500 + 850 + 1_500 + 75


def test_demo_selection_parts_sum_to_the_total():
    breakdown = price(CATALOG, DEMO_SELECTION, at=AT)
    assert (
        breakdown.subtotal_cents
        - sum(d.amount_cents for d in breakdown.discounts)
        + sum(f.amount_cents for f in breakdown.fees)
        + breakdown.tax_cents
        == breakdown.total_cents
    )
