"""The payment ledger: append-only entries of money for a booking, and the rules that add them.

Entries are never edited. A wrong entry recorded by hand is reversed by a new ``REVERSAL``
entry; card money is refunded through the card processor, never reversed. Every amount is
an ``int`` of cents, negative for money going back out. Nothing here reads a clock or makes
an id: callers pass ``at`` and ``entry_id``.

Entries come from three origins:

* ``HAND``: a person through ``POST /payments`` (a payment, a tip, or a refund of money that
  did not come in on a card) and ``PATCH /payments`` (a reversal). Always ``offline``.
* ``PROCESSOR``: card money the card processor reports (charges, tips, refunds including
  those made in the processor's own dashboard, disputes opened and won). These are facts
  about money that already moved, so balance rules never refuse them; and since nothing
  here depends on the processor connection, they keep landing after the company
  disconnects its processor account.
* ``WALLET_CREDIT``: the replacements of entries that had the withdrawn method ``CREDIT``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from datetime import datetime
from functools import cached_property

import attrs
from attrs import field, frozen

from booking_core.clock import require_aware
from booking_core.errors import LedgerRuleViolation, ReversalRefused, ValidationFailed

MAX_NOTE_CHARS = 2_000
"""Longest note a person may write on an entry."""

MAX_AMOUNT_CENTS = 100_000_000
"""Largest amount one entry may carry, by hand or from the card processor (one million in
the currency's main unit; a card processor's own ceiling lies below it)."""

MAX_HAND_AMOUNT_CENTS = MAX_AMOUNT_CENTS
"""Largest amount one hand entry may carry."""

DASHBOARD_REFUND_NOTE = "Refunded in the card processor's dashboard."
"""Note of a refund made in the processor's dashboard rather than through the service."""

DISPUTE_NOTE = "Disputed at the card processor."
"""Note of the ``DISPUTE`` entry written when a cardholder disputes job money."""

DISPUTED_TIP_NOTE = "Tip disputed at the card processor."
"""Note of the ``TIP_REFUND`` written for a disputed tip (its ``dispute`` flag is set)."""

DISPUTE_WON_NOTE = "Dispute closed in the company's favour; the bank returned the money."
"""Note of the entry that puts disputed money back."""

WALLET_CREDIT_NOTE = "Settled by wallet credit."
"""Note of an entry that replaced one of the withdrawn method ``CREDIT``."""


class Kind(enum.StrEnum):
    """What an entry records."""

    PAYMENT = "PAYMENT"
    TIP = "TIP"
    REFUND = "REFUND"
    TIP_REFUND = "TIP_REFUND"
    DISPUTE = "DISPUTE"
    REVERSAL = "REVERSAL"


class Method(enum.StrEnum):
    """How the money moved; ``OFFLINE`` is the method of refunds recorded by hand."""

    CARD = "CARD"
    CASH = "CASH"
    CHECK = "CHECK"
    BANK_TRANSFER = "BANK_TRANSFER"
    OTHER = "OTHER"
    OFFLINE = "OFFLINE"


class Origin(enum.StrEnum):
    """Who wrote an entry: a person, the card processor, or the wallet-credit replacement."""

    HAND = "HAND"
    PROCESSOR = "PROCESSOR"
    WALLET_CREDIT = "WALLET_CREDIT"


HAND_KINDS = frozenset({Kind.PAYMENT, Kind.TIP, Kind.REFUND})
"""Kinds ``POST /payments`` may record."""

HAND_METHODS = frozenset({Method.CASH, Method.CHECK, Method.BANK_TRANSFER, Method.OTHER})
"""Methods a person may give for a payment or tip; card money only comes from the processor."""

TIP_KINDS = frozenset({Kind.TIP, Kind.TIP_REFUND})
"""Kinds that are tip money, outside a booking's paid total."""

