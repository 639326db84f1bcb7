"""Card-processor use cases: connect and disconnect a company's account, and ingest the
events the processor reports about money on connected accounts.

A processor adapter (``adapters.processor.stripe``) verifies an event and reads it into
an ``IngestProcessorEvent``: its id, its account, and a notice of what moved, naming the
card money by the processor's references. ``ingest`` finds the company by account
(connected or not: a disconnected account's money still lands), finds the booking
(named by the charge; for refunds and disputes, the card entry with that reference),
and lands the matching ``ProcessorEvent`` in the ledger. The event id is remembered in
the same unit of work as the entry, so a duplicate delivery writes nothing, even when
two deliveries of one event race.

An event that cannot land (unknown account, unknown booking, no card entry for the
reference, a ledger rule) is answered ``IGNORED`` with the reason and not remembered:
resending it once the cause is mended lands it. Retrying it unchanged would not help.
"""

from __future__ import annotations

import enum

from attrs import frozen

from booking_core.errors import ConflictError, DomainError, NotFoundError
from booking_core.ledger import Kind, Origin, PaymentEntry
from booking_core.ports import Clock, UnitOfWork
from booking_core.processor_accounts import (
    ProcessorAccount,
    account_id_of,
    connect,
    disconnected,
)
from booking_core.services.payments import (
    CardDisputeOpened,
    CardDisputeWon,
    CardMoneyReceived,
    CardMoneyRefunded,
    ProcessorEvent,
    land_processor_event,
)

# -- Connecting accounts -----------------------------------------------------------------


@frozen(kw_only=True)
class ConnectAccount:
    """Connect a company to its processor account (``acct_...``)."""

    company_id: str
    account_id: str


@frozen(kw_only=True)
class DisconnectAccount:
    """Disconnect a company's processor account; its money still lands afterwards."""

    company_id: str


def connect_account(cmd: ConnectAccount, *, uow: UnitOfWork, clock: Clock) -> ProcessorAccount:
    """Connect the account (see ``processor_accounts.connect`` for what is refused);
    returns it as stored."""
    account_id = account_id_of(cmd.account_id)
    with uow:
        uow.companies.get(cmd.company_id)
        stored = uow.processor.account(account_id)
        account = connect(
            company_id=cmd.company_id,
            account_id=account_id,
            stored=stored,
            current=uow.processor.current(cmd.company_id),
            at=clock.now(),
        )
        if stored is None:
            uow.processor.add(account)
        elif account != stored:
            uow.processor.save(account)
        uow.commit()
    return account


def disconnect_account(
    cmd: DisconnectAccount, *, uow: UnitOfWork, clock: Clock
) -> ProcessorAccount:
    """Disconnect the company's connected account; returns it, marked. ``NotFoundError``
    (``processor account``) when the company has none connected."""
    with uow:
        uow.companies.get(cmd.company_id)
        current = uow.processor.current(cmd.company_id)
        if current is None:
            raise NotFoundError("processor account", cmd.company_id)
        account = disconnected(current, clock.now())
        uow.processor.save(account)
        uow.commit()
    return account


def current_account(company_id: str, *, uow: UnitOfWork) -> ProcessorAccount | None:
    """The company's connected account, if any."""
    with uow:
        return uow.processor.current(company_id)


# -- What the processor reports ----------------------------------------------------------


@frozen(kw_only=True)
class ChargeNotice:
    """Card money taken for a booking: a charge, or a tip if ``tip``."""

    booking_id: str
    payment_ref: str
    amount_cents: int
    tip: bool = False


@frozen(kw_only=True)
class RefundNotice:
    """One refund of card money, of ``amount_cents`` (this refund's, not a running total).

    ``card_refs``: the processor's references that may name the card money refunded, in
    the order tried (payment intent, then charge)."""

    card_refs: tuple[str, ...]
    amount_cents: int
    from_dashboard: bool


@frozen(kw_only=True)
class DisputeNotice:
    """A cardholder disputed ``amount_cents`` of card money (the bank took it back)."""

    card_refs: tuple[str, ...]
    amount_cents: int


@frozen(kw_only=True)
class DisputeWonNotice:
    """A dispute closed in the company's favour; ``returned_cents`` came back."""

    card_refs: tuple[str, ...]
    returned_cents: int


@frozen
class DeauthorizedNotice:
    """The account holder revoked the service's access: the account is disconnected."""


@frozen
class IgnoredNotice:
    """An event with nothing to land (a type not ingested, a lost dispute, a charge not
    captured yet, ...); ``reason`` says which."""

    reason: str


Notice = (
    ChargeNotice
    | RefundNotice
    | DisputeNotice
    | DisputeWonNotice
    | DeauthorizedNotice
    | IgnoredNotice
)
"""What one processor event reports."""


