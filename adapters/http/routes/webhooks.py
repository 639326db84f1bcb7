"""``/webhooks``: register, list, fetch, change and delete a company's webhook endpoints;
read an endpoint's delivery log; queue a test event; rotate the signing secret.

The ``whsec_`` secret is in the create and rotate-secret answers only. Neither write
takes an ``Idempotency-Key``: the stored answer would keep the secret in the idempotency
table for a day, and SPEC.md asks for keys on money and calendar writes only.
"""

from __future__ import annotations

from typing import Annotated

import attrs
from attrs import frozen

from adapters.http.endpoint import Context, Endpoint, Reply
from adapters.http.jsonschema import Keywords
from adapters.http.structuring import Cursor, Limit
from adapters.http.views.webhooks import (
    DeletedWebhookEndpointView,
    QueuedDeliveryView,
    WebhookAttemptView,
    WebhookEndpointView,
    WebhookEndpointWithSecretView,
    attempt_view,
    endpoint_view,
    endpoint_with_secret_view,
    queued_delivery_view,
)
from booking_core.paging import DEFAULT_LIMIT
from booking_core.services import webhooks as cases
from booking_core.webhook_endpoints import (
    ALL_EVENTS,
    MAX_DESCRIPTION_LENGTH,
    MAX_URL_LENGTH,
    SUBSCRIBABLE,
    WebhookEndpoint,
)

SCOPE = "webhooks:manage"

# The ceilings are the core's (``booking_core.webhook_endpoints``), checked by the use case
# beside the URL policy and the subscription, so one answer names every problem; here
# they only describe the fields.
WebhookUrl = Annotated[
    str,
    Keywords(
        minLength=1,
        maxLength=MAX_URL_LENGTH,
        description="A public https URL (docs/webhooks.md, URL policy).",
    ),
]
EventName = Annotated[str, Keywords(enum=[ALL_EVENTS, *sorted(SUBSCRIBABLE)])]
Description = Annotated[str, Keywords(maxLength=MAX_DESCRIPTION_LENGTH)]
EventNames = Annotated[tuple[EventName, ...], Keywords(minItems=1)]
"""At least one: an endpoint subscribed to nothing is refused (``["*"]`` is every event)."""


@frozen(kw_only=True)
class WebhookBody:
    """A new endpoint: its URL and the event types it subscribes to (``["*"]``: all)."""

    url: WebhookUrl
    events: EventNames
    description: Description = ""
    active: bool = True


@frozen(kw_only=True)
class WebhookPatch:
    """Change the URL (checked again), the subscription, the active state or the
    description; a field left out is kept."""

    url: WebhookUrl = attrs.field(default=cases.UNSET)  # type: ignore[assignment]
    events: EventNames = attrs.field(default=cases.UNSET)
    active: bool = attrs.field(default=cases.UNSET)  # type: ignore[assignment]
    description: Description = attrs.field(default=cases.UNSET)  # type: ignore[assignment]


@frozen(kw_only=True)
class NoFields:
    """The body of a write that takes no field (a test, a secret's rotation): it may be
    left out or ``{}``; any field is refused as unknown, as on every other route."""


@frozen(kw_only=True)
class NewestFirstQuery:
    """``limit`` and ``cursor``: a list that is newest first only (these records carry no
    change stamps, so ``updatedSince`` is refused as an unknown parameter)."""

    limit: Limit = attrs.field(default=DEFAULT_LIMIT, metadata={"description": "rows per page"})
    cursor: Cursor | None = attrs.field(
        default=None, metadata={"description": "nextCursor of the previous page"}
    )

    @property
    def updated_since(self) -> None:
        """Never given (what ``Context.page_request`` reads of a list query)."""
        return None


def _view(ctx: Context, endpoint: WebhookEndpoint) -> WebhookEndpointView:
    expiry = cases.previous_secret_expiry(endpoint, ctx.now())
    return endpoint_view(endpoint, ctx.render(), previous_secret_expires_at=expiry)


def _with_secret(ctx: Context, endpoint: WebhookEndpoint, secret: str, status: int) -> Reply:
    expiry = cases.previous_secret_expiry(endpoint, ctx.now())
    view = endpoint_with_secret_view(
        endpoint, secret, ctx.render(), previous_secret_expires_at=expiry
    )
    return Reply(view, status)


def _urls(ctx: Context) -> cases.UrlPolicy:
    return cases.UrlPolicy(resolver=ctx.deps.resolver, allow_hosts=ctx.deps.webhook_allow_hosts)


def get_webhooks(ctx: Context) -> Reply:
    """The company's endpoints, newest first."""
    page = ctx.page_request("webhooks", {})
    result = cases.list_endpoints(ctx.company_id, page, uow=ctx.deps.read())
    return ctx.page_reply(result, lambda endpoint: _view(ctx, endpoint))


def post_webhook(ctx: Context) -> Reply:
    """Register an endpoint: 201 with its secret, shown this once."""
    body: WebhookBody = ctx.body
    endpoint, secret = cases.create_endpoint(
        cases.CreateEndpoint(
            company_id=ctx.company_id,
            url=body.url,
            events=body.events,
            description=body.description,
            active=body.active,
        ),
        uow=ctx.deps.uow(),
        clock=ctx.deps.clock,
        urls=_urls(ctx),
    )
    return _with_secret(ctx, endpoint, secret, 201)


