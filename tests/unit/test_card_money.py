"""Card money from the processor at its edges: every field of each entry it writes, and
the exact texts of what it refuses (issue 14, mutation testing)."""

from __future__ import annotations

import re

import pytest

from booking_core.card_money import (
    card_payment,
    card_refund,
    dispute_opened,
    dispute_won,
)
from booking_core.errors import LedgerRuleViolation, ValidationFailed
from booking_core.ledger import (
    DISPUTE_NOTE,
    DISPUTE_WON_NOTE,
    DISPUTED_TIP_NOTE,
    Kind,
    Method,
    Origin,
    PaymentEntry,
)
from tests.unit.test_ledger import AT, BOOKING, COMPANY, CUSTOMER, _id, by_card, by_hand, empty


def exactly(text: str) -> str:
    """A ``match`` pattern for exactly ``text``."""
    return f"^{re.escape(text)}$"


def card_fields(entry: PaymentEntry) -> tuple[object, ...]:
    return (entry.method, entry.offline, entry.origin, entry.company_id, entry.booking_id)


CARD = (Method.CARD, False, Origin.PROCESSOR, COMPANY, BOOKING)


def test_card_money_is_a_charge_unless_it_is_said_to_be_a_tip() -> None:
    charge = card_payment(
        entry_id="pay_c",
        company_id=COMPANY,
        booking_id=BOOKING,
        customer_id=CUSTOMER,
        amount_cents=5_000,
        payment_ref="pi_7",
        at=AT,
    )

    assert charge.kind is Kind.PAYMENT
    assert card_fields(charge) == CARD
    assert (charge.id, charge.amount_cents, charge.external_ref) == ("pay_c", 5_000, "pi_7")
    assert (charge.customer_id, charge.created_at, charge.note) == (CUSTOMER, AT, "")
    assert (charge.reverses, charge.dispute) == (None, False)


def test_card_money_of_no_cents_is_a_field_error() -> None:
    with pytest.raises(ValidationFailed) as refused:
        by_card(empty(), 0)
    assert refused.value.field_errors == {"amount_cents": "Give a positive whole number of cents."}


def test_card_money_over_the_ceiling_of_one_entry_is_a_field_error() -> None:
    """Capped like hand entries, so sums of entries stay far inside 64 bits."""
    _, biggest = by_card(empty(), 100_000_000)
    assert biggest.amount_cents == 100_000_000
    with pytest.raises(ValidationFailed) as refused:
        by_card(empty(), 100_000_001)
    assert refused.value.field_errors == {"amount_cents": "At most 100000000 cents."}


def test_a_card_refund_is_online_card_money_of_the_refunded_charge() -> None:
    _, charge = by_card(empty(), 5_000, ref="pi_r")

    refund = card_refund(charge, entry_id="pay_r", amount_cents=1_000, at=AT)

    assert card_fields(refund) == CARD
    assert (refund.id, refund.customer_id, refund.created_at) == ("pay_r", CUSTOMER, AT)
    assert (refund.external_ref, refund.dispute) == ("pi_r", False)


@pytest.mark.parametrize("tip", [False, True])
def test_a_dispute_is_online_card_money_with_its_note(tip: bool) -> None:
    _, disputed = by_card(empty(), 5_000, tip=tip, ref="pi_d")

    dispute = dispute_opened(disputed, entry_id="pay_d", amount_cents=4_000, at=AT)

    assert card_fields(dispute) == CARD
    assert dispute.note == (DISPUTED_TIP_NOTE if tip else DISPUTE_NOTE)
    assert dispute.note == (
        "Tip disputed at the card processor." if tip else "Disputed at the card processor."
    )
    assert (dispute.id, dispute.amount_cents, dispute.dispute) == ("pay_d", -4_000, True)
    assert (dispute.reverses, dispute.external_ref) == (disputed.id, "pi_d")
    assert (dispute.customer_id, dispute.created_at) == (CUSTOMER, AT)


@pytest.mark.parametrize("tip", [False, True])
def test_a_won_dispute_is_online_card_money_with_its_note(tip: bool) -> None:
    ledger, disputed = by_card(empty(), 5_000, tip=tip, ref="pi_w")
    dispute = dispute_opened(disputed, entry_id=_id(), amount_cents=4_000, at=AT)
    ledger = ledger.with_entry(dispute)

    back = dispute_won(ledger, dispute, entry_id="pay_w", returned_cents=4_000, at=AT)

    assert card_fields(back) == CARD
    assert back.note == DISPUTE_WON_NOTE
    assert back.note == "Dispute closed in the company's favour; the bank returned the money."
    assert (back.id, back.kind, back.amount_cents) == (
        "pay_w",
        Kind.TIP if tip else Kind.REVERSAL,
        4_000,
    )
    assert (back.reverses, back.external_ref, back.dispute) == (dispute.id, "pi_w", False)
    assert (back.customer_id, back.created_at) == (CUSTOMER, AT)


