"""Example tests of the payment ledger: one per rule of SPEC.md and DECISIONS.md."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from adapters.memory import MemoryUnitOfWork
from booking_core.bookings import Booking
from booking_core.card_money import (
    card_payment,
    card_refund,
    dispute_opened,
    dispute_won,
    replace_credit_entry,
)
from booking_core.clock import FixedClock
from booking_core.errors import (
    LedgerRuleViolation,
    NotFoundError,
    ReversalRefused,
    ValidationFailed,
)
from booking_core.ledger import (
    DASHBOARD_REFUND_NOTE,
    MAX_NOTE_CHARS,
    WALLET_CREDIT_NOTE,
    BookingLedger,
    Kind,
    Method,
    Origin,
    PaymentEntry,
    fires_payment_refunded,
    record_by_hand,
    reverse_entry,
)
from tests import factories
from tests.unit.bookings_support import booked, local, order

AT = datetime(2026, 10, 20, 15, 0, tzinfo=UTC)
COMPANY = "cmp_a"
BOOKING = "bkg_1"
CUSTOMER = "cus_1"

_counter = itertools.count(1)


def _id() -> str:
    return f"pay_{next(_counter)}"


def empty() -> BookingLedger:
    return BookingLedger(COMPANY, BOOKING)


def by_hand(
    ledger: BookingLedger, kind: Kind, amount: int, method: Method | None = Method.CASH, **kw: Any
) -> tuple[BookingLedger, PaymentEntry]:
    if kind is Kind.REFUND and method is Method.CASH:
        method = None
    entry = record_by_hand(
        ledger, entry_id=_id(), kind=kind, amount_cents=amount, method=method, at=AT, **kw
    )
    return ledger.with_entry(entry), entry


def by_card(
    ledger: BookingLedger, amount: int, *, tip: bool = False, ref: str = "pi_1"
) -> tuple[BookingLedger, PaymentEntry]:
    entry = card_payment(
        entry_id=_id(),
        company_id=COMPANY,
        booking_id=BOOKING,
        customer_id=CUSTOMER,
        amount_cents=amount,
        payment_ref=ref,
        tip=tip,
        at=AT,
    )
    return ledger.with_entry(entry), entry


def reverse(ledger: BookingLedger, original: PaymentEntry) -> tuple[BookingLedger, PaymentEntry]:
    entry = reverse_entry(ledger, original, entry_id=_id(), note="Entered twice.", at=AT)
    return ledger.with_entry(entry), entry


def entry(**changes: Any) -> PaymentEntry:
    """A valid hand payment of 100 cents, with ``changes`` applied."""
    fields: dict[str, Any] = {
        "id": "pay_x",
        "company_id": COMPANY,
        "booking_id": BOOKING,
        "kind": Kind.PAYMENT,
        "method": Method.CASH,
        "amount_cents": 100,
        "offline": True,
        "origin": Origin.HAND,
        "created_at": AT,
    }
    return PaymentEntry(**{**fields, **changes})


def credit_entry(amount: int = 4_000) -> PaymentEntry:
    return replace_credit_entry(
        entry_id="pay_old",
        company_id=COMPANY,
        booking_id=BOOKING,
        customer_id=CUSTOMER,
        kind=Kind.PAYMENT,
        amount_cents=amount,
        created_at=AT - timedelta(days=30),
    )


# -- Totals ----------------------------------------------------------------------------


def test_tip_and_tip_refund_are_outside_the_paid_total() -> None:
    ledger, _ = by_hand(empty(), Kind.PAYMENT, 10_000)
    ledger, _ = by_card(ledger, 2_000, tip=True)
    ledger, tip = by_card(ledger, 1_500, tip=True, ref="pi_2")
    ledger = ledger.with_entry(card_refund(tip, entry_id=_id(), amount_cents=500, at=AT))

    assert ledger.paid_cents == 10_000
    assert ledger.tips_cents == 3_000


def test_paid_total_sums_payments_refunds_disputes_and_reversals() -> None:
    ledger, _ = by_hand(empty(), Kind.PAYMENT, 10_000)
    ledger, charge = by_card(ledger, 5_000)
    ledger, _ = by_hand(ledger, Kind.REFUND, 1_000)
    ledger = ledger.with_entry(dispute_opened(charge, entry_id=_id(), amount_cents=2_000, at=AT))

    assert ledger.paid_cents == 10_000 + 5_000 - 1_000 - 2_000


def test_dispute_counts_against_paid_total_until_reversal_puts_it_back() -> None:
    ledger, charge = by_card(empty(), 8_000)
    dispute = dispute_opened(charge, entry_id=_id(), amount_cents=8_000, at=AT)
    ledger = ledger.with_entry(dispute)
    assert dispute.kind is Kind.DISPUTE
    assert dispute.amount_cents == -8_000
    assert ledger.paid_cents == 0

    back = dispute_won(ledger, dispute, entry_id=_id(), returned_cents=8_000, at=AT)
    ledger = ledger.with_entry(back)

    assert back.kind is Kind.REVERSAL
    assert back.amount_cents == 8_000
    assert back.reverses == dispute.id
    assert ledger.paid_cents == 8_000
    assert dispute.id in ledger.reversed_ids


def test_partial_return_of_a_dispute_names_no_entry() -> None:
    ledger, charge = by_card(empty(), 8_000)
    dispute = dispute_opened(charge, entry_id=_id(), amount_cents=8_000, at=AT)
    ledger = ledger.with_entry(dispute)

    back = dispute_won(ledger, dispute, entry_id=_id(), returned_cents=3_000, at=AT)
    ledger = ledger.with_entry(back)

    assert back.kind is Kind.REVERSAL
    assert back.reverses is None
    assert ledger.paid_cents == 3_000
    assert ledger.tips_cents == 0


def test_disputed_tip_is_written_as_tip_refund() -> None:
    ledger, _ = by_card(empty(), 8_000)
    ledger, tip = by_card(ledger, 1_200, tip=True)

    disputed = dispute_opened(tip, entry_id=_id(), amount_cents=1_200, at=AT)
    ledger = ledger.with_entry(disputed)

    assert disputed.kind is Kind.TIP_REFUND
    assert disputed.amount_cents == -1_200
    assert disputed.reverses == tip.id
    assert ledger.paid_cents == 8_000
    assert ledger.tips_cents == 0


def test_won_tip_dispute_comes_back_as_tip_naming_the_dispute_entry() -> None:
    ledger, tip = by_card(empty(), 1_200, tip=True)
    disputed = dispute_opened(tip, entry_id=_id(), amount_cents=1_200, at=AT)
    ledger = ledger.with_entry(disputed)

    back = dispute_won(ledger, disputed, entry_id=_id(), returned_cents=1_200, at=AT)
    ledger = ledger.with_entry(back)

    assert back.kind is Kind.TIP
    assert back.amount_cents == 1_200
    assert back.reverses == disputed.id
    assert ledger.tips_cents == 1_200
    assert ledger.paid_cents == 0


def test_partly_returned_tip_dispute_names_no_entry() -> None:
    ledger, tip = by_card(empty(), 1_200, tip=True)
    disputed = dispute_opened(tip, entry_id=_id(), amount_cents=1_200, at=AT)
    ledger = ledger.with_entry(disputed)

    back = dispute_won(ledger, disputed, entry_id=_id(), returned_cents=200, at=AT)

    assert back.kind is Kind.TIP
    assert back.reverses is None


def test_dispute_cannot_be_put_back_twice_nor_return_more_than_was_disputed() -> None:
    ledger, charge = by_card(empty(), 8_000)
    dispute = dispute_opened(charge, entry_id=_id(), amount_cents=5_000, at=AT)
    ledger = ledger.with_entry(dispute)

    with pytest.raises(LedgerRuleViolation):
        dispute_won(ledger, dispute, entry_id=_id(), returned_cents=5_001, at=AT)
    ledger = ledger.with_entry(
        dispute_won(ledger, dispute, entry_id=_id(), returned_cents=5_000, at=AT)
    )
    with pytest.raises(LedgerRuleViolation, match="already put back"):
        dispute_won(ledger, dispute, entry_id=_id(), returned_cents=5_000, at=AT)


def test_refundable_cents_is_the_paid_total_never_below_zero() -> None:
    ledger, charge = by_card(empty(), 3_000)
    ledger = ledger.with_entry(card_refund(charge, entry_id=_id(), amount_cents=3_000, at=AT))
    ledger = ledger.with_entry(dispute_opened(charge, entry_id=_id(), amount_cents=3_000, at=AT))

    assert ledger.paid_cents == -3_000
    assert ledger.refundable_cents == 0


# -- Card money from the processor -------------------------------------------------------


def test_card_money_is_online_card_money_from_the_processor() -> None:
    _, charge = by_card(empty(), 5_000)
    assert (charge.kind, charge.method, charge.offline, charge.origin) == (
        Kind.PAYMENT,
        Method.CARD,
        False,
        Origin.PROCESSOR,
    )


def test_card_refund_is_negative_and_carries_the_payment_intent_reference() -> None:
    _, charge = by_card(empty(), 5_000, ref="pi_abc")

    refund = card_refund(charge, entry_id=_id(), amount_cents=2_000, at=AT)

    assert refund.kind is Kind.REFUND
    assert refund.amount_cents == -2_000
    assert refund.external_ref == "pi_abc"
    assert refund.reverses == charge.id
    assert refund.note == ""


def test_refund_in_the_processor_dashboard_appears_as_refund_with_a_note() -> None:
    _, charge = by_card(empty(), 5_000)

    refund = card_refund(charge, entry_id=_id(), amount_cents=5_000, from_dashboard=True, at=AT)

    assert refund.kind is Kind.REFUND
    assert refund.note == DASHBOARD_REFUND_NOTE


def test_card_tip_refund_is_tip_refund_naming_the_tip() -> None:
    _, tip = by_card(empty(), 900, tip=True)

    refund = card_refund(tip, entry_id=_id(), amount_cents=900, from_dashboard=True, at=AT)

    assert refund.kind is Kind.TIP_REFUND
    assert refund.amount_cents == -900
    assert refund.reverses == tip.id
    assert refund.note == DASHBOARD_REFUND_NOTE


def test_only_card_money_is_refunded_or_disputed_through_the_processor() -> None:
    _, cash = by_hand(empty(), Kind.PAYMENT, 5_000)
    with pytest.raises(LedgerRuleViolation):
        card_refund(cash, entry_id=_id(), amount_cents=100, at=AT)
    with pytest.raises(LedgerRuleViolation):
        dispute_opened(cash, entry_id=_id(), amount_cents=100, at=AT)


def test_payment_refunded_fires_for_refunds_and_tip_refunds_but_not_disputes() -> None:
    ledger, charge = by_card(empty(), 5_000)
    ledger, tip = by_card(ledger, 500, tip=True)
    ledger, _ = by_hand(ledger, Kind.PAYMENT, 100)
    ledger, hand_refund = by_hand(ledger, Kind.REFUND, 100)

    assert fires_payment_refunded(card_refund(charge, entry_id=_id(), amount_cents=1, at=AT))
    assert fires_payment_refunded(card_refund(tip, entry_id=_id(), amount_cents=1, at=AT))
    assert fires_payment_refunded(hand_refund)
    assert not fires_payment_refunded(dispute_opened(charge, entry_id=_id(), amount_cents=1, at=AT))
    assert not fires_payment_refunded(dispute_opened(tip, entry_id=_id(), amount_cents=1, at=AT))
    assert not fires_payment_refunded(charge)


# -- Hand entries ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [Kind.PAYMENT, Kind.TIP])
@pytest.mark.parametrize("method", [Method.CASH, Method.CHECK, Method.BANK_TRANSFER, Method.OTHER])
def test_hand_payments_and_tips_are_offline_and_positive(kind: Kind, method: Method) -> None:
    _, entry = by_hand(empty(), kind, 2_500, method, note="Paid at the door.")

    assert entry.kind is kind
    assert entry.method is method
    assert entry.amount_cents == 2_500
    assert entry.offline is True
    assert entry.origin is Origin.HAND
    assert entry.booking_id == BOOKING
    assert entry.created_at == AT


@pytest.mark.parametrize("method", [Method.CARD, Method.OFFLINE, None])
def test_card_offline_and_missing_methods_are_refused_for_hand_payments(
    method: Method | None,
) -> None:
    with pytest.raises(ValidationFailed) as refused:
        by_hand(empty(), Kind.PAYMENT, 2_500, method)
    assert set(refused.value.field_errors) == {"method"}


def test_hand_refund_is_offline_and_negative() -> None:
    ledger, _ = by_hand(empty(), Kind.PAYMENT, 5_000)

    _, refund = by_hand(ledger, Kind.REFUND, 1_500)

    assert refund.kind is Kind.REFUND
    assert refund.amount_cents == -1_500
    assert refund.method is Method.OFFLINE
    assert refund.offline is True


def test_hand_refund_with_another_method_than_offline_is_refused() -> None:
    ledger, _ = by_hand(empty(), Kind.PAYMENT, 5_000)
    with pytest.raises(ValidationFailed) as refused:
        by_hand(ledger, Kind.REFUND, 1_500, Method.CHECK)
    assert set(refused.value.field_errors) == {"method"}


def test_hand_refund_may_name_the_payment_it_refunds() -> None:
    ledger, payment = by_hand(empty(), Kind.PAYMENT, 5_000, customer_id=CUSTOMER)

    ledger, refund = by_hand(ledger, Kind.REFUND, 2_000, reverses=payment.id)

    assert refund.reverses == payment.id
    assert refund.customer_id == CUSTOMER
    assert ledger.unrefunded_cents(payment.id) == 3_000
    assert payment.id not in ledger.reversed_ids


def test_hand_refund_beyond_paid_total_is_refused() -> None:
    ledger, _ = by_hand(empty(), Kind.PAYMENT, 5_000)
    ledger, _ = by_hand(ledger, Kind.TIP, 2_000)
    ledger, _ = by_hand(ledger, Kind.REFUND, 1_000)

    with pytest.raises(LedgerRuleViolation, match="exceeds the 4000 cents that may be refunded"):
        by_hand(ledger, Kind.REFUND, 4_001)
    by_hand(ledger, Kind.REFUND, 4_000)


def test_hand_refund_beyond_what_is_left_of_its_payment_is_refused() -> None:
    ledger, first = by_hand(empty(), Kind.PAYMENT, 3_000)
    ledger, _ = by_hand(ledger, Kind.PAYMENT, 9_000)
    ledger, _ = by_hand(ledger, Kind.REFUND, 2_000, reverses=first.id)

    with pytest.raises(LedgerRuleViolation, match="not yet refunded"):
        by_hand(ledger, Kind.REFUND, 1_001, reverses=first.id)


def test_hand_refund_of_card_money_is_refused() -> None:
    ledger, charge = by_card(empty(), 5_000)
    with pytest.raises(LedgerRuleViolation, match="refunded through the card processor"):
        by_hand(ledger, Kind.REFUND, 1_000, reverses=charge.id)


def test_hand_refund_naming_a_tip_or_a_reversed_payment_is_refused() -> None:
    ledger, tip = by_hand(empty(), Kind.TIP, 1_000)
    ledger, payment = by_hand(ledger, Kind.PAYMENT, 5_000)
    ledger, _ = by_hand(ledger, Kind.PAYMENT, 5_000)
    ledger, _ = reverse(ledger, payment)

    with pytest.raises(LedgerRuleViolation, match="not a payment"):
        by_hand(ledger, Kind.REFUND, 100, reverses=tip.id)
    with pytest.raises(LedgerRuleViolation, match="was reversed"):
        by_hand(ledger, Kind.REFUND, 100, reverses=payment.id)


def test_hand_refund_naming_an_unknown_entry_is_a_field_error() -> None:
    ledger, _ = by_hand(empty(), Kind.PAYMENT, 5_000)
    with pytest.raises(ValidationFailed) as refused:
        by_hand(ledger, Kind.REFUND, 100, reverses="pay_elsewhere")
    assert set(refused.value.field_errors) == {"reverses"}


def test_only_a_refund_names_an_entry() -> None:
    ledger, payment = by_hand(empty(), Kind.PAYMENT, 5_000)
    with pytest.raises(ValidationFailed) as refused:
        by_hand(ledger, Kind.PAYMENT, 100, reverses=payment.id)
    assert set(refused.value.field_errors) == {"reverses"}


@pytest.mark.parametrize("kind", [Kind.TIP_REFUND, Kind.DISPUTE, Kind.REVERSAL])
def test_only_payment_tip_and_refund_are_recorded_by_hand(kind: Kind) -> None:
    with pytest.raises(ValidationFailed) as refused:
        by_hand(empty(), kind, 100)
    assert set(refused.value.field_errors) == {"kind"}


@pytest.mark.parametrize("amount", [0, -100, True, 12.5, "100", 100_000_001])
def test_amount_must_be_a_positive_whole_number_of_cents(amount: Any) -> None:
    with pytest.raises(ValidationFailed) as refused:
        by_hand(empty(), Kind.PAYMENT, amount)
    assert set(refused.value.field_errors) == {"amount_cents"}


def test_note_over_2000_characters_is_refused() -> None:
    by_hand(empty(), Kind.PAYMENT, 100, note="x" * MAX_NOTE_CHARS)
    with pytest.raises(ValidationFailed) as refused:
        by_hand(empty(), Kind.PAYMENT, 100, note="x" * (MAX_NOTE_CHARS + 1))
    assert set(refused.value.field_errors) == {"note"}


def test_hand_money_belongs_to_a_booking() -> None:
    with pytest.raises(ValidationFailed) as refused:
        by_hand(BookingLedger(COMPANY, None), Kind.PAYMENT, 100)
    assert set(refused.value.field_errors) == {"booking_id"}


def test_every_field_problem_is_reported_at_once() -> None:
    with pytest.raises(ValidationFailed) as refused:
        by_hand(empty(), Kind.PAYMENT, -1, Method.CARD, note="x" * 2_001)
    assert set(refused.value.field_errors) == {"amount_cents", "method", "note"}


# -- Reversals ---------------------------------------------------------------------------


def test_reversal_negates_the_original_and_names_it() -> None:
    ledger, payment = by_hand(empty(), Kind.PAYMENT, 5_000, Method.CHECK, customer_id=CUSTOMER)

    ledger, reversal = reverse(ledger, payment)

    assert reversal.kind is Kind.REVERSAL
    assert reversal.amount_cents == -5_000
    assert reversal.reverses == payment.id
    assert reversal.method is Method.CHECK
    assert reversal.offline is True
    assert (reversal.booking_id, reversal.customer_id) == (BOOKING, CUSTOMER)
    assert reversal.note == "Entered twice."
    assert ledger.paid_cents == 0
    assert ledger.reversed_ids == {payment.id}


def test_reversing_a_hand_refund_puts_the_money_back_in_the_paid_total() -> None:
    ledger, _ = by_hand(empty(), Kind.PAYMENT, 5_000)
    ledger, refund = by_hand(ledger, Kind.REFUND, 2_000)

    ledger, reversal = reverse(ledger, refund)

    assert reversal.amount_cents == 2_000
    assert reversal.method is Method.OFFLINE
    assert ledger.paid_cents == 5_000


def test_reversing_a_hand_tip_never_changes_the_paid_total() -> None:
    ledger, _ = by_hand(empty(), Kind.PAYMENT, 5_000)
    ledger, tip = by_hand(ledger, Kind.TIP, 700)

    ledger, _ = reverse(ledger, tip)

    assert ledger.paid_cents == 5_000
    assert ledger.tips_cents == 0


def test_card_entry_cannot_be_reversed() -> None:
    ledger, charge = by_card(empty(), 5_000)
    with pytest.raises(ReversalRefused, match="card money is refunded, not reversed") as refused:
        reverse(ledger, charge)
    assert refused.value.entry_id == charge.id


def test_processor_refunds_and_disputes_cannot_be_reversed_either() -> None:
    ledger, charge = by_card(empty(), 5_000)
    refund = card_refund(charge, entry_id=_id(), amount_cents=100, at=AT)
    dispute = dispute_opened(charge, entry_id=_id(), amount_cents=100, at=AT)
    ledger = ledger.with_entry(refund).with_entry(dispute)

    for entry in (refund, dispute):
        with pytest.raises(ReversalRefused):
            reverse(ledger, entry)


def test_former_credit_entries_are_replaced_with_method_other_offline_and_a_note() -> None:
    entry = credit_entry()

    assert entry.method is Method.OTHER
    assert entry.offline is True
    assert entry.note == WALLET_CREDIT_NOTE
    assert entry.origin is Origin.WALLET_CREDIT
    assert "CREDIT" not in Method.__members__


def test_former_credit_entries_are_refused_on_reversal() -> None:
    entry = credit_entry()
    ledger = empty().with_entry(entry)
    with pytest.raises(ReversalRefused, match="wallet credit"):
        reverse(ledger, entry)


def test_former_credit_entries_count_in_the_paid_total_but_cannot_be_refunded_by_name() -> None:
    entry = credit_entry(4_000)
    ledger = empty().with_entry(entry)

    assert ledger.paid_cents == 4_000
    with pytest.raises(LedgerRuleViolation, match="wallet credit"):
        by_hand(ledger, Kind.REFUND, 100, reverses=entry.id)


def test_reversal_of_a_reversed_entry_is_refused() -> None:
    ledger, payment = by_hand(empty(), Kind.PAYMENT, 5_000)
    ledger, reversal = reverse(ledger, payment)

    with pytest.raises(ReversalRefused, match="itself a reversal"):
        reverse(ledger, reversal)


def test_entry_is_never_reversed_twice() -> None:
    ledger, payment = by_hand(empty(), Kind.PAYMENT, 5_000)
    ledger, _ = by_hand(ledger, Kind.PAYMENT, 5_000)
    ledger, _ = reverse(ledger, payment)

    with pytest.raises(ReversalRefused, match="never reversed twice"):
        reverse(ledger, payment)


def test_payment_with_open_refunds_is_reversed_only_after_them() -> None:
    ledger, payment = by_hand(empty(), Kind.PAYMENT, 5_000)
    ledger, refund = by_hand(ledger, Kind.REFUND, 1_000, reverses=payment.id)

    with pytest.raises(ReversalRefused, match="reverse them first"):
        reverse(ledger, payment)
    ledger, _ = reverse(ledger, refund)
    ledger, _ = reverse(ledger, payment)
    assert ledger.paid_cents == 0


def test_reversal_that_would_take_the_paid_total_below_zero_is_refused() -> None:
    ledger, first = by_hand(empty(), Kind.PAYMENT, 5_000)
    ledger, _ = by_hand(ledger, Kind.PAYMENT, 1_000)
    ledger, _ = by_hand(ledger, Kind.REFUND, 3_000)

    with pytest.raises(ReversalRefused, match="below zero"):
        reverse(ledger, first)


def test_reversal_needs_a_short_note() -> None:
    ledger, payment = by_hand(empty(), Kind.PAYMENT, 5_000)
    for note in ("", "   ", "x" * (MAX_NOTE_CHARS + 1)):
        with pytest.raises(ValidationFailed) as refused:
            reverse_entry(ledger, payment, entry_id=_id(), note=note, at=AT)
        assert set(refused.value.field_errors) == {"note"}


# -- Entries themselves ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "amount"),
    [
        (Kind.PAYMENT, -1),
        (Kind.TIP, 0),
        (Kind.REFUND, 1),
        (Kind.TIP_REFUND, 1),
        (Kind.DISPUTE, 1),
        (Kind.REVERSAL, 0),
    ],
)
def test_entry_amount_sign_follows_its_kind(kind: Kind, amount: int) -> None:
    with pytest.raises(ValueError, match=r"must be|zero"):
        PaymentEntry(
            id="pay_x",
            company_id=COMPANY,
            booking_id=BOOKING,
            kind=kind,
            method=Method.CASH,
            amount_cents=amount,
            offline=True,
            origin=Origin.HAND,
            created_at=AT,
        )


def test_entry_refuses_a_naive_instant_and_a_float_amount() -> None:
    entry()
    with pytest.raises(ValueError, match="UTC offset"):
        entry(created_at=AT.replace(tzinfo=None))
    with pytest.raises(TypeError):
        entry(amount_cents=100.0)


def test_ledger_holds_the_entries_of_one_booking_only() -> None:
    _, entry = by_hand(empty(), Kind.PAYMENT, 100)
    with pytest.raises(ValueError, match="another booking"):
        BookingLedger(COMPANY, "bkg_other", [entry])
    with pytest.raises(ValueError, match="another booking"):
        BookingLedger("cmp_other", BOOKING, [entry])


def test_enumerations_spell_their_values_in_upper_case() -> None:
    assert [k.value for k in Kind] == [
        "PAYMENT",
        "TIP",
        "REFUND",
        "TIP_REFUND",
        "DISPUTE",
        "REVERSAL",
    ]
    assert [m.value for m in Method] == [
        "CARD",
        "CASH",
        "CHECK",
        "BANK_TRANSFER",
        "OTHER",
        "OFFLINE",
    ]


# -- Use cases through the memory unit of work -------------------------------------------


@pytest.fixture
def uow() -> MemoryUnitOfWork:
    return MemoryUnitOfWork()


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(AT)


def seed(uow: MemoryUnitOfWork, company_id: str = COMPANY, minutes: int = 0) -> Booking:
    """A real customer of ``company_id`` and a booking of theirs, stored and committed
    through a unit of work of its own (``uow.commits`` is left alone)."""
    customer = factories.customer(company_id)
    made = booked(
        order(company_id=company_id, customer_id=customer.id),
        start=local(2026, 3, 3, 9) + timedelta(minutes=minutes),
    )
    with MemoryUnitOfWork(uow.store) as setup:
        setup.customers.add(customer)
        setup.bookings.add_all(made)
        setup.commit()
    return made[0]


@pytest.fixture
def booking(uow: MemoryUnitOfWork) -> Booking:
    return seed(uow)


def _record(
    uow: MemoryUnitOfWork, clock: FixedClock, booking: Booking, kind: Kind, amount: int, **kw: Any
) -> PaymentEntry:
    from booking_core.services.payments import RecordPayment, record_payment

    kw.setdefault("booking_id", booking.id)
    if kind is not Kind.REFUND:
        kw.setdefault("method", Method.CASH)
    cmd = RecordPayment(company_id=booking.company_id, kind=kind, amount_cents=amount, **kw)
    return record_payment(cmd, uow=uow, clock=clock)


def _reverse(
    uow: MemoryUnitOfWork, clock: FixedClock, entry_id: str, company_id: str = COMPANY
) -> PaymentEntry:
    from booking_core.services.payments import ReversePayment, reverse_payment

    cmd = ReversePayment(company_id=company_id, entry_id=entry_id, note="Wrong booking.")
    return reverse_payment(cmd, uow=uow, clock=clock)


def _stored(uow: MemoryUnitOfWork) -> list[PaymentEntry]:
    return list(uow.store.values("payments").values())


def test_record_payment_stores_a_hand_entry_stamped_by_the_clock(
    uow: MemoryUnitOfWork, clock: FixedClock, booking: Booking
) -> None:
    entry = _record(uow, clock, booking, Kind.PAYMENT, 5_000)

    assert entry.id.startswith("pay_")
    assert entry.created_at == AT
    assert (entry.booking_id, entry.customer_id) == (booking.id, booking.customer_id)
    assert _stored(uow) == [entry]
    assert uow.commits == 1


def _new_customers(uow: MemoryUnitOfWork, count: int) -> list[str]:
    """Ids of ``count`` new customers of ``COMPANY``, stored and committed."""
    made = [factories.customer(COMPANY) for _ in range(count)]
    with MemoryUnitOfWork(uow.store) as setup:
        for one in made:
            setup.customers.add(one)
        setup.commit()
    return [one.id for one in made]


def _merge(uow: MemoryUnitOfWork, clock: FixedClock, survivor_id: str, merged_id: str) -> None:
    from booking_core.services.customers import MergeCustomers, merge_customers

    merge_customers(
        MergeCustomers(company_id=COMPANY, survivor_id=survivor_id, merged_id=merged_id),
        uow=MemoryUnitOfWork(uow.store),
        clock=clock,
    )


def test_record_payment_refuses_another_customer_of_the_company_and_writes_nothing(
    uow: MemoryUnitOfWork, clock: FixedClock, booking: Booking
) -> None:
    """Filed under the payer, the entry was listed as theirs while the booking's customer's
    lifetime counted it, and its webhook and reversal carried the payer."""
    (payer,) = _new_customers(uow, 1)

    with pytest.raises(ValidationFailed) as refused:
        _record(uow, clock, booking, Kind.TIP, 700, customer_id=payer)
    with pytest.raises(ValidationFailed) as both:  # reported with the body's other problems
        _record(uow, clock, booking, Kind.TIP, 0, customer_id=payer)

    assert refused.value.field_errors == {
        "customer_id": f"Customer {payer!r} is not the customer of booking {booking.id!r}; "
        "hand money is filed under its booking's customer."
    }
    assert set(both.value.field_errors) == {"customer_id", "amount_cents"}
    assert _stored(uow) == []
    assert uow.commits == 0


def test_record_payment_takes_the_bookings_customer_or_a_record_merged_with_it(
    uow: MemoryUnitOfWork, clock: FixedClock, booking: Booking
) -> None:
    """A merge files the booking under the survivor; the merged record, the survivor, or
    another record merged into that survivor names the same person, and the entry is
    filed under the booking's customer (now the survivor) whichever the request names."""
    survivor, twin = _new_customers(uow, 2)
    _merge(uow, clock, survivor, booking.customer_id)
    _merge(uow, clock, survivor, twin)

    entries = [
        _record(uow, clock, booking, Kind.PAYMENT, 1_000, customer_id=named)
        for named in (booking.customer_id, survivor, twin)
    ]

    assert [e.customer_id for e in entries] == [survivor] * 3
    assert _stored(uow) == entries


