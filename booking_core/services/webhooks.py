"""Webhook endpoint use cases: register, change, remove and read endpoints, read an
endpoint's delivery log, queue a ``webhook.test`` event, and rotate the signing secret.

The URL policy needs the ``Resolver`` port and the allowed hosts
(``BOOKING_WEBHOOK_ALLOW_HOSTS``); both are passed in. A URL is resolved before the unit
of work begins, so no database transaction waits on DNS. Every field problem of one
request is reported at once (``url``, ``events``, ``description``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from datetime import datetime
from functools import partial
from typing import TypeVar
from zoneinfo import ZoneInfo

import attrs
from attrs import frozen

from booking_core.errors import InvalidTransition, RuleViolation, ValidationFailed
from booking_core.events import EventType
from booking_core.ids import new_id
from booking_core.paging import Page, PageRequest
from booking_core.ports import Clock, Resolver, UnitOfWork
from booking_core.webhook_endpoints import (
    MAX_ENDPOINTS_PER_COMPANY,
    MAX_URL_LENGTH,
    ROTATION_OVERLAP,
    Attempt,
    Delivery,
    Secret,
    WebhookEndpoint,
    description,
    subscription,
)
from booking_core.webhooks import check_url, envelope, new_secret

T = TypeVar("T")


class _Unset:
    """The type of ``UNSET``."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET = _Unset()
"""Marks a field of ``UpdateEndpoint`` that is not being changed."""