POSITIVE_KINDS = frozenset({Kind.PAYMENT, Kind.TIP})
NEGATIVE_KINDS = frozenset({Kind.REFUND, Kind.TIP_REFUND, Kind.DISPUTE})


def _int_cents(_: object, attribute: attrs.Attribute[int], value: int) -> None:
    # bool is an int subclass; True cents is a bug, not a cent.
    if type(value) is not int:
        raise TypeError(f"{attribute.name} must be an int of cents, got {type(value).__name__}")


def _aware(_: object, attribute: attrs.Attribute[datetime], value: datetime) -> None:
    require_aware(value, attribute.name)


@frozen(kw_only=True)
class PaymentEntry:
    """One ledger line (``pay_...``); never changed once written."""

    id: str
    company_id: str
    booking_id: str | None
    customer_id: str | None = None
    kind: Kind
    method: Method
    amount_cents: int = field(validator=_int_cents)
    offline: bool
    note: str = ""
    reverses: str | None = None
    external_ref: str | None = None
    dispute: bool = False
    origin: Origin
    created_at: datetime = field(validator=_aware)

    def __attrs_post_init__(self) -> None:
        # Constructing an entry re-checks the invariants every builder keeps, so a row read
        # back from storage that breaks them fails loudly instead of skewing a total.
        if self.kind in POSITIVE_KINDS and self.amount_cents <= 0:
            raise ValueError(f"a {self.kind} entry must be positive, got {self.amount_cents}")
        if self.kind in NEGATIVE_KINDS and self.amount_cents >= 0:
            raise ValueError(f"a {self.kind} entry must be negative, got {self.amount_cents}")
        if self.amount_cents == 0:
            raise ValueError("an entry never carries zero cents")
        if self.reverses == self.id:
            raise ValueError("an entry cannot reverse itself")
        if (self.kind is Kind.DISPUTE) != self.dispute and self.kind is not Kind.TIP_REFUND:
            raise ValueError("only DISPUTE entries and disputed tips are disputes")
        if self.dispute and self.origin is not Origin.PROCESSOR:
            raise ValueError("disputes come from the card processor")
        if self.origin is Origin.PROCESSOR and (self.method is not Method.CARD or self.offline):
            raise ValueError("processor entries are card money, not offline")
        if self.origin is Origin.HAND and (self.method is Method.CARD or not self.offline):
            raise ValueError("hand entries are offline and never card money")
        if self.origin is Origin.WALLET_CREDIT and (
            self.method is not Method.OTHER or not self.offline
        ):
            raise ValueError("wallet-credit replacements have method OTHER and are offline")


def is_dispute(entry: PaymentEntry) -> bool:
    """True for an entry written when a cardholder disputed money (job money or a tip)."""
    return entry.dispute


def fires_payment_refunded(entry: PaymentEntry) -> bool:
    """True when writing ``entry`` fires the ``payment.refunded`` event.

    Refunds of job money (by hand, through the service or in the processor's dashboard)
    and refunded tips fire it; a disputed tip, though written as ``TIP_REFUND``, is a
    dispute and fires nothing, like a ``DISPUTE``.
    """
    if entry.kind is Kind.REFUND:
        return True
    return entry.kind is Kind.TIP_REFUND and not is_dispute(entry)


@frozen
class LedgerTotals:
    """A booking's paid total and tip money, as its ledger sums them (``BookingLedger``):
    what the API shows as a booking's ``paidCents`` and ``tipsCents``."""

    paid_cents: int = 0
    tips_cents: int = 0


NO_MONEY = LedgerTotals()
"""The totals of a booking with no entries (a booking just made)."""


def _entry_tuple(entries: Iterable[PaymentEntry]) -> tuple[PaymentEntry, ...]:
    return tuple(entries)