def test_record_payment_without_a_booking_is_a_field_error(
    uow: MemoryUnitOfWork, clock: FixedClock, booking: Booking
) -> None:
    with pytest.raises(ValidationFailed) as refused:
        _record(uow, clock, booking, Kind.PAYMENT, 5_000, booking_id=None)
    assert set(refused.value.field_errors) == {"booking_id"}
    assert _stored(uow) == []


def test_record_payment_on_another_companys_booking_is_not_found_like_no_booking(
    uow: MemoryUnitOfWork, clock: FixedClock, booking: Booking
) -> None:
    theirs = seed(uow, "cmp_b")

    with pytest.raises(NotFoundError) as other:
        _record(uow, clock, booking, Kind.PAYMENT, 5_000, booking_id=theirs.id)
    with pytest.raises(NotFoundError) as unknown:
        _record(uow, clock, booking, Kind.PAYMENT, 5_000, booking_id="bkg_nothing")

    assert other.value.kind == unknown.value.kind == "booking"
    assert other.value.message.replace(theirs.id, "?") == unknown.value.message.replace(
        "bkg_nothing", "?"
    )
    assert _stored(uow) == []
    assert uow.commits == 0


def test_record_payment_for_another_companys_customer_is_not_found(
    uow: MemoryUnitOfWork, clock: FixedClock, booking: Booking
) -> None:
    theirs = seed(uow, "cmp_b")

    for customer_id in (theirs.customer_id, "cus_nothing"):
        with pytest.raises(NotFoundError) as refused:
            _record(uow, clock, booking, Kind.PAYMENT, 5_000, customer_id=customer_id)
        assert (refused.value.kind, refused.value.id) == ("customer", customer_id)
    assert _stored(uow) == []
    assert uow.commits == 0