def test_a_tip_puts_back_a_disputed_tip_which_is_then_closed() -> None:
    ledger, tip = by_card(empty(), 1_200, tip=True, ref="pi_t")
    disputed = dispute_opened(tip, entry_id=_id(), amount_cents=1_200, at=AT)
    ledger = ledger.with_entry(disputed)
    assert ledger.find_open_dispute("pi_t", tip=True) == disputed

    back = dispute_won(ledger, disputed, entry_id=_id(), returned_cents=1_200, at=AT)
    ledger = ledger.with_entry(back)

    assert back.kind is Kind.TIP
    assert ledger.reversed_ids == {disputed.id}
    assert ledger.reversal_of(disputed.id) == back
    assert ledger.find_open_dispute("pi_t", tip=True) is None
    assert ledger.tips_cents == 1_200
    with pytest.raises(
        LedgerRuleViolation,
        match=exactly(
            f"Dispute {disputed.id} was already put back in full (1200 cents came back)."
        ),
    ):
        dispute_won(ledger, disputed, entry_id=_id(), returned_cents=1_200, at=AT)


def test_only_card_money_is_refunded_or_disputed_through_the_processor_says_why() -> None:
    ledger, cash = by_hand(empty(), Kind.PAYMENT, 5_000)
    _, charge = by_card(ledger, 5_000)
    refund = card_refund(charge, entry_id=_id(), amount_cents=100, at=AT)

    for entry in (cash, refund):
        with pytest.raises(
            LedgerRuleViolation,
            match=exactly(
                f"Entry {entry.id} is not a card charge or card tip; "
                "only card money is refunded through the processor."
            ),
        ):
            card_refund(entry, entry_id=_id(), amount_cents=100, at=AT)
        with pytest.raises(
            LedgerRuleViolation,
            match=exactly(
                f"Entry {entry.id} is not a card charge or card tip; "
                "only card money can be disputed."
            ),
        ):
            dispute_opened(entry, entry_id=_id(), amount_cents=100, at=AT)


def test_only_a_dispute_on_the_ledger_can_be_won() -> None:
    ledger, charge = by_card(empty(), 5_000)
    elsewhere = dispute_opened(charge, entry_id="pay_elsewhere", amount_cents=100, at=AT)

    for entry in (elsewhere, charge):
        with pytest.raises(
            LedgerRuleViolation,
            match=exactly(f"Entry {entry.id} is not a dispute on this booking."),
        ):
            dispute_won(ledger, entry, entry_id=_id(), returned_cents=100, at=AT)


def test_a_won_dispute_returns_a_positive_amount_no_more_than_was_disputed() -> None:
    ledger, charge = by_card(empty(), 8_000)
    dispute = dispute_opened(charge, entry_id=_id(), amount_cents=5_000, at=AT)
    ledger = ledger.with_entry(dispute)

    with pytest.raises(ValidationFailed) as refused:
        dispute_won(ledger, dispute, entry_id=_id(), returned_cents=0, at=AT)
    assert refused.value.field_errors == {
        "returned_cents": "Give a positive whole number of cents."
    }
    with pytest.raises(
        LedgerRuleViolation,
        match=exactly(f"5001 cents cannot come back on dispute {dispute.id} of 5000 cents."),
    ):
        dispute_won(ledger, dispute, entry_id=_id(), returned_cents=5_001, at=AT)
    back = dispute_won(ledger, dispute, entry_id=_id(), returned_cents=4_999, at=AT)
    assert (back.amount_cents, back.reverses) == (4_999, None)


@pytest.mark.parametrize("tip", [False, True])
def test_returns_on_one_dispute_never_add_up_to_more_than_was_disputed(tip: bool) -> None:
    """A dispute closed in parts: each part names no entry until the last, which brings
    back what was still out and names the dispute; a part past what is left is refused,
    so the booking's totals never gain more than the bank took."""
    ledger, charge = by_card(empty(), 6_000)
    if tip:
        ledger, charge = by_card(ledger, 6_000, tip=True)
    dispute = dispute_opened(charge, entry_id=_id(), amount_cents=3_000, at=AT)
    ledger = ledger.with_entry(dispute)
    first = dispute_won(ledger, dispute, entry_id=_id(), returned_cents=2_000, at=AT)
    assert first.reverses is None
    ledger = ledger.with_entry(first)
    assert ledger.returned_on(dispute) == 2_000
    with pytest.raises(
        LedgerRuleViolation,
        match=exactly(
            f"2000 cents cannot come back on dispute {dispute.id} of 3000 cents "
            "(2000 came back before)."
        ),
    ):
        dispute_won(ledger, dispute, entry_id=_id(), returned_cents=2_000, at=AT)
    last = dispute_won(ledger, dispute, entry_id=_id(), returned_cents=1_000, at=AT)
    assert last.reverses == dispute.id
    ledger = ledger.with_entry(last)
    assert (ledger.paid_cents, ledger.tips_cents) == ((6_000, 6_000) if tip else (6_000, 0))
    assert ledger.find_open_dispute(charge.external_ref or "", tip=tip) is None
    # A later dispute on the same money counts its own returns from nothing.
    again = dispute_opened(charge, entry_id=_id(), amount_cents=500, at=AT)
    ledger = ledger.with_entry(again)
    assert ledger.returned_on(again) == 0
    assert dispute_won(ledger, again, entry_id=_id(), returned_cents=500, at=AT).reverses == (
        again.id
    )
