"""Customer use cases: create or return the existing customer for an email, update one's
contact details and saved addresses, merge, read."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import attrs
from attrs import frozen

from booking_core.bookings import customer_visits, refiled
from booking_core.customers import (
    Address,
    ChurnRisk,
    Customer,
    CustomerMerge,
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
from booking_core.drive import require_known_zip
from booking_core.errors import ConflictError, ValidationFailed
from booking_core.events import EventType, event
from booking_core.ids import new_id
from booking_core.ledger import BookingLedger
from booking_core.paging import Page, PageRequest
from booking_core.ports import Clock, DriveTime, PhoneNormalizer, UnitOfWork
from booking_core.quotes import evolved


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


def held_survivor(uow: UnitOfWork, company_id: str, customer: Customer | str) -> Customer:
    """The record that stands for ``customer`` (a record read ``held``, or an id to read
    so), following its merges, each record on the way read ``held``: what a booking, a
    quote, a convert or a plan's new visits are filed under. A merge of any of them
    waits for this unit, or was waited for and is followed (docs/storage.md)."""
    if isinstance(customer, str):
        customer = uow.customers.get(company_id, customer, held=True)
    return merge_survivor(customer, lambda other: uow.customers.get(company_id, other, held=True))


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
        at = clock.now()
        try:
            updated = with_contact(current, name=cmd.name, phone=phone, at=at)
        except ValidationFailed as failed:
            raise ValidationFailed({**phone_errors, **failed.field_errors}) from None
        if phone_errors:
            raise ValidationFailed(phone_errors)
        _save_changed(uow, current, updated, at)
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


def save_customer_address(
    cmd: SaveAddress, *, uow: UnitOfWork, clock: Clock, drive: DriveTime | None = None
) -> Customer:
    """Add or replace a saved address (``ValidationFailed`` keyed ``address.<field>``;
    ``RuleViolation`` for an address id the customer has not). With ``drive``, a zip its
    drive times do not know is refused too (``UnknownZip`` on ``address.zip``), as booking
    at that address would be: the customer portal passes it."""
    if drive is not None and not cmd.address.errors():
        require_known_zip(drive, cmd.address.zip, "address.zip")
    with uow:
        current = uow.customers.get_for_update(cmd.company_id, cmd.customer_id)
        at = clock.now()
        if cmd.address_id is None:
            saved = SavedAddress(new_id("adr"), cmd.address)
            updated = add_address(current, saved, at=at, default=cmd.default)
        else:
            saved = SavedAddress(cmd.address_id, cmd.address)
            updated = replace_address(current, saved, at=at, default=cmd.default)
        _save_changed(uow, current, updated, at)
        uow.commit()
    return updated


def remove_customer_address(
    company_id: str, customer_id: str, address_id: str, *, uow: UnitOfWork, clock: Clock
) -> Customer:
    """Forget a saved address (bookings keep their own copy of it)."""
    with uow:
        current = uow.customers.get_for_update(company_id, customer_id)
        at = clock.now()
        updated = remove_address(current, address_id, at=at)
        _save_changed(uow, current, updated, at)
        uow.commit()
    return updated


def _save_changed(uow: UnitOfWork, current: Customer, updated: Customer, at: datetime) -> None:
    """Save ``updated``; when it differs from ``current`` in more than ``updated_at``,
    record ``customer.updated`` (a save that changes nothing records nothing)."""
    uow.customers.save(updated)
    if attrs.evolve(updated, updated_at=current.updated_at) != current:
        uow.outbox.add(
            event(EventType.CUSTOMER_UPDATED, updated, company_id=updated.company_id, at=at)
        )


def _survivor(uow: UnitOfWork, customer: Customer) -> Customer:
    return merge_survivor(customer, lambda other: uow.customers.get(customer.company_id, other))


@frozen(kw_only=True)
class MergeCustomers:
    """Merge ``merged_id`` into ``survivor_id`` (both of ``company_id``)."""

    company_id: str
    survivor_id: str
    merged_id: str


def merge_customers(cmd: MergeCustomers, *, uow: UnitOfWork, clock: Clock) -> Customer:
    """Merge one customer into another, in one transaction: the merged record points at
    the survivor and leaves lists, and its history is re-filed under the survivor: its
    bookings (each one version higher, with a ``customer_merged`` activity entry), its
    quotes (one version higher), its coupon redemptions and its ledger entries (only whose
    record they are filed under changes). Records ``customer.updated`` for the survivor
    and ``customer.merged``. ``NotFoundError`` for an id the company has not;
    ``RuleViolation`` for a merge into itself or of or into a merged record."""
    company_id, survivor_id, merged_id = cmd.company_id, cmd.survivor_id, cmd.merged_id
    with uow:
        # Refused before any record is held: a merged record stays merged, so a refusal
        # read unheld is final, and a merge sent again never holds the survivor while a
        # booking of the merged email holds the merged record on its way to the survivor.
        # Merges sharing a record take turns first, so the second reads the first's
        # outcome here (a merge still open would pass this read).
        uow.customers.hold_merges(company_id, (survivor_id, merged_id))
        unheld = {cid: uow.customers.get(company_id, cid) for cid in (survivor_id, merged_id)}
        merge(unheld[survivor_id], unheld[merged_id], at=clock.now())
        # Both held, in id order so that two merges of the same pair never wait on each
        # other in a circle.
        held = {
            cid: uow.customers.get_for_update(company_id, cid)
            for cid in sorted({survivor_id, merged_id})
        }
        at = clock.now()
        survivor, merged = merge(held[survivor_id], held[merged_id], at=at)
        uow.customers.save(survivor)
        uow.customers.save(merged)
        bookings = uow.bookings.for_customer(company_id, merged.id)
        # Their ledgers held before the payments are re-filed: an entry being written for
        # one of them now is re-filed with the rest, or written after, under the survivor.
        uow.payments.lock_ledgers(company_id, [b.id for b in bookings])
        uow.bookings.save_all([refiled(b, survivor.id, at) for b in bookings])
        for quote in uow.quotes.of_customer(company_id, merged.id):
            uow.quotes.save(
                evolved(quote, at, customer_id=survivor.id), expected_version=quote.version
            )
        uow.coupon_redemptions.refile(company_id, merged.id, survivor.id)
        uow.payments.refile(company_id, merged.id, survivor.id)
        uow.outbox.add_all(
            [
                event(EventType.CUSTOMER_UPDATED, survivor, company_id=company_id, at=at),
                event(
                    EventType.CUSTOMER_MERGED,
                    CustomerMerge(
                        company_id=company_id, survivor_id=survivor.id, merged_id=merged.id
                    ),
                    company_id=company_id,
                    at=at,
                ),
            ]
        )
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