@frozen
class BookingLedger:
    """Every entry of one booking, oldest first, and the totals the rules decide on.

    Tip money is every ``TIP`` and ``TIP_REFUND``, and a ``REVERSAL`` is tip money when the
    entry it reverses is: reversing a hand tip takes the tip back out of ``tips_cents`` and
    never changes ``paid_cents``. A ``REVERSAL`` that names no entry (a partial return of
    disputed job money) is job money.
    """

    company_id: str
    booking_id: str | None
    entries: tuple[PaymentEntry, ...] = field(default=(), converter=_entry_tuple)

    @entries.validator
    def _one_booking(
        self, _: attrs.Attribute[tuple[PaymentEntry, ...]], value: tuple[PaymentEntry, ...]
    ) -> None:
        ids = set()
        for entry in value:
            if entry.company_id != self.company_id or entry.booking_id != self.booking_id:
                raise ValueError(f"entry {entry.id} belongs to another booking")
            if entry.id in ids:
                raise ValueError(f"entry {entry.id} appears twice")
            ids.add(entry.id)

    @cached_property
    def _by_id(self) -> dict[str, PaymentEntry]:
        return {e.id: e for e in self.entries}

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._by_id

    def __iter__(self) -> Iterator[PaymentEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, entry_id: str) -> PaymentEntry | None:
        """The entry with that id, or ``None`` if the booking has none."""
        return self._by_id.get(entry_id)

    def with_entry(self, entry: PaymentEntry) -> BookingLedger:
        """This ledger with ``entry`` appended."""
        return attrs.evolve(self, entries=(*self.entries, entry))

    def is_tip_money(self, entry: PaymentEntry) -> bool:
        """True if ``entry`` is tip money (see the class docstring)."""
        seen: set[str] = set()
        current = entry
        # Follow reversals back to what they reverse; `seen` guards against a corrupt cycle.
        while current.kind is Kind.REVERSAL and current.reverses is not None:
            if current.id in seen:
                return False
            seen.add(current.id)
            target = self._by_id.get(current.reverses)
            if target is None:
                return False
            current = target
        return current.kind in TIP_KINDS

    @cached_property
    def paid_cents(self) -> int:
        """The booking's paid total: every entry but tip money, disputes counted against it."""
        return sum(e.amount_cents for e in self.entries if not self.is_tip_money(e))

    @cached_property
    def tips_cents(self) -> int:
        """Tip money on the booking, net of tip refunds, disputed tips and reversed tips."""
        return sum(e.amount_cents for e in self.entries if self.is_tip_money(e))

    @cached_property
    def hand_paid_cents(self) -> int:
        """The money recorded by hand and still held: hand payments net of hand refunds and
        of reversals by hand. Card money, wallet credit and tip money are not in it."""
        return sum(
            e.amount_cents
            for e in self.entries
            if e.origin is Origin.HAND and not self.is_tip_money(e)
        )

    @property
    def totals(self) -> LedgerTotals:
        """``paid_cents`` and ``tips_cents`` as one value."""
        return LedgerTotals(paid_cents=self.paid_cents, tips_cents=self.tips_cents)

    @property
    def refundable_cents(self) -> int:
        """The most a hand refund may give back: the money that came in by hand and is still
        held (``hand_paid_cents``), never more than the paid total, never below zero. Card
        money is refunded through the card processor, so it never raises this."""
        return max(min(self.hand_paid_cents, self.paid_cents), 0)

    @cached_property
    def reversed_ids(self) -> frozenset[str]:
        """Ids of entries put back: reversed, or disputes whose whole amount came back."""
        return frozenset(
            e.reverses
            for e in self.entries
            if e.reverses is not None and e.kind in (Kind.REVERSAL, Kind.TIP)
        )

    def reversal_of(self, entry_id: str) -> PaymentEntry | None:
        """The entry that put ``entry_id`` back, if any."""
        for e in self.entries:
            if e.reverses == entry_id and e.kind in (Kind.REVERSAL, Kind.TIP):
                return e
        return None

    def open_refunds_of(self, entry_id: str) -> tuple[PaymentEntry, ...]:
        """Refunds naming ``entry_id`` that have not themselves been reversed."""
        return tuple(
            e
            for e in self.entries
            if e.kind is Kind.REFUND and e.reverses == entry_id and e.id not in self.reversed_ids
        )

    def unrefunded_cents(self, payment_id: str) -> int:
        """What is left of one payment once its open refunds are taken off (0 if reversed)."""
        payment = self._by_id.get(payment_id)
        if payment is None or payment_id in self.reversed_ids:
            return 0
        return payment.amount_cents + sum(r.amount_cents for r in self.open_refunds_of(payment_id))

    def find_card_entry(self, payment_ref: str, *, tip: bool) -> PaymentEntry | None:
        """The latest card charge (or card tip) with that payment intent reference (a
        disputed tip the bank gave back, also a ``TIP``, is not a charge)."""
        wanted = Kind.TIP if tip else Kind.PAYMENT
        for e in reversed(self.entries):
            if (
                e.origin is Origin.PROCESSOR
                and e.kind is wanted
                and e.external_ref == payment_ref
                and e.note != DISPUTE_WON_NOTE
            ):
                return e
        return None

    def find_dispute(self, payment_ref: str, *, tip: bool) -> PaymentEntry | None:
        """The latest dispute on that payment intent, open or closed."""
        wanted = Kind.TIP_REFUND if tip else Kind.DISPUTE
        for e in reversed(self.entries):
            if is_dispute(e) and e.kind is wanted and e.external_ref == payment_ref:
                return e
        return None

    def returned_on(self, dispute: PaymentEntry) -> int:
        """The cents the bank has given back so far on ``dispute`` (an entry of this
        ledger): its partial returns, the ``DISPUTE_WON_NOTE`` entries of its kind on its
        payment intent recorded after it, up to the next dispute on that intent."""
        kind = Kind.TIP if dispute.kind is Kind.TIP_REFUND else Kind.REVERSAL
        returned, after = 0, False
        for e in self.entries:
            if e.id == dispute.id:
                after = True
            elif not after or e.external_ref != dispute.external_ref:
                continue
            elif is_dispute(e) and e.kind is dispute.kind:
                break  # a later dispute on the same money: what follows is its own
            elif e.kind is kind and e.note == DISPUTE_WON_NOTE and e.reverses is None:
                returned += e.amount_cents
        return returned

    def find_open_dispute(self, payment_ref: str, *, tip: bool) -> PaymentEntry | None:
        """The latest dispute on that payment intent not yet put back in full."""
        wanted = Kind.TIP_REFUND if tip else Kind.DISPUTE
        for e in reversed(self.entries):
            if (
                is_dispute(e)
                and e.kind is wanted
                and e.external_ref == payment_ref
                and e.id not in self.reversed_ids
            ):
                return e
        return None


