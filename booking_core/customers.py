"""Customers: one record per email per company, saved addresses, merges, and the churn
risk and lifetime statistics computed from their visits."""

from __future__ import annotations

import enum
import itertools
import re
import string
import unicodedata
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

import attrs
from attrs import frozen

from booking_core.coupons import normalize_code
from booking_core.errors import RuleViolation, ValidationFailed
from booking_core.ids import crockford_code
from booking_core.plain_text import one_line_problem, person_name_problem, shows_something

NAME_MAX = 200
EMAIL_MAX = 254
EMAIL_LOCAL_MAX = 64
PHONE_MAX = 40
CITY_MAX = 120
STREET_MAX = 200
ACCESS_NOTES_MAX = 2_000
# ASCII digits only and ``\Z``: ``\d`` takes any Unicode digit, ``$`` a trailing newline.
ZIP_PATTERN = re.compile(r"^[0-9]{5}\Z")
REFERRAL_CODE_LENGTH = 8
"""A referral code is this many Crockford characters (``K7Q3XM2P``)."""
DEFAULT_CADENCE = timedelta(days=30)
"""Assumed visit cadence for a customer with fewer than two completed visits."""


def new_referral_code() -> str:
    """A fresh random referral code: ``REFERRAL_CODE_LENGTH`` Crockford characters."""
    return crockford_code(REFERRAL_CODE_LENGTH)


def referral_key(code: str) -> str:
    """A typed referral code in the form codes are stored and matched in: trimmed and
    case-insensitive (``coupons.normalize_code``), in capitals."""
    return normalize_code(code).upper()


def normalize_email(email: str) -> str:
    """The form emails are compared in: stripped and lower-cased."""
    return email.strip().lower()


_ATEXT = frozenset(string.ascii_letters + string.digits + "!#$%&'*+/=?^_`{|}~-")
"""RFC 5322 ``atext``: what a local part may hold besides dots (no quoted strings)."""
_LABEL_TEXT = frozenset(string.ascii_letters + string.digits + "-")
_WORD_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Nd"})
"""The non-ASCII characters an address may hold: letters, marks, decimal digits."""


def _word(text: str, ascii_allowed: frozenset[str]) -> bool:
    """True when ``text`` is non-empty and each character is in ``ascii_allowed`` or a
    non-ASCII letter, mark or decimal digit (so no space, control, format character such
    as U+200B or a bidi control, and no punctuation lookalike such as a full-width @)."""
    return bool(text) and all(
        ch in ascii_allowed if ch.isascii() else unicodedata.category(ch) in _WORD_CATEGORIES
        for ch in text
    )


def email_problem(email: str) -> str | None:
    """Why ``email`` (taken as it is) is not one plain address, or None when it is.

    ``local@domain``: the local part of at most 64 characters, dot-separated runs of
    RFC 5322 ``atext``; the domain of two or more labels, each of letters, digits and
    hyphens, neither starting nor ending with a hyphen, the last not all digits and
    at least two long; at most 254 characters in all. Non-ASCII letters are taken
    (internationalised addresses); spaces, controls and format characters are not."""
    if len(email) > EMAIL_MAX:
        return f"At most {EMAIL_MAX} characters."
    local, at, domain = email.rpartition("@")
    if not at:
        return "Not an email address."
    if len(local) > EMAIL_LOCAL_MAX:
        return f"At most {EMAIL_LOCAL_MAX} characters before the @."
    labels = domain.split(".")
    if (
        not all(_word(atom, _ATEXT) for atom in local.split("."))
        or len(labels) < 2
        or not all(
            _word(label, _LABEL_TEXT) and len(label) <= 63 and "-" not in (label[0], label[-1])
            for label in labels
        )
        or len(labels[-1]) < 2
        or labels[-1].isdigit()
    ):
        return "Not an email address."
    return None


def is_email_address(text: str) -> bool:
    """True when ``text``, exactly as given, is one plain address (``email_problem``)."""
    return email_problem(text) is None


def name_errors(name: str, field: str = "name") -> dict[str, str]:
    """The problem of a person's name as typed (a customer's, a lead's), under ``field``:
    required, at most ``NAME_MAX`` characters, and ``plain_text.person_name_problem``."""
    if not name.strip() or len(name) > NAME_MAX:
        return {field: f"Required, at most {NAME_MAX} characters."}
    problem = person_name_problem(name.strip())
    return {field: problem} if problem else {}


