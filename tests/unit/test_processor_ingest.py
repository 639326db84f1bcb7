"""Card-processor use cases over the memory unit of work: connecting accounts, and
ingesting events once each, for the account's company, connected or not."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta

import pytest

from adapters.memory import MemoryUnitOfWork
from booking_core.bookings import Booking
from booking_core.clock import FixedClock
from booking_core.errors import NotFoundError, RuleViolation, ValidationFailed
from booking_core.ledger import DASHBOARD_REFUND_NOTE, BookingLedger, Kind, PaymentEntry
from booking_core.services.processor import (
    ChargeNotice,
    ConnectAccount,
    DeauthorizedNotice,
    DisconnectAccount,
    DisputeNotice,
    DisputeWonNotice,
    IgnoredNotice,
    IngestProcessorEvent,
    IngestResult,
    Notice,
    Outcome,
    RefundNotice,
    connect_account,
    current_account,
    disconnect_account,
    ingest,
)
from tests import factories
from tests.unit.bookings_support import booked, local, order

AT = datetime(2026, 10, 20, 15, 0, tzinfo=UTC)
ACCOUNT = "acct_1Sparkle"


@pytest.fixture
def uow() -> MemoryUnitOfWork:
    return MemoryUnitOfWork()


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(AT)


def company(uow: MemoryUnitOfWork) -> str:
    made = factories.company()
    with MemoryUnitOfWork(uow.store) as setup:
        setup.companies.add(made)
        setup.commit()
    return made.id


def booking(uow: MemoryUnitOfWork, company_id: str) -> Booking:
    customer = factories.customer(company_id)
    made = booked(order(company_id=company_id, customer_id=customer.id), start=local(2026, 3, 3, 9))
    with MemoryUnitOfWork(uow.store) as setup:
        setup.customers.add(customer)
        setup.bookings.add_all(made)
        setup.commit()
    return made[0]


def connected(uow: MemoryUnitOfWork, clock: FixedClock, account: str = ACCOUNT) -> str:
    company_id = company(uow)
    connect_account(ConnectAccount(company_id=company_id, account_id=account), uow=uow, clock=clock)
    return company_id


def deliver(
    uow: MemoryUnitOfWork,
    clock: FixedClock,
    notice: Notice,
    *,
    event_id: str | None = None,
    account: str | None = ACCOUNT,
) -> IngestResult:
    event = IngestProcessorEvent(
        event_id=event_id or f"evt_{secrets.token_hex(8)}",
        event_type="test",
        account_id=account,
        notice=notice,
    )
    return ingest(event, uow=uow, clock=clock)


def ledger(uow: MemoryUnitOfWork, company_id: str, booking_id: str) -> BookingLedger:
    with uow:
        return BookingLedger(
            company_id, booking_id, uow.payments.for_booking(company_id, booking_id)
        )


def landed(result: IngestResult) -> PaymentEntry:
    assert result.outcome is Outcome.INGESTED, result
    assert result.entry is not None
    return result.entry


def test_card_money_lands_for_the_account_s_company(uow, clock):
    company_id = connected(uow, clock)
    job = booking(uow, company_id)
    charge = landed(
        deliver(
            uow, clock, ChargeNotice(booking_id=job.id, payment_ref="pi_1", amount_cents=10_000)
        )
    )
    tip = landed(
        deliver(
            uow,
            clock,
            ChargeNotice(booking_id=job.id, payment_ref="pi_2", amount_cents=1_500, tip=True),
        )
    )
    refund = landed(
        deliver(
            uow,
            clock,
            RefundNotice(card_refs=("pi_1", "ch_1"), amount_cents=2_000, from_dashboard=True),
        )
    )
    tip_refund = landed(
        deliver(
            uow, clock, RefundNotice(card_refs=("pi_2",), amount_cents=500, from_dashboard=False)
        )
    )

    assert (charge.kind, charge.external_ref, charge.customer_id) == (
        Kind.PAYMENT,
        "pi_1",
        job.customer_id,
    )
    assert tip.kind is Kind.TIP
    assert (refund.kind, refund.amount_cents, refund.reverses, refund.note) == (
        Kind.REFUND,
        -2_000,
        charge.id,
        DASHBOARD_REFUND_NOTE,
    )
    assert (tip_refund.kind, tip_refund.reverses, tip_refund.note) == (Kind.TIP_REFUND, tip.id, "")
    totals = ledger(uow, company_id, job.id)
    assert (totals.paid_cents, totals.tips_cents) == (8_000, 1_000)


def test_a_refund_found_by_charge_id_when_the_payment_had_no_intent(uow, clock):
    company_id = connected(uow, clock)
    job = booking(uow, company_id)
    landed(
        deliver(uow, clock, ChargeNotice(booking_id=job.id, payment_ref="ch_9", amount_cents=4_000))
    )
    refund = landed(
        deliver(
            uow, clock, RefundNotice(card_refs=("ch_9",), amount_cents=4_000, from_dashboard=True)
        )
    )
    assert refund.external_ref == "ch_9"


def test_disputes_open_and_are_won_back(uow, clock):
    company_id = connected(uow, clock)
    job = booking(uow, company_id)
    landed(
        deliver(
            uow, clock, ChargeNotice(booking_id=job.id, payment_ref="pi_1", amount_cents=10_000)
        )
    )
    dispute = landed(deliver(uow, clock, DisputeNotice(card_refs=("pi_1",), amount_cents=10_000)))
    assert (dispute.kind, dispute.amount_cents) == (Kind.DISPUTE, -10_000)
    assert ledger(uow, company_id, job.id).paid_cents == 0
    won = landed(deliver(uow, clock, DisputeWonNotice(card_refs=("pi_1",), returned_cents=10_000)))
    assert (won.kind, won.reverses) == (Kind.REVERSAL, dispute.id)
    assert ledger(uow, company_id, job.id).paid_cents == 10_000


def test_the_same_charge_or_dispute_under_another_event_lands_once(uow, clock):
    """charge.succeeded then charge.captured for one payment intent, or one dispute sent
    in two events: the second is ignored, naming why, and the totals stay true."""
    company_id = connected(uow, clock)
    job = booking(uow, company_id)
    charge = ChargeNotice(booking_id=job.id, payment_ref="pi_1", amount_cents=2_000)
    landed(deliver(uow, clock, charge, event_id="evt_succeeded"))
    again = deliver(uow, clock, charge, event_id="evt_captured")
    assert (again.outcome, again.reason) == (
        Outcome.IGNORED,
        "Card payment pi_1 has landed on this booking already.",
    )
    dispute = DisputeNotice(card_refs=("pi_1",), amount_cents=2_000)
    landed(deliver(uow, clock, dispute, event_id="evt_dispute"))
    twice = deliver(uow, clock, dispute, event_id="evt_dispute_again")
    assert (twice.outcome, twice.reason) == (
        Outcome.IGNORED,
        "Card money pi_1 was disputed already on this booking.",
    )
    assert ledger(uow, company_id, job.id).paid_cents == 0
    assert len(ledger(uow, company_id, job.id).entries) == 2


def test_a_duplicate_delivery_writes_nothing(uow, clock):
    company_id = connected(uow, clock)
    job = booking(uow, company_id)
    notice = ChargeNotice(booking_id=job.id, payment_ref="pi_1", amount_cents=10_000)
    landed(deliver(uow, clock, notice, event_id="evt_once"))
    again = deliver(uow, clock, notice, event_id="evt_once")
    assert again.outcome is Outcome.DUPLICATE
    assert len(ledger(uow, company_id, job.id).entries) == 1


def test_an_event_that_cannot_land_is_ignored_and_not_remembered(uow, clock):
    company_id = company(uow)
    job = booking(uow, company_id)
    notice = ChargeNotice(booking_id=job.id, payment_ref="pi_1", amount_cents=10_000)
    unknown = deliver(uow, clock, notice, event_id="evt_early")
    assert (unknown.outcome, unknown.reason) == (
        Outcome.IGNORED,
        "No company has this account.",
    )
    # Once the account is connected, the same event (resent) lands.
    connect_account(ConnectAccount(company_id=company_id, account_id=ACCOUNT), uow=uow, clock=clock)
    assert landed(deliver(uow, clock, notice, event_id="evt_early")).amount_cents == 10_000


@pytest.mark.parametrize(
    ("notice", "reason"),
    [
        (
            ChargeNotice(booking_id="bkg_never", payment_ref="pi_1", amount_cents=1),
            "No such booking.",
        ),
        (
            RefundNotice(card_refs=("pi_none",), amount_cents=1, from_dashboard=True),
            "No such card payment.",
        ),
        (DisputeWonNotice(card_refs=("pi_none",), returned_cents=1), "No such card payment."),
        (IgnoredNotice("Events of type x are not ingested."), "Events of type x are not ingested."),
    ],
)
def test_unknown_bookings_and_card_money_are_ignored_with_the_reason(uow, clock, notice, reason):
    connected(uow, clock)
    result = deliver(uow, clock, notice)
    assert (result.outcome, result.reason, result.entry) == (Outcome.IGNORED, reason, None)
    assert uow.store.values("payments") == {}
    assert uow.store.values("processor_events") == {}


def test_another_company_s_booking_is_unknown_to_the_account(uow, clock):
    connected(uow, clock)
    theirs = booking(uow, company(uow))
    result = deliver(
        uow, clock, ChargeNotice(booking_id=theirs.id, payment_ref="pi_1", amount_cents=100)
    )
    assert (result.outcome, result.reason) == (Outcome.IGNORED, "No such booking.")


def test_a_ledger_rule_refusal_is_ignored_with_its_message(uow, clock):
    company_id = connected(uow, clock)
    job = booking(uow, company_id)
    landed(
        deliver(uow, clock, ChargeNotice(booking_id=job.id, payment_ref="pi_1", amount_cents=1_000))
    )
    landed(deliver(uow, clock, DisputeNotice(card_refs=("pi_1",), amount_cents=1_000)))
    result = deliver(uow, clock, DisputeWonNotice(card_refs=("pi_1",), returned_cents=5_000))
    assert result.outcome is Outcome.IGNORED
    assert "5000 cents cannot come back" in result.reason


def test_a_disconnected_account_s_money_still_lands(uow, clock):
    company_id = connected(uow, clock)
    job = booking(uow, company_id)
    landed(
        deliver(
            uow, clock, ChargeNotice(booking_id=job.id, payment_ref="pi_1", amount_cents=10_000)
        )
    )
    later = FixedClock(AT + timedelta(days=3))
    gone = disconnect_account(DisconnectAccount(company_id=company_id), uow=uow, clock=later)
    assert gone.disconnected_at == later.now()
    assert current_account(company_id, uow=uow) is None
    refund = landed(
        deliver(
            uow, later, RefundNotice(card_refs=("pi_1",), amount_cents=3_000, from_dashboard=True)
        )
    )
    assert (refund.kind, refund.note) == (Kind.REFUND, DASHBOARD_REFUND_NOTE)


def test_deauthorisation_disconnects_the_account(uow, clock):
    company_id = connected(uow, clock)
    result = deliver(uow, clock, DeauthorizedNotice())
    assert (result.outcome, result.company_id, result.entry) == (Outcome.INGESTED, company_id, None)
    assert current_account(company_id, uow=uow) is None
    with uow:
        account = uow.processor.account(ACCOUNT)
    assert account is not None
    assert account.disconnected_at == AT


def test_connecting_follows_the_one_account_one_company_rules(uow, clock):
    company_id = connected(uow, clock)
    other = company(uow)
    with pytest.raises(RuleViolation, match="another company"):
        connect_account(ConnectAccount(company_id=other, account_id=ACCOUNT), uow=uow, clock=clock)
    with pytest.raises(RuleViolation, match="disconnect it first"):
        connect_account(
            ConnectAccount(company_id=company_id, account_id="acct_2"), uow=uow, clock=clock
        )
    with pytest.raises(ValidationFailed) as invalid:
        connect_account(
            ConnectAccount(company_id=company_id, account_id="ch_123"), uow=uow, clock=clock
        )
    assert list(invalid.value.field_errors) == ["account"]
    # Connecting it again changes nothing; after a disconnect it reconnects from then.
    again = connect_account(
        ConnectAccount(company_id=company_id, account_id=f" {ACCOUNT} "), uow=uow, clock=clock
    )
    assert again.connected_at == AT
    disconnect_account(DisconnectAccount(company_id=company_id), uow=uow, clock=clock)
    with pytest.raises(NotFoundError):
        disconnect_account(DisconnectAccount(company_id=company_id), uow=uow, clock=clock)
    later = FixedClock(AT + timedelta(hours=1))
    back = connect_account(
        ConnectAccount(company_id=company_id, account_id=ACCOUNT), uow=uow, clock=later
    )
    assert (back.connected, back.connected_at) == (True, later.now())
    with pytest.raises(NotFoundError):
        connect_account(
            ConnectAccount(company_id="cmp_never", account_id="acct_3"), uow=uow, clock=clock
        )