# -- Hand entries: POST /payments and PATCH /payments ------------------------------------


def amount_error(amount_cents: object, maximum: int | None) -> str | None:
    """The field error for an amount that is not a positive int of cents (or over ``maximum``)."""
    if type(amount_cents) is not int or amount_cents <= 0:
        return "Give a positive whole number of cents."
    if maximum is not None and amount_cents > maximum:
        return f"At most {maximum} cents."
    return None


def _note_error(note: str) -> str | None:
    if len(note) > MAX_NOTE_CHARS:
        return f"At most {MAX_NOTE_CHARS} characters."
    return None


def _hand_method_error(kind: Kind, method: Method | None) -> str | None:
    if kind is Kind.REFUND:
        if method in (None, Method.OFFLINE):
            return None
        return (
            "A refund recorded by hand has method OFFLINE (money that did not come in on a card)."
        )
    if method is None:
        return "Give the method: CASH, CHECK, BANK_TRANSFER or OTHER."
    if method is Method.CARD:
        return "Card money comes from the card processor; it cannot be recorded by hand."
    if method not in HAND_METHODS:
        return "OFFLINE is the method of hand refunds; choose CASH, CHECK, BANK_TRANSFER or OTHER."
    return None


def record_by_hand(
    ledger: BookingLedger,
    *,
    entry_id: str,
    kind: Kind,
    amount_cents: int,
    method: Method | None = None,
    note: str = "",
    reverses: str | None = None,
    customer_id: str | None = None,
    other_customer_id: str | None = None,
    at: datetime,
) -> PaymentEntry:
    """The entry ``POST /payments`` writes on ``ledger``'s booking: a PAYMENT, TIP or REFUND.

    Payments and tips are positive with a hand method. A refund is given positive and
    stored negative with method ``OFFLINE``; it may name the hand payment it refunds and
    may not exceed the money that came in by hand (``refundable_cents``: never card money,
    never more than the paid total) nor what is left of the payment it names.
    The entry is filed under ``customer_id``, the booking's customer; ``other_customer_id``
    is a customer the request named who is someone else (not that record, nor merged
    with it), refused like any field problem.
    Field problems raise ``ValidationFailed``; a refund over a limit ``LedgerRuleViolation``.
    """
    errors: dict[str, str] = {}
    if ledger.booking_id is None:
        errors["booking_id"] = "Money recorded by hand belongs to a booking."
    elif other_customer_id is not None:
        # Filed under anyone else, the entry would be listed as theirs while its booking's
        # customer's totals count it, and its reversal would inherit the wrong customer.
        errors["customer_id"] = (
            f"Customer {other_customer_id!r} is not the customer of booking "
            f"{ledger.booking_id!r}; hand money is filed under its booking's customer."
        )
    if kind not in HAND_KINDS:
        errors["kind"] = "Record PAYMENT, TIP or REFUND by hand."
    elif method_error := _hand_method_error(kind, method):
        errors["method"] = method_error
    if amount_problem := amount_error(amount_cents, MAX_HAND_AMOUNT_CENTS):
        errors["amount_cents"] = amount_problem
    if note_error := _note_error(note):
        errors["note"] = note_error
    if reverses is not None and kind is not Kind.REFUND:
        errors["reverses"] = "Only a refund names the payment it refunds."
    elif reverses is not None and reverses not in ledger:
        # One text for a typo, another booking's entry and another company's entry.
        errors["reverses"] = f"No payment {reverses!r} on booking {ledger.booking_id!r}."
    if errors:
        raise ValidationFailed(errors)

    if kind is Kind.REFUND:
        refunded = _check_hand_refund(ledger, amount_cents, reverses)
        if customer_id is None and refunded is not None:
            customer_id = refunded.customer_id
        return PaymentEntry(
            id=entry_id,
            company_id=ledger.company_id,
            booking_id=ledger.booking_id,
            customer_id=customer_id,
            kind=Kind.REFUND,
            method=Method.OFFLINE,
            amount_cents=-amount_cents,
            offline=True,
            note=note,
            reverses=reverses,
            origin=Origin.HAND,
            created_at=at,
        )
    assert method is not None  # _hand_method_error refused a missing method
    return PaymentEntry(
        id=entry_id,
        company_id=ledger.company_id,
        booking_id=ledger.booking_id,
        customer_id=customer_id,
        kind=kind,
        method=method,
        amount_cents=amount_cents,
        offline=True,
        note=note,
        origin=Origin.HAND,
        created_at=at,
    )