def get_webhook(ctx: Context) -> Reply:
    """One endpoint (without its secret)."""
    endpoint = cases.get_endpoint(ctx.company_id, ctx.path_params["id"], uow=ctx.deps.read())
    return Reply(_view(ctx, endpoint))


def patch_webhook(ctx: Context) -> Reply:
    """Change the URL, the subscription, the active state or the description."""
    body: WebhookPatch = ctx.body
    endpoint = cases.update_endpoint(
        cases.UpdateEndpoint(
            company_id=ctx.company_id,
            endpoint_id=ctx.path_params["id"],
            url=body.url,
            events=body.events,
            active=body.active,
            description=body.description,
        ),
        uow=ctx.deps.uow(),
        urls=_urls(ctx),
        clock=ctx.deps.clock,
    )
    return Reply(_view(ctx, endpoint))


def delete_webhook(ctx: Context) -> Reply:
    """Stop delivering to an endpoint: it goes with its pending deliveries and its log."""
    endpoint_id = ctx.path_params["id"]
    cases.delete_endpoint(ctx.company_id, endpoint_id, uow=ctx.deps.uow())
    return Reply(DeletedWebhookEndpointView(id=endpoint_id, deleted=True))


def get_deliveries(ctx: Context) -> Reply:
    """The endpoint's delivery log, one row per attempt, newest first."""
    endpoint_id = ctx.path_params["id"]
    page = ctx.page_request("webhook-deliveries", {"endpoint": endpoint_id})
    result = cases.list_deliveries(ctx.company_id, endpoint_id, page, uow=ctx.deps.read())
    render = ctx.render()
    return ctx.page_reply(result, lambda attempt: attempt_view(attempt, render))


def post_test(ctx: Context) -> Reply:
    """Queue a ``webhook.test`` event for this endpoint: 202, sent by the worker."""
    delivery = cases.send_test(
        ctx.company_id, ctx.path_params["id"], uow=ctx.deps.uow(), clock=ctx.deps.clock
    )
    return Reply(queued_delivery_view(delivery, ctx.render()), 202)


def post_rotate_secret(ctx: Context) -> Reply:
    """A new signing secret, shown this once; the old one signs beside it for 24 hours."""
    endpoint, secret = cases.rotate_secret(
        ctx.company_id, ctx.path_params["id"], uow=ctx.deps.uow(), clock=ctx.deps.clock
    )
    return _with_secret(ctx, endpoint, secret, 200)


ENDPOINTS = [
    Endpoint(
        method="GET",
        path="/webhooks",
        scope=SCOPE,
        handler=get_webhooks,
        response=WebhookEndpointView,
        paginated=True,
        query=NewestFirstQuery,
        tag="webhooks",
        summary="List the company's webhook endpoints, newest first",
    ),
    Endpoint(
        method="POST",
        path="/webhooks",
        scope=SCOPE,
        handler=post_webhook,
        response=WebhookEndpointWithSecretView,
        body=WebhookBody,
        success_status=201,
        tag="webhooks",
        summary="Register an endpoint; its signing secret is in this answer only",
    ),
    Endpoint(
        method="GET",
        path="/webhooks/{id}",
        scope=SCOPE,
        handler=get_webhook,
        response=WebhookEndpointView,
        tag="webhooks",
        summary="One webhook endpoint",
    ),
    Endpoint(
        method="PATCH",
        path="/webhooks/{id}",
        scope=SCOPE,
        handler=patch_webhook,
        response=WebhookEndpointView,
        body=WebhookPatch,
        tag="webhooks",
        summary="Change the URL, the subscription, the active state or the description",
    ),
    Endpoint(
        method="DELETE",
        path="/webhooks/{id}",
        scope=SCOPE,
        handler=delete_webhook,
        response=DeletedWebhookEndpointView,
        tag="webhooks",
        summary="Stop delivering to an endpoint; its pending deliveries and log go too",
    ),
    Endpoint(
        method="GET",
        path="/webhooks/{id}/deliveries",
        scope=SCOPE,
        handler=get_deliveries,
        response=WebhookAttemptView,
        paginated=True,
        query=NewestFirstQuery,
        tag="webhooks",
        summary="The endpoint's delivery log: one row per attempt, newest first",
    ),
    Endpoint(
        method="POST",
        path="/webhooks/{id}/test",
        scope=SCOPE,
        handler=post_test,
        response=QueuedDeliveryView,
        body=NoFields,
        success_status=202,
        tag="webhooks",
        summary="Queue a webhook.test event for this endpoint",
    ),
    Endpoint(
        method="POST",
        path="/webhooks/{id}/rotate-secret",
        scope=SCOPE,
        handler=post_rotate_secret,
        body=NoFields,
        response=WebhookEndpointWithSecretView,
        tag="webhooks",
        summary="A new signing secret (in this answer only); the old one signs for 24 hours",
    ),
]
