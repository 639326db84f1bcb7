"""Outbound webhooks as the core decides them: secrets, signatures, retries, URL policy.

Signing follows Standard Webhooks (standardwebhooks.com), so a receiver can verify a
delivery with any of its libraries: the signed content is
``{webhook-id}.{webhook-timestamp}.{body}``, the key is the base64-decoded part of the
``whsec_...`` secret, and ``webhook-signature`` is ``v1,<base64 HMAC-SHA256>``; several
secrets (a rotated-out one still valid beside the new one) give several signatures
separated by spaces, and a receiver holding either secret accepts the delivery.

The retry schedule (``RETRY_DELAYS``, ``next_attempt_at``) and the URL policy
(``check_url``, re-exported from ``booking_core.webhook_urls``) are described in
docs/webhooks.md. Nothing here touches the network or the clock: the sender is
``adapters.webhooks``, and the caller passes ``now`` and a random source.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from secrets import token_bytes

from booking_core.webhook_urls import (
    CheckedUrl,
    address_problem,
    allowed_hosts,
    check_url,
)

__all__ = [
    "JITTER",
    "MAX_ATTEMPTS",
    "MAX_RETRY_AFTER",
    "RETRY_DELAYS",
    "SECRET_PREFIX",
    "CheckedUrl",
    "address_problem",
    "allowed_hosts",
    "check_url",
    "headers",
    "new_secret",
    "next_attempt_at",
    "sign",
]

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32
SIGNATURE_VERSION = "v1"
CONTENT_TYPE = "application/json"

RETRY_DELAYS: tuple[timedelta, ...] = (
    timedelta(seconds=5),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=5),
    timedelta(hours=10),
    timedelta(hours=10),
)
"""The wait after each failed attempt: after the first, about 5 s; after the seventh,
about 10 h; the eighth failure is the last (about 27.6 h after the first attempt)."""
MAX_ATTEMPTS = 1 + len(RETRY_DELAYS)
"""Attempts of one delivery, the first included."""
JITTER = 0.2
"""Each wait is stretched or shrunk by up to this fraction, at random, so the deliveries
that failed together (a receiver's outage) do not all come back at the same instant."""
MAX_RETRY_AFTER = timedelta(hours=10)
"""The most a receiver's ``Retry-After`` postpones a retry: the longest step of the
schedule, so no answer holds a delivery back longer than the schedule itself would."""


def new_secret() -> str:
    """A fresh signing secret: ``whsec_`` and the base64 of 32 random bytes."""
    key = token_bytes(SECRET_BYTES)
    return SECRET_PREFIX + base64.b64encode(key).decode("ascii")


def sign(secrets: Sequence[str], message_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` value: one ``v1,<base64>`` per secret, space-separated,
    in the order given.

    ``timestamp`` is the ``webhook-timestamp`` (whole seconds since the epoch) and
    ``body`` the exact bytes sent. Raises ``ValueError`` for no secret or one that is not
    ``whsec_`` and base64."""
    if isinstance(secrets, str):
        raise TypeError("sign takes a sequence of secrets, not one secret")
    if not secrets:
        raise ValueError("at least one secret signs a webhook")
    content = f"{message_id}.{timestamp}.".encode() + body
    return " ".join(
        f"{SIGNATURE_VERSION},"
        + base64.b64encode(hmac.digest(_key(secret), content, hashlib.sha256)).decode("ascii")
        for secret in secrets
    )


def headers(secrets: Sequence[str], message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The headers of one delivery: ``webhook-id`` (the same on every retry of it, so a
    receiver recognises a duplicate), ``webhook-timestamp`` (this attempt's), the
    ``webhook-signature`` of ``sign`` and ``content-type: application/json``."""
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(secrets, message_id, timestamp, body),
        "content-type": CONTENT_TYPE,
    }


def envelope(
    event_id: str, event_type: str, created_at: datetime, data: Mapping[str, object]
) -> bytes:
    """The body of a delivery: ``{"id", "type", "createdAt", "data"}`` as compact UTF-8
    JSON. ``data`` is already plain JSON (the resource as the API renders it);
    ``created_at`` is written ISO 8601 with its own offset (the company's, as the API
    writes every time)."""
    if created_at.tzinfo is None:
        raise ValueError("created_at must be timezone-aware")
    document = {
        "id": event_id,
        "type": event_type,
        "createdAt": created_at.isoformat(),
        "data": data,
    }
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def next_attempt_at(
    attempt: int,
    now: datetime,
    random: Callable[[], float],
    retry_after: float | None = None,
) -> datetime | None:
    """When to try a delivery again after its attempt number ``attempt`` (1 = the first)
    failed at ``now``; None when that was the last (``MAX_ATTEMPTS``).

    The wait is ``RETRY_DELAYS[attempt - 1]`` times ``1 ± JITTER`` (``random()`` in
    [0, 1]: 0 waits the least, 0.5 exactly the schedule, 1 the most). A receiver's
    ``retry_after`` (seconds, from a 429 or 503) postpones it, never hastens it, and counts
    for at most ``MAX_RETRY_AFTER``; the attempts are counted all the same."""
    if attempt < 1:
        raise ValueError("attempts are counted from 1")
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    if attempt > len(RETRY_DELAYS):
        return None
    draw = random()
    if not 0.0 <= draw <= 1.0:
        raise ValueError(f"random() must give a number in [0, 1], not {draw}")
    wait = RETRY_DELAYS[attempt - 1] * (1 + JITTER * (2 * draw - 1))
    if retry_after is not None and retry_after > 0:  # NaN is not > 0
        asked = min(retry_after, MAX_RETRY_AFTER.total_seconds())
        wait = max(wait, timedelta(seconds=asked))
    return now + wait


def _key(secret: str) -> bytes:
    if not secret.startswith(SECRET_PREFIX):
        raise ValueError(f"a webhook secret starts with {SECRET_PREFIX}")
    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except binascii.Error:
        raise ValueError(f"a webhook secret is {SECRET_PREFIX} and base64") from None
    if not key:
        raise ValueError("a webhook secret is not empty")
    return key
