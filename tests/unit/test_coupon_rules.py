"""Coupon rules on their own: the invariants of a coupon, its amounts at their bounds,
each rule's boundary and exact refusal message, and restricted coupons accepted where
they apply (docs/pricing.md, "Coupon rules")."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import attrs
import pytest

from booking_core.coupons import Coupon, CouponUsage, normalize_code, usable_coupon
from booking_core.errors import CouponRejected
from booking_core.pricing import DiscountKind, SelectedItem, Selection, price
from tests.unit.test_pricing import AT, CATALOG, standard

SECOND = timedelta(seconds=1)


def coupon_discount(coupon: Coupon, selection: Selection) -> list[tuple[str | None, int]]:
    """The coupon line of ``selection`` priced with ``coupon`` as the catalog's only coupon."""
    catalog = attrs.evolve(CATALOG, coupons=(coupon,))
    breakdown = price(catalog, selection, at=AT)
    return [(d.code, d.amount_cents) for d in breakdown.discounts if d.kind is DiscountKind.COUPON]


def _usable(coupon: Coupon, code: str, **use: object) -> Coupon:
    """``usable_coupon`` for ``coupon`` given as ``code``, with ``use`` over the defaults:
    a matching, unused 16000 clean."""
    kwargs: dict[str, object] = {
        "at": AT,
        "service_id": "svc_standard_clean",
        "frequency_slug": "one_time",
        "subtotal_cents": 16_000,
        "usage": CouponUsage(),
    }
    kwargs.update(use)
    return usable_coupon({coupon.normalized_code: coupon}, code, **kwargs)  # type: ignore[arg-type]


def refused(coupon: Coupon, **use: object) -> CouponRejected:
    """The refusal of ``coupon`` for ``use`` (given with a space and in lower case)."""
    with pytest.raises(CouponRejected) as caught:
        _usable(coupon, " " + coupon.code.lower(), **use)
    return caught.value


def accepted(coupon: Coupon, **use: object) -> Coupon:
    return _usable(coupon, coupon.code.lower(), **use)


# --- invariants ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "a coupon has exactly one of percent_bps and amount_cents"),
        ({"percent_bps": 100, "amount_cents": 100},
         "a coupon has exactly one of percent_bps and amount_cents"),
        ({"percent_bps": 0}, "percent_bps must be within 1..10000"),
        ({"percent_bps": -1}, "percent_bps must be within 1..10000"),
        ({"percent_bps": 10_001}, "percent_bps must be within 1..10000"),
        ({"amount_cents": 0}, "amount_cents must be > 0"),
        ({"amount_cents": -1}, "amount_cents must be > 0"),
        ({"percent_bps": 100, "valid_from": datetime(2026, 1, 1)},
         "coupon validity bounds must be aware datetimes"),
        ({"percent_bps": 100, "valid_until": datetime(2026, 1, 1)},
         "coupon validity bounds must be aware datetimes"),
    ],
)  # fmt: skip
def test_a_coupon_that_breaks_an_invariant_cannot_be_made(fields, message):
    with pytest.raises(ValueError, match=re.escape(message)) as caught:
        Coupon("cpn_x", "X", **fields)
    assert str(caught.value) == message


@pytest.mark.parametrize("code", ["", "   ", "\t\n"])
def test_a_coupon_with_a_blank_code_cannot_be_made(code):
    with pytest.raises(ValueError, match="blank") as caught:
        Coupon("cpn_x", code, percent_bps=100)
    assert str(caught.value) == "coupon code must not be blank"


def test_a_negative_minimum_subtotal_cannot_be_made():
    with pytest.raises(ValueError, match="min_subtotal_cents"):
        Coupon("cpn_x", "X", percent_bps=100, min_subtotal_cents=-1)


@pytest.mark.parametrize(
    "fields",
    [
        {"percent_bps": 1},
        {"percent_bps": 10_000},
        {"amount_cents": 1},
        {"percent_bps": 100, "valid_from": AT, "valid_until": AT + SECOND},
        {"percent_bps": 100, "min_subtotal_cents": 0},
    ],
)
def test_a_coupon_at_the_bounds_of_its_invariants_can_be_made(fields):
    coupon = Coupon("cpn_x", " Spring ", **fields)
    assert coupon.normalized_code == "spring"


