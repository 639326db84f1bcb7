"""Customer use cases: create or return the existing customer for an email, update one's
contact details and saved addresses, merge, read."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import attrs
from attrs import frozen

from booking_core.bookings import customer_visits
from booking_core.customers import (
    Address,
    ChurnRisk,
    Customer,
    Lifetime,
    SavedAddress,
    add_address,
    churn_risk,
    lifetime,
    merge,
    merge_survivor,
    new_customer,
    new_referral_code,
    remove_address,
    replace_address,
    with_contact,
)
from booking_core.errors import ConflictError, ValidationFailed
from booking_core.events import EventType, event
from booking_core.ids import new_id
from booking_core.ledger import BookingLedger
from booking_core.paging import Page, PageRequest
from booking_core.ports import Clock, PhoneNormalizer, UnitOfWork


@frozen(kw_only=True)
class CreateCustomer:
    """``POST /customers``: create, or return the customer that has this email."""

    company_id: str
    name: str
    email: str
    phone: str | None = None
    address: Address | None = None


def normalized_phone(raw: str | None, phones: PhoneNormalizer, field: str = "phone") -> str | None:
    """The E.164 form of a typed phone number; a number that is not one is a field error."""
    if raw is None or not raw.strip():
        return None
    e164 = phones.e164(raw)
    if e164 is None:
        raise ValidationFailed({field: "Not a phone number we can call, e.g. +1 212 555 0100."})
    return e164


CODE_DRAWS = 5
"""How often a new customer's referral code is drawn when the one drawn is taken."""


def add_new_customer(uow: UnitOfWork, customer: Customer) -> tuple[Customer, bool]:
    """``customers.add_unless_email_taken``, drawing another referral code when the one
    drawn is taken in the company (the unit stays usable after such a refusal)."""
    for _ in range(CODE_DRAWS):
        try:
            return uow.customers.add_unless_email_taken(customer)
        except ConflictError:
            customer = attrs.evolve(customer, referral_code=new_referral_code())
    raise ConflictError("Could not draw a free referral code; try again.")


def create_customer(
    cmd: CreateCustomer, *, uow: UnitOfWork, clock: Clock, phones: PhoneNormalizer
) -> tuple[Customer, bool]:
    """The customer for ``cmd.email`` and whether it was created now.

    An existing email returns the existing customer; the email of a merged record returns
    the surviving record. Two requests racing with one new email make one customer: the
    first to add it creates it, the others return it (``add_unless_email_taken``); only
    a customer created now records ``customer.created``.
    """
    try:
        phone = normalized_phone(cmd.phone, phones)
        phone_errors: dict[str, str] = {}
    except ValidationFailed as failed:
        phone, phone_errors = None, failed.field_errors
    at = clock.now()
    # The request is checked whole first, whether or not the email is known: a bad field
    # is refused the same way for a new and for an existing customer.
    try:
        customer = new_customer(
            customer_id=new_id("cus"),
            company_id=cmd.company_id,
            name=cmd.name,
            email=cmd.email,
            phone=phone,
            at=at,
            address=SavedAddress(new_id("adr"), cmd.address) if cmd.address else None,
        )
    except ValidationFailed as failed:
        raise ValidationFailed({**phone_errors, **failed.field_errors}) from None
    if phone_errors:
        # Every field problem at once: the phone with whatever else is wrong.
        raise ValidationFailed(phone_errors)
    with uow:
        existing = uow.customers.by_email(cmd.company_id, cmd.email)
        if existing is not None:
            return _survivor(uow, existing), False
        held, created = add_new_customer(uow, customer)
        if not created:
            return _survivor(uow, held), False
        customer = held
        uow.outbox.add(
            event(EventType.CUSTOMER_CREATED, customer, company_id=customer.company_id, at=at)
        )
        uow.commit()
    return customer, True


@frozen(kw_only=True)
class UpdateCustomer:
    """A customer's contact details: name and phone (empty or None: no phone). The email
    stays: it is the record's identity in the company."""

    company_id: str
    customer_id: str
    name: str
    phone: str | None = None


