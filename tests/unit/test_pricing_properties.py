"""One property per pricing rule, over generated catalogs and selections."""

from __future__ import annotations

import attrs
from hypothesis import example, given
from hypothesis import strategies as st

from booking_core.catalog import Catalog, Extra, Industry
from booking_core.demo import DEMO_SELECTION, demo_catalog
from booking_core.money import apply_bps
from booking_core.pricing import (
    DiscountKind,
    PriceBreakdown,
    SelectedItem,
    Selection,
    Visit,
    price,
)
from tests.strategies import PRICING_INSTANT, catalogs_and_selections

AT = PRICING_INSTANT
visits = st.sampled_from(list(Visit))


def all_amounts(b: PriceBreakdown) -> list[object]:
    return [
        b.subtotal_cents, b.discount_cents, b.referral_discount_cents,
        b.discounted_subtotal_cents, b.fees_cents, b.taxable_cents, b.tax_cents,
        b.total_cents, b.duration_minutes,
        *(x for line in b.lines for x in (line.amount_cents, line.unit_price_cents)),
        *(d.amount_cents for d in b.discounts),
        *(f.amount_cents for f in b.fees),
    ]  # fmt: skip


@given(catalogs_and_selections(), visits)
@example((demo_catalog(), DEMO_SELECTION), Visit.FIRST)
def test_parts_sum_to_the_total_exactly(case, visit):
    catalog, selection = case
    b = price(catalog, selection, at=AT, visit=visit)
    assert b.subtotal_cents == sum(line.amount_cents for line in b.lines)
    assert b.discount_cents == sum(d.amount_cents for d in b.discounts)
    assert b.fees_cents == sum(f.amount_cents for f in b.fees)
    assert b.subtotal_cents - b.discount_cents + b.fees_cents + b.tax_cents == b.total_cents


@given(catalogs_and_selections(), visits)
def test_total_is_never_negative(case, visit):
    catalog, selection = case
    b = price(catalog, selection, at=AT, visit=visit)
    assert b.total_cents >= 0
    assert b.discounted_subtotal_cents >= 0
    assert all(d.amount_cents > 0 for d in b.discounts)


@given(catalogs_and_selections(), visits)
def test_every_amount_is_whole_cents(case, visit):
    catalog, selection = case
    b = price(catalog, selection, at=AT, visit=visit)
    assert all(type(amount) is int for amount in all_amounts(b))


@given(catalogs_and_selections(), visits)
def test_exempt_extras_are_never_discounted(case, visit):
    catalog, selection = case
    b = price(catalog, selection, at=AT, visit=visit)
    discountable = sum(line.amount_cents for line in b.lines if line.discountable)
    exempt = b.subtotal_cents - discountable
    frequency = catalog.frequencies_by_slug[selection.frequency_slug]
    by_kind = {d.kind: d.amount_cents for d in b.discounts}
    # The frequency discount is computed on discountable lines alone ...
    assert by_kind.get(DiscountKind.FREQUENCY, 0) == apply_bps(discountable, frequency.discount_bps)
    # ... and frequency plus coupon never eat into the exempt lines.
    plan_and_coupon = by_kind.get(DiscountKind.FREQUENCY, 0) + by_kind.get(DiscountKind.COUPON, 0)
    assert plan_and_coupon <= discountable
    assert b.subtotal_cents - plan_and_coupon >= exempt


@given(catalogs_and_selections(), visits)
def test_coupon_never_takes_more_than_the_discountable_amount(case, visit):
    catalog, selection = case
    b = price(catalog, selection, at=AT, visit=visit)
    discountable = sum(line.amount_cents for line in b.lines if line.discountable)
    by_kind = {d.kind: d.amount_cents for d in b.discounts}
    assert by_kind.get(DiscountKind.COUPON, 0) <= discountable - by_kind.get(
        DiscountKind.FREQUENCY, 0
    )


@given(catalogs_and_selections(), visits, st.randoms(use_true_random=False))
def test_order_of_selections_does_not_change_the_price(case, visit, rnd):
    catalog, selection = case
    shuffled_params = list(selection.parameters)
    shuffled_extras = list(selection.extras)
    shuffled_fees = list(selection.manual_fee_ids)
    for items in (shuffled_params, shuffled_extras, shuffled_fees):
        rnd.shuffle(items)
    shuffled = attrs.evolve(
        selection,
        parameters=tuple(shuffled_params),
        extras=tuple(shuffled_extras),
        manual_fee_ids=tuple(shuffled_fees),
    )
    assert price(catalog, shuffled, at=AT, visit=visit) == price(
        catalog, selection, at=AT, visit=visit
    )


@given(catalogs_and_selections(), visits, st.integers(0, 100_000), st.booleans())
def test_adding_an_extra_never_lowers_the_subtotal(case, visit, extra_price, exempt):
    catalog, selection = case
    before = price(catalog, selection, at=AT, visit=visit)
    added = Extra("ext_added", "Added", extra_price, 15, discount_exempt=exempt)
    service = catalog.services_by_id[selection.service_id]
    grown = attrs.evolve(service, extras=(*service.extras, added))
    catalog_plus = _replace_service(catalog, grown)
    selection_plus = attrs.evolve(selection, extras=(*selection.extras, SelectedItem("ext_added")))
    after = price(catalog_plus, selection_plus, at=AT, visit=visit)
    assert after.subtotal_cents == before.subtotal_cents + extra_price
    assert after.discounted_subtotal_cents >= before.discounted_subtotal_cents


@given(catalogs_and_selections())
def test_later_visits_differ_only_by_first_visit_extras_and_referral(case):
    catalog, selection = case
    first = price(catalog, selection, at=AT, visit=Visit.FIRST)
    later = price(catalog, selection, at=AT, visit=Visit.LATER)
    frequency = catalog.frequencies_by_slug[selection.frequency_slug]
    if not frequency.recurring:
        assert first == later
        return
    service = catalog.services_by_id[selection.service_id]
    first_only = {e.id for e in service.extras if e.first_visit_only}
    assert [line for line in first.lines if line.id not in first_only] == list(later.lines)
    assert later.referral_discount_cents == 0
    # Price the first visit without its first-visit extras and referral: equal to a later one.
    stripped = attrs.evolve(
        selection,
        extras=tuple(e for e in selection.extras if e.id not in first_only),
        referral_discount_cents=0,
    )
    assert attrs.evolve(price(catalog, stripped, at=AT), visit=Visit.LATER) == later


def _replace_service(catalog: Catalog, service: object) -> Catalog:
    industries = tuple(
        attrs.evolve(
            industry,
            services=tuple(service if s.id == service.id else s for s in industry.services),  # type: ignore[attr-defined]
        )
        for industry in catalog.industries
    )
    assert all(isinstance(i, Industry) for i in industries)
    return attrs.evolve(catalog, industries=industries)


def test_selection_equality_never_raises():
    assert Selection("svc") != object()