def test_refused_hand_refund_writes_nothing(
    uow: MemoryUnitOfWork, clock: FixedClock, booking: Booking
) -> None:
    _record(uow, clock, booking, Kind.PAYMENT, 5_000)

    with pytest.raises(LedgerRuleViolation):
        _record(uow, clock, booking, Kind.REFUND, 5_001)

    assert len(_stored(uow)) == 1
    assert uow.commits == 1


def test_hand_refund_is_judged_on_its_own_bookings_ledger(
    uow: MemoryUnitOfWork, clock: FixedClock, booking: Booking
) -> None:
    other = seed(uow, minutes=180)  # the same company, a later job
    _record(uow, clock, other, Kind.PAYMENT, 9_000)
    _record(uow, clock, booking, Kind.PAYMENT, 1_000)

    with pytest.raises(LedgerRuleViolation):
        _record(uow, clock, booking, Kind.REFUND, 1_001)
    refund = _record(uow, clock, booking, Kind.REFUND, 1_000)

    assert refund.booking_id == booking.id
    assert uow.commits == 3


def test_reverse_payment_writes_a_reversal_of_the_stored_entry(
    uow: MemoryUnitOfWork, clock: FixedClock, booking: Booking
) -> None:
    payment = _record(uow, clock, booking, Kind.PAYMENT, 5_000)
    clock.advance(timedelta(hours=1))

    reversal = _reverse(uow, clock, payment.id)

    assert reversal.reverses == payment.id
    assert reversal.created_at == AT + timedelta(hours=1)
    assert (reversal.booking_id, reversal.customer_id) == (booking.id, booking.customer_id)
    assert uow.payments.reversal_of(COMPANY, payment.id) == reversal
    assert _stored(uow) == [payment, reversal]


