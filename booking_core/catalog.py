"""The bookable catalog of one company: industries, services, parameters, extras,
frequencies, fee definitions and coupons, plus the company's tax rate and timezone.

Catalog values are frozen; constructing one checks its own invariants (non-negative
money, sane bounds, unique ids), so pricing can trust what it is given.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from datetime import date
from functools import cached_property
from zoneinfo import ZoneInfo

import attrs
from attrs import field, frozen

from booking_core.coupons import Coupon

ONE_TIME = "one_time"
"""Slug of the frequency that is a single visit, not a plan."""


def _non_negative(_: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value < 0:
        raise ValueError(f"{attribute.name} must be >= 0, got {value}")


def _bps(_: object, attribute: attrs.Attribute[int], value: int) -> None:
    if not 0 <= value <= 10_000:
        raise ValueError(f"{attribute.name} must be within 0..10000 basis points, got {value}")


@frozen
class Parameter:
    """A counted property of a job (e.g. bedrooms): each unit adds price and minutes."""

    id: str
    name: str
    price_cents: int = field(validator=_non_negative)
    duration_minutes: int = field(default=0, validator=_non_negative)
    min_quantity: int = field(default=0, validator=_non_negative)
    max_quantity: int = field(default=10)

    @max_quantity.validator
    def _check_max(self, _: attrs.Attribute[int], value: int) -> None:
        if value < self.min_quantity:
            raise ValueError("max_quantity must be >= min_quantity")


@frozen
class Extra:
    """An add-on to a job; may be limited to some frequencies, exempt from discounts,
    or charged on the first visit of a plan only."""

    id: str
    name: str
    price_cents: int = field(validator=_non_negative)
    duration_minutes: int = field(default=0, validator=_non_negative)
    max_quantity: int = field(default=1)
    frequency_slugs: tuple[str, ...] = ()
    discount_exempt: bool = False
    first_visit_only: bool = False

    @max_quantity.validator
    def _check_max(self, _: attrs.Attribute[int], value: int) -> None:
        if value < 1:
            raise ValueError("max_quantity must be >= 1")

    def offered_on(self, frequency_slug: str) -> bool:
        """True when the extra may be chosen on that plan (an empty list means all plans)."""
        return not self.frequency_slugs or frequency_slug in self.frequency_slugs


@frozen
class Service:
    """A bookable service with a base price and duration, parameters and extras."""

    id: str
    name: str
    base_price_cents: int = field(validator=_non_negative)
    base_duration_minutes: int = field(validator=_non_negative)
    parameters: tuple[Parameter, ...] = ()
    extras: tuple[Extra, ...] = ()
    taxable: bool = True
    active: bool = True
    description: str = ""

    @cached_property
    def parameters_by_id(self) -> dict[str, Parameter]:
        """Parameters keyed by id."""
        return {p.id: p for p in self.parameters}

    @cached_property
    def extras_by_id(self) -> dict[str, Extra]:
        """Extras keyed by id."""
        return {e.id: e for e in self.extras}

    def __attrs_post_init__(self) -> None:
        _require_unique("parameter", (p.id for p in self.parameters))
        _require_unique("extra", (e.id for e in self.extras))


@frozen
class Industry:
    """A line of business (e.g. home cleaning) grouping services."""

    id: str
    name: str
    services: tuple[Service, ...] = ()


@frozen
class Frequency:
    """A plan: ``one_time`` (no interval) or recurring every ``interval_days``."""

    slug: str
    name: str
    interval_days: int | None
    discount_bps: int = field(default=0, validator=_bps)

    def __attrs_post_init__(self) -> None:
        if (self.slug == ONE_TIME) != (self.interval_days is None):
            raise ValueError("only the one_time frequency has no interval")
        if self.interval_days is not None and self.interval_days < 1:
            raise ValueError("interval_days must be >= 1")

    @property
    def recurring(self) -> bool:
        """True for a plan of repeated visits."""
        return self.interval_days is not None


class FeeKind(enum.StrEnum):
    """What makes a fee apply."""

    DATE = "date"
    ZIP = "zip"
    SERVICE = "service"
    MANUAL = "manual"


@frozen
class FeeDefinition:
    """A surcharge. Exactly one of ``amount_cents`` (fixed) and ``amount_bps``
    (percentage of the post-discount subtotal) is set.

    ``weekdays`` uses ISO numbering (1 = Monday .. 7 = Sunday); a date fee applies
    when the job's local date falls on one of them or on one of ``dates``.
    """

    id: str
    name: str
    kind: FeeKind
    amount_cents: int | None = None
    amount_bps: int | None = None
    taxable: bool = False
    active: bool = True
    weekdays: frozenset[int] = frozenset()
    dates: frozenset[date] = frozenset()
    zips: frozenset[str] = frozenset()
    service_ids: frozenset[str] = frozenset()

    def __attrs_post_init__(self) -> None:
        if (self.amount_cents is None) == (self.amount_bps is None):
            raise ValueError("a fee has exactly one of amount_cents and amount_bps")
        if self.amount_cents is not None and self.amount_cents < 0:
            raise ValueError("amount_cents must be >= 0")
        if self.amount_bps is not None and not 0 <= self.amount_bps <= 100_000:
            raise ValueError("amount_bps must be within 0..100000")
        if not self.weekdays <= set(range(1, 8)):
            raise ValueError("weekdays are ISO weekday numbers 1..7")

    def applies(self, *, local_date: date | None, zip_code: str | None, service_id: str) -> bool:
        """True when this automatic (non-manual) fee applies to a job.

        A date fee needs the job's local date and a zip fee its zip: without them
        (pricing before a date or address is known) those fees do not apply.
        """
        if not self.active:
            return False
        match self.kind:
            case FeeKind.DATE:
                return local_date is not None and (
                    local_date.isoweekday() in self.weekdays or local_date in self.dates
                )
            case FeeKind.ZIP:
                return zip_code in self.zips
            case FeeKind.SERVICE:
                return service_id in self.service_ids
            case FeeKind.MANUAL:
                return False


@frozen
class Catalog:
    """Everything one company prices from."""

    company_id: str
    timezone: str = "America/New_York"
    tax_rate_bps: int = field(default=0, validator=_bps)
    industries: tuple[Industry, ...] = ()
    frequencies: tuple[Frequency, ...] = ()
    fees: tuple[FeeDefinition, ...] = ()
    coupons: tuple[Coupon, ...] = ()

    def __attrs_post_init__(self) -> None:
        ZoneInfo(self.timezone)  # refuses an unknown zone name early
        _require_unique("service", (s.id for s in self.services()))
        _require_unique("frequency", (f.slug for f in self.frequencies))
        _require_unique("fee", (f.id for f in self.fees))
        _require_unique("coupon code", (c.normalized_code for c in self.coupons))

    @cached_property
    def zone(self) -> ZoneInfo:
        """The company's timezone."""
        return ZoneInfo(self.timezone)

    def services(self) -> Iterator[Service]:
        """Every service of every industry."""
        for industry in self.industries:
            yield from industry.services

    @cached_property
    def services_by_id(self) -> dict[str, Service]:
        """Services keyed by id."""
        return {s.id: s for s in self.services()}

    @cached_property
    def frequencies_by_slug(self) -> dict[str, Frequency]:
        """Frequencies keyed by slug."""
        return {f.slug: f for f in self.frequencies}

    @cached_property
    def fees_by_id(self) -> dict[str, FeeDefinition]:
        """Fee definitions keyed by id."""
        return {f.id: f for f in self.fees}

    @cached_property
    def coupons_by_code(self) -> dict[str, Coupon]:
        """Coupons keyed by normalised code."""
        return {c.normalized_code: c for c in self.coupons}

    def active_fees(self) -> tuple[FeeDefinition, ...]:
        """Fee definitions currently in force (what GET /services lists)."""
        return tuple(f for f in self.fees if f.active)


def _require_unique(kind: str, ids: Iterator[str]) -> None:
    seen: set[str] = set()
    for item_id in ids:
        if item_id in seen:
            raise ValueError(f"duplicate {kind} id {item_id!r}")
        seen.add(item_id)