def email_errors(email: str, field: str = "email") -> dict[str, str]:
    """Field errors for an email address as typed (surrounding spaces are dropped, and
    not counted); empty when it is acceptable. The service's one email rule:
    ``email_problem``."""
    email = email.strip()
    if len(email) > EMAIL_MAX:
        return {field: f"At most {EMAIL_MAX} characters."}
    problem = email_problem(email)
    return {field: problem} if problem else {}


def _state_code(value: str) -> str:
    """A two-letter state code in capitals, however typed (``ny`` is ``NY``); anything
    else as it came (``Address.errors`` names it)."""
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z]{2}", value):
        return value.upper()
    return value


@frozen
class Address:
    """A US street address; ``zip`` is five digits; ``state`` a two-letter code, kept in
    capitals."""

    line1: str
    city: str
    state: str = attrs.field(converter=_state_code)
    zip: str = attrs.field()
    line2: str = ""
    access_notes: str = ""

    def errors(self, prefix: str = "address") -> dict[str, str]:
        """Field errors, keyed by dotted path under ``prefix``."""
        errors: dict[str, str] = {}
        for name, value, limit in (
            ("line1", self.line1, STREET_MAX),
            ("line2", self.line2, STREET_MAX),
            ("city", self.city, CITY_MAX),
            ("access_notes", self.access_notes, ACCESS_NOTES_MAX),
        ):
            if len(value) > limit:
                errors[f"{prefix}.{name}"] = f"At most {limit} characters."
        for name, value in (("line1", self.line1), ("city", self.city), ("state", self.state)):
            if not value.strip():
                errors[f"{prefix}.{name}"] = "Required."
            elif not shows_something(value):  # a zero-width space alone prints as nothing
                errors[f"{prefix}.{name}"] = "Required: at least one visible character."
        for name, value in (("line1", self.line1), ("line2", self.line2), ("city", self.city)):
            if problem := one_line_problem(value):
                errors.setdefault(f"{prefix}.{name}", problem)
        if not re.fullmatch(r"[A-Za-z]{2}", self.state):
            errors.setdefault(f"{prefix}.state", "A two-letter state code.")
        if not ZIP_PATTERN.match(self.zip):
            errors[f"{prefix}.zip"] = "A 5-digit US zip code."
        return errors


@frozen
class SavedAddress:
    """An address kept on a customer's record."""

    id: str
    address: Address


@frozen
class Customer:
    """A company's customer. ``merged_into`` names the survivor of a merge."""

    id: str
    company_id: str
    name: str
    email: str
    phone: str | None
    created_at: datetime
    updated_at: datetime
    addresses: tuple[SavedAddress, ...] = ()
    default_address_id: str | None = None
    merged_into: str | None = None
    notes: str = ""
    referral_code: str = attrs.field(factory=new_referral_code, kw_only=True)
    """The code this customer gives friends (unique in the company; a merged record's
    code stands for its survivor)."""

    @property
    def email_key(self) -> str:
        """The normalised email that is unique per company."""
        return normalize_email(self.email)

    @property
    def default_address(self) -> Address | None:
        """The default saved address, if any."""
        for saved in self.addresses:
            if saved.id == self.default_address_id:
                return saved.address
        return None


def new_customer(
    *,
    customer_id: str,
    company_id: str,
    name: str,
    email: str,
    phone: str | None,
    at: datetime,
    address: SavedAddress | None = None,
) -> Customer:
    """Build a customer after checking its fields; the address becomes the default."""
    errors = email_errors(email)
    errors.update(name_errors(name))
    if phone is not None and len(phone) > PHONE_MAX:
        errors["phone"] = f"At most {PHONE_MAX} characters."
    if address is not None:
        errors.update(address.address.errors())
    if errors:
        raise ValidationFailed(errors)
    return Customer(
        id=customer_id,
        company_id=company_id,
        name=name.strip(),
        email=email.strip(),
        phone=phone,
        created_at=at,
        updated_at=at,
        addresses=(address,) if address else (),
        default_address_id=address.id if address else None,
    )


