"""A state machine over one booking's ledger, driven through the payment use cases.

Hand payments, tips and refunds, card charges and tips, refunds, disputes opened and won,
reversals and wallet-credit replacements, in any order; after every step the ledger's
totals are checked against sums the test keeps on its own, and every refused step must
leave the store exactly as it was. The booking and its customer are real records of the
store, as ``record_payment`` requires.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from adapters.memory import MemoryUnitOfWork
from booking_core.card_money import (
    replace_credit_entry,
)
from booking_core.clock import FixedClock
from booking_core.errors import (
    DomainError,
    LedgerRuleViolation,
    NotFoundError,
    ReversalRefused,
)
from booking_core.ledger import (
    HAND_METHODS,
    BookingLedger,
    Kind,
    Method,
    Origin,
    PaymentEntry,
    is_dispute,
)
from booking_core.services.payments import (
    CardDisputeOpened,
    CardDisputeWon,
    CardMoneyReceived,
    CardMoneyRefunded,
    ProcessorEvent,
    RecordPayment,
    ReversePayment,
    apply_processor_event,
    record_payment,
    reverse_payment,
)
from tests import factories
from tests.unit.bookings_support import booked, order

COMPANY = "cmp_a"
START = datetime(2026, 10, 20, 15, 0, tzinfo=UTC)

amounts = st.integers(min_value=1, max_value=20_000)


class LedgerMachine(RuleBasedStateMachine):
    """One booking's ledger under every operation that can add to it."""

    def __init__(self) -> None:
        super().__init__()
        self.uow = MemoryUnitOfWork()
        customer = factories.customer(COMPANY)
        (self.booking,) = booked(order(company_id=COMPANY, customer_id=customer.id))
        with MemoryUnitOfWork(self.uow.store) as setup:
            setup.customers.add(customer)
            setup.bookings.add_all([self.booking])
            setup.commit()
        self.clock = FixedClock(START)
        self.written: dict[str, PaymentEntry] = {}
        # Kept by the test from what each operation means, not from the ledger's own rules.
        self.tip_ids: set[str] = set()
        self.reversed_by_hand: set[str] = set()
        self.refs = itertools.count(1)

    # -- helpers ------------------------------------------------------------------------

    def _attempt(
        self, label: str, operation: Callable[[], PaymentEntry], *refusals: type[DomainError]
    ) -> PaymentEntry | None:
        """Run one use case; a refusal must leave the store and the commits as they were."""
        before = dict(self.uow.store.values("payments"))
        commits = self.uow.commits
        self.clock.advance(timedelta(minutes=1))
        try:
            entry = operation()
        except refusals as refused:
            event(f"{label}: refused ({type(refused).__name__})")
            assert self.uow.store.values("payments") == before
            assert self.uow.commits == commits
            return None
        added = {k: v for k, v in self.uow.store.values("payments").items() if k not in before}
        assert list(added.values()) == [entry]
        assert self.uow.commits == commits + 1
        assert entry.created_at == self.clock.now()
        self.written[entry.id] = entry
        event(f"{label}: written")
        return entry

    def _entries(self) -> list[PaymentEntry]:
        return list(self.uow.payments.for_booking(COMPANY, self.booking.id))

    def _ledger(self) -> BookingLedger:
        return BookingLedger(COMPANY, self.booking.id, self._entries())

    def _model_paid(self) -> int:
        return sum(e.amount_cents for e in self._entries() if e.id not in self.tip_ids)

    def _model_hand(self) -> int:
        """Job money recorded by hand (payments, hand refunds, reversals by hand)."""
        return sum(
            e.amount_cents
            for e in self._entries()
            if e.origin is Origin.HAND and e.id not in self.tip_ids
        )

    def _card_money(self, tip: bool) -> list[PaymentEntry]:
        kind = Kind.TIP if tip else Kind.PAYMENT
        return [e for e in self._entries() if e.origin is Origin.PROCESSOR and e.kind is kind]

    def _apply(self, report: ProcessorEvent) -> Callable[[], PaymentEntry]:
        return lambda: apply_processor_event(report, uow=self.uow, clock=self.clock)

    # -- hand entries -------------------------------------------------------------------

    @rule(tip=st.booleans(), amount=amounts, method=st.sampled_from(sorted(HAND_METHODS)))
    def record_by_hand(self, tip: bool, amount: int, method: Method) -> None:
        cmd = RecordPayment(
            company_id=COMPANY,
            booking_id=self.booking.id,
            customer_id=self.booking.customer_id,
            kind=Kind.TIP if tip else Kind.PAYMENT,
            amount_cents=amount,
            method=method,
        )
        entry = self._attempt(
            "hand payment or tip", lambda: record_payment(cmd, uow=self.uow, clock=self.clock)
        )
        assert entry is not None
        if tip:
            self.tip_ids.add(entry.id)

    @rule(amount=st.integers(min_value=1, max_value=30_000), data=st.data())
    def refund_by_hand(self, amount: int, data: st.DataObject) -> None:
        candidates = [None, *(e.id for e in self._entries())]
        reverses = data.draw(st.sampled_from(candidates), label="reverses")
        paid_before = self._model_paid()
        hand_before = self._model_hand()
        cmd = RecordPayment(
            company_id=COMPANY,
            booking_id=self.booking.id,
            kind=Kind.REFUND,
            amount_cents=amount,
            reverses=reverses,
        )
        entry = self._attempt(
            "hand refund",
            lambda: record_payment(cmd, uow=self.uow, clock=self.clock),
            LedgerRuleViolation,
        )
        if paid_before < amount:
            assert entry is None, "a hand refund went beyond the paid total"
        if hand_before < amount:
            assert entry is None, "a hand refund gave back card money or wallet credit"
        if entry is not None:
            assert entry.amount_cents == -amount
            assert self._model_paid() >= 0
            assert self._model_hand() >= 0

    @rule(data=st.data())
    def reverse(self, data: st.DataObject) -> None:
        candidates = [*(e.id for e in self._entries()), "pay_unknown"]
        target_id = data.draw(st.sampled_from(candidates), label="target")
        target = self.written.get(target_id)
        paid_before = self._model_paid()
        cmd = ReversePayment(company_id=COMPANY, entry_id=target_id, note="Recorded by mistake.")
        entry = self._attempt(
            "reversal",
            lambda: reverse_payment(cmd, uow=self.uow, clock=self.clock),
            ReversalRefused,
            NotFoundError,
        )
        if target is None or target.origin is not Origin.HAND or target.kind is Kind.REVERSAL:
            assert entry is None, "only an entry recorded by hand is reversed"
        if target_id in self.reversed_by_hand:
            assert entry is None, "an entry was reversed twice"
        if entry is None:
            return
        assert target is not None
        assert entry.amount_cents == -target.amount_cents
        assert entry.reverses == target_id
        self.reversed_by_hand.add(target_id)
        if target_id in self.tip_ids:
            self.tip_ids.add(entry.id)
            assert self._model_paid() == paid_before, "reversing a tip moved the paid total"

    @rule(amount=amounts)
    def replace_former_credit_entry(self, amount: int) -> None:
        entry = replace_credit_entry(
            entry_id=f"pay_credit_{next(self.refs)}",
            company_id=COMPANY,
            booking_id=self.booking.id,
            customer_id=self.booking.customer_id,
            kind=Kind.PAYMENT,
            amount_cents=amount,
            created_at=START,
        )
        with self.uow:
            self.uow.payments.add(entry)
            self.uow.commit()
        self.written[entry.id] = entry

    # -- card money ---------------------------------------------------------------------

    @rule(tip=st.booleans(), amount=amounts)
    def card_money_received(self, tip: bool, amount: int) -> None:
        report = CardMoneyReceived(
            company_id=COMPANY,
            booking_id=self.booking.id,
            customer_id=self.booking.customer_id,
            payment_ref=f"pi_{next(self.refs)}",
            amount_cents=amount,
            tip=tip,
        )
        entry = self._attempt("card money", self._apply(report))
        assert entry is not None
        if tip:
            self.tip_ids.add(entry.id)

    @precondition(lambda self: self._card_money(tip=False) or self._card_money(tip=True))
    @rule(data=st.data(), from_dashboard=st.booleans())
    def card_money_refunded(self, data: st.DataObject, from_dashboard: bool) -> None:
        refunded = data.draw(st.sampled_from(self._card_money(False) + self._card_money(True)))
        tip = refunded.kind is Kind.TIP
        report = CardMoneyRefunded(
            company_id=COMPANY,
            booking_id=self.booking.id,
            payment_ref=str(refunded.external_ref),
            amount_cents=data.draw(st.integers(1, refunded.amount_cents)),
            tip=tip,
            from_dashboard=from_dashboard,
        )
        entry = self._attempt("card refund", self._apply(report))
        assert entry is not None
        assert entry.kind is (Kind.TIP_REFUND if tip else Kind.REFUND)
        if tip:
            self.tip_ids.add(entry.id)

    @precondition(lambda self: self._card_money(tip=False) or self._card_money(tip=True))
    @rule(data=st.data())
    def dispute_opened(self, data: st.DataObject) -> None:
        disputed = data.draw(st.sampled_from(self._card_money(False) + self._card_money(True)))
        tip = disputed.kind is Kind.TIP
        report = CardDisputeOpened(
            company_id=COMPANY,
            booking_id=self.booking.id,
            payment_ref=str(disputed.external_ref),
            amount_cents=data.draw(st.integers(1, disputed.amount_cents)),
            tip=tip,
        )
        # A charge is disputed once: a second dispute of it is refused, writing nothing.
        again = self._ledger().find_dispute(str(disputed.external_ref), tip=tip) is not None
        entry = self._attempt("dispute opened", self._apply(report), LedgerRuleViolation)
        assert (entry is None) == again
        if entry is None:
            return
        assert entry.kind is (Kind.TIP_REFUND if tip else Kind.DISPUTE)
        if tip:
            self.tip_ids.add(entry.id)

    @precondition(lambda self: any(is_dispute(e) for e in self._entries()))
    @rule(data=st.data())
    def dispute_won(self, data: st.DataObject) -> None:
        disputes = [e for e in self._entries() if is_dispute(e)]
        dispute = data.draw(st.sampled_from(disputes))
        tip = dispute.kind is Kind.TIP_REFUND
        returned = data.draw(st.integers(1, -dispute.amount_cents + 1), label="returned")
        report = CardDisputeWon(
            company_id=COMPANY,
            booking_id=self.booking.id,
            payment_ref=str(dispute.external_ref),
            returned_cents=returned,
            tip=tip,
        )
        entry = self._attempt(
            "dispute won", self._apply(report), LedgerRuleViolation, NotFoundError
        )
        if entry is None:
            return
        assert entry.amount_cents == returned
        assert entry.kind is (Kind.TIP if tip else Kind.REVERSAL)
        if tip:
            self.tip_ids.add(entry.id)

    # -- invariants ---------------------------------------------------------------------

    @invariant()
    def paid_total_is_the_sum_of_counted_entries(self) -> None:
        ledger = self._ledger()
        assert ledger.paid_cents == self._model_paid()
        tips = sum(e.amount_cents for e in self._entries() if e.id in self.tip_ids)
        assert ledger.tips_cents == tips
        assert ledger.hand_paid_cents == self._model_hand()
        assert ledger.refundable_cents == max(min(self._model_paid(), self._model_hand()), 0)

    @invariant()
    def no_dispute_gives_back_more_than_was_disputed(self) -> None:
        ledger = self._ledger()
        for dispute in (e for e in self._entries() if is_dispute(e)):
            in_full = ledger.reversal_of(dispute.id)
            back = ledger.returned_on(dispute) + (in_full.amount_cents if in_full else 0)
            assert back <= -dispute.amount_cents

    @invariant()
    def money_recorded_by_hand_never_goes_below_zero(self) -> None:
        assert self._model_hand() >= 0

    @invariant()
    def no_entry_is_reversed_twice(self) -> None:
        reversed_counts = Counter(
            e.reverses for e in self._entries() if e.kind is Kind.REVERSAL and e.reverses
        )
        assert all(count == 1 for count in reversed_counts.values())

    @invariant()
    def every_entry_names_the_bookings_customer(self) -> None:
        # Hand refunds give no customer: they default to the booking's.
        assert {e.customer_id for e in self._entries()} <= {self.booking.customer_id}

    @invariant()
    def every_amount_is_an_int(self) -> None:
        assert all(type(e.amount_cents) is int for e in self._entries())

    @invariant()
    def written_entries_never_change(self) -> None:
        stored = {e.id: e for e in self._entries()}
        assert stored.keys() == self.written.keys()
        for entry_id, entry in self.written.items():
            assert stored[entry_id] is entry


LedgerMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
TestLedgerMachine = LedgerMachine.TestCase