def test_a_coupon_defaults_to_an_active_unrestricted_unlimited_coupon():
    coupon = Coupon("cpn_x", "X", percent_bps=100)
    assert (coupon.valid_from, coupon.valid_until) == (None, None)
    assert (coupon.max_redemptions, coupon.per_customer_limit) == (None, None)
    assert coupon.min_subtotal_cents == 0
    assert (coupon.service_ids, coupon.frequency_slugs) == (frozenset(), frozenset())
    assert coupon.active is True
    assert CouponUsage() == CouponUsage(total=0, by_customer=0)


def test_codes_are_normalized_by_stripping_and_case_folding():
    assert normalize_code("  WeLcOmE10\t") == "welcome10"
    assert normalize_code("STRASSE") == normalize_code("straße")


# --- amounts at their bounds -----------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "amount", "discount"),
    [
        ({"percent_bps": 1}, 16_000, 2),  # 0.01 % of 16000 = 1.6 -> 2
        ({"percent_bps": 1}, 5_000, 1),  # 0.5 rounds half up
        ({"percent_bps": 1}, 4_999, 0),  # 0.4999 rounds down
        ({"percent_bps": 10_000}, 16_000, 16_000),  # 100 % takes it all
        ({"percent_bps": 10_000}, 0, 0),
        ({"amount_cents": 1}, 16_000, 1),
        ({"amount_cents": 1}, 1, 1),
        ({"amount_cents": 1}, 0, 0),
        ({"amount_cents": 2_500}, 2_499, 2_499),  # capped at the amount
        ({"amount_cents": 2_500}, 2_501, 2_500),
    ],
)
def test_a_coupon_discount_at_the_bounds_of_its_amount(fields, amount, discount):
    assert Coupon("cpn_x", "X", **fields).discount_on(amount) == discount


def test_a_one_basis_point_coupon_takes_one_hundredth_of_a_percent_of_the_price():
    coupon = Coupon("cpn_x", "TINY", percent_bps=1)
    # Subtotal 16000: 0.01 % = 1.6 -> 2 cents, taxed on 15998.
    assert coupon_discount(coupon, standard(coupon_code="tiny")) == [("TINY", 2)]
    breakdown = price(attrs.evolve(CATALOG, coupons=(coupon,)), standard(coupon_code="tiny"), at=AT)
    assert breakdown.discounted_subtotal_cents == 15_998
    assert breakdown.tax_cents == 1_419  # 8.87 % of 15998 = 1419.02
    assert breakdown.total_cents == 15_998 + 1_419


def test_a_full_percent_coupon_leaves_only_exempt_extras_and_fees_to_pay():
    coupon = Coupon("cpn_x", "FREE", percent_bps=10_000)
    selection = standard(coupon_code="free", extras=(SelectedItem("ext_supplies"),))
    breakdown = price(attrs.evolve(CATALOG, coupons=(coupon,)), selection, at=AT)
    assert [(d.code, d.amount_cents) for d in breakdown.discounts] == [("FREE", 16_000)]
    assert breakdown.discounted_subtotal_cents == 1_200
    assert breakdown.tax_cents == 106  # 8.87 % of 1200 = 106.44
    assert breakdown.total_cents == 1_306


def test_a_one_cent_coupon_takes_exactly_one_cent():
    coupon = Coupon("cpn_x", "PENNY", amount_cents=1)
    assert coupon_discount(coupon, standard(coupon_code="PENNY")) == [("PENNY", 1)]


def test_a_coupon_that_takes_nothing_adds_no_discount_line():
    coupon = Coupon("cpn_x", "TINY", percent_bps=1)
    # Everything discountable is eaten by a 100 % plan: 1 bps of nothing is nothing.
    catalog = attrs.evolve(
        CATALOG,
        coupons=(coupon,),
        frequencies=(attrs.evolve(CATALOG.frequencies_by_slug["one_time"], discount_bps=10_000),),
    )
    breakdown = price(catalog, standard(coupon_code="tiny"), at=AT)
    assert [d.kind for d in breakdown.discounts] == [DiscountKind.FREQUENCY]


# --- each rule at its boundary, with its message -----------------------------------------


def test_an_unknown_code_is_refused_naming_the_code_as_typed():
    with pytest.raises(CouponRejected) as caught:
        usable_coupon(
            {},
            " Nope ",
            at=AT,
            service_id="svc_standard_clean",
            frequency_slug="one_time",
            subtotal_cents=16_000,
            usage=CouponUsage(),
        )
    assert (caught.value.code, caught.value.rule) == (" Nope ", "unknown")
    assert caught.value.detail == "no coupon has this code."
    assert caught.value.message == "Coupon ' Nope ' cannot be used: no coupon has this code."


