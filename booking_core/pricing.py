"""Server-authoritative pricing: one selection in, one breakdown out.

The price order (DECISIONS.md), each amount rounded half-up to whole cents once:

1. lines: base, parameters, extras;
2. frequency discount on the discountable lines (all but ``discountExempt`` extras);
3. coupon on the discounted discountable amount;
4. referral discount (first visit only);
5. fees (percentage fees on the post-discount subtotal);
6. tax on the taxable amounts;
7. total, never below zero.

The breakdown lists every line, discount, fee and tax so that the parts sum to the
total exactly. A plan's later visits differ from its first only by ``firstVisitOnly``
extras and the referral discount.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import NamedTuple

import attrs
from attrs import frozen

from booking_core.catalog import (
    Catalog,
    Extra,
    FeeDefinition,
    FeeKind,
    Frequency,
    Service,
)
from booking_core.coupons import CouponUsage, usable_coupon
from booking_core.errors import (
    DuplicateSelection,
    ExtraNotOffered,
    ManualFeeRefused,
    QuantityOutOfBounds,
    TooManySelections,
    UnknownCatalogItem,
    ValidationFailed,
)
from booking_core.money import apply_bps

MAX_SELECTIONS = 200
"""At most this many parameter and extra selections in one selection (SPEC.md limits)."""

NO_USAGE = CouponUsage()
"""Usage of a coupon nobody has redeemed yet."""


class Visit(enum.StrEnum):
    """Which visit of a plan is priced; a one-time job is always the first."""

    FIRST = "first"
    LATER = "later"


@frozen
class SelectedItem:
    """A chosen parameter or extra and how many."""

    id: str
    quantity: int = 1


@frozen
class Selection:
    """What a customer chose. ``start`` (aware) decides date fees in the company's
    timezone; ``zip_code`` decides zip fees; manual fees are added by id."""

    service_id: str
    frequency_slug: str = "one_time"
    parameters: tuple[SelectedItem, ...] = ()
    extras: tuple[SelectedItem, ...] = ()
    coupon_code: str | None = None
    referral_discount_cents: int = 0
    zip_code: str | None = None
    start: datetime | None = None
    manual_fee_ids: tuple[str, ...] = ()


class LineKind(enum.StrEnum):
    """What a price line charges for."""

    BASE = "base"
    PARAMETER = "parameter"
    EXTRA = "extra"


class DiscountKind(enum.StrEnum):
    """Where a discount comes from."""

    FREQUENCY = "frequency"
    COUPON = "coupon"
    REFERRAL = "referral"


class PriceLine(NamedTuple):
    """One charged line: ``quantity`` x ``unit_price_cents`` = ``amount_cents``.

    A named tuple rather than an attrs class: a price makes one per line on every quote,
    and a tuple is built about five times faster (docs/pricing.md, make bench).
    """

    kind: LineKind
    id: str
    name: str
    quantity: int
    unit_price_cents: int
    amount_cents: int
    discountable: bool
    duration_minutes: int


@frozen
class DiscountLine:
    """One discount; ``amount_cents`` is positive and taken off the subtotal."""

    kind: DiscountKind
    name: str
    amount_cents: int
    code: str | None = None


@frozen
class FeeLine:
    """One fee added after discounts."""

    id: str
    name: str
    kind: FeeKind
    amount_cents: int
    taxable: bool


@frozen
class PriceBreakdown:
    """The priced selection. ``subtotal - discounts + fees + tax == total``, to the cent."""

    visit: Visit
    lines: tuple[PriceLine, ...]
    subtotal_cents: int
    discounts: tuple[DiscountLine, ...]
    discount_cents: int
    referral_discount_cents: int
    discounted_subtotal_cents: int
    fees: tuple[FeeLine, ...]
    fees_cents: int
    taxable_cents: int
    tax_rate_bps: int
    tax_cents: int
    total_cents: int
    duration_minutes: int


@frozen
class PlanPrice:
    """Price of the first visit and, for a recurring plan, of each later visit."""

    first_visit: PriceBreakdown
    later_visits: PriceBreakdown | None


def price(
    catalog: Catalog,
    selection: Selection,
    *,
    at: datetime,
    visit: Visit = Visit.FIRST,
    coupon_usage: CouponUsage = NO_USAGE,
) -> PriceBreakdown:
    """Price one visit of ``selection`` at instant ``at`` (coupon validity is judged then).

    Raises ``ValidationFailed`` (including ``UnknownCatalogItem``) for bad fields and a
    ``RuleViolation`` subclass for refusals; never drops a line silently.
    """
    service, frequency = _service_and_frequency(catalog, selection)
    if not frequency.recurring:
        visit = Visit.FIRST
    lines = _lines(service, frequency, selection, visit)
    subtotal = 0
    discountable = 0
    duration = 0
    for line in lines:
        subtotal += line.amount_cents
        duration += line.duration_minutes
        if line.discountable:
            discountable += line.amount_cents

    discounts: list[DiscountLine] = []
    frequency_discount = apply_bps(discountable, frequency.discount_bps)
    if frequency_discount:
        discounts.append(DiscountLine(DiscountKind.FREQUENCY, frequency.name, frequency_discount))
    after_frequency = discountable - frequency_discount

    if selection.coupon_code is not None:
        coupon = usable_coupon(
            catalog.coupons_by_code,
            selection.coupon_code,
            at=at,
            service_id=service.id,
            frequency_slug=frequency.slug,
            subtotal_cents=subtotal,
            usage=coupon_usage,
        )
        coupon_discount = coupon.discount_on(after_frequency)
        if coupon_discount:
            discounts.append(
                DiscountLine(DiscountKind.COUPON, coupon.code, coupon_discount, code=coupon.code)
            )

    referral = 0
    if visit is Visit.FIRST and selection.referral_discount_cents:
        if selection.referral_discount_cents < 0:
            raise ValidationFailed({"referral_discount_cents": "Must not be negative."})
        remaining = subtotal - sum(d.amount_cents for d in discounts)
        referral = min(selection.referral_discount_cents, remaining)
        if referral:
            discounts.append(DiscountLine(DiscountKind.REFERRAL, "Referral discount", referral))

    discount_total = sum(d.amount_cents for d in discounts)
    discounted_subtotal = subtotal - discount_total

    fees = _fees(catalog, service, selection, discounted_subtotal)
    fees_total, taxable, tax, total = _fee_totals(
        discounted_subtotal,
        fees,
        discounted_subtotal if service.taxable else 0,
        catalog.tax_rate_bps,
    )

    return PriceBreakdown(
        visit=visit,
        lines=lines,
        subtotal_cents=subtotal,
        discounts=tuple(discounts),
        discount_cents=discount_total,
        referral_discount_cents=referral,
        discounted_subtotal_cents=discounted_subtotal,
        fees=fees,
        fees_cents=fees_total,
        taxable_cents=taxable,
        tax_rate_bps=catalog.tax_rate_bps,
        tax_cents=tax,
        total_cents=total,
        duration_minutes=duration,
    )


def redated(breakdown: PriceBreakdown, catalog: Catalog, local_date: date) -> PriceBreakdown:
    """``breakdown`` moved to the job's new ``local_date`` (company time): its ``date`` fee
    lines replaced by the catalog's date fees for that date (percentage ones on the same
    post-discount subtotal), then tax and total recomputed as ``price`` does, at the
    breakdown's own tax rate. Lines, discounts, every other fee and the duration stay as
    they were agreed; the catalog's other prices never enter (docs/pricing.md)."""
    order = {fee.id: index for index, fee in enumerate(catalog.fees)}
    kept = [fee for fee in breakdown.fees if fee.kind is not FeeKind.DATE]
    dated = [
        _fee_line(fee, breakdown.discounted_subtotal_cents)
        for fee in catalog.fees
        if fee.kind is FeeKind.DATE
        and fee.applies(local_date=local_date, zip_code=None, service_id="")
    ]
    # Catalog order, as ``price`` lists fees; a kept fee since removed from it goes last.
    fees = tuple(sorted(kept + dated, key=lambda fee: order.get(fee.id, len(order))))
    taxable_base = breakdown.taxable_cents - sum(
        f.amount_cents for f in breakdown.fees if f.taxable
    )
    fees_total, taxable, tax, total = _fee_totals(
        breakdown.discounted_subtotal_cents, fees, taxable_base, breakdown.tax_rate_bps
    )
    return attrs.evolve(
        breakdown,
        fees=fees,
        fees_cents=fees_total,
        taxable_cents=taxable,
        tax_cents=tax,
        total_cents=total,
    )


