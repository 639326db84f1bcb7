"""Card money reported by the card processor, and the replacements of withdrawn
``CREDIT`` entries: builders of ``PaymentEntry`` values with origin ``PROCESSOR`` or
``WALLET_CREDIT``.

These record money that already moved, so balance rules never refuse them, and nothing
here depends on the processor connection: events for a disconnected account still land.
"""

from __future__ import annotations

from datetime import datetime

from booking_core.errors import LedgerRuleViolation, ValidationFailed
from booking_core.ledger import (
    DASHBOARD_REFUND_NOTE,
    DISPUTE_NOTE,
    DISPUTE_WON_NOTE,
    DISPUTED_TIP_NOTE,
    MAX_AMOUNT_CENTS,
    POSITIVE_KINDS,
    WALLET_CREDIT_NOTE,
    BookingLedger,
    Kind,
    Method,
    Origin,
    PaymentEntry,
    amount_error,
    is_dispute,
)

# -- Card money from the processor ------------------------------------------------------


def _processor_amount(amount_cents: int, field_name: str = "amount_cents") -> None:
    # Capped like hand entries: a real card amount is far below it, and sums of entries
    # (a booking's paid total, a customer's lifetime) stay well inside 64 bits.
    if error := amount_error(amount_cents, MAX_AMOUNT_CENTS):
        raise ValidationFailed({field_name: error})


def card_payment(
    *,
    entry_id: str,
    company_id: str,
    booking_id: str | None,
    customer_id: str | None,
    amount_cents: int,
    payment_ref: str,
    tip: bool = False,
    at: datetime,
) -> PaymentEntry:
    """A card charge (``PAYMENT``) or card tip (``TIP``) the processor reports as received."""
    _processor_amount(amount_cents)
    return PaymentEntry(
        id=entry_id,
        company_id=company_id,
        booking_id=booking_id,
        customer_id=customer_id,
        kind=Kind.TIP if tip else Kind.PAYMENT,
        method=Method.CARD,
        amount_cents=amount_cents,
        offline=False,
        external_ref=payment_ref,
        origin=Origin.PROCESSOR,
        created_at=at,
    )


def _card_money(entry: PaymentEntry, what: str) -> None:
    if entry.origin is not Origin.PROCESSOR or entry.kind not in POSITIVE_KINDS:
        raise LedgerRuleViolation(f"Entry {entry.id} is not a card charge or card tip; {what}.")


def card_refund(
    refunded: PaymentEntry,
    *,
    entry_id: str,
    amount_cents: int,
    from_dashboard: bool = False,
    at: datetime,
) -> PaymentEntry:
    """The processor refunded card money: ``REFUND`` of a charge, ``TIP_REFUND`` of a tip.

    Stored negative, naming the refunded entry and its payment intent reference; a refund
    made in the processor's own dashboard carries ``DASHBOARD_REFUND_NOTE``.
    """
    _card_money(refunded, "only card money is refunded through the processor")
    _processor_amount(amount_cents)
    return PaymentEntry(
        id=entry_id,
        company_id=refunded.company_id,
        booking_id=refunded.booking_id,
        customer_id=refunded.customer_id,
        kind=Kind.TIP_REFUND if refunded.kind is Kind.TIP else Kind.REFUND,
        method=Method.CARD,
        amount_cents=-amount_cents,
        offline=False,
        note=DASHBOARD_REFUND_NOTE if from_dashboard else "",
        reverses=refunded.id,
        external_ref=refunded.external_ref,
        origin=Origin.PROCESSOR,
        created_at=at,
    )


def dispute_opened(
    disputed: PaymentEntry, *, entry_id: str, amount_cents: int, at: datetime
) -> PaymentEntry:
    """A cardholder disputed card money: a negative ``DISPUTE`` of job money, or for a tip a
    ``TIP_REFUND`` (not a ``DISPUTE``) naming the tip, so tips stay outside the paid total."""
    _card_money(disputed, "only card money can be disputed")
    _processor_amount(amount_cents)
    tip = disputed.kind is Kind.TIP
    return PaymentEntry(
        id=entry_id,
        company_id=disputed.company_id,
        booking_id=disputed.booking_id,
        customer_id=disputed.customer_id,
        kind=Kind.TIP_REFUND if tip else Kind.DISPUTE,
        method=Method.CARD,
        amount_cents=-amount_cents,
        offline=False,
        note=DISPUTED_TIP_NOTE if tip else DISPUTE_NOTE,
        reverses=disputed.id,
        dispute=True,
        external_ref=disputed.external_ref,
        origin=Origin.PROCESSOR,
        created_at=at,
    )


def dispute_won(
    ledger: BookingLedger,
    dispute: PaymentEntry,
    *,
    entry_id: str,
    returned_cents: int,
    at: datetime,
) -> PaymentEntry:
    """A dispute closed in the company's favour puts the money back: a ``REVERSAL`` for job
    money, a ``TIP`` for a tip. ``reverses`` names the dispute entry once the whole
    disputed amount has come back (in this return, or with the partial returns before
    it), and is ``None`` on a partial return. Returns on one dispute never add up to more
    than was disputed."""
    if dispute.id not in ledger or not is_dispute(dispute):
        raise LedgerRuleViolation(f"Entry {dispute.id} is not a dispute on this booking.")
    if dispute.id in ledger.reversed_ids:
        raise LedgerRuleViolation(
            f"Dispute {dispute.id} was already put back in full "
            f"({-dispute.amount_cents} cents came back)."
        )
    _processor_amount(returned_cents, "returned_cents")
    disputed_cents = -dispute.amount_cents
    left = disputed_cents - ledger.returned_on(dispute)
    if returned_cents > left:
        already = f" ({disputed_cents - left} came back before)" if left < disputed_cents else ""
        raise LedgerRuleViolation(
            f"{returned_cents} cents cannot come back on dispute {dispute.id} of "
            f"{disputed_cents} cents{already}."
        )
    return PaymentEntry(
        id=entry_id,
        company_id=dispute.company_id,
        booking_id=dispute.booking_id,
        customer_id=dispute.customer_id,
        kind=Kind.TIP if dispute.kind is Kind.TIP_REFUND else Kind.REVERSAL,
        method=Method.CARD,
        amount_cents=returned_cents,
        offline=False,
        note=DISPUTE_WON_NOTE,
        reverses=dispute.id if returned_cents == left else None,
        external_ref=dispute.external_ref,
        origin=Origin.PROCESSOR,
        created_at=at,
    )


# -- The withdrawn method CREDIT ---------------------------------------------------------


def replace_credit_entry(
    *,
    entry_id: str,
    company_id: str,
    booking_id: str | None,
    customer_id: str | None,
    kind: Kind,
    amount_cents: int,
    created_at: datetime,
) -> PaymentEntry:
    """The replacement of a former entry with method ``CREDIT``: same id, kind, amount and
    time, method ``OTHER``, offline, noted as settled by wallet credit; never reversible."""
    return PaymentEntry(
        id=entry_id,
        company_id=company_id,
        booking_id=booking_id,
        customer_id=customer_id,
        kind=kind,
        method=Method.OTHER,
        amount_cents=amount_cents,
        offline=True,
        note=WALLET_CREDIT_NOTE,
        origin=Origin.WALLET_CREDIT,
        created_at=created_at,
    )