@pytest.mark.parametrize(
    ("coupon", "use", "rule", "detail"),
    [
        (Coupon("c", "Spring", percent_bps=100, active=False), {},
         "inactive", "it is no longer active."),
        (Coupon("c", "Spring", percent_bps=100, valid_from=AT + SECOND), {},
         "not_yet_valid", "it is not valid yet."),
        (Coupon("c", "Spring", percent_bps=100, valid_until=AT), {},
         "expired", "it has expired."),
        (Coupon("c", "Spring", percent_bps=100, max_redemptions=3),
         {"usage": CouponUsage(total=3)},
         "max_redemptions", "it has been redeemed the maximum number of times."),
        (Coupon("c", "Spring", percent_bps=100, per_customer_limit=2),
         {"usage": CouponUsage(total=2, by_customer=2)},
         "per_customer_limit", "this customer has used it the maximum number of times."),
        (Coupon("c", "Spring", percent_bps=100, service_ids=frozenset({"svc_deep_clean"})), {},
         "service", "it does not apply to this service."),
        (Coupon("c", "Spring", percent_bps=100, frequency_slugs=frozenset({"weekly"})), {},
         "frequency", "it does not apply to this frequency."),
        (Coupon("c", "Spring", percent_bps=100, min_subtotal_cents=16_001), {},
         "min_subtotal", "the subtotal must be at least $160.01."),
    ],
)  # fmt: skip
def test_a_refused_coupon_names_its_rule_and_says_why_in_the_message(coupon, use, rule, detail):
    error = refused(coupon, **use)
    assert (error.code, error.rule, error.detail) == ("Spring", rule, detail)
    assert error.message == f"Coupon 'Spring' cannot be used: {detail}"


def test_the_validity_window_includes_its_start_and_excludes_its_end():
    coupon = Coupon("c", "X", percent_bps=100, valid_from=AT, valid_until=AT + 2 * SECOND)
    assert refused(coupon, at=AT - SECOND).rule == "not_yet_valid"
    assert accepted(coupon, at=AT) is coupon
    assert accepted(coupon, at=AT + SECOND) is coupon
    assert refused(coupon, at=AT + 2 * SECOND).rule == "expired"
    assert refused(coupon, at=AT + 3 * SECOND).rule == "expired"


def test_a_window_open_at_one_end_only_bounds_that_end():
    opens = Coupon("c", "X", percent_bps=100, valid_from=AT)
    assert accepted(opens, at=AT + timedelta(days=10_000)) is opens
    closes = Coupon("c", "X", percent_bps=100, valid_until=AT)
    assert accepted(closes, at=AT - timedelta(days=10_000)) is closes


def test_the_redemption_limits_allow_uses_up_to_the_limit():
    coupon = Coupon("c", "X", percent_bps=100, max_redemptions=3, per_customer_limit=2)
    assert accepted(coupon, usage=CouponUsage(total=2, by_customer=1)) is coupon
    assert refused(coupon, usage=CouponUsage(total=3, by_customer=0)).rule == "max_redemptions"
    assert refused(coupon, usage=CouponUsage(total=2, by_customer=2)).rule == "per_customer_limit"
    assert refused(coupon, usage=CouponUsage(total=9, by_customer=9)).rule == "max_redemptions"


def test_the_minimum_subtotal_is_met_by_a_subtotal_equal_to_it():
    coupon = Coupon("c", "X", percent_bps=100, min_subtotal_cents=16_000)
    assert accepted(coupon, subtotal_cents=16_000) is coupon
    assert refused(coupon, subtotal_cents=15_999).detail == (
        "the subtotal must be at least $160.00."
    )


def test_the_minimum_subtotal_is_written_in_dollars_for_a_person():
    coupon = Coupon("c", "SPRING25", percent_bps=2_500, min_subtotal_cents=123_405)
    assert refused(coupon, subtotal_cents=0).message == (
        "Coupon 'SPRING25' cannot be used: the subtotal must be at least $1,234.05."
    )


