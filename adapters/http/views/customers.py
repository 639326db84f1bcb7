"""Customers as answers: addresses, churn risk and lifetime statistics (``/customers``;
the address also appears on a booking)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from attrs import frozen

from adapters.http.jsonschema import Keywords
from adapters.http.views.base import Cents, Count, RenderContext, ZipCode, copied, extend
from booking_core.customers import (
    Address,
    ChurnLevel,
    ChurnRisk,
    Customer,
    CustomerMerge,
    Lifetime,
    SavedAddress,
)

Score = Annotated[int, Keywords(minimum=0, maximum=100)]
ReferralCode = Annotated[
    str,
    Keywords(
        pattern="^[0-9A-HJKMNP-TV-Z]{8}$",
        description="the code this customer gives friends (a booking's referralCode)",
    ),
]


@frozen
class AddressView:
    """A US street address."""

    line1: str
    line2: str
    city: str
    state: str
    zip: ZipCode
    access_notes: str


@frozen
class SavedAddressView(AddressView):
    """An address kept on a customer's record."""

    id: str
    default: bool


@frozen
class ChurnRiskView:
    """Churn risk: a score of 0..100 and its level."""

    level: ChurnLevel
    score: Score


@frozen
class LifetimeView:
    """Lifetime statistics over every visit."""

    bookings: Count
    completed: Count
    cancelled: Count
    paid_cents: Cents
    first_visit_at: datetime | None
    last_visit_at: datetime | None
    next_visit_at: datetime | None


@frozen
class CustomerView:
    """A customer with churn risk and lifetime statistics."""

    id: str
    name: str
    email: str
    phone: str | None
    referral_code: ReferralCode
    addresses: tuple[SavedAddressView, ...]
    default_address_id: str | None
    created_at: datetime
    updated_at: datetime
    churn_risk: ChurnRiskView
    lifetime: LifetimeView


def address_view(a: Address) -> AddressView:
    """The view of a street address."""
    return copied(AddressView, a)


def saved_address_view(saved: SavedAddress, *, default: bool) -> SavedAddressView:
    """The view of an address on a customer's record; ``default`` if it is theirs."""
    return extend(address_view(saved.address), SavedAddressView, id=saved.id, default=default)


def customer_view(
    c: Customer, lifetime: Lifetime, churn: ChurnRisk, ctx: RenderContext
) -> CustomerView:
    """The view of a customer with the statistics its visits and payments give."""
    return CustomerView(
        id=c.id,
        name=c.name,
        email=c.email,
        phone=c.phone,
        referral_code=c.referral_code,
        addresses=tuple(
            saved_address_view(s, default=s.id == c.default_address_id) for s in c.addresses
        ),
        default_address_id=c.default_address_id,
        created_at=ctx.time(c.created_at),
        updated_at=ctx.time(c.updated_at),
        churn_risk=ChurnRiskView(level=churn.level, score=churn.score),
        lifetime=LifetimeView(
            bookings=lifetime.bookings,
            completed=lifetime.completed,
            cancelled=lifetime.cancelled,
            paid_cents=lifetime.paid_cents,
            first_visit_at=ctx.time(lifetime.first_visit_at),
            last_visit_at=ctx.time(lifetime.last_visit_at),
            next_visit_at=ctx.time(lifetime.next_visit_at),
        ),
    )


@frozen
class CustomerMergeView:
    """A merge of customers: ``mergedId`` was merged into ``survivorId``, whose record now
    holds its bookings, quotes, payments and coupon redemptions."""

    survivor_id: str
    merged_id: str


def customer_merge_view(merge: CustomerMerge) -> CustomerMergeView:
    """The view of a merge (the ``data`` of ``customer.merged``)."""
    return CustomerMergeView(survivor_id=merge.survivor_id, merged_id=merge.merged_id)
