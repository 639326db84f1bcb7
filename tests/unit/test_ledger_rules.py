"""The ledger's rules at their edges: boundaries, every method/origin combination, and the
exact texts a person reads when an entry is refused (issue 14, mutation testing)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import pytest

from booking_core.card_money import card_refund, dispute_opened
from booking_core.errors import LedgerRuleViolation, ReversalRefused, ValidationFailed
from booking_core.ledger import (
    MAX_HAND_AMOUNT_CENTS,
    MAX_NOTE_CHARS,
    BookingLedger,
    Kind,
    Method,
    Origin,
    PaymentEntry,
    record_by_hand,
    reverse_entry,
)
from tests.unit.test_ledger import (
    AT,
    BOOKING,
    COMPANY,
    CUSTOMER,
    _id,
    by_card,
    by_hand,
    credit_entry,
    empty,
    entry,
    reverse,
)


def exactly(text: str) -> str:
    """A ``match`` pattern for exactly ``text``."""
    return f"^{re.escape(text)}$"


def refusal(**changes: Any) -> str:
    """The text of the ``ValueError`` an entry with ``changes`` raises."""
    try:
        entry(**changes)
    except ValueError as refused:
        return str(refused)
    pytest.fail(f"an entry with {changes} was accepted")


def field_errors(ledger: BookingLedger, kind: Kind, amount: Any, **kw: Any) -> dict[str, str]:
    with pytest.raises(ValidationFailed) as refused:
        record_by_hand(ledger, entry_id=_id(), kind=kind, amount_cents=amount, at=AT, **kw)
    return refused.value.field_errors


# -- Entries: invariants and their texts -------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "amount", "text"),
    [
        (Kind.PAYMENT, 0, "a PAYMENT entry must be positive, got 0"),
        (Kind.TIP, -5, "a TIP entry must be positive, got -5"),
        (Kind.REFUND, 0, "a REFUND entry must be negative, got 0"),
        (Kind.TIP_REFUND, 0, "a TIP_REFUND entry must be negative, got 0"),
        (Kind.DISPUTE, 7, "a DISPUTE entry must be negative, got 7"),
        (Kind.REVERSAL, 0, "an entry never carries zero cents"),
    ],
)
def test_an_entry_with_the_wrong_sign_or_zero_cents_says_which(
    kind: Kind, amount: int, text: str
) -> None:
    dispute = kind is Kind.DISPUTE
    origin = Origin.PROCESSOR if dispute else Origin.HAND
    method = Method.CARD if dispute else Method.CASH
    assert (
        refusal(
            kind=kind,
            amount_cents=amount,
            dispute=dispute,
            origin=origin,
            method=method,
            offline=not dispute,
        )
        == text
    )


def test_a_one_cent_entry_of_every_sign_is_accepted() -> None:
    assert entry(kind=Kind.PAYMENT, amount_cents=1).amount_cents == 1
    assert entry(kind=Kind.REFUND, method=Method.OFFLINE, amount_cents=-1).amount_cents == -1
    assert entry(kind=Kind.REVERSAL, amount_cents=-1).amount_cents == -1
    assert entry(kind=Kind.REVERSAL, amount_cents=1).amount_cents == 1


def test_an_entry_never_reverses_itself() -> None:
    assert refusal(kind=Kind.REVERSAL, reverses="pay_x") == "an entry cannot reverse itself"


def test_only_dispute_entries_and_disputed_tips_are_disputes() -> None:
    card = {"origin": Origin.PROCESSOR, "method": Method.CARD, "offline": False}
    text = "only DISPUTE entries and disputed tips are disputes"
    assert refusal(kind=Kind.DISPUTE, amount_cents=-100, dispute=False, **card) == text
    assert refusal(kind=Kind.PAYMENT, dispute=True, **card) == text
    tip = entry(kind=Kind.TIP_REFUND, amount_cents=-100, dispute=True, **card)
    assert tip.dispute is True
    assert entry(kind=Kind.TIP_REFUND, amount_cents=-100, dispute=False, **card).dispute is False


def test_a_dispute_recorded_by_hand_is_refused() -> None:
    assert (
        refusal(kind=Kind.DISPUTE, amount_cents=-100, dispute=True)
        == "disputes come from the card processor"
    )


def _allowed(origin: Origin, method: Method, offline: bool) -> bool:
    """The method rule of each origin, written out on its own."""
    if origin is Origin.PROCESSOR:
        return method is Method.CARD and not offline
    if origin is Origin.HAND:
        return method is not Method.CARD and offline
    return method is Method.OTHER and offline


_ORIGIN_TEXTS = {
    Origin.PROCESSOR: "processor entries are card money, not offline",
    Origin.HAND: "hand entries are offline and never card money",
    Origin.WALLET_CREDIT: "wallet-credit replacements have method OTHER and are offline",
}


@pytest.mark.parametrize("offline", [True, False])
@pytest.mark.parametrize("method", list(Method))
@pytest.mark.parametrize("origin", list(Origin))
def test_each_origin_allows_only_its_methods_and_offline_flag(
    origin: Origin, method: Method, offline: bool
) -> None:
    """Processor entries are CARD and online; hand entries are offline and never CARD;
    wallet-credit replacements are OTHER and offline. Every combination is tried."""
    fields = {"origin": origin, "method": method, "offline": offline}
    if _allowed(origin, method, offline):
        made = entry(**fields)
        assert (made.origin, made.method, made.offline) == (origin, method, offline)
    else:
        assert refusal(**fields) == _ORIGIN_TEXTS[origin]


def test_an_amount_that_is_not_an_int_is_refused_naming_the_field_and_type() -> None:
    for amount, type_name in ((100.0, "float"), (True, "bool"), ("100", "str")):
        with pytest.raises(TypeError) as refused:
            entry(amount_cents=amount)
        assert str(refused.value) == f"amount_cents must be an int of cents, got {type_name}"


def test_a_naive_instant_is_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match=exactly("created_at must carry a UTC offset")):
        entry(created_at=datetime(2026, 10, 20, 15, 0))


# -- The ledger of one booking -----------------------------------------------------------


def test_a_duplicate_entry_is_refused() -> None:
    ledger, payment = by_hand(empty(), Kind.PAYMENT, 100)

    with pytest.raises(ValueError, match=exactly(f"entry {payment.id} appears twice")):
        ledger.with_entry(payment)
    with pytest.raises(ValueError, match="appears twice"):
        BookingLedger(COMPANY, BOOKING, [payment, payment])


def test_an_entry_of_another_booking_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=exactly("entry pay_x belongs to another booking")):
        BookingLedger(COMPANY, "bkg_other", [entry()])


def test_a_ledger_iterates_its_entries_oldest_first() -> None:
    ledger, first = by_hand(empty(), Kind.PAYMENT, 100)
    ledger, second = by_card(ledger, 200)

    assert list(ledger) == [first, second]
    assert len(ledger) == 2
    assert first.id in ledger
    assert "pay_unknown" not in ledger
    assert ledger.get(second.id) == second
    assert ledger.get("pay_unknown") is None


def _card(**changes: Any) -> PaymentEntry:
    return entry(origin=Origin.PROCESSOR, method=Method.CARD, offline=False, **changes)


@pytest.mark.parametrize(
    ("entries", "tip_money"),
    [
        pytest.param([entry(kind=Kind.TIP)], True, id="a tip"),
        pytest.param(
            [_card(kind=Kind.TIP_REFUND, amount_cents=-100, reverses="pay_gone")],
            True,
            id="a tip refund, whatever it names",
        ),
        pytest.param(
            [
                entry(id="pay_tip", kind=Kind.TIP),
                _card(kind=Kind.REFUND, amount_cents=-100, reverses="pay_tip"),
            ],
            False,
            id="a refund naming a tip",
        ),
        pytest.param(
            [
                entry(id="pay_tip", kind=Kind.TIP),
                entry(kind=Kind.REVERSAL, amount_cents=-100, reverses="pay_tip"),
            ],
            True,
            id="a reversal of a tip",
        ),
        pytest.param(
            [entry(kind=Kind.REVERSAL, amount_cents=700, reverses="pay_gone")],
            False,
            id="a reversal of an entry not on the ledger",
        ),
        pytest.param([entry(kind=Kind.REVERSAL, amount_cents=700)], False, id="a partial return"),
        pytest.param(
            [
                entry(id="pay_y", kind=Kind.REVERSAL, amount_cents=-100, reverses="pay_x"),
                entry(kind=Kind.REVERSAL, amount_cents=100, reverses="pay_y"),
            ],
            False,
            id="a corrupt cycle of reversals",
        ),
    ],
)
def test_tip_money_is_tips_tip_refunds_and_reversals_of_tip_money(
    entries: list[PaymentEntry], tip_money: bool
) -> None:
    ledger = BookingLedger(COMPANY, BOOKING, entries)
    last = entries[-1]

    assert ledger.is_tip_money(last) is tip_money
    counted = sum(e.amount_cents for e in entries if ledger.is_tip_money(e))
    assert ledger.tips_cents == counted
    assert ledger.paid_cents == sum(e.amount_cents for e in entries) - counted


def test_what_is_left_of_an_unknown_or_reversed_payment_is_zero() -> None:
    ledger, payment = by_hand(empty(), Kind.PAYMENT, 5_000)
    ledger, kept = by_hand(ledger, Kind.PAYMENT, 3_000)
    ledger, _ = reverse(ledger, payment)

    assert ledger.unrefunded_cents("pay_unknown") == 0
    assert ledger.unrefunded_cents(payment.id) == 0
    assert ledger.unrefunded_cents(kept.id) == 3_000


# -- Hand entries: limits and field texts ------------------------------------------------


def test_a_hand_amount_of_exactly_the_maximum_is_accepted_and_one_cent_more_refused() -> None:
    _, biggest = by_hand(empty(), Kind.PAYMENT, MAX_HAND_AMOUNT_CENTS)
    assert biggest.amount_cents == 100_000_000

    assert field_errors(empty(), Kind.PAYMENT, 100_000_001, method=Method.CASH) == {
        "amount_cents": "At most 100000000 cents."
    }


@pytest.mark.parametrize("amount", [0, -1, True, 1.5])
def test_an_amount_that_is_not_a_positive_whole_number_is_refused_with_its_text(
    amount: Any,
) -> None:
    assert field_errors(empty(), Kind.TIP, amount, method=Method.CASH) == {
        "amount_cents": "Give a positive whole number of cents."
    }


@pytest.mark.parametrize(
    ("kind", "method", "text"),
    [
        (
            Kind.REFUND,
            Method.CASH,
            "A refund recorded by hand has method OFFLINE (money that did not come in on a card).",
        ),
        (
            Kind.REFUND,
            Method.CARD,
            "A refund recorded by hand has method OFFLINE (money that did not come in on a card).",
        ),
        (Kind.PAYMENT, None, "Give the method: CASH, CHECK, BANK_TRANSFER or OTHER."),
        (
            Kind.TIP,
            Method.CARD,
            "Card money comes from the card processor; it cannot be recorded by hand.",
        ),
        (
            Kind.PAYMENT,
            Method.OFFLINE,
            "OFFLINE is the method of hand refunds; choose CASH, CHECK, BANK_TRANSFER or OTHER.",
        ),
    ],
)
def test_a_wrong_hand_method_is_refused_with_its_text(
    kind: Kind, method: Method | None, text: str
) -> None:
    ledger, _ = by_hand(empty(), Kind.PAYMENT, 5_000)
    assert field_errors(ledger, kind, 100, method=method) == {"method": text}


def test_a_hand_refund_with_no_method_or_offline_is_accepted() -> None:
    ledger, _ = by_hand(empty(), Kind.PAYMENT, 5_000)
    for method in (None, Method.OFFLINE):
        refund = record_by_hand(
            ledger, entry_id=_id(), kind=Kind.REFUND, amount_cents=100, method=method, at=AT
        )
        assert (refund.method, refund.offline) == (Method.OFFLINE, True)


def test_each_field_problem_of_a_hand_entry_has_its_text() -> None:
    assert field_errors(BookingLedger(COMPANY, None), Kind.PAYMENT, 100, method=Method.CASH) == {
        "booking_id": "Money recorded by hand belongs to a booking."
    }
    assert field_errors(empty(), Kind.DISPUTE, 100, method=Method.CASH) == {
        "kind": "Record PAYMENT, TIP or REFUND by hand."
    }
    assert field_errors(
        empty(), Kind.PAYMENT, 100, method=Method.CASH, note="x" * (MAX_NOTE_CHARS + 1)
    ) == {"note": "At most 2000 characters."}
    ledger, payment = by_hand(empty(), Kind.PAYMENT, 5_000)
    assert field_errors(ledger, Kind.TIP, 100, method=Method.CASH, reverses=payment.id) == {
        "reverses": "Only a refund names the payment it refunds."
    }
    assert field_errors(ledger, Kind.REFUND, 100, reverses="pay_elsewhere") == {
        "reverses": "No payment 'pay_elsewhere' on booking 'bkg_1'."
    }


def test_a_hand_entry_keeps_its_note_and_has_none_unless_given() -> None:
    ledger, payment = by_hand(empty(), Kind.PAYMENT, 5_000)
    _, tip = by_hand(ledger, Kind.TIP, 500, note="For the crew.")
    _, refund = by_hand(ledger, Kind.REFUND, 100, note="Overcharged.")
    _, plain_refund = by_hand(ledger, Kind.REFUND, 100)

    assert payment.note == ""
    assert tip.note == "For the crew."
    assert refund.note == "Overcharged."
    assert plain_refund.note == ""
    assert {e.origin for e in (payment, tip, refund)} == {Origin.HAND}
    assert payment.external_ref is None
    assert payment.reverses is None
    assert payment.dispute is False


# -- Hand refunds: limits and texts ------------------------------------------------------


def test_a_hand_refund_of_the_refundable_amount_is_accepted_one_cent_more_refused() -> None:
    ledger, _ = by_hand(empty(), Kind.PAYMENT, 5_000)
    ledger, _ = by_hand(ledger, Kind.TIP, 2_000)
    ledger, _ = by_hand(ledger, Kind.REFUND, 1_000)
    assert ledger.refundable_cents == 4_000

    with pytest.raises(LedgerRuleViolation) as refused:
        by_hand(ledger, Kind.REFUND, 4_001)
    assert str(refused.value) == (
        "A refund of 4001 cents exceeds the 4000 cents that may be refunded by hand on booking "
        "bkg_1: a hand refund gives back money recorded by hand (net of earlier refunds and "
        "reversals), at most the booking's paid total. Card money is refunded through the card "
        "processor, not by hand."
    )
    ledger, refund = by_hand(ledger, Kind.REFUND, 4_000)
    assert refund.amount_cents == -4_000
    assert ledger.paid_cents == 0
    assert ledger.refundable_cents == 0


def test_a_hand_refund_of_exactly_what_is_left_of_its_payment_is_accepted() -> None:
    ledger, first = by_hand(empty(), Kind.PAYMENT, 3_000)
    ledger, _ = by_hand(ledger, Kind.PAYMENT, 9_000)
    ledger, _ = by_hand(ledger, Kind.REFUND, 2_000, reverses=first.id)

    with pytest.raises(LedgerRuleViolation) as refused:
        by_hand(ledger, Kind.REFUND, 1_001, reverses=first.id)
    assert str(refused.value) == (
        f"A refund of 1001 cents exceeds the 1000 cents of payment {first.id} not yet refunded."
    )
    ledger, _ = by_hand(ledger, Kind.REFUND, 1_000, reverses=first.id)
    assert ledger.unrefunded_cents(first.id) == 0


def test_a_hand_refund_naming_anything_but_a_live_hand_payment_is_refused() -> None:
    ledger, tip = by_hand(empty(), Kind.TIP, 1_000)
    ledger, charge = by_card(ledger, 5_000)
    credit = credit_entry()
    ledger = ledger.with_entry(credit)
    ledger, payment = by_hand(ledger, Kind.PAYMENT, 5_000)
    ledger, _ = reverse(ledger, payment)

    texts = {
        tip.id: f"Entry {tip.id} is a TIP, not a payment; a refund names the payment it refunds.",
        charge.id: (
            f"Payment {charge.id} came in on a card; card money is refunded through the card "
            "processor, not by hand."
        ),
        credit.id: (
            "Payment pay_old was settled by wallet credit, which has been withdrawn; "
            "it cannot be refunded."
        ),
        payment.id: f"Payment {payment.id} was reversed; nothing is left to refund.",
    }
    for named, text in texts.items():
        with pytest.raises(LedgerRuleViolation) as refused:
            by_hand(ledger, Kind.REFUND, 100, reverses=named)
        assert str(refused.value) == text


def test_a_hand_refund_without_reverses_may_not_give_back_card_money() -> None:
    """Card money is refunded through the processor: named in ``reverses`` or not, it is
    never refundable by hand, so a later refund in the processor cannot refund it twice."""
    ledger, _ = by_card(empty(), 15_000)
    assert (ledger.paid_cents, ledger.hand_paid_cents, ledger.refundable_cents) == (15_000, 0, 0)

    with pytest.raises(LedgerRuleViolation) as refused:
        by_hand(ledger, Kind.REFUND, 15_000)
    assert str(refused.value) == (
        "A refund of 15000 cents exceeds the 0 cents that may be refunded by hand on booking "
        "bkg_1: a hand refund gives back money recorded by hand (net of earlier refunds and "
        "reversals), at most the booking's paid total. Card money is refunded through the card "
        "processor, not by hand."
    )


def test_a_hand_refund_gives_back_at_most_the_hand_money_beside_card_money() -> None:
    ledger, _ = by_card(empty(), 15_000)
    ledger, _ = by_hand(ledger, Kind.PAYMENT, 2_000)
    ledger, _ = by_hand(ledger, Kind.TIP, 700)  # tips are never the paid total's
    assert ledger.refundable_cents == 2_000

    with pytest.raises(LedgerRuleViolation, match="exceeds the 2000 cents that may be refunded"):
        by_hand(ledger, Kind.REFUND, 2_001)
    ledger, _ = by_hand(ledger, Kind.REFUND, 1_500)
    assert ledger.refundable_cents == 500
    ledger, _ = by_hand(ledger, Kind.REFUND, 500)
    assert (ledger.paid_cents, ledger.hand_paid_cents, ledger.refundable_cents) == (15_000, 0, 0)


def test_wallet_credit_is_not_refundable_by_hand_unnamed_either() -> None:
    ledger = empty().with_entry(credit_entry(4_200))
    assert (ledger.paid_cents, ledger.refundable_cents) == (4_200, 0)

    with pytest.raises(LedgerRuleViolation, match="exceeds the 0 cents that may be refunded"):
        by_hand(ledger, Kind.REFUND, 4_200)


def test_a_hand_refund_never_exceeds_the_paid_total_when_card_money_went_back() -> None:
    """Hand money of 5000 beside a card charge refunded and disputed in full: the paid
    total is 2000 below the hand money, and a hand refund stops at the paid total."""
    ledger, charge = by_card(empty(), 2_000)
    ledger = ledger.with_entry(card_refund(charge, entry_id=_id(), amount_cents=2_000, at=AT))
    ledger = ledger.with_entry(dispute_opened(charge, entry_id=_id(), amount_cents=2_000, at=AT))
    ledger, _ = by_hand(ledger, Kind.PAYMENT, 5_000)
    assert (ledger.paid_cents, ledger.hand_paid_cents, ledger.refundable_cents) == (
        3_000,
        5_000,
        3_000,
    )


def test_reversing_a_hand_refund_gives_its_money_back_to_what_may_be_refunded() -> None:
    ledger, _ = by_card(empty(), 10_000)
    ledger, _ = by_hand(ledger, Kind.PAYMENT, 1_000)
    ledger, refund = by_hand(ledger, Kind.REFUND, 1_000)
    assert ledger.refundable_cents == 0
    ledger, _ = reverse(ledger, refund)
    assert (ledger.hand_paid_cents, ledger.refundable_cents) == (1_000, 1_000)


def test_a_hand_refund_takes_the_customer_of_the_payment_it_names_unless_given() -> None:
    ledger, payment = by_hand(empty(), Kind.PAYMENT, 5_000, customer_id=CUSTOMER)

    _, named = by_hand(ledger, Kind.REFUND, 100, reverses=payment.id)
    _, given = by_hand(ledger, Kind.REFUND, 100, reverses=payment.id, customer_id="cus_2")
    _, unnamed = by_hand(ledger, Kind.REFUND, 100)

    assert (named.customer_id, given.customer_id, unnamed.customer_id) == (
        CUSTOMER,
        "cus_2",
        None,
    )


# -- Reversals: texts ----------------------------------------------------------------------


def refused_reason(ledger: BookingLedger, original: PaymentEntry) -> str:
    with pytest.raises(ReversalRefused) as refused:
        reverse(ledger, original)
    assert refused.value.entry_id == original.id
    assert str(refused.value) == f"Payment {original.id} cannot be reversed: {refused.value.reason}"
    return refused.value.reason


def test_each_refused_reversal_gives_its_reason() -> None:
    ledger, charge = by_card(empty(), 9_000)
    credit = credit_entry()
    ledger = ledger.with_entry(credit)
    ledger, payment = by_hand(ledger, Kind.PAYMENT, 5_000)
    ledger, reversal = reverse(ledger, payment)

    assert refused_reason(ledger, charge) == (
        "it is card money from the card processor; card money is refunded, not reversed."
    )
    assert refused_reason(ledger, credit) == "entries settled by wallet credit cannot be reversed."
    assert refused_reason(ledger, reversal) == (
        "it is itself a reversal; record the entry again instead."
    )
    assert refused_reason(ledger, payment) == (
        f"it was already reversed by {reversal.id}; an entry is never reversed twice."
    )


def test_a_reversal_of_a_payment_with_open_refunds_names_every_one() -> None:
    ledger, payment = by_hand(empty(), Kind.PAYMENT, 5_000)
    ledger, first = by_hand(ledger, Kind.REFUND, 100, reverses=payment.id)
    ledger, second = by_hand(ledger, Kind.REFUND, 200, reverses=payment.id)

    assert refused_reason(ledger, payment) == (
        f"refunds name it ({first.id}, {second.id}); reverse them first."
    )


def test_a_reversal_below_a_zero_paid_total_gives_the_paid_total() -> None:
    ledger, first = by_hand(empty(), Kind.PAYMENT, 5_000)
    ledger, _ = by_hand(ledger, Kind.PAYMENT, 1_000)
    ledger, _ = by_hand(ledger, Kind.REFUND, 3_000)

    assert refused_reason(ledger, first) == (
        "undoing it would take the paid total of booking bkg_1 below zero (3000 cents paid); "
        "reverse the refunds first."
    )


def test_a_hand_payment_refunded_by_hand_is_not_reversed_onto_card_money() -> None:
    """Cash refunded by hand (without naming it) beside card money: reversing the cash
    payment would leave the hand refund giving back card money, so it is refused."""
    ledger, _ = by_card(empty(), 15_000)
    ledger, cash = by_hand(ledger, Kind.PAYMENT, 5_000)
    ledger, refund = by_hand(ledger, Kind.REFUND, 5_000)

    assert refused_reason(ledger, cash) == (
        "undoing it would take the money recorded by hand on booking bkg_1 below zero "
        "(0 cents held by hand); reverse the hand refunds first."
    )
    ledger, _ = reverse(ledger, refund)
    ledger, _ = reverse(ledger, cash)
    assert (ledger.paid_cents, ledger.hand_paid_cents) == (15_000, 0)


def test_a_reversal_down_to_exactly_zero_paid_is_accepted() -> None:
    ledger, first = by_hand(empty(), Kind.PAYMENT, 5_000)
    ledger, _ = by_hand(ledger, Kind.PAYMENT, 1_000)
    ledger, _ = by_hand(ledger, Kind.REFUND, 1_000)

    ledger, _ = reverse(ledger, first)

    assert ledger.paid_cents == 0


def test_a_reversal_note_is_required_and_short() -> None:
    ledger, payment = by_hand(empty(), Kind.PAYMENT, 5_000)
    texts = {
        " ": "Say why the entry is reversed.",
        "x" * (MAX_NOTE_CHARS + 1): "At most 2000 characters.",
    }
    for note, text in texts.items():
        with pytest.raises(ValidationFailed) as refused:
            reverse_entry(ledger, payment, entry_id=_id(), note=note, at=AT)
        assert refused.value.field_errors == {"note": text}
    reversal = reverse_entry(ledger, payment, entry_id=_id(), note="x" * MAX_NOTE_CHARS, at=AT)
    assert len(reversal.note) == MAX_NOTE_CHARS


def test_an_entry_not_on_the_ledger_cannot_be_reversed_on_it() -> None:
    _, elsewhere = by_hand(empty(), Kind.PAYMENT, 5_000)
    with pytest.raises(ValueError, match=exactly(f"entry {elsewhere.id} is not on this ledger")):
        reverse(empty(), elsewhere)


def test_a_reversal_is_a_hand_entry_keeping_the_originals_reference() -> None:
    original = entry(external_ref="chk_1042", customer_id=CUSTOMER)
    ledger = empty().with_entry(original)

    _, reversal = reverse(ledger, original)

    assert reversal.origin is Origin.HAND
    assert reversal.offline is True
    assert reversal.dispute is False
    assert reversal.external_ref == "chk_1042"
    assert reversal.created_at == AT
    assert (reversal.company_id, reversal.customer_id) == (COMPANY, CUSTOMER)
