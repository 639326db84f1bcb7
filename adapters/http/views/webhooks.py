"""Webhook endpoints as answers (``/webhooks``): the endpoint (never its secret), the
endpoint with its secret (the create and rotate-secret answers only), the delivery log,
a queued test event, and a deleted endpoint."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from attrs import field, frozen

from adapters.http.jsonschema import Keywords, schema
from adapters.http.views.base import Positive, RenderContext, extend
from booking_core.webhook_endpoints import Attempt, Delivery, DeliveryState, WebhookEndpoint

Milliseconds = Annotated[int, Keywords(minimum=0)]


@frozen
class WebhookEndpointView:
    """A webhook endpoint: where events go, which ones, and whether they are sent."""

    id: str
    url: str = field(metadata=schema(description="Where events are POSTed."))
    events: tuple[str, ...] = field(
        metadata=schema(description='Event types subscribed to, or ["*"] for every one.')
    )
    active: bool = field(metadata=schema(description="False: nothing is sent to it."))
    description: str
    disabled_reason: str | None = field(
        metadata=schema(
            description="Why the service turned the endpoint off (the receiver answered"
            " 410 Gone, or every delivery failed for 5 days); null when it did not."
        )
    )
    failing_since: datetime | None = field(
        metadata=schema(
            description="The first failed delivery since the last success; null while"
            " deliveries succeed."
        )
    )
    previous_secret_expires_at: datetime | None = field(
        metadata=schema(
            description="After a secret rotation, until when the previous secret still"
            " signs beside the current one; null otherwise."
        )
    )
    created_at: datetime


@frozen
class WebhookEndpointWithSecretView(WebhookEndpointView):
    """A webhook endpoint with its signing secret: answered once, on create and on
    rotate-secret, and never again."""

    secret: str = field(
        metadata=schema(
            description="whsec_ and the base64 of 32 random bytes: the Standard Webhooks"
            " signing secret. Shown only in this answer.",
            pattern="^whsec_[A-Za-z0-9+/]{43}=$",
        )
    )


@frozen
class DeletedWebhookEndpointView:
    """An endpoint that was deleted, with its pending deliveries and delivery log."""

    id: str
    deleted: Literal[True]


@frozen
class WebhookAttemptView:
    """One attempt at delivering one event to the endpoint."""

    id: str
    delivery_id: str
    event_id: str = field(metadata=schema(description="The webhook-id header sent."))
    event_type: str
    attempt: Positive = field(metadata=schema(description="1 for the first attempt."))
    status_code: int | None = field(
        metadata=schema(description="The receiver's HTTP status; null without an answer.")
    )
    duration_ms: Milliseconds
    error: str | None = field(metadata=schema(description="What went wrong; null on success."))
    next_retry_at: datetime | None = field(
        metadata=schema(
            description="When the delivery is tried again; null once delivered or given up."
        )
    )
    at: datetime


@frozen
class QueuedDeliveryView:
    """An event queued for one endpoint; the worker sends it when it is due."""

    id: str
    event_id: str = field(metadata=schema(description="The webhook-id header it is sent with."))
    event_type: str
    state: DeliveryState
    next_attempt_at: datetime | None


def endpoint_view(
    endpoint: WebhookEndpoint, ctx: RenderContext, *, previous_secret_expires_at: datetime | None
) -> WebhookEndpointView:
    """The view of an endpoint, as every answer but create and rotate-secret shows it."""
    return WebhookEndpointView(
        id=endpoint.id,
        url=endpoint.url,
        events=endpoint.events,
        active=endpoint.active,
        description=endpoint.description,
        disabled_reason=endpoint.disabled_reason,
        failing_since=ctx.time(endpoint.failing_since),
        previous_secret_expires_at=ctx.time(previous_secret_expires_at),
        created_at=ctx.time(endpoint.created_at),
    )


def endpoint_with_secret_view(
    endpoint: WebhookEndpoint,
    secret: str,
    ctx: RenderContext,
    *,
    previous_secret_expires_at: datetime | None,
) -> WebhookEndpointWithSecretView:
    """The create and rotate-secret answer: the endpoint and its new secret."""
    plain = endpoint_view(endpoint, ctx, previous_secret_expires_at=previous_secret_expires_at)
    return extend(plain, WebhookEndpointWithSecretView, secret=secret)


def attempt_view(attempt: Attempt, ctx: RenderContext) -> WebhookAttemptView:
    """One row of an endpoint's delivery log."""
    return WebhookAttemptView(
        id=attempt.id,
        delivery_id=attempt.delivery_id,
        event_id=attempt.event_id,
        event_type=attempt.event_type,
        attempt=attempt.attempt,
        status_code=attempt.status_code,
        duration_ms=attempt.duration_ms,
        error=attempt.error,
        next_retry_at=ctx.time(attempt.next_retry_at),
        at=ctx.time(attempt.at),
    )


def queued_delivery_view(delivery: Delivery, ctx: RenderContext) -> QueuedDeliveryView:
    """A delivery just queued (``POST /webhooks/:id/test``)."""
    return QueuedDeliveryView(
        id=delivery.id,
        event_id=delivery.event_id,
        event_type=delivery.event_type,
        state=delivery.state,
        next_attempt_at=ctx.time(delivery.next_attempt_at),
    )