def test_refused_reversal_writes_nothing(
    uow: MemoryUnitOfWork, clock: FixedClock, booking: Booking
) -> None:
    payment = _record(uow, clock, booking, Kind.PAYMENT, 5_000)
    _reverse(uow, clock, payment.id)
    before = _stored(uow)

    with pytest.raises(ReversalRefused):
        _reverse(uow, clock, payment.id)

    assert _stored(uow) == before
    assert uow.commits == 2


def test_reversal_of_another_companys_entry_is_not_found(
    uow: MemoryUnitOfWork, clock: FixedClock, booking: Booking
) -> None:
    payment = _record(uow, clock, booking, Kind.PAYMENT, 5_000)

    with pytest.raises(NotFoundError) as other:
        _reverse(uow, clock, payment.id, company_id="cmp_b")
    with pytest.raises(NotFoundError) as unknown:
        _reverse(uow, clock, "pay_nothing", company_id="cmp_b")

    assert other.value.message.replace(payment.id, "?") == unknown.value.message.replace(
        "pay_nothing", "?"
    )
    assert len(_stored(uow)) == 1


def test_card_processor_events_land_in_the_ledger(
    uow: MemoryUnitOfWork, clock: FixedClock, booking: Booking
) -> None:
    from booking_core.services.payments import (
        CardDisputeOpened,
        CardDisputeWon,
        CardMoneyReceived,
        CardMoneyRefunded,
        apply_processor_event,
    )

    def apply(event: Any) -> PaymentEntry:
        return apply_processor_event(event, uow=uow, clock=clock)

    common = {"company_id": COMPANY, "booking_id": booking.id, "payment_ref": "pi_9"}
    customer_id = booking.customer_id
    charge = apply(CardMoneyReceived(customer_id=customer_id, amount_cents=10_000, **common))
    tip = apply(CardMoneyReceived(customer_id=customer_id, amount_cents=1_500, tip=True, **common))
    refund = apply(CardMoneyRefunded(amount_cents=2_000, from_dashboard=True, **common))
    tip_dispute = apply(CardDisputeOpened(amount_cents=1_500, tip=True, **common))
    dispute = apply(CardDisputeOpened(amount_cents=8_000, **common))
    won = apply(CardDisputeWon(returned_cents=8_000, **common))
    tip_won = apply(CardDisputeWon(returned_cents=1_500, tip=True, **common))

    assert (refund.kind, refund.reverses, refund.note) == (
        Kind.REFUND,
        charge.id,
        DASHBOARD_REFUND_NOTE,
    )
    assert (tip_dispute.kind, tip_dispute.reverses) == (Kind.TIP_REFUND, tip.id)
    assert (won.kind, won.reverses) == (Kind.REVERSAL, dispute.id)
    assert (tip_won.kind, tip_won.reverses) == (Kind.TIP, tip_dispute.id)
    ledger = BookingLedger(COMPANY, booking.id, uow.payments.for_booking(COMPANY, booking.id))
    assert ledger.paid_cents == 8_000
    assert ledger.tips_cents == 1_500
    assert uow.commits == 7

    with pytest.raises(LedgerRuleViolation, match=r"already put back in full \(8000 cents"):
        apply(CardDisputeWon(returned_cents=1, **common))  # named, not "no such dispute"
    with pytest.raises(NotFoundError):
        apply(CardDisputeWon(returned_cents=8_000, **{**common, "payment_ref": "pi_unknown"}))
    with pytest.raises(NotFoundError):
        apply(CardMoneyRefunded(amount_cents=1, **{**common, "payment_ref": "pi_unknown"}))
    assert uow.commits == 7


def test_card_money_for_a_booking_the_company_lacks_is_not_found_and_lands_nowhere(
    uow: MemoryUnitOfWork, clock: FixedClock, booking: Booking
) -> None:
    from booking_core.services.payments import CardMoneyReceived, apply_processor_event

    theirs = seed(uow, company_id="cmp_other")
    for booking_id in (theirs.id, "bkg_never"):
        event = CardMoneyReceived(
            company_id=COMPANY,
            booking_id=booking_id,
            customer_id=None,
            payment_ref="pi_1",
            amount_cents=5_000,
        )
        with pytest.raises(NotFoundError):
            apply_processor_event(event, uow=uow, clock=clock)
    assert _stored(uow) == []
    # The booking's own customer is named when the processor does not say whose money it is.
    event = CardMoneyReceived(
        company_id=COMPANY,
        booking_id=booking.id,
        customer_id=None,
        payment_ref="pi_2",
        amount_cents=5_000,
    )
    assert apply_processor_event(event, uow=uow, clock=clock).customer_id == booking.customer_id