def _check_hand_refund(
    ledger: BookingLedger, amount_cents: int, reverses: str | None
) -> PaymentEntry | None:
    refunded = None if reverses is None else ledger.get(reverses)
    if refunded is not None:
        if refunded.kind is not Kind.PAYMENT:
            raise LedgerRuleViolation(
                f"Entry {refunded.id} is a {refunded.kind}, not a payment; "
                "a refund names the payment it refunds."
            )
        if refunded.origin is Origin.PROCESSOR:
            raise LedgerRuleViolation(
                f"Payment {refunded.id} came in on a card; card money is refunded through the "
                "card processor, not by hand."
            )
        if refunded.origin is Origin.WALLET_CREDIT:
            raise LedgerRuleViolation(
                f"Payment {refunded.id} was settled by wallet credit, which has been withdrawn; "
                "it cannot be refunded."
            )
        if refunded.id in ledger.reversed_ids:
            raise LedgerRuleViolation(
                f"Payment {refunded.id} was reversed; nothing is left to refund."
            )
        left = ledger.unrefunded_cents(refunded.id)
        if amount_cents > left:
            raise LedgerRuleViolation(
                f"A refund of {amount_cents} cents exceeds the {left} cents of payment "
                f"{refunded.id} not yet refunded."
            )
    if amount_cents > ledger.refundable_cents:
        raise LedgerRuleViolation(
            f"A refund of {amount_cents} cents exceeds the {ledger.refundable_cents} cents that "
            f"may be refunded by hand on booking {ledger.booking_id}: a hand refund gives back "
            "money recorded by hand (net of earlier refunds and reversals), at most the "
            "booking's paid total. Card money is refunded through the card processor, not by "
            "hand."
        )
    return refunded