def _fee_totals(
    discounted_subtotal: int, fees: Sequence[FeeLine], taxable_base: int, tax_rate_bps: int
) -> tuple[int, int, int, int]:
    """The fees' sum, the taxable amount (``taxable_base``, the post-discount subtotal of a
    taxable service, plus every taxable fee), its tax rounded once, and the total, never
    below zero."""
    fees_total = sum(f.amount_cents for f in fees)
    taxable = taxable_base + sum(f.amount_cents for f in fees if f.taxable)
    tax = apply_bps(taxable, tax_rate_bps)
    return fees_total, taxable, tax, max(0, discounted_subtotal + fees_total + tax)


def price_period(catalog: Catalog, at: datetime) -> tuple[int, ...]:
    """Where ``at`` falls against each coupon's validity window: 0 before it, 1 within
    it, 2 after it. The instant enters a price only through those windows (a coupon's
    ``not_yet_valid`` and ``expired`` rules), so ``price`` and ``price_plan`` answer alike,
    for every selection, at two instants of equal periods."""
    return tuple(
        0
        if coupon.valid_from is not None and at < coupon.valid_from
        else 2
        if coupon.valid_until is not None and at >= coupon.valid_until
        else 1
        for coupon in catalog.coupons
    )


def price_plan(
    catalog: Catalog,
    selection: Selection,
    *,
    at: datetime,
    coupon_usage: CouponUsage = NO_USAGE,
) -> PlanPrice:
    """Price the first visit and, if the frequency recurs, a later visit: the second one,
    at its own date (``intervalDays`` local days after the start), so a date fee of the
    first visit's date is not carried over to it, nor one of its date left out."""
    first = price(catalog, selection, at=at, visit=Visit.FIRST, coupon_usage=coupon_usage)
    frequency = catalog.frequencies_by_slug[selection.frequency_slug]
    if not frequency.recurring:
        return PlanPrice(first_visit=first, later_visits=None)
    second = selection
    if selection.start is not None and frequency.interval_days is not None:
        local = selection.start.astimezone(catalog.zone)
        day = local.date() + timedelta(days=frequency.interval_days)
        second = attrs.evolve(
            selection, start=datetime.combine(day, local.time(), tzinfo=catalog.zone)
        )
    later = price(catalog, second, at=at, visit=Visit.LATER, coupon_usage=coupon_usage)
    return PlanPrice(first_visit=first, later_visits=later)


