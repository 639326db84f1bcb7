"""One tree of domain errors. Each carries its data as fields; adapters map classes to codes.

``ValidationFailed``  -> the request's fields are wrong (HTTP ``invalid_request``).
``NotFoundError``     -> an id names nothing the caller's company owns (``not_found``).
``RuleViolation``     -> understood but refused by a business rule (``unprocessable``).
``ConflictError``     -> lost a race with another write (``conflict``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from booking_core.bookings import Booking


class DomainError(Exception):
    """Base of every error the domain raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ValidationFailed(DomainError):
    """One or more fields are missing or invalid; ``field_errors`` maps dotted paths to texts."""

    def __init__(self, field_errors: Mapping[str, str], message: str | None = None) -> None:
        self.field_errors = dict(field_errors)
        super().__init__(message or "Some fields are missing or invalid.")


class UnknownCatalogItem(ValidationFailed):
    """A selection names a catalog id the company does not have."""

    def __init__(self, field: str, item_kind: str, item_id: str) -> None:
        self.field = field
        self.item_kind = item_kind
        self.item_id = item_id
        super().__init__(
            {field: f"No {item_kind} with id {item_id!r}."},
            f"Unknown {item_kind} {item_id!r}.",
        )


class NotFoundError(DomainError):
    """An id names nothing; the message never tells a typo from another company's id."""

    def __init__(self, kind: str, id: str) -> None:
        self.kind = kind
        self.id = id
        super().__init__(f"No such {kind}: {id!r}.")


class RuleViolation(DomainError):
    """The request is understood but a business rule refuses it."""


class ExtraNotOffered(RuleViolation):
    """An extra was chosen on a frequency outside its ``frequencySlugs``."""

    def __init__(self, extra_id: str, extra_name: str, frequency_slug: str) -> None:
        self.extra_id = extra_id
        self.extra_name = extra_name
        self.frequency_slug = frequency_slug
        super().__init__(
            f"Extra {extra_name!r} ({extra_id}) is not offered on frequency {frequency_slug!r}."
        )


class QuantityOutOfBounds(RuleViolation):
    """A parameter or extra quantity lies outside the catalog's bounds."""

    def __init__(
        self,
        field: str,
        item_kind: str,
        item_id: str,
        item_name: str,
        quantity: int,
        minimum: int,
        maximum: int,
    ) -> None:
        self.field = field
        self.item_kind = item_kind
        self.item_id = item_id
        self.item_name = item_name
        self.quantity = quantity
        self.minimum = minimum
        self.maximum = maximum
        super().__init__(
            f"Quantity {quantity} of {item_kind} {item_name!r} ({item_id}) is outside "
            f"{minimum}..{maximum}."
        )


class DuplicateSelection(RuleViolation):
    """The same parameter or extra was selected twice; give one entry with a quantity."""

    def __init__(self, field: str, item_kind: str, item_id: str) -> None:
        self.field = field
        self.item_kind = item_kind
        self.item_id = item_id
        super().__init__(f"{item_kind.capitalize()} {item_id!r} is selected more than once.")


class TooManySelections(RuleViolation):
    """More parameter and extra selections than the limit allows."""

    def __init__(self, count: int, limit: int) -> None:
        self.count = count
        self.limit = limit
        super().__init__(f"{count} parameter and extra selections; at most {limit} are allowed.")


class ManualFeeRefused(RuleViolation):
    """A fee id given as a manual fee is not an active manual fee."""

    def __init__(self, fee_id: str) -> None:
        self.fee_id = fee_id
        super().__init__(f"Fee {fee_id!r} is not an active manual fee.")


class CouponRejected(RuleViolation):
    """A coupon code fails one of its rules; ``rule`` names which."""

    def __init__(self, code: str, rule: str, detail: str) -> None:
        self.code = code
        self.rule = rule
        self.detail = detail
        super().__init__(f"Coupon {code!r} cannot be used: {detail}")


class ReferralRejected(RuleViolation):
    """A referral code cannot be used; ``rule`` names why (``booking_core.referrals``)."""

    def __init__(self, code: str, rule: str, message: str) -> None:
        self.code = code
        self.rule = rule
        super().__init__(message)


