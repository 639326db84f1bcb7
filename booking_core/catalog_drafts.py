"""A catalog as a company writes it, before it is checked: drafts of every catalog value.

Drafts mirror the catalog values field for field but check nothing when made, so that a
setup document or an admin form can hold a wrong catalog and be told everything that is
wrong with it (``catalog_rules``). ``catalog_rules.build_catalog`` is the way from a draft
to a ``Catalog``; ``draft_of`` goes back, so that ``build_catalog(draft_of(c), ...) == c``.
"""

from __future__ import annotations

from datetime import date, datetime

from attrs import frozen

from booking_core.catalog import (
    Catalog,
    Extra,
    FeeDefinition,
    FeeKind,
    Frequency,
    Industry,
    Parameter,
    Service,
)
from booking_core.coupons import Coupon


@frozen(kw_only=True)
class ParameterDraft:
    """A parameter (``Parameter``) as written."""

    id: str
    name: str
    price_cents: int
    duration_minutes: int = 0
    min_quantity: int = 0
    max_quantity: int = 10


@frozen(kw_only=True)
class ExtraDraft:
    """An extra (``Extra``) as written; empty ``frequency_slugs`` means every plan."""

    id: str
    name: str
    price_cents: int
    duration_minutes: int = 0
    max_quantity: int = 1
    frequency_slugs: tuple[str, ...] = ()
    discount_exempt: bool = False
    first_visit_only: bool = False


@frozen(kw_only=True)
class ServiceDraft:
    """A service (``Service``) as written; an inactive one is kept but not offered."""

    id: str
    name: str
    description: str = ""
    base_price_cents: int
    base_duration_minutes: int
    taxable: bool = True
    active: bool = True
    parameters: tuple[ParameterDraft, ...] = ()
    extras: tuple[ExtraDraft, ...] = ()


@frozen(kw_only=True)
class IndustryDraft:
    """An industry (``Industry``) and its services, as written."""

    id: str
    name: str
    services: tuple[ServiceDraft, ...] = ()


@frozen(kw_only=True)
class FrequencyDraft:
    """A frequency (``Frequency``) as written; only ``one_time`` has no interval."""

    slug: str
    name: str
    interval_days: int | None = None
    discount_bps: int = 0


@frozen(kw_only=True)
class FeeDraft:
    """A fee definition (``FeeDefinition``) as written; its sets as sorted lists."""

    id: str
    name: str
    kind: FeeKind
    amount_cents: int | None = None
    amount_bps: int | None = None
    taxable: bool = False
    active: bool = True
    weekdays: tuple[int, ...] = ()
    dates: tuple[date, ...] = ()
    zips: tuple[str, ...] = ()
    service_ids: tuple[str, ...] = ()


@frozen(kw_only=True)
class CouponDraft:
    """A coupon (``Coupon``) as written; its sets as sorted lists."""

    id: str
    code: str
    percent_bps: int | None = None
    amount_cents: int | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    max_redemptions: int | None = None
    per_customer_limit: int | None = None
    min_subtotal_cents: int = 0
    service_ids: tuple[str, ...] = ()
    frequency_slugs: tuple[str, ...] = ()
    active: bool = True


@frozen(kw_only=True)
class CatalogDraft:
    """A whole catalog as written. The timezone is not part of it: it is the company's."""

    tax_rate_bps: int = 0
    frequencies: tuple[FrequencyDraft, ...] = ()
    industries: tuple[IndustryDraft, ...] = ()
    fees: tuple[FeeDraft, ...] = ()
    coupons: tuple[CouponDraft, ...] = ()


def catalog_of(draft: CatalogDraft, *, company_id: str, timezone: str) -> Catalog:
    """The catalog ``draft`` describes, built as it stands: the values check their own
    invariants (a ``ValueError`` naming no path). ``catalog_rules.build_catalog`` checks
    the draft first and names every problem at its path."""
    return Catalog(
        company_id=company_id,
        timezone=timezone,
        tax_rate_bps=draft.tax_rate_bps,
        industries=tuple(
            Industry(i.id, i.name, tuple(_built_service(s) for s in i.services))
            for i in draft.industries
        ),
        frequencies=tuple(
            Frequency(f.slug, f.name, f.interval_days, f.discount_bps) for f in draft.frequencies
        ),
        fees=tuple(_built_fee(f) for f in draft.fees),
        coupons=tuple(_built_coupon(c) for c in draft.coupons),
    )