def add_address(
    customer: Customer, saved: SavedAddress, *, at: datetime, default: bool
) -> Customer:
    """Save another address; the first one saved, or one marked default, becomes the default."""
    errors = saved.address.errors()
    if errors:
        raise ValidationFailed(errors)
    make_default = default or customer.default_address_id is None
    return attrs.evolve(
        customer,
        addresses=(*customer.addresses, saved),
        default_address_id=saved.id if make_default else customer.default_address_id,
        updated_at=at,
    )


def with_contact(customer: Customer, *, name: str, phone: str | None, at: datetime) -> Customer:
    """The customer with a new name and phone (``None``: no phone), after checking them as
    ``new_customer`` does. The email stays: it is the record's identity in the company."""
    errors: dict[str, str] = {}
    errors.update(name_errors(name))
    if phone is not None and len(phone) > PHONE_MAX:
        errors["phone"] = f"At most {PHONE_MAX} characters."
    if errors:
        raise ValidationFailed(errors)
    return attrs.evolve(customer, name=name.strip(), phone=phone, updated_at=at)


def replace_address(
    customer: Customer, saved: SavedAddress, *, at: datetime, default: bool
) -> Customer:
    """The customer with the saved address of ``saved.id`` replaced by ``saved`` (made the
    default when ``default``); ``ValidationFailed`` for a bad address, ``RuleViolation``
    for an id the customer has no address of."""
    if all(kept.id != saved.id for kept in customer.addresses):
        raise RuleViolation(f"Customer {customer.id} has no saved address {saved.id}.")
    errors = saved.address.errors()
    if errors:
        raise ValidationFailed(errors)
    return attrs.evolve(
        customer,
        addresses=tuple(saved if kept.id == saved.id else kept for kept in customer.addresses),
        default_address_id=saved.id if default else customer.default_address_id,
        updated_at=at,
    )


def remove_address(customer: Customer, address_id: str, *, at: datetime) -> Customer:
    """The customer without the saved address ``address_id``; when it was the default, the
    first address left becomes the default. ``RuleViolation`` for an unknown id."""
    kept = tuple(saved for saved in customer.addresses if saved.id != address_id)
    if len(kept) == len(customer.addresses):
        raise RuleViolation(f"Customer {customer.id} has no saved address {address_id}.")
    default = customer.default_address_id
    if default == address_id:
        default = kept[0].id if kept else None
    return attrs.evolve(customer, addresses=kept, default_address_id=default, updated_at=at)


def merge(survivor: Customer, merged: Customer, *, at: datetime) -> tuple[Customer, Customer]:
    """Merge ``merged`` into ``survivor``: the survivor gains the other's addresses (its
    default stays; an address it already has is not saved again) and a phone it lacked;
    the merged record points at the survivor."""
    if survivor.id == merged.id:
        raise RuleViolation("A customer cannot be merged into itself.")
    if survivor.company_id != merged.company_id:
        raise RuleViolation("Customers of different companies cannot be merged.")
    for record in (survivor, merged):
        if record.merged_into is not None:
            raise RuleViolation(f"Customer {record.id} was already merged into another.")
    known = {saved.id for saved in survivor.addresses}
    places = {saved.address for saved in survivor.addresses}  # one it has is not saved twice
    gained = tuple(
        saved for saved in merged.addresses if saved.id not in known and saved.address not in places
    )
    new_survivor = attrs.evolve(
        survivor,
        addresses=(*survivor.addresses, *gained),
        default_address_id=survivor.default_address_id or merged.default_address_id,
        phone=survivor.phone or merged.phone,
        updated_at=at,
    )
    return new_survivor, attrs.evolve(merged, merged_into=survivor.id, updated_at=at)


@frozen(kw_only=True)
class CustomerMerge:
    """What a merge did: ``merged_id`` was merged into ``survivor_id`` (the subject of the
    ``customer.merged`` event)."""

    company_id: str
    survivor_id: str
    merged_id: str


MAX_MERGE_HOPS = 16
"""How many merges ``merge_survivor`` follows before it gives up on a chain."""