def update_customer(
    cmd: UpdateCustomer, *, uow: UnitOfWork, clock: Clock, phones: PhoneNormalizer
) -> Customer:
    """Replace the customer's name and phone; every field problem at once
    (``ValidationFailed``), nothing written then."""
    try:
        phone = normalized_phone(cmd.phone, phones)
        phone_errors: dict[str, str] = {}
    except ValidationFailed as failed:
        phone, phone_errors = None, failed.field_errors
    with uow:
        current = uow.customers.get_for_update(cmd.company_id, cmd.customer_id)
        try:
            updated = with_contact(current, name=cmd.name, phone=phone, at=clock.now())
        except ValidationFailed as failed:
            raise ValidationFailed({**phone_errors, **failed.field_errors}) from None
        if phone_errors:
            raise ValidationFailed(phone_errors)
        uow.customers.save(updated)
        uow.commit()
    return updated


@frozen(kw_only=True)
class SaveAddress:
    """A saved address of a customer: a new one (``address_id`` None) or a replacement."""

    company_id: str
    customer_id: str
    address: Address
    address_id: str | None = None
    default: bool = False


def save_customer_address(cmd: SaveAddress, *, uow: UnitOfWork, clock: Clock) -> Customer:
    """Add or replace a saved address (``ValidationFailed`` keyed ``address.<field>``;
    ``RuleViolation`` for an address id the customer has not)."""
    with uow:
        current = uow.customers.get_for_update(cmd.company_id, cmd.customer_id)
        at = clock.now()
        if cmd.address_id is None:
            saved = SavedAddress(new_id("adr"), cmd.address)
            updated = add_address(current, saved, at=at, default=cmd.default)
        else:
            saved = SavedAddress(cmd.address_id, cmd.address)
            updated = replace_address(current, saved, at=at, default=cmd.default)
        uow.customers.save(updated)
        uow.commit()
    return updated


def remove_customer_address(
    company_id: str, customer_id: str, address_id: str, *, uow: UnitOfWork, clock: Clock
) -> Customer:
    """Forget a saved address (bookings keep their own copy of it)."""
    with uow:
        updated = remove_address(
            uow.customers.get_for_update(company_id, customer_id), address_id, at=clock.now()
        )
        uow.customers.save(updated)
        uow.commit()
    return updated


def _survivor(uow: UnitOfWork, customer: Customer) -> Customer:
    return merge_survivor(customer, lambda other: uow.customers.get(customer.company_id, other))


def merge_customers(
    company_id: str, survivor_id: str, merged_id: str, *, uow: UnitOfWork, clock: Clock
) -> Customer:
    """Merge one customer into another; the merged record disappears from lists."""
    with uow:
        # Both held, in id order so that two merges of the same pair never wait on each
        # other in a circle.
        held = {
            cid: uow.customers.get_for_update(company_id, cid)
            for cid in sorted({survivor_id, merged_id})
        }
        survivor, merged = merge(held[survivor_id], held[merged_id], at=clock.now())
        uow.customers.save(survivor)
        uow.customers.save(merged)
        uow.commit()
    return survivor


def list_customers(
    company_id: str, page: PageRequest, *, search: str | None = None, uow: UnitOfWork
) -> Page[Customer]:
    """A page of the company's customers (merged records omitted)."""
    with uow:
        return uow.customers.list(company_id, page, search=search)


def customer_standings(
    customers: Sequence[Customer], *, uow: UnitOfWork, at: datetime
) -> dict[str, tuple[Lifetime, ChurnRisk]]:
    """Lifetime statistics and churn risk of each customer, from their real visits and the
    ledger, in two queries for the whole page (call inside an open unit of work).

    ``paidCents`` sums each booking's paid total (tips excluded, disputes counted against,
    per the ledger's rules).
    """
    if not customers:
        return {}
    company_id = customers[0].company_id
    visits = uow.bookings.for_customers(company_id, [c.id for c in customers])
    entries = uow.payments.for_bookings(
        company_id, [b.id for bookings in visits.values() for b in bookings]
    )
    standings = {}
    for customer in customers:
        mine = visits[customer.id]
        paid = sum(BookingLedger(company_id, b.id, tuple(entries[b.id])).paid_cents for b in mine)
        facts = customer_visits(mine)
        standings[customer.id] = (
            lifetime(facts, paid_cents=paid, at=at),
            churn_risk(facts, at=at),
        )
    return standings


def customer_standing(
    customer: Customer, *, uow: UnitOfWork, at: datetime
) -> tuple[Lifetime, ChurnRisk]:
    """``customer_standings`` of one customer."""
    return customer_standings([customer], uow=uow, at=at)[customer.id]