def reverse_entry(
    ledger: BookingLedger, original: PaymentEntry, *, entry_id: str, note: str, at: datetime
) -> PaymentEntry:
    """The ``REVERSAL`` that ``PATCH /payments`` writes to undo a wrong hand entry.

    It carries the opposite amount, the original's method, booking and customer, and
    ``reverses`` = the original's id. ``ReversalRefused`` when the original is card money,
    was settled by wallet credit, is itself a reversal, was already reversed, still has
    refunds naming it, or when undoing it would take the paid total, or the money held by
    hand (``hand_paid_cents``), below zero.
    """
    if original.id not in ledger:
        raise ValueError(f"entry {original.id} is not on this ledger")
    if not note.strip():
        raise ValidationFailed({"note": "Say why the entry is reversed."})
    if note_error := _note_error(note):
        raise ValidationFailed({"note": note_error})

    def refuse(reason: str) -> ReversalRefused:
        return ReversalRefused(original.id, reason)

    if original.origin is Origin.PROCESSOR:
        raise refuse(
            "it is card money from the card processor; card money is refunded, not reversed."
        )
    if original.origin is Origin.WALLET_CREDIT:
        raise refuse("entries settled by wallet credit cannot be reversed.")
    if original.kind is Kind.REVERSAL:
        raise refuse("it is itself a reversal; record the entry again instead.")
    if (reversal := ledger.reversal_of(original.id)) is not None:
        raise refuse(f"it was already reversed by {reversal.id}; an entry is never reversed twice.")
    if refunds := ledger.open_refunds_of(original.id):
        names = ", ".join(r.id for r in refunds)
        raise refuse(f"refunds name it ({names}); reverse them first.")
    counted = not ledger.is_tip_money(original)
    if counted and ledger.paid_cents - original.amount_cents < 0:
        raise refuse(
            f"undoing it would take the paid total of booking {ledger.booking_id} below zero "
            f"({ledger.paid_cents} cents paid); reverse the refunds first."
        )
    if counted and ledger.hand_paid_cents - original.amount_cents < 0:
        # Hand refunds give back hand money only; undoing the hand money they gave back
        # would leave them refunding card money.
        raise refuse(
            f"undoing it would take the money recorded by hand on booking "
            f"{ledger.booking_id} below zero ({ledger.hand_paid_cents} cents held by hand); "
            "reverse the hand refunds first."
        )
    return PaymentEntry(
        id=entry_id,
        company_id=original.company_id,
        booking_id=original.booking_id,
        customer_id=original.customer_id,
        kind=Kind.REVERSAL,
        method=original.method,
        amount_cents=-original.amount_cents,
        offline=True,
        note=note,
        reverses=original.id,
        external_ref=original.external_ref,
        origin=Origin.HAND,
        created_at=at,
    )
