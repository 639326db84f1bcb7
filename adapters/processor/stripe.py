"""Stripe Connect events, verified with the official ``stripe`` library and read into
``IngestProcessorEvent`` values (docs/processor.md has the contract a company follows).

Which Stripe events land, and as what:

- ``charge.succeeded`` (a captured charge) and ``charge.captured`` (a charge captured
  later): card money for the booking in the charge's ``metadata.booking_id``; a tip when
  ``metadata.kind`` is ``tip``. Reference: the payment intent id, else the charge id.
- ``refund.created``: one refund, of the refund's own ``amount``. ``charge.refunded`` and
  ``charge.refund.updated`` report the same refunds again (the charge's running total,
  or a later change of a refund) and are acknowledged without landing, so each refund
  lands once. A refund whose ``metadata.created_via`` is ``booking-api`` was made through
  the service; any other was made in Stripe's dashboard (or by other means outside the
  service) and carries the dashboard note.
- ``charge.dispute.created``: a dispute (inquiries, status ``warning_*``, move no money
  and are acknowledged). ``charge.dispute.closed``: ``won`` returns the disputed amount;
  ``lost`` moves nothing more.
- ``account.application.deauthorized``: the account is disconnected.

Every other type is acknowledged as ignored. An amount above ``MAX_AMOUNT_CENTS`` (more
than Stripe ever takes, and more than one ledger entry carries) makes the body no Stripe
event: refused like one, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import stripe

from booking_core.errors import ValidationFailed
from booking_core.ledger import MAX_AMOUNT_CENTS
from booking_core.services.processor import (
    ChargeNotice,
    DeauthorizedNotice,
    DisputeNotice,
    DisputeWonNotice,
    IgnoredNotice,
    IngestProcessorEvent,
    Notice,
    RefundNotice,
)

TOLERANCE_SECONDS = 300
"""How old a signature's timestamp may be (Stripe's default): older replays are refused."""
SIGNATURE_HEADER = "Stripe-Signature"
SERVICE_REFUND_KEY = "created_via"
SERVICE_REFUND_VALUE = "booking-api"
"""The refund metadata that marks a refund made through the service, not the dashboard."""
LANDED_REFUND_STATUSES = frozenset({"succeeded", "pending"})
"""Refund statuses whose money is going back; ``failed`` and ``canceled`` move none."""
NOT_LANDED_AGAIN = "Refunds land once each, from refund.created."


class _Unusable(Exception):
    """The event lacks what landing it needs; ``reason`` says what."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class StripeWebhook:
    """Reads the events Stripe sends to a Connect webhook endpoint signed with ``secret``."""

    def __init__(self, secret: str, tolerance: int = TOLERANCE_SECONDS) -> None:
        self._secret = secret
        self._tolerance = tolerance

    def read(self, payload: bytes, signature: str | None) -> IngestProcessorEvent:
        """The event in ``payload`` once its ``Stripe-Signature`` verifies (with
        ``stripe.Webhook.construct_event``); ``ValidationFailed`` when it does not, or when
        the signed body is no Stripe event."""
        try:
            event = stripe.Webhook.construct_event(
                payload, signature, self._secret, tolerance=self._tolerance
            )
        except stripe.SignatureVerificationError:
            raise ValidationFailed(
                {SIGNATURE_HEADER: "Missing, expired, or not made with this endpoint's secret."},
                "The Stripe-Signature header does not verify this body.",
            ) from None
        except (ValueError, TypeError, AttributeError):  # bad UTF-8 or JSON, not an object
            raise _not_an_event() from None
        return read_event(event.to_dict())


def _not_an_event() -> ValidationFailed:
    return ValidationFailed({"body": "Not a Stripe event."}, "The body is not a Stripe event.")


def read_event(event: Mapping[str, Any]) -> IngestProcessorEvent:
    """What a (verified) Stripe event reports; ``ValidationFailed`` if it has no id or type."""
    event_id, event_type = event.get("id"), event.get("type")
    if not isinstance(event_id, str) or not event_id or not isinstance(event_type, str):
        raise _not_an_event()
    account = event.get("account")
    data = event.get("data")
    found = data.get("object") if isinstance(data, Mapping) else None
    subject: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    reader = READERS.get(event_type)
    notice: Notice
    if reader is None:
        notice = IgnoredNotice(f"Events of type {event_type} are not ingested.")
    else:
        try:
            notice = reader(subject)
        except _Unusable as unusable:
            notice = IgnoredNotice(unusable.reason)
    return IngestProcessorEvent(
        event_id=event_id,
        event_type=event_type,
        account_id=account if isinstance(account, str) and account else None,
        notice=notice,
    )