class TooManyEndpoints(RuleViolation):
    """The company already has ``MAX_ENDPOINTS_PER_COMPANY`` endpoints."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(
            f"A company may have at most {limit} webhook endpoints; delete one it no longer"
            " uses first (one endpoint may subscribe to any number of event types)."
        )


@frozen(kw_only=True)
class UrlPolicy:
    """What webhook URLs are checked with: the ``Resolver`` port, and the hosts exempt
    from the https and public-address rules (for development and tests only)."""

    resolver: Resolver
    allow_hosts: Collection[str] = frozenset()

    def check(self, url: str) -> str:
        """``url`` as an endpoint keeps it, if the policy accepts it: without its fragment
        (from the first ``#``), which is never sent. ``ValidationFailed`` on ``url``
        otherwise."""
        if len(url) > MAX_URL_LENGTH:
            raise ValidationFailed({"url": f"Must be at most {MAX_URL_LENGTH} characters."})
        check_url(url, self.resolver, self.allow_hosts)
        return url.partition("#")[0]


class _Problems:
    """Collects the field problems of one request, to raise them together."""

    def __init__(self) -> None:
        self.found: dict[str, str] = {}
        self.messages: list[str] = []

    def check(self, rule: Callable[[], T]) -> T | None:
        try:
            return rule()
        except ValidationFailed as failed:
            self.found.update(failed.field_errors)
            self.messages.append(failed.message)
            return None

    def raise_any(self) -> None:
        if self.found:
            # One problem keeps its own message (a refused URL says why); several, the sum.
            message = self.messages[0] if len(self.messages) == 1 else None
            raise ValidationFailed(self.found, message)


@frozen(kw_only=True)
class CreateEndpoint:
    """``POST /webhooks``: a URL and the event types it subscribes to."""

    company_id: str
    url: str
    events: tuple[str, ...]
    description: str = ""
    active: bool = True


def create_endpoint(
    cmd: CreateEndpoint, *, uow: UnitOfWork, clock: Clock, urls: UrlPolicy
) -> tuple[WebhookEndpoint, str]:
    """The new endpoint and its signing secret (``whsec_...``), which is shown only now.

    Raises ``ValidationFailed`` naming every wrong field, and ``TooManyEndpoints`` when the
    company has ``MAX_ENDPOINTS_PER_COMPANY`` already."""
    problems = _Problems()
    url = problems.check(partial(urls.check, cmd.url))
    events = problems.check(partial(subscription, cmd.events))
    text = problems.check(partial(description, cmd.description))
    problems.raise_any()
    assert url is not None
    assert events is not None
    assert text is not None
    secret = new_secret()
    with uow:
        if uow.webhooks.count(cmd.company_id) >= MAX_ENDPOINTS_PER_COMPANY:
            raise TooManyEndpoints(MAX_ENDPOINTS_PER_COMPANY)
        endpoint = WebhookEndpoint(
            id=new_id("whk"),
            company_id=cmd.company_id,
            url=url,
            events=events,
            active=cmd.active,
            description=text,
            secrets=(Secret(value=secret),),
            created_at=clock.now(),
        )
        uow.webhooks.add(endpoint)
        uow.commit()
    return endpoint, secret


@frozen(kw_only=True)
class UpdateEndpoint:
    """``PATCH /webhooks/:id``: change the URL (checked again), the subscription, the
    active state or the description (``UNSET`` = keep)."""

    company_id: str
    endpoint_id: str
    url: str | _Unset = UNSET
    events: tuple[str, ...] | _Unset = UNSET
    active: bool | _Unset = UNSET
    description: str | _Unset = UNSET


def update_endpoint(
    cmd: UpdateEndpoint, *, uow: UnitOfWork, urls: UrlPolicy, clock: Clock
) -> WebhookEndpoint:
    """The changed endpoint.

    Turning an endpoint on again clears why the service had turned it off
    (``disabled_reason``) and its failing streak (``failing_since``), and notes when
    (``active_since``): events recorded while it was off are never sent to it. Turning it
    off marks its pending deliveries failed: nothing is sent to it while it is off, and
    nothing queued meanwhile is sent when it comes back."""
    problems = _Problems()
    url = None if isinstance(cmd.url, _Unset) else problems.check(partial(urls.check, cmd.url))
    events = (
        None
        if isinstance(cmd.events, _Unset)
        else problems.check(partial(subscription, cmd.events))
    )
    text = (
        None
        if isinstance(cmd.description, _Unset)
        else problems.check(partial(description, cmd.description))
    )
    problems.raise_any()
    with uow:
        endpoint = uow.webhooks.get_for_update(cmd.company_id, cmd.endpoint_id)
        active = endpoint.active if isinstance(cmd.active, _Unset) else cmd.active
        revived = active and not endpoint.active
        changed = attrs.evolve(
            endpoint,
            url=endpoint.url if url is None else url,
            events=endpoint.events if events is None else events,
            description=endpoint.description if text is None else text,
            active=active,
            disabled_reason=None if revived else endpoint.disabled_reason,
            failing_since=None if revived else endpoint.failing_since,
            active_since=clock.now() if revived else endpoint.active_since,
        )
        if changed == endpoint:
            return endpoint
        uow.webhooks.save(changed)
        if endpoint.active and not changed.active:
            uow.webhooks.drop_pending(cmd.company_id, cmd.endpoint_id)
        uow.commit()
    return changed


def delete_endpoint(company_id: str, endpoint_id: str, *, uow: UnitOfWork) -> None:
    """Remove the endpoint, its pending deliveries and its delivery log."""
    with uow:
        uow.webhooks.delete(company_id, endpoint_id)
        uow.commit()


def get_endpoint(company_id: str, endpoint_id: str, *, uow: UnitOfWork) -> WebhookEndpoint:
    """One endpoint; ``NotFoundError`` for an id the company does not have."""
    with uow:
        return uow.webhooks.get(company_id, endpoint_id)


def list_endpoints(company_id: str, page: PageRequest, *, uow: UnitOfWork) -> Page[WebhookEndpoint]:
    """A page of the company's endpoints, newest first."""
    with uow:
        return uow.webhooks.list(company_id, page)


def list_deliveries(
    company_id: str, endpoint_id: str, page: PageRequest, *, uow: UnitOfWork
) -> Page[Attempt]:
    """A page of the endpoint's delivery log (one row per attempt), newest first;
    ``NotFoundError`` for an endpoint the company does not have."""
    with uow:
        uow.webhooks.get(company_id, endpoint_id)
        return uow.webhooks.attempts(company_id, endpoint_id, page)


def send_test(company_id: str, endpoint_id: str, *, uow: UnitOfWork, clock: Clock) -> Delivery:
    """Queue a ``webhook.test`` event for this endpoint alone (it is never fanned out by
    subscription), due now; the worker sends it like any delivery.

    Its body is the envelope with ``data: {"webhookId": <endpoint id>}``. An inactive
    endpoint refuses it (``InvalidTransition``): nothing would be sent."""
    now = clock.now()
    with uow:
        endpoint = uow.webhooks.get(company_id, endpoint_id)
        if not endpoint.active:
            raise InvalidTransition(
                "webhook endpoint",
                endpoint.id,
                "inactive",
                "send a test event to",
                "it is turned off; turn it on (PATCH with active: true) first",
            )
        zone = ZoneInfo(uow.companies.get(company_id).timezone)
        event_id = new_id("evt")
        body = envelope(
            event_id, EventType.WEBHOOK_TEST.value, now.astimezone(zone), {"webhookId": endpoint.id}
        )
        delivery = Delivery(
            id=new_id("dlv"),
            company_id=company_id,
            endpoint_id=endpoint.id,
            event_id=event_id,
            event_type=EventType.WEBHOOK_TEST.value,
            body=body,
            next_attempt_at=now,
            created_at=now,
        )
        uow.webhooks.add_deliveries([delivery])
        uow.commit()
    return delivery


def rotated(endpoint: WebhookEndpoint, secret: str, now: datetime) -> WebhookEndpoint:
    """``endpoint`` signing with ``secret`` first; the secret it had signs beside it until
    ``now + ROTATION_OVERLAP``. Secrets rotated out earlier keep their own expiry, and are
    dropped once it has passed."""
    current = [s for s in endpoint.secrets if s.expires_at is None]
    earlier = [s for s in endpoint.secrets if s.expires_at is not None and s.expires_at > now]
    retiring = [attrs.evolve(s, expires_at=now + ROTATION_OVERLAP) for s in current]
    return attrs.evolve(endpoint, secrets=(Secret(value=secret), *retiring, *earlier))


def rotate_secret(
    company_id: str, endpoint_id: str, *, uow: UnitOfWork, clock: Clock
) -> tuple[WebhookEndpoint, str]:
    """The endpoint with a new signing secret, and that secret (shown only now). For
    ``ROTATION_OVERLAP`` (24 hours) deliveries carry a signature with the old one too."""
    secret = new_secret()
    with uow:
        endpoint = rotated(
            uow.webhooks.get_for_update(company_id, endpoint_id), secret, clock.now()
        )
        uow.webhooks.save(endpoint)
        uow.commit()
    return endpoint, secret


def previous_secret_expiry(endpoint: WebhookEndpoint, now: datetime) -> datetime | None:
    """When the last secret still signing beside the current one stops, if any does."""
    expiries: Iterable[datetime] = (
        s.expires_at for s in endpoint.secrets if s.expires_at is not None and s.expires_at > now
    )
    return max(expiries, default=None)
