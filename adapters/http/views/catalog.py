"""The catalog as ``GET /services`` answers it: industries and their active services,
frequencies, and the fee definitions in force."""

from __future__ import annotations

from datetime import date
from typing import Annotated, ClassVar

from attrs import field, frozen

from adapters.http.jsonschema import Keywords, schema
from adapters.http.views.base import Bps, Count, Minutes, Positive, Price, copied
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

Weekday = Annotated[int, Keywords(minimum=1, maximum=7)]
"""ISO weekday: 1 is Monday."""


@frozen
class ParameterView:
    """A counted property of a job (e.g. bedrooms): each unit adds price and minutes."""

    id: str
    name: str
    price_cents: Price
    duration_minutes: Minutes
    min_quantity: Count
    max_quantity: Count


@frozen
class ExtraView:
    """An add-on; frequencySlugs empty means every frequency."""

    id: str
    name: str
    price_cents: Price
    duration_minutes: Minutes
    max_quantity: Positive
    frequency_slugs: tuple[str, ...]
    discount_exempt: bool
    first_visit_only: bool


@frozen
class ServiceView:
    """A bookable service with its parameters and extras."""

    id: str
    name: str
    description: str
    base_price_cents: Price
    base_duration_minutes: Minutes
    taxable: bool
    parameters: tuple[ParameterView, ...]
    extras: tuple[ExtraView, ...]


@frozen
class FeeView:
    """A surcharge: exactly one of amountCents (fixed) and amountBps (percentage of the
    post-discount subtotal) is set."""

    TITLE: ClassVar[str] = "FeeDefinition"

    id: str
    name: str
    kind: FeeKind
    amount_cents: Annotated[int, Keywords(minimum=0)] | None
    amount_bps: Annotated[int, Keywords(minimum=0, maximum=100_000)] | None
    taxable: bool
    weekdays: tuple[Weekday, ...]
    dates: tuple[date, ...]
    zips: tuple[str, ...]
    service_ids: tuple[str, ...]


@frozen
class FrequencyView:
    """A plan: one_time (no interval) or recurring every intervalDays."""

    slug: str
    name: str
    interval_days: Positive | None
    discount_bps: Bps


@frozen
class IndustryView:
    """A line of business and its active services."""

    id: str
    name: str
    services: tuple[ServiceView, ...]


@frozen
class CatalogView:
    """The company's catalog and the fee definitions in force."""

    industries: tuple[IndustryView, ...]
    frequencies: tuple[FrequencyView, ...]
    fees: tuple[FeeView, ...]
    tax_rate_bps: Bps
    timezone: str = field(metadata=schema(description="IANA zone name."))


def parameter_view(p: Parameter) -> ParameterView:
    """The view of a parameter."""
    return copied(ParameterView, p)


def extra_view(e: Extra) -> ExtraView:
    """The view of an extra, with the three fields SPEC.md names."""
    return copied(ExtraView, e)


def service_view(s: Service) -> ServiceView:
    """The view of a service."""
    return copied(
        ServiceView,
        s,
        parameters=tuple(parameter_view(p) for p in s.parameters),
        extras=tuple(extra_view(e) for e in s.extras),
    )


def fee_view(f: FeeDefinition) -> FeeView:
    """The view of a fee definition; its sets sorted, so answers never vary."""
    return copied(
        FeeView,
        f,
        weekdays=tuple(sorted(f.weekdays)),
        dates=tuple(sorted(f.dates)),
        zips=tuple(sorted(f.zips)),
        service_ids=tuple(sorted(f.service_ids)),
    )


def frequency_view(f: Frequency) -> FrequencyView:
    """The view of a frequency."""
    return copied(FrequencyView, f)


def industry_view(industry: Industry) -> IndustryView:
    """The view of an industry, inactive services left out."""
    services = tuple(service_view(s) for s in industry.services if s.active)
    return IndustryView(id=industry.id, name=industry.name, services=services)


def catalog_view(catalog: Catalog) -> CatalogView:
    """``GET /services``."""
    return CatalogView(
        industries=tuple(industry_view(i) for i in catalog.industries),
        frequencies=tuple(frequency_view(f) for f in catalog.frequencies),
        fees=tuple(fee_view(f) for f in catalog.active_fees()),
        tax_rate_bps=catalog.tax_rate_bps,
        timezone=catalog.timezone,
    )