def merge_survivor(customer: Customer, lookup: Callable[[str], Customer]) -> Customer:
    """The record that stands for ``customer`` now: itself, or the survivor its merges
    lead to (``lookup`` reads a customer of the same company by id).

    A merged record may be merged again, so the walk follows ``merged_into`` hop by hop;
    ``merge`` never forms a cycle, but a chain longer than ``MAX_MERGE_HOPS`` (or one that
    loops through data written by other means) is refused rather than followed forever.
    """
    current = customer
    for _ in range(MAX_MERGE_HOPS):
        if current.merged_into is None:
            return current
        current = lookup(current.merged_into)
    if current.merged_into is None:
        return current
    raise RuleViolation(
        f"Customer {customer.id} leads through more than {MAX_MERGE_HOPS} merges; "
        "merge it into its survivor directly."
    )


def same_customer(one: Customer, other: Customer, lookup: Callable[[str], Customer]) -> bool:
    """True when two records stand for one customer now: the same record, or records
    whose merges lead to the same survivor (``merge_survivor``, with its ``lookup``)."""
    if one.id == other.id:
        return True
    return merge_survivor(one, lookup).id == merge_survivor(other, lookup).id


class VisitStatus(enum.StrEnum):
    """The statuses a visit can have (DECISIONS.md, booking statuses)."""

    SCHEDULED = "scheduled"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    CANCELLED = "cancelled"


@frozen
class Visit:
    """What churn and lifetime statistics need to know of one visit."""

    start: datetime
    status: VisitStatus


@frozen
class Lifetime:
    """A customer's lifetime statistics."""

    bookings: int
    completed: int
    cancelled: int
    paid_cents: int
    first_visit_at: datetime | None
    last_visit_at: datetime | None
    next_visit_at: datetime | None


class ChurnLevel(enum.StrEnum):
    """Coarse churn risk."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


@frozen
class ChurnRisk:
    """Churn risk: a ``score`` of 0..100 and its ``level``."""

    level: ChurnLevel
    score: int


def lifetime(visits: Sequence[Visit], *, paid_cents: int, at: datetime) -> Lifetime:
    """Counts and dates over every visit; ``paid_cents`` comes from the ledger."""
    completed = sorted(v.start for v in visits if v.status is VisitStatus.COMPLETED)
    upcoming = sorted(
        v.start
        for v in visits
        if v.status in (VisitStatus.SCHEDULED, VisitStatus.IN_PROGRESS) and v.start >= at
    )
    return Lifetime(
        bookings=len(visits),
        completed=len(completed),
        cancelled=sum(1 for v in visits if v.status is VisitStatus.CANCELLED),
        paid_cents=paid_cents,
        first_visit_at=completed[0] if completed else None,
        last_visit_at=completed[-1] if completed else None,
        next_visit_at=upcoming[0] if upcoming else None,
    )


def churn_risk(visits: Sequence[Visit], *, at: datetime) -> ChurnRisk:
    """Risk from time since the last visit against the customer's usual cadence, plus
    cancellations. A customer with a visit still to come is not overdue.

    overdue part: 0 while within one cadence, rising 50 points per extra cadence, at most 80;
    cancellation part: the share of cancelled visits among the last ten, times 40.
    A customer with no visits at all scores 0 (low): there is no visit to be overdue on.
    """
    if not visits:
        return _risk(0)
    stats = lifetime(visits, paid_cents=0, at=at)
    # Ties on start are broken by status so the order visits arrive in never matters.
    recent = sorted(visits, key=lambda v: (v.start, v.status))[-10:]
    cancelled_share = sum(1 for v in recent if v.status is VisitStatus.CANCELLED) / len(recent)
    cancellation_part = round(40 * cancelled_share)
    if stats.next_visit_at is not None or stats.last_visit_at is None:
        return _risk(cancellation_part)
    completed = sorted(v.start for v in visits if v.status is VisitStatus.COMPLETED)
    gaps = sorted(b - a for a, b in itertools.pairwise(completed))
    # The median gap is the usual cadence (upper median for an even count).
    cadence = gaps[len(gaps) // 2] if gaps else DEFAULT_CADENCE
    cadence = max(cadence, timedelta(days=1))
    overdue = (at - stats.last_visit_at) / cadence
    overdue_part = min(80, max(0, round((overdue - 1) * 50)))
    return _risk(overdue_part + cancellation_part)


def _risk(score: int) -> ChurnRisk:
    score = max(0, min(100, score))
    level = ChurnLevel.LOW if score < 34 else ChurnLevel.MEDIUM if score < 67 else ChurnLevel.HIGH
    return ChurnRisk(level, score)