NAMED_UNKNOWN = 5
"""How many unknown ids a message names (``fieldErrors`` names each)."""


def _unknown_ids(catalog: Catalog, selection: Selection) -> list[UnknownCatalogItem]:
    """Every id of ``selection`` the catalog does not have (a service's parameters and
    extras only once the service is known), in the order of the request's fields."""
    unknown: list[UnknownCatalogItem] = []
    service = catalog.services_by_id.get(selection.service_id)
    if service is None or not service.active:
        unknown.append(UnknownCatalogItem("service_id", "service", selection.service_id))
    if selection.frequency_slug not in catalog.frequencies_by_slug:
        slug = selection.frequency_slug
        unknown.append(UnknownCatalogItem("frequency_slug", "frequency", slug))
    if service is not None and service.active:
        for field, items, known, kind in (
            ("parameters", selection.parameters, service.parameters_by_id, "parameter"),
            ("extras", selection.extras, service.extras_by_id, "extra"),
        ):
            unknown.extend(
                UnknownCatalogItem(f"{field}.{index}.id", kind, item.id)
                for index, item in enumerate(items)
                if item.id not in known
            )
    return unknown


def _service_and_frequency(catalog: Catalog, selection: Selection) -> tuple[Service, Frequency]:
    """The selection's service and frequency. Unknown ids are named all at once: one is
    ``UnknownCatalogItem``, several a ``ValidationFailed`` naming each."""
    unknown = _unknown_ids(catalog, selection)
    count = len(selection.parameters) + len(selection.extras)
    if count > MAX_SELECTIONS:  # its items are not looked at one by one
        unknown = [item for item in unknown if item.item_kind in ("service", "frequency")]
        if not unknown:
            raise TooManySelections(count, MAX_SELECTIONS)
    if len(unknown) == 1:
        raise unknown[0]
    if unknown:
        problems = {path: text for item in unknown for path, text in item.field_errors.items()}
        names = [f"{item.item_kind} {item.item_id!r}" for item in unknown[:NAMED_UNKNOWN]]
        more = len(unknown) - len(names)
        raise ValidationFailed(
            problems, f"Unknown {', '.join(names)}{f' and {more} more' if more else ''}."
        )
    service = catalog.services_by_id[selection.service_id]
    frequency = catalog.frequencies_by_slug[selection.frequency_slug]
    if selection.start is not None and selection.start.utcoffset() is None:
        raise ValidationFailed(
            {"start_iso": "Must carry a UTC offset, e.g. 2026-05-01T09:00:00-04:00."}
        )
    return service, frequency