def _charge(charge: Mapping[str, Any]) -> Notice:
    if charge.get("captured") is not True:
        return IgnoredNotice("The charge is not captured yet; charge.captured lands it.")
    metadata = _metadata(charge)
    booking_id = metadata.get("booking_id")
    if not isinstance(booking_id, str) or not booking_id.strip():
        return IgnoredNotice("The charge's metadata names no booking_id.")
    kind = metadata.get("kind", "payment")
    if kind not in ("payment", "tip"):
        return IgnoredNotice("The charge's metadata kind is neither payment nor tip.")
    captured = "amount_captured" if "amount_captured" in charge else "amount"
    reference = _id_of(charge.get("payment_intent")) or _id_of(charge.get("id"))
    if reference is None:
        raise _Unusable("The charge has no id.")
    return ChargeNotice(
        booking_id=booking_id.strip(),
        payment_ref=reference,
        amount_cents=_amount(charge, captured, "charge"),
        tip=kind == "tip",
    )


def _refund(refund: Mapping[str, Any]) -> Notice:
    status = refund.get("status")
    if status not in LANDED_REFUND_STATUSES:
        return IgnoredNotice(f"The refund is {status}: no money went back.")
    return RefundNotice(
        card_refs=_card_refs(refund, "refund"),
        amount_cents=_amount(refund, "amount", "refund"),
        from_dashboard=_metadata(refund).get(SERVICE_REFUND_KEY) != SERVICE_REFUND_VALUE,
    )


def _dispute_created(dispute: Mapping[str, Any]) -> Notice:
    if str(dispute.get("status", "")).startswith("warning_"):
        return IgnoredNotice("An inquiry, not a dispute: no money moved.")
    return DisputeNotice(
        card_refs=_card_refs(dispute, "dispute"),
        amount_cents=_amount(dispute, "amount", "dispute"),
    )


def _dispute_closed(dispute: Mapping[str, Any]) -> Notice:
    status = dispute.get("status")
    if status == "won":
        return DisputeWonNotice(
            card_refs=_card_refs(dispute, "dispute"),
            returned_cents=_amount(dispute, "amount", "dispute"),
        )
    if status == "lost":
        return IgnoredNotice("The dispute was lost: the disputed money stays out.")
    return IgnoredNotice(f"The dispute closed as {status}: no money moved.")


def _deauthorized(_: Mapping[str, Any]) -> Notice:
    return DeauthorizedNotice()


def _already_landed(_: Mapping[str, Any]) -> Notice:
    return IgnoredNotice(NOT_LANDED_AGAIN)


READERS: dict[str, Callable[[Mapping[str, Any]], Notice]] = {
    "charge.succeeded": _charge,
    "charge.captured": _charge,
    "refund.created": _refund,
    "charge.refunded": _already_landed,
    "charge.refund.updated": _already_landed,
    "charge.dispute.created": _dispute_created,
    "charge.dispute.closed": _dispute_closed,
    "account.application.deauthorized": _deauthorized,
}
"""The event types read, by the reader of their ``data.object``."""


def _metadata(subject: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = subject.get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


def _id_of(value: object) -> str | None:
    """An id given as text, or as an expanded object carrying it."""
    if isinstance(value, Mapping):
        value = value.get("id")
    return value if isinstance(value, str) and value else None


def _card_refs(subject: Mapping[str, Any], what: str) -> tuple[str, ...]:
    """The references that may name the card money: payment intent, then charge."""
    refs = [_id_of(subject.get("payment_intent")), _id_of(subject.get("charge"))]
    found = tuple(dict.fromkeys(ref for ref in refs if ref is not None))
    if not found:
        raise _Unusable(f"The {what} names no charge.")
    return found


def _amount(subject: Mapping[str, Any], key: str, what: str) -> int:
    """The positive amount at ``key``. None there is unusable (ignored); one over
    ``MAX_AMOUNT_CENTS``, above any amount Stripe takes, makes the body no Stripe event."""
    amount = subject.get(key)
    if type(amount) is not int or amount <= 0:
        raise _Unusable(f"The {what} has no positive {key}.")
    if amount > MAX_AMOUNT_CENTS:
        raise ValidationFailed(
            {
                "body": f"data.object.{key} is over {MAX_AMOUNT_CENTS} cents, the most one "
                "ledger entry carries (and more than Stripe takes)."
            },
            "The body is not a Stripe event: its amount is out of range.",
        )
    return amount
