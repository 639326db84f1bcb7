"""Payment use cases: record money by hand, reverse a hand entry, land card-processor events,
and read bookings' totals (``booking_totals``).

Each reads the booking's ledger and appends one entry inside one unit of work, so the
rules (a refund within the paid total, never reversing twice) are decided on what the
transaction sees. Refused requests raise before anything is added and commit nothing.
Each new entry records the event it fires (``events.payment_event``) with it.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

import attrs
from attrs import frozen

from booking_core.bookings import Booking
from booking_core.card_money import (
    card_payment,
    card_refund,
    dispute_opened,
    dispute_won,
)
from booking_core.customers import Customer, same_customer
from booking_core.errors import LedgerRuleViolation, NotFoundError
from booking_core.events import payment_event
from booking_core.ids import new_id
from booking_core.ledger import (
    BookingLedger,
    Kind,
    LedgerTotals,
    Method,
    PaymentEntry,
    record_by_hand,
    reverse_entry,
)
from booking_core.ports import Clock, UnitOfWork
from booking_core.services.scheduling import booking_id_of


@frozen(kw_only=True)
class RecordPayment:
    """``POST /payments``: a PAYMENT, TIP or hand REFUND (amount given positive) on a booking."""

    company_id: str
    booking_id: str | None
    kind: Kind
    amount_cents: int
    method: Method | None = None
    note: str = ""
    reverses: str | None = None
    customer_id: str | None = None
    """Optional: the booking's customer (its record, or one merged with it), whom the entry
    is filed under in any case; anyone else is refused."""


@frozen(kw_only=True)
class ReversePayment:
    """``PATCH /payments`` body ``{id, note}``: reverse an entry recorded by hand."""

    company_id: str
    entry_id: str
    note: str


@frozen(kw_only=True)
class CardMoneyReceived:
    """The processor took card money for a booking: a charge, or a tip if ``tip``."""

    company_id: str
    booking_id: str
    customer_id: str | None
    payment_ref: str
    amount_cents: int
    tip: bool = False


@frozen(kw_only=True)
class CardMoneyRefunded:
    """The processor refunded card money (through the service or in its own dashboard)."""

    company_id: str
    booking_id: str
    payment_ref: str
    amount_cents: int
    tip: bool = False
    from_dashboard: bool = False


@frozen(kw_only=True)
class CardDisputeOpened:
    """A cardholder disputed card money (a tip if ``tip``)."""

    company_id: str
    booking_id: str
    payment_ref: str
    amount_cents: int
    tip: bool = False


@frozen(kw_only=True)
class CardDisputeWon:
    """A dispute closed in the company's favour; ``returned_cents`` came back from the bank."""

    company_id: str
    booking_id: str
    payment_ref: str
    returned_cents: int
    tip: bool = False


ProcessorEvent = CardMoneyReceived | CardMoneyRefunded | CardDisputeOpened | CardDisputeWon
"""Every card-processor event the ledger lands."""


def booking_totals(
    uow: UnitOfWork,
    company_id: str,
    booking_ids: Collection[str],
    *,
    until: datetime | None = None,
) -> dict[str, LedgerTotals]:
    """Each booking's paid total and tip money, from its ledger, in one query for all of
    them (call inside an open unit of work); ``until``: only entries recorded by then."""
    entries = uow.payments.for_bookings(company_id, booking_ids)
    return {
        booking_id: BookingLedger(
            company_id,
            booking_id,
            [e for e in rows if until is None or e.created_at <= until],
        ).totals
        for booking_id, rows in entries.items()
    }


def _ledger(uow: UnitOfWork, company_id: str, booking_id: str) -> BookingLedger:
    """The booking's ledger, held (``lock_ledger``) until the unit ends: its checks and the
    entry written from them are one step, whoever else writes to it at that moment."""
    uow.payments.lock_ledger(company_id, booking_id)
    return BookingLedger(company_id, booking_id, uow.payments.for_booking(company_id, booking_id))


def record_payment(cmd: RecordPayment, *, uow: UnitOfWork, clock: Clock) -> PaymentEntry:
    """Record money received (or refunded) outside the service; returns the new entry.
    ``booking_id`` may be the booking's human code."""
    with uow:
        if cmd.booking_id is not None:  # a code's booking never changes: read unheld
            cmd = attrs.evolve(cmd, booking_id=booking_id_of(uow, cmd.company_id, cmd.booking_id))
        named = None
        if cmd.customer_id is not None:
            # Another company's customer, or none: not found, before the booking is read.
            named = uow.customers.get(cmd.company_id, cmd.customer_id)
        customer_id: str | None = None
        other_customer_id: str | None = None
        if cmd.booking_id is None:
            ledger = BookingLedger(cmd.company_id, None)  # record_by_hand names the missing field
        else:
            # The ledger is held before the booking is read: a merge re-filing this
            # booking's customer holds it too, so the entry is filed under the customer
            # the booking has once that merge has ended, never under the merged record.
            ledger = _ledger(uow, cmd.company_id, cmd.booking_id)
            booking = uow.bookings.get(cmd.company_id, cmd.booking_id)
            customer_id = booking.customer_id
            if named is not None and not _is_customer_of(uow, named, booking):
                other_customer_id = named.id
        entry = record_by_hand(
            ledger,
            entry_id=new_id("pay"),
            kind=cmd.kind,
            amount_cents=cmd.amount_cents,
            method=cmd.method,
            note=cmd.note,
            reverses=cmd.reverses,
            customer_id=customer_id,
            other_customer_id=other_customer_id,
            at=clock.now(),
        )
        _append(uow, entry)
        uow.commit()
    return entry