def _chosen(
    items: Sequence[SelectedItem], known: Mapping[str, object], kind: str, field: str
) -> dict[str, tuple[int, int]]:
    """Map id -> (index in the request, quantity); refuse unknown and duplicate ids."""
    chosen: dict[str, tuple[int, int]] = {}
    for index, item in enumerate(items):
        if item.id not in known:
            raise UnknownCatalogItem(f"{field}.{index}.id", kind, item.id)
        if item.id in chosen:
            raise DuplicateSelection(f"{field}.{index}.id", kind, item.id)
        chosen[item.id] = (index, item.quantity)
    return chosen


def _lines(
    service: Service, frequency: Frequency, selection: Selection, visit: Visit
) -> tuple[PriceLine, ...]:
    lines = [
        PriceLine(
            LineKind.BASE,
            service.id,
            service.name,
            1,
            service.base_price_cents,
            service.base_price_cents,
            True,
            service.base_duration_minutes,
        )
    ]
    # Lines follow catalog order, so the order of selections never changes the breakdown.
    params = _chosen(selection.parameters, service.parameters_by_id, "parameter", "parameters")
    for parameter in service.parameters:
        index, quantity = params.get(parameter.id, (-1, parameter.min_quantity))
        if not parameter.min_quantity <= quantity <= parameter.max_quantity:
            raise QuantityOutOfBounds(
                f"parameters.{index}.quantity",
                "parameter",
                parameter.id,
                parameter.name,
                quantity,
                parameter.min_quantity,
                parameter.max_quantity,
            )
        if quantity:
            lines.append(
                PriceLine(
                    LineKind.PARAMETER,
                    parameter.id,
                    parameter.name,
                    quantity,
                    parameter.price_cents,
                    quantity * parameter.price_cents,
                    True,
                    quantity * parameter.duration_minutes,
                )
            )
    extras = _chosen(selection.extras, service.extras_by_id, "extra", "extras")
    for extra in service.extras:
        if extra.id in extras:
            index, quantity = extras[extra.id]
            _check_extra(extra, index, quantity, frequency)
            if extra.first_visit_only and visit is Visit.LATER:
                continue
            lines.append(
                PriceLine(
                    LineKind.EXTRA,
                    extra.id,
                    extra.name,
                    quantity,
                    extra.price_cents,
                    quantity * extra.price_cents,
                    not extra.discount_exempt,
                    quantity * extra.duration_minutes,
                )
            )
    return tuple(lines)


def _check_extra(extra: Extra, index: int, quantity: int, frequency: Frequency) -> None:
    if not 1 <= quantity <= extra.max_quantity:
        raise QuantityOutOfBounds(
            f"extras.{index}.quantity",
            "extra",
            extra.id,
            extra.name,
            quantity,
            1,
            extra.max_quantity,
        )
    if not extra.offered_on(frequency.slug):
        raise ExtraNotOffered(extra.id, extra.name, frequency.slug)


def _fees(
    catalog: Catalog, service: Service, selection: Selection, discounted_subtotal: int
) -> tuple[FeeLine, ...]:
    manual = set(check_manual_fees(catalog, selection.manual_fee_ids))
    local_date = (
        selection.start.astimezone(catalog.zone).date() if selection.start is not None else None
    )
    return tuple(
        _fee_line(fee, discounted_subtotal)
        for fee in catalog.fees
        if fee.id in manual
        or fee.applies(local_date=local_date, zip_code=selection.zip_code, service_id=service.id)
    )


def check_manual_fees(catalog: Catalog, fee_ids: Sequence[str]) -> tuple[str, ...]:
    """The manual fee ids, in order, once each is known to be an active manual fee."""
    chosen: dict[str, None] = {}
    for index, fee_id in enumerate(fee_ids):
        fee = catalog.fees_by_id.get(fee_id)
        if fee is None:
            raise UnknownCatalogItem(f"manual_fee_ids.{index}", "fee", fee_id)
        if fee.kind is not FeeKind.MANUAL or not fee.active:
            raise ManualFeeRefused(fee_id)
        if fee_id in chosen:
            raise DuplicateSelection(f"manual_fee_ids.{index}", "fee", fee_id)
        chosen[fee_id] = None
    return tuple(chosen)


def _fee_line(fee: FeeDefinition, discounted_subtotal: int) -> FeeLine:
    amount = (
        fee.amount_cents
        if fee.amount_cents is not None
        else apply_bps(discounted_subtotal, fee.amount_bps or 0)
    )
    return FeeLine(fee.id, fee.name, fee.kind, amount, fee.taxable)
