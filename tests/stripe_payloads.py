"""Stripe Connect events as Stripe sends them (the fields the service reads, and a few it
does not), built in the tests, and their ``Stripe-Signature`` header computed here, by
hand, as Stripe documents it: ``t=<unix time>,v1=<hex HMAC-SHA256 of "t.body">``."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from typing import Any

SECRET = "whsec_test_" + "k" * 32
"""The signing secret of the test endpoint."""


def sign(body: bytes, secret: str = SECRET, at: int | None = None) -> str:
    """The ``Stripe-Signature`` header of ``body``."""
    timestamp = int(time.time()) if at is None else at
    signed = f"{timestamp}.".encode() + body
    digest = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def encode(event: dict[str, Any]) -> bytes:
    """The body Stripe would send."""
    return json.dumps(event, indent=2).encode()


def event(event_type: str, subject: dict[str, Any], account: str | None) -> dict[str, Any]:
    """An event envelope about ``subject`` on the connected ``account``."""
    envelope: dict[str, Any] = {
        "id": f"evt_{secrets.token_hex(12)}",
        "object": "event",
        "api_version": "2025-03-31",
        "created": int(time.time()),
        "data": {"object": subject},
        "livemode": False,
        "pending_webhooks": 1,
        "request": {"id": None, "idempotency_key": None},
        "type": event_type,
    }
    if account is not None:
        envelope["account"] = account
    return envelope


def charge(
    account: str | None,
    booking_id: str | None,
    amount: int,
    *,
    tip: bool = False,
    payment_intent: str | None = "",
    captured: bool = True,
    event_type: str = "charge.succeeded",
) -> dict[str, Any]:
    """A ``charge.succeeded`` (or ``charge.captured``) event; ``payment_intent=""`` makes
    a fresh ``pi_`` id, None a charge without one."""
    metadata: dict[str, str] = {}
    if booking_id is not None:
        metadata["booking_id"] = booking_id
    if tip:
        metadata["kind"] = "tip"
    subject = {
        "id": f"ch_{secrets.token_hex(12)}",
        "object": "charge",
        "amount": amount,
        "amount_captured": amount if captured else 0,
        "amount_refunded": 0,
        "captured": captured,
        "currency": "usd",
        "metadata": metadata,
        "paid": True,
        "payment_intent": (
            f"pi_{secrets.token_hex(12)}" if payment_intent == "" else payment_intent
        ),
        "refunded": False,
        "status": "succeeded",
    }
    return event(event_type, subject, account)


def refund(
    account: str | None,
    paid: dict[str, Any],
    amount: int,
    *,
    through_service: bool = False,
    status: str = "succeeded",
) -> dict[str, Any]:
    """A ``refund.created`` event refunding ``amount`` of the charge of event ``paid``."""
    paid_charge = paid["data"]["object"]
    subject = {
        "id": f"re_{secrets.token_hex(12)}",
        "object": "refund",
        "amount": amount,
        "charge": paid_charge["id"],
        "currency": "usd",
        "metadata": {"created_via": "booking-api"} if through_service else {},
        "payment_intent": paid_charge["payment_intent"],
        "reason": "requested_by_customer",
        "status": status,
    }
    return event("refund.created", subject, account)


def charge_refunded(account: str | None, paid: dict[str, Any], refunded: int) -> dict[str, Any]:
    """The ``charge.refunded`` event Stripe also sends: the charge with its running total."""
    subject = {**paid["data"]["object"], "amount_refunded": refunded, "refunded": True}
    return event("charge.refunded", subject, account)


def dispute(
    account: str | None,
    paid: dict[str, Any],
    amount: int,
    *,
    status: str = "needs_response",
    event_type: str = "charge.dispute.created",
) -> dict[str, Any]:
    """A dispute event (``charge.dispute.created`` or ``.closed``) on the charge of ``paid``."""
    paid_charge = paid["data"]["object"]
    subject = {
        "id": f"du_{paid_charge['id'][3:]}",
        "object": "dispute",
        "amount": amount,
        "charge": paid_charge["id"],
        "currency": "usd",
        "metadata": {},
        "payment_intent": paid_charge["payment_intent"],
        "reason": "fraudulent",
        "status": status,
    }
    return event(event_type, subject, account)


def deauthorized(account: str) -> dict[str, Any]:
    """``account.application.deauthorized``: the account revoked the platform's access."""
    subject = {"id": "ca_platform", "object": "application", "name": "Booking service"}
    return event("account.application.deauthorized", subject, account)