def _built_service(s: ServiceDraft) -> Service:
    return Service(
        s.id,
        s.name,
        base_price_cents=s.base_price_cents,
        base_duration_minutes=s.base_duration_minutes,
        parameters=tuple(
            Parameter(
                p.id, p.name, p.price_cents, p.duration_minutes, p.min_quantity, p.max_quantity
            )
            for p in s.parameters
        ),
        extras=tuple(
            Extra(
                e.id,
                e.name,
                e.price_cents,
                e.duration_minutes,
                max_quantity=e.max_quantity,
                frequency_slugs=e.frequency_slugs,
                discount_exempt=e.discount_exempt,
                first_visit_only=e.first_visit_only,
            )
            for e in s.extras
        ),
        taxable=s.taxable,
        active=s.active,
        description=s.description,
    )


def _built_fee(f: FeeDraft) -> FeeDefinition:
    return FeeDefinition(
        f.id,
        f.name,
        f.kind,
        amount_cents=f.amount_cents,
        amount_bps=f.amount_bps,
        taxable=f.taxable,
        active=f.active,
        weekdays=frozenset(f.weekdays),
        dates=frozenset(f.dates),
        zips=frozenset(f.zips),
        service_ids=frozenset(f.service_ids),
    )


def _built_coupon(c: CouponDraft) -> Coupon:
    return Coupon(
        c.id,
        c.code,
        percent_bps=c.percent_bps,
        amount_cents=c.amount_cents,
        valid_from=c.valid_from,
        valid_until=c.valid_until,
        max_redemptions=c.max_redemptions,
        per_customer_limit=c.per_customer_limit,
        min_subtotal_cents=c.min_subtotal_cents,
        service_ids=frozenset(c.service_ids),
        frequency_slugs=frozenset(c.frequency_slugs),
        active=c.active,
    )


def draft_of(catalog: Catalog) -> CatalogDraft:
    """``catalog`` as a draft (sets as sorted lists): what an export writes."""
    return CatalogDraft(
        tax_rate_bps=catalog.tax_rate_bps,
        frequencies=tuple(
            FrequencyDraft(
                slug=f.slug, name=f.name, interval_days=f.interval_days, discount_bps=f.discount_bps
            )
            for f in catalog.frequencies
        ),
        industries=tuple(
            IndustryDraft(
                id=i.id, name=i.name, services=tuple(_service_draft(s) for s in i.services)
            )
            for i in catalog.industries
        ),
        fees=tuple(
            FeeDraft(
                id=f.id,
                name=f.name,
                kind=f.kind,
                amount_cents=f.amount_cents,
                amount_bps=f.amount_bps,
                taxable=f.taxable,
                active=f.active,
                weekdays=tuple(sorted(f.weekdays)),
                dates=tuple(sorted(f.dates)),
                zips=tuple(sorted(f.zips)),
                service_ids=tuple(sorted(f.service_ids)),
            )
            for f in catalog.fees
        ),
        coupons=tuple(
            CouponDraft(
                id=c.id,
                code=c.code,
                percent_bps=c.percent_bps,
                amount_cents=c.amount_cents,
                valid_from=c.valid_from,
                valid_until=c.valid_until,
                max_redemptions=c.max_redemptions,
                per_customer_limit=c.per_customer_limit,
                min_subtotal_cents=c.min_subtotal_cents,
                service_ids=tuple(sorted(c.service_ids)),
                frequency_slugs=tuple(sorted(c.frequency_slugs)),
                active=c.active,
            )
            for c in catalog.coupons
        ),
    )


def _service_draft(s: Service) -> ServiceDraft:
    return ServiceDraft(
        id=s.id,
        name=s.name,
        description=s.description,
        base_price_cents=s.base_price_cents,
        base_duration_minutes=s.base_duration_minutes,
        taxable=s.taxable,
        active=s.active,
        parameters=tuple(
            ParameterDraft(
                id=p.id,
                name=p.name,
                price_cents=p.price_cents,
                duration_minutes=p.duration_minutes,
                min_quantity=p.min_quantity,
                max_quantity=p.max_quantity,
            )
            for p in s.parameters
        ),
        extras=tuple(
            ExtraDraft(
                id=e.id,
                name=e.name,
                price_cents=e.price_cents,
                duration_minutes=e.duration_minutes,
                max_quantity=e.max_quantity,
                frequency_slugs=e.frequency_slugs,
                discount_exempt=e.discount_exempt,
                first_visit_only=e.first_visit_only,
            )
            for e in s.extras
        ),
    )