@frozen(kw_only=True)
class IngestProcessorEvent:
    """One verified processor event: its id (the idempotency key), type, account (None when
    the event is not about a connected account) and what it reports."""

    event_id: str
    event_type: str
    account_id: str | None
    notice: Notice


class Outcome(enum.StrEnum):
    """What ingesting an event did."""

    INGESTED = "ingested"
    DUPLICATE = "duplicate"
    IGNORED = "ignored"


@frozen(kw_only=True)
class IngestResult:
    """The outcome, the company (when the account is known), the entry written (if one
    was) and, for an ignored event, why."""

    outcome: Outcome
    company_id: str | None = None
    entry: PaymentEntry | None = None
    reason: str = ""


def ingest(cmd: IngestProcessorEvent, *, uow: UnitOfWork, clock: Clock) -> IngestResult:
    """Land one processor event once (see the module's text). ``ConflictError`` (a lost
    race on the ledger) propagates: that one is worth a retry."""
    if isinstance(cmd.notice, IgnoredNotice):
        return IngestResult(outcome=Outcome.IGNORED, reason=cmd.notice.reason)
    if cmd.account_id is None:
        return IngestResult(outcome=Outcome.IGNORED, reason="The event names no account.")
    with uow:
        at = clock.now()
        if not uow.processor.remember_event(cmd.event_id, cmd.account_id, at):
            return IngestResult(outcome=Outcome.DUPLICATE)
        account = uow.processor.account(cmd.account_id)
        if account is None:
            return IngestResult(outcome=Outcome.IGNORED, reason="No company has this account.")
        try:
            entry = _land(cmd.notice, account, uow=uow, clock=clock)
        except ConflictError:
            raise
        except NotFoundError as error:
            return _ignored(account, f"No such {error.kind}.")
        except DomainError as error:
            return _ignored(account, error.message)
        uow.commit()
    return IngestResult(outcome=Outcome.INGESTED, company_id=account.company_id, entry=entry)


def _ignored(account: ProcessorAccount, reason: str) -> IngestResult:
    return IngestResult(outcome=Outcome.IGNORED, company_id=account.company_id, reason=reason)


def _land(
    notice: Notice, account: ProcessorAccount, *, uow: UnitOfWork, clock: Clock
) -> PaymentEntry | None:
    """Write what ``notice`` reports for the account's company; the entry, if one."""
    company_id = account.company_id
    event: ProcessorEvent
    match notice:
        case ChargeNotice():
            event = CardMoneyReceived(
                company_id=company_id,
                booking_id=notice.booking_id,
                customer_id=None,
                payment_ref=notice.payment_ref,
                amount_cents=notice.amount_cents,
                tip=notice.tip,
            )
        case RefundNotice():
            card = _card_money(uow, company_id, notice.card_refs)
            event = CardMoneyRefunded(
                company_id=company_id,
                booking_id=card.booking_id,
                payment_ref=card.payment_ref,
                amount_cents=notice.amount_cents,
                tip=card.tip,
                from_dashboard=notice.from_dashboard,
            )
        case DisputeNotice():
            card = _card_money(uow, company_id, notice.card_refs)
            event = CardDisputeOpened(
                company_id=company_id,
                booking_id=card.booking_id,
                payment_ref=card.payment_ref,
                amount_cents=notice.amount_cents,
                tip=card.tip,
            )
        case DisputeWonNotice():
            card = _card_money(uow, company_id, notice.card_refs)
            event = CardDisputeWon(
                company_id=company_id,
                booking_id=card.booking_id,
                payment_ref=card.payment_ref,
                returned_cents=notice.returned_cents,
                tip=card.tip,
            )
        case DeauthorizedNotice():
            uow.processor.save(disconnected(account, clock.now()))
            return None
        case IgnoredNotice():  # answered before any unit of work
            raise AssertionError("an ignored notice never lands")
    return land_processor_event(event, uow=uow, clock=clock)


@frozen
class _Card:
    booking_id: str
    payment_ref: str
    tip: bool


def _card_money(uow: UnitOfWork, company_id: str, card_refs: tuple[str, ...]) -> _Card:
    """The latest card charge or card tip of the company, on a booking, carrying the first
    of ``card_refs`` that names one; ``NotFoundError`` (``card payment``) if none does."""
    for ref in card_refs:
        for entry in reversed(uow.payments.with_external_ref(company_id, ref)):
            if (
                entry.origin is Origin.PROCESSOR
                and entry.kind in (Kind.PAYMENT, Kind.TIP)
                and entry.booking_id is not None
            ):
                return _Card(entry.booking_id, ref, entry.kind is Kind.TIP)
    raise NotFoundError("card payment", ", ".join(card_refs))
