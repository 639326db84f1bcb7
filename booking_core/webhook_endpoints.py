"""Webhook endpoints, their deliveries and the delivery log, as the core decides them.

An endpoint (``whk_...``) is a company's URL subscribed to event types (names, or
``["*"]``), with signing secrets: the current one, and for ``ROTATION_OVERLAP`` after a
rotation the previous one too (both sign, as Standard Webhooks allows several ``v1,``
signatures). A ``Delivery`` is one event on its way to one endpoint; each try of it is
written to the endpoint's log as an ``Attempt``. What the worker does with them is
``booking_core.services.webhook_delivery``; the transport (URL policy, signing, HTTP) is
``booking_core.webhooks`` and ``adapters/webhooks``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from attrs import field, frozen

from booking_core.errors import ValidationFailed
from booking_core.events import EventType

ALL_EVENTS = "*"
MAX_URL_LENGTH = 2_000
MAX_DESCRIPTION_LENGTH = 500
MAX_ENDPOINTS_PER_COMPANY = 50
ROTATION_OVERLAP = timedelta(hours=24)
"""How long a rotated-out secret still signs beside the new one."""
DISABLE_AFTER = timedelta(days=5)
"""An endpoint whose deliveries have failed without a success for this long is disabled."""
SUBSCRIBABLE = frozenset(t.value for t in EventType if t is not EventType.WEBHOOK_TEST)
"""Event names an endpoint may list (``webhook.test`` goes to the endpoint it names)."""


def _aware(_: object, attribute: object, value: Any) -> None:
    if value is not None and value.tzinfo is None:
        raise ValueError("webhook instants must be timezone-aware")


@frozen(kw_only=True)
class Secret:
    """A signing secret (``whsec_...``); ``expires_at`` is set once it was rotated out."""

    value: str
    expires_at: datetime | None = field(default=None, validator=_aware)


@frozen(kw_only=True)
class WebhookEndpoint:
    """A company's webhook endpoint."""

    id: str
    company_id: str
    url: str
    events: tuple[str, ...]
    active: bool = True
    description: str = ""
    secrets: tuple[Secret, ...]
    created_at: datetime = field(validator=_aware)
    disabled_reason: str | None = None
    """Why the service turned it off (410 from the receiver, failing for 5 days)."""
    failing_since: datetime | None = field(default=None, validator=_aware)
    """The first failure since the last success; None while deliveries succeed."""
    active_since: datetime | None = field(default=None, validator=_aware)
    """When its owner last turned it back on; None: on since ``created_at``."""

    def subscribes(self, event_type: str) -> bool:
        """True when an event of ``event_type`` goes to this endpoint."""
        if event_type == EventType.WEBHOOK_TEST:
            return False
        return ALL_EVENTS in self.events or event_type in self.events

    def receives(self, event_type: str, recorded_at: datetime) -> bool:
        """True when an event of ``event_type`` recorded at ``recorded_at`` goes to this
        endpoint: it subscribes to the type and was on when the event was recorded (an
        endpoint registered, or turned back on, later never gets earlier events)."""
        return self.subscribes(event_type) and recorded_at >= (self.active_since or self.created_at)

    def signing_secrets(self, now: datetime) -> tuple[str, ...]:
        """The secrets that sign a delivery sent at ``now``: current first."""
        return tuple(s.value for s in self.secrets if s.expires_at is None or s.expires_at > now)


def subscription(events: Iterable[str]) -> tuple[str, ...]:
    """A valid, de-duplicated subscription in the order given; ``["*"]`` stands alone.

    Raises ``ValidationFailed`` on field ``events`` for an empty list, an unknown name or
    ``*`` beside names."""
    wanted = tuple(dict.fromkeys(events))
    if not wanted:
        raise ValidationFailed({"events": 'List at least one event type, or ["*"] for all.'})
    if ALL_EVENTS in wanted:
        if len(wanted) > 1:
            raise ValidationFailed({"events": '"*" subscribes to every event; list it alone.'})
        return wanted
    unknown = [name for name in wanted if name not in SUBSCRIBABLE]
    if unknown:
        raise ValidationFailed(
            {
                "events": f"Unknown event type{'s' if len(unknown) > 1 else ''}"
                f" {', '.join(repr(name) for name in unknown)}; see the webhooks section of"
                " the API reference for the list."
            }
        )
    return wanted