def _is_customer_of(uow: UnitOfWork, customer: Customer, booking: Booking) -> bool:
    """True when ``customer`` stands for the booking's customer: its record, or one merged
    with it (a survivor, or a record merged into the same survivor)."""
    if customer.id == booking.customer_id:
        return True
    return same_customer(
        customer,
        uow.customers.get(booking.company_id, booking.customer_id),
        lambda other: uow.customers.get(booking.company_id, other),
    )


def reverse_payment(cmd: ReversePayment, *, uow: UnitOfWork, clock: Clock) -> PaymentEntry:
    """Write the ``REVERSAL`` of a hand entry; returns it. ``NotFoundError`` for an unknown id."""
    with uow:
        original = uow.payments.get(cmd.company_id, cmd.entry_id)
        if original.booking_id is None:
            # An entry outside any booking is its own ledger, with its reversal if it has one.
            uow.payments.lock_ledger(cmd.company_id, original.id)
            reversal = uow.payments.reversal_of(cmd.company_id, original.id)
            entries = [original] if reversal is None else [original, reversal]
            ledger = BookingLedger(cmd.company_id, None, entries)
        else:
            ledger = _ledger(uow, cmd.company_id, original.booking_id)
            # As read once the ledger is held: a merge that re-filed it meanwhile (a merge
            # holds the ledger too) has its new customer, which the reversal is filed under.
            original = next(e for e in ledger.entries if e.id == original.id)
        entry = reverse_entry(
            ledger, original, entry_id=new_id("pay"), note=cmd.note, at=clock.now()
        )
        _append(uow, entry)
        uow.commit()
    return entry


def apply_processor_event(event: ProcessorEvent, *, uow: UnitOfWork, clock: Clock) -> PaymentEntry:
    """Land one card-processor event in the ledger in a unit of work of its own; returns
    the entry written (see ``land_processor_event``)."""
    with uow:
        entry = land_processor_event(event, uow=uow, clock=clock)
        uow.commit()
    return entry


def land_processor_event(event: ProcessorEvent, *, uow: UnitOfWork, clock: Clock) -> PaymentEntry:
    """Land one card-processor event inside the caller's open unit of work (which commits
    it); returns the entry added, whose webhook event (``payment_event``) is recorded in
    the same unit. A disconnected account's refund fires ``payment.refunded`` as any other.

    Refunds and disputes find the card entry they concern on the booking by payment intent
    reference (``NotFoundError`` if the booking has none). Nothing here depends on the
    company's processor connection: a disconnected account's events land the same way.
    """
    # Held before the booking is read, as in ``record_payment`` (a merge holds it too).
    ledger = _ledger(uow, event.company_id, event.booking_id)
    booking = uow.bookings.get(event.company_id, event.booking_id)  # ours, or not found
    entry_id = new_id("pay")
    at = clock.now()
    match event:
        case CardMoneyReceived():
            if ledger.find_card_entry(event.payment_ref, tip=event.tip) is not None:
                # One payment intent is taken once: the same charge under another event
                # (charge.succeeded, then charge.captured) lands once.
                what = "tip" if event.tip else "payment"
                raise LedgerRuleViolation(
                    f"Card {what} {event.payment_ref} has landed on this booking already."
                )
            entry = card_payment(
                entry_id=entry_id,
                company_id=event.company_id,
                booking_id=event.booking_id,
                customer_id=event.customer_id or booking.customer_id,
                amount_cents=event.amount_cents,
                payment_ref=event.payment_ref,
                tip=event.tip,
                at=at,
            )
        case CardMoneyRefunded():
            entry = card_refund(
                _card_entry(ledger, event.payment_ref, tip=event.tip),
                entry_id=entry_id,
                amount_cents=event.amount_cents,
                from_dashboard=event.from_dashboard,
                at=at,
            )
        case CardDisputeOpened():
            if ledger.find_dispute(event.payment_ref, tip=event.tip) is not None:
                # A charge is disputed once: the same dispute under another event lands once.
                raise LedgerRuleViolation(
                    f"Card money {event.payment_ref} was disputed already on this booking."
                )
            entry = dispute_opened(
                _card_entry(ledger, event.payment_ref, tip=event.tip),
                entry_id=entry_id,
                amount_cents=event.amount_cents,
                at=at,
            )
        case CardDisputeWon():
            # A dispute put back in full already is named as such (``dispute_won``).
            dispute = ledger.find_open_dispute(
                event.payment_ref, tip=event.tip
            ) or ledger.find_dispute(event.payment_ref, tip=event.tip)
            if dispute is None:
                raise NotFoundError("dispute", event.payment_ref)
            entry = dispute_won(
                ledger, dispute, entry_id=entry_id, returned_cents=event.returned_cents, at=at
            )
    _append(uow, entry)
    return entry


def _append(uow: UnitOfWork, entry: PaymentEntry) -> None:
    """Add the entry to the ledger and record the event it fires, if any: a payment or
    tip ``payment.recorded``, a refund (hand, service or dashboard) or a refunded tip
    ``payment.refunded``, a dispute ``payment.disputed``, a reversal ``payment.reversed``."""
    uow.payments.add(entry)
    fired = payment_event(entry, at=entry.created_at)
    if fired is not None:
        uow.outbox.add(fired)


def _card_entry(ledger: BookingLedger, payment_ref: str, *, tip: bool) -> PaymentEntry:
    entry = ledger.find_card_entry(payment_ref, tip=tip)
    if entry is None:
        raise NotFoundError("card tip" if tip else "card payment", payment_ref)
    return entry