def test_rules_are_checked_in_the_documented_order():
    """Each rule wins over every rule after it (coupons.py: inactive, not_yet_valid, ...)."""
    everything_wrong = Coupon(
        "c", "X", percent_bps=100, active=False, valid_from=AT + SECOND, valid_until=AT,
        max_redemptions=1, per_customer_limit=1, service_ids=frozenset({"svc_other"}),
        frequency_slugs=frozenset({"weekly"}), min_subtotal_cents=99_999,
    )  # fmt: skip
    use = {"usage": CouponUsage(total=1, by_customer=1)}
    order = []
    coupon = everything_wrong
    fixes: list[dict[str, object]] = [
        {"active": True},
        {"valid_from": None},
        {"valid_until": None},
        {"max_redemptions": None},
        {"per_customer_limit": None},
        {"service_ids": frozenset({"svc_standard_clean"})},
        {"frequency_slugs": frozenset({"one_time"})},
        {"min_subtotal_cents": 0},
    ]
    for fix in fixes:
        order.append(refused(coupon, **use).rule)
        coupon = attrs.evolve(coupon, **fix)
    assert order == [
        "inactive", "not_yet_valid", "expired", "max_redemptions", "per_customer_limit",
        "service", "frequency", "min_subtotal",
    ]  # fmt: skip
    assert accepted(coupon, **use) is coupon


# --- restricted coupons are accepted where they apply ------------------------------------


def test_a_coupon_restricted_to_a_service_is_accepted_on_it():
    coupon = Coupon("c", "Clean5", amount_cents=500, service_ids=frozenset({"svc_standard_clean"}))
    assert coupon_discount(coupon, standard(coupon_code="clean5")) == [("Clean5", 500)]


def test_a_coupon_restricted_to_several_services_is_accepted_on_each():
    coupon = Coupon(
        "c", "Two", percent_bps=1_000,
        service_ids=frozenset({"svc_standard_clean", "svc_deep_clean"}),
    )  # fmt: skip
    assert coupon_discount(coupon, standard(coupon_code="two")) == [("Two", 1_600)]
    deep = price(
        attrs.evolve(CATALOG, coupons=(coupon,)),
        Selection("svc_deep_clean", coupon_code="two"),
        at=AT,
    )
    assert [d.kind for d in deep.discounts] == [DiscountKind.COUPON]


def test_a_coupon_restricted_to_a_frequency_is_accepted_on_it():
    coupon = Coupon("c", "Weekly5", amount_cents=500, frequency_slugs=frozenset({"weekly"}))
    selection = standard(frequency_slug="weekly", coupon_code="WEEKLY5")
    # Weekly takes 15 % of 16000 (2400) first; the 500 comes off what is left.
    assert coupon_discount(coupon, selection) == [("Weekly5", 500)]


def test_a_coupon_restricted_to_a_service_and_a_frequency_is_accepted_on_both():
    coupon = Coupon(
        "c", "Both", percent_bps=1_000, service_ids=frozenset({"svc_standard_clean"}),
        frequency_slugs=frozenset({"biweekly", "weekly"}),
    )  # fmt: skip
    selection = standard(frequency_slug="biweekly", coupon_code="both")
    # Biweekly 10 % of 16000 = 1600; coupon 10 % of 14400 = 1440.
    assert coupon_discount(coupon, selection) == [("Both", 1_440)]
    refusal = refused(coupon, service_id="svc_standard_clean", frequency_slug="one_time")
    assert refusal.rule == "frequency"


def test_a_restricted_coupon_is_refused_on_other_services_and_frequencies():
    coupon = Coupon(
        "c", "Both", percent_bps=1_000, service_ids=frozenset({"svc_standard_clean"}),
        frequency_slugs=frozenset({"weekly"}),
    )  # fmt: skip
    assert refused(coupon, service_id="svc_deep_clean", frequency_slug="weekly").rule == "service"
    assert refused(coupon, frequency_slug="biweekly").rule == "frequency"


def test_a_priced_coupon_line_carries_the_coupon_code_as_the_catalog_writes_it():
    coupon = Coupon("c", "Spring25", percent_bps=2_500)
    catalog = attrs.evolve(CATALOG, coupons=(coupon,))
    breakdown = price(catalog, standard(coupon_code="  SPRING25 "), at=AT)
    (line,) = breakdown.discounts
    assert (line.kind, line.name, line.code, line.amount_cents) == (
        DiscountKind.COUPON,
        "Spring25",
        "Spring25",
        4_000,
    )


def test_a_coupon_usage_counts_the_total_and_the_customer_separately():
    coupon = Coupon("c", "X", percent_bps=100, per_customer_limit=1)
    # Others used it often; this customer never did.
    assert accepted(coupon, usage=CouponUsage(total=50, by_customer=0)) is coupon