def description(text: str) -> str:
    """A valid description (at most ``MAX_DESCRIPTION_LENGTH`` characters)."""
    if len(text) > MAX_DESCRIPTION_LENGTH:
        raise ValidationFailed(
            {"description": f"Must be at most {MAX_DESCRIPTION_LENGTH} characters."}
        )
    return text


class DeliveryState(StrEnum):
    """Where one event's delivery to one endpoint stands."""

    PENDING = "pending"
    """Waiting for its next attempt (``next_attempt_at``)."""
    DELIVERED = "delivered"
    FAILED = "failed"
    """Gave up: every retry failed, or the endpoint was disabled or deleted."""


@frozen(kw_only=True)
class Delivery:
    """One event on its way to one endpoint. ``message_id`` is the ``webhook-id``: the
    event's id, the same on every retry, so a receiver recognises a duplicate."""

    id: str
    company_id: str
    endpoint_id: str
    event_id: str
    event_type: str
    body: bytes
    """The envelope exactly as sent, the same bytes on every retry."""
    state: DeliveryState = DeliveryState.PENDING
    attempts: int = 0
    next_attempt_at: datetime | None = field(validator=_aware)
    created_at: datetime = field(validator=_aware)
    """The instant of its event (``createdAt`` of the envelope): an endpoint's deliveries
    go out in the order of this instant, then of their ids (``in_endpoint_order``)."""

    @property
    def message_id(self) -> str:
        return self.event_id

    @property
    def order(self) -> tuple[datetime, str]:
        """Where the delivery stands among its endpoint's deliveries: by its event's
        instant, then by id (events of one change share their instant)."""
        return (self.created_at, self.id)

    @property
    def claim_order(self) -> tuple[datetime, datetime, str]:
        """Where a due delivery stands in a claim: a first attempt by its event's instant
        (wherever a lease moved ``next_attempt_at``), a retry by when it came due. So an
        earlier delivery of an endpoint that is due comes before a later one."""
        assert self.next_attempt_at is not None, "a pending delivery has a next attempt"
        due = self.created_at if self.attempts == 0 else self.next_attempt_at
        return (due, self.created_at, self.id)


EndpointKey = tuple[str, str]
"""An endpoint as deliveries name it: ``(company_id, endpoint_id)``."""
Order = tuple[datetime, str]
"""A delivery's place among its endpoint's deliveries (``Delivery.order``)."""


def in_endpoint_order(
    claimed: Iterable[Delivery], waiting: Iterable[tuple[EndpointKey, Order]]
) -> list[Delivery]:
    """The claimed deliveries that may be sent now, in claim order: those no earlier
    delivery of the same endpoint holds back. ``waiting`` is every other pending delivery
    still waiting for its first attempt (another worker holds it, or the claim did not
    take it), as its endpoint and ``Delivery.order``. A delivery waits for every earlier
    delivery of its endpoint to have had a first attempt; one that failed and waits for
    its retry holds nothing back."""
    first_waiting: dict[EndpointKey, Order] = {}
    for endpoint, order in waiting:
        if endpoint not in first_waiting or order < first_waiting[endpoint]:
            first_waiting[endpoint] = order
    sendable = []
    for delivery in sorted(claimed, key=lambda d: d.claim_order):
        held = first_waiting.get((delivery.company_id, delivery.endpoint_id))
        if held is None or delivery.order < held:
            sendable.append(delivery)
    return sendable


@frozen(kw_only=True)
class Attempt:
    """One try of a delivery, as the endpoint's delivery log shows it."""

    id: str
    company_id: str
    endpoint_id: str
    delivery_id: str
    event_id: str
    event_type: str
    attempt: int
    """1 for the first try."""
    status_code: int | None
    duration_ms: int
    error: str | None
    next_retry_at: datetime | None = field(validator=_aware)
    """When the delivery is tried again; None once delivered or given up."""
    at: datetime = field(validator=_aware)