class InvalidTransition(RuleViolation):
    """An action is not allowed from the record's current state."""

    def __init__(self, entity: str, entity_id: str, status: str, action: str, reason: str) -> None:
        self.entity = entity
        self.entity_id = entity_id
        self.status = status
        self.action = action
        self.reason = reason
        super().__init__(f"Cannot {action} {entity} {entity_id} ({status}): {reason}")


class ReversalRefused(RuleViolation):
    """A ledger entry cannot be reversed; ``reason`` says why."""

    def __init__(self, entry_id: str, reason: str) -> None:
        self.entry_id = entry_id
        self.reason = reason
        super().__init__(f"Payment {entry_id} cannot be reversed: {reason}")


class LedgerRuleViolation(RuleViolation):
    """A new ledger entry breaks a ledger rule (for instance refunding more than was paid)."""


class ConflictError(DomainError):
    """A concurrent write won; retrying with fresh data may succeed."""


class PriceNotConfirmed(ConflictError):
    """A move would change these visits' prices (``moves``: before, after; the moved
    visit first) and the caller had not confirmed the new totals: nothing was moved.
    Checked in the move's own unit of work, so a price that changed after a page showed
    the move is never taken unseen."""

    def __init__(self, moves: Sequence[tuple[Booking, Booking]]) -> None:
        self.moves = list(moves)
        super().__init__("The move changes the price; confirm the new total first.")


class DomainTaken(ConflictError):
    """Another company has connected the custom domain (stored: one company per domain)."""

    def __init__(self, domain: str) -> None:
        self.domain = domain
        super().__init__(f"the domain {domain!r} is connected to another company")


class UnknownZip(ValidationFailed):
    """A zip code the drive-time source does not know; ``field`` is where it was given."""

    def __init__(self, field: str, zip_code: str) -> None:
        self.field = field
        self.zip_code = zip_code
        super().__init__({field: f"Unknown US zip code {zip_code!r}."}, "Unknown zip code.")


class SlotUnavailable(RuleViolation):
    """The start asked for is not an open slot (hours, notice, area, service, crew).
    ``field`` is the request field that gave the start, when it was not the main one
    (``additional_start_isos.1``)."""

    def __init__(self, start: str, reason: str, field: str | None = None) -> None:
        self.start = start
        self.reason = reason
        self.field = field
        super().__init__(f"{start} is not an open slot: {reason}")

    def naming(self, field: str) -> SlotUnavailable:
        """The same refusal, named on ``field``."""
        return SlotUnavailable(self.start, self.reason, field)


class SlotTaken(ConflictError):
    """Only other jobs stand in the way of the slot: taken between listing and booking,
    as far as the service can tell (it cannot know when the caller listed, so a job
    booked long before reads the same). ``field`` as for ``SlotUnavailable``; ``hint``
    says what to do instead."""

    def __init__(
        self,
        start: str,
        crew_id: str | None = None,
        field: str | None = None,
        hint: str = "list availability again",
    ) -> None:
        self.start = start
        self.crew_id = crew_id
        self.field = field
        self.hint = hint
        who = f" for crew member {crew_id}" if crew_id else ""
        super().__init__(f"The slot at {start}{who} is taken by another job; {hint}.")

    def naming(self, field: str, hint: str | None = None) -> SlotTaken:
        """The same refusal, named on ``field`` (with another ``hint`` when given)."""
        return SlotTaken(self.start, self.crew_id, field, hint or self.hint)


class SelfServiceClosed(RuleViolation):
    """A customer's own change (on the tracking page) inside the company's self-service
    cutoff; the message is the sentence the customer reads."""

    def __init__(self, booking_id: str, cutoff_hours: int, company_name: str) -> None:
        self.booking_id = booking_id
        self.cutoff_hours = cutoff_hours
        self.company_name = company_name
        hours = "1 hour" if cutoff_hours == 1 else f"{cutoff_hours} hours"
        if cutoff_hours >= 48 and cutoff_hours % 24 == 0:
            hours = f"{cutoff_hours // 24} days"
        super().__init__(
            f"Changes online close {hours} before the visit. "
            f"Call or email {company_name} to change it."
        )
