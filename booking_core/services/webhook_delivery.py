"""The webhook worker's use cases: fan events out into deliveries, and deliver what is due.

``dispatch_events`` claims events the outbox has not handed on yet and, in the same
transaction, writes one ``Delivery`` per active endpoint subscribed to the event's type
(the body rendered once, so every retry sends the same bytes), then marks the events
dispatched. ``deliver_due`` claims the deliveries whose time has come, sends each one
outside any transaction, and records the attempt and the delivery's new state in a unit
of its own. Its parts serve a worker that keeps sending while it claims again:
``claim_shares`` (the claim, shared out by endpoint), ``send_share`` (one endpoint's
share, one delivery after another) and ``release`` (what a share left unsent). Nothing
here runs a thread; the worker (``entrypoints.worker``) does.

Concurrency (docs/webhooks.md, "The worker"):

- Claims skip rows another worker holds (``FOR UPDATE SKIP LOCKED`` on PostgreSQL; SQLite
  runs one writer at a time), and a claimed delivery is leased: its ``next_attempt_at``
  moves to the end of the lease, committed before anything is sent, so no other worker
  claims it meanwhile. A delivery is sent only while at least ``SEND_BUDGET`` of its
  lease remains, so two workers never send one delivery at the same time.
- Order: per endpoint, first attempts go out in the order of their events (the
  event's instant, then the delivery's id), one at a time even across workers: a claim
  takes no delivery while an earlier one of its endpoint has not had its first attempt
  (``WebhookRepository.claim_due``, ``webhook_endpoints.in_endpoint_order``). A failed
  delivery holds nothing back: its retry comes when due, after later events.
- Delivery is at least once. A worker killed after a send but before recording it
  leaves the delivery leased; when the lease ends, another worker sends it again with the
  same ``webhook-id`` (the event id), which is how a receiver recognises the duplicate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Protocol
from zoneinfo import ZoneInfo

import attrs
from attrs import frozen

from booking_core.errors import NotFoundError
from booking_core.events import Event
from booking_core.ids import new_id
from booking_core.ports import Clock, UnitOfWork
from booking_core.webhook_endpoints import (
    DISABLE_AFTER,
    Attempt,
    Delivery,
    DeliveryState,
    WebhookEndpoint,
)
from booking_core.webhooks import headers, next_attempt_at

DISPATCH_BATCH = 200
"""Events fanned out per transaction."""
DELIVERY_BATCH = 50
"""Deliveries claimed at once by one worker."""
LEASE = timedelta(minutes=2)
"""How long a claimed delivery is held by its worker before another may take it."""
SEND_BUDGET = timedelta(seconds=30)
"""The least lease left for a send to start. An attempt ends by its 25 s deadline (the
sender's ``total_timeout``, all addresses and a trickling answer included), so its lease
outlasts it."""

Render = Callable[[Event, UnitOfWork], bytes]
"""The body of an event's deliveries (the envelope, its ``data`` the subject as the API
renders it), read inside the dispatching unit of work."""


class SendOutcome(StrEnum):
    """What one attempt came to, as the sender says it."""

    DELIVERED = "delivered"
    FAILED = "failed"
    GONE = "gone"


class Sent(Protocol):
    """One attempt's result (``adapters.webhooks.AttemptResult`` is one)."""

    @property
    def outcome(self) -> str:
        """``delivered`` (2xx), ``gone`` (410) or ``failed`` (anything else)."""
        ...

    @property
    def status_code(self) -> int | None: ...

    @property
    def duration_ms(self) -> int: ...

    @property
    def error(self) -> str | None: ...

    @property
    def retry_after(self) -> int | None:
        """Seconds the receiver asked to wait (429, 503), or None."""
        ...


Send = Callable[[str, Mapping[str, str], bytes], Sent]
"""POST the body with the headers to the URL, checking the URL again first (the worker's
transport: ``WebhookSender.check_and_deliver`` with a resolver and the allow list)."""


@frozen
class Dispatched:
    """What one ``dispatch_events`` call did."""

    events: int
    """Events marked dispatched (with or without a subscriber)."""
    deliveries: int
    """Deliveries written."""
    unrenderable: tuple[tuple[Event, str], ...] = ()
    """Events whose body could not be rendered, each with why (the exception's type and
    message). They are left undispatched, to be tried again by the next call, while the
    events beside them go on: one broken event holds up nothing behind it, and a passing
    failure loses nothing. The worker logs each as ``webhook.render_failed``."""

    @property
    def claimed(self) -> int:
        """Events this call claimed: dispatched, or left for the next call."""
        return self.events + len(self.unrenderable)


@frozen
class Disabled:
    """An endpoint the worker turned off (logged as ``webhook.disabled``)."""

    company_id: str
    endpoint_id: str
    reason: str
    dropped: int
    """Pending deliveries given up with it."""


@frozen
class Delivered:
    """What one ``deliver_due`` call did."""

    claimed: int = 0
    attempts: tuple[Attempt, ...] = ()
    """Every attempt sent and recorded, in order (an attempt to an endpoint deleted while
    it was on its way is recorded nowhere, and not counted)."""
    dropped: int = 0
    """Deliveries given up unsent: their endpoint was turned off or deleted."""
    released: int = 0
    """Claimed deliveries handed back unsent, due at once (the worker was stopping)."""
    delivered: int = 0
    """Recorded attempts the receiver took (2xx)."""
    disabled: tuple[Disabled, ...] = ()


def dispatch_events(
    *, uow: UnitOfWork, render: Render, clock: Clock, limit: int = DISPATCH_BATCH
) -> Dispatched:
    """Fan up to ``limit`` undispatched events out into deliveries, in one transaction.

    Each event becomes one pending ``Delivery`` (due now, and ordered by the event's
    instant among its endpoint's deliveries) per active endpoint of its company subscribed
    to its type and on when the event was recorded (``WebhookEndpoint.receives``); an
    event nobody receives is marked dispatched all the same. An event whose body
    ``render`` cannot make is left undispatched for the next call and reported in
    ``Dispatched.unrenderable``; the others go on."""
    with uow:
        events = uow.outbox.claim_undispatched(limit)
        if not events:
            return Dispatched(0, 0)
        now = clock.now()
        endpoints: dict[str, Sequence[WebhookEndpoint]] = {}
        deliveries: list[Delivery] = []
        unrenderable: list[tuple[Event, str]] = []
        for event in events:
            if event.company_id not in endpoints:
                endpoints[event.company_id] = uow.webhooks.active(event.company_id)
            targets = [
                e for e in endpoints[event.company_id] if e.receives(event.type, event.created_at)
            ]
            if not targets:
                continue
            try:
                body = render(event, uow)
            except Exception as exc:  # a bug or a record that no longer decodes
                unrenderable.append((event, f"{type(exc).__name__}: {exc}"))
                continue
            deliveries.extend(
                Delivery(
                    id=new_id("dlv"),
                    company_id=event.company_id,
                    endpoint_id=endpoint.id,
                    event_id=event.id,
                    event_type=event.type.value,
                    body=body,
                    next_attempt_at=now,
                    created_at=event.created_at,
                )
                for endpoint in targets
            )
        uow.webhooks.add_deliveries(deliveries)
        left = {e.id for e, _ in unrenderable}
        done = [e.id for e in events if e.id not in left]
        uow.outbox.mark_dispatched(done, now)
        uow.commit()
    return Dispatched(len(done), len(deliveries), tuple(unrenderable))


@frozen
class Share:
    """One endpoint's part of a claim: its deliveries in claim order, to be sent one
    after another (``send_share``)."""

    company_id: str
    endpoint_id: str
    deliveries: tuple[Delivery, ...]

    @property
    def endpoint(self) -> tuple[str, str]:
        """The endpoint as deliveries name it: ``(company_id, endpoint_id)``."""
        return (self.company_id, self.endpoint_id)


@attrs.define
class ShareSent:
    """What one endpoint's share of a claim came to."""

    attempts: list[Attempt] = attrs.field(factory=list)
    disabled: list[Disabled] = attrs.field(factory=list)
    unsent: list[Delivery] = attrs.field(factory=list)
    """Not sent (a stop, or too little lease left): for ``release``."""
    dropped: int = 0
    delivered: int = 0


def deliver_due(
    *,
    uow_factory: Callable[[], UnitOfWork],
    send: Send,
    clock: Clock,
    random: Callable[[], float],
    limit: int = DELIVERY_BATCH,
    lease: timedelta = LEASE,
    stop: Callable[[], bool] = lambda: False,
) -> Delivered:
    """Claim up to ``limit`` due deliveries (``claim_shares``), attempt each once
    (``send_share``, one share after another) and hand back what was left unsent
    (``release``): one whole round, finished before it returns.

    A worker that must not wait for a slow endpoint's share before claiming again uses
    the three parts itself (``entrypoints.worker``: each share on a thread of its own,
    a new claim as soon as one is free)."""
    shares = claim_shares(uow_factory=uow_factory, clock=clock, limit=limit, lease=lease)
    results = [
        send_share(share, send=send, uow_factory=uow_factory, clock=clock, random=random, stop=stop)
        for share in shares
    ]
    unsent = [d for result in results for d in result.unsent]
    released = release(unsent, uow_factory=uow_factory, clock=clock) if unsent else 0
    return Delivered(
        claimed=sum(len(share.deliveries) for share in shares),
        attempts=tuple(a for result in results for a in result.attempts),
        dropped=sum(result.dropped for result in results),
        released=released,
        delivered=sum(result.delivered for result in results),
        disabled=tuple(d for result in results for d in result.disabled),
    )


def claim_shares(
    *,
    uow_factory: Callable[[], UnitOfWork],
    clock: Clock,
    limit: int = DELIVERY_BATCH,
    lease: timedelta = LEASE,
) -> list[Share]:
    """Claim up to ``limit`` due deliveries, leased for ``lease``, shared out by endpoint.

    The claim takes no delivery while an earlier delivery of its endpoint still waits for
    its first attempt (here, or with another worker): each endpoint gets its first
    attempts in the order of their events. A delivery that failed and waits for its retry
    holds nothing back, so a retry may arrive after later events.

    Each share holds one endpoint's deliveries in claim order, to go one after another;
    shares may be sent at once, so a slow receiver holds back only its own endpoint's.
    The shares come taking the companies in turn (each company's first endpoint, then
    each one's second, ...), so one company's many endpoints never queue ahead of every
    other company's.

    ``lease`` must be longer than ``SEND_BUDGET`` (else nothing would ever be sent)."""
    if lease <= SEND_BUDGET:
        raise ValueError(f"a lease must be longer than the send budget of {SEND_BUDGET}")
    now = clock.now()
    with uow_factory() as uow:
        claimed = list(uow.webhooks.claim_due(now, now + lease, limit))
        uow.commit()
    return _by_endpoint(claimed)


def _by_endpoint(claimed: Sequence[Delivery]) -> list[Share]:
    """The claim's deliveries by endpoint, each in claim order; the endpoints taken from
    the companies in turn (every company's first endpoint, then every second, ...)."""
    endpoints: dict[tuple[str, str], list[Delivery]] = {}
    for delivery in claimed:
        endpoints.setdefault((delivery.company_id, delivery.endpoint_id), []).append(delivery)
    by_company: dict[str, list[Share]] = {}
    for (company_id, endpoint_id), deliveries in endpoints.items():
        share = Share(company_id, endpoint_id, tuple(deliveries))
        by_company.setdefault(company_id, []).append(share)
    rounds = max((len(shares) for shares in by_company.values()), default=0)
    return [
        shares[turn]
        for turn in range(rounds)
        for shares in by_company.values()
        if turn < len(shares)
    ]


def send_share(
    share: Share,
    *,
    send: Send,
    uow_factory: Callable[[], UnitOfWork],
    clock: Clock,
    random: Callable[[], float],
    stop: Callable[[], bool] = lambda: False,
    on_attempt: Callable[[Attempt, Disabled | None], None] = lambda attempt, disabled: None,
) -> ShareSent:
    """Attempt each delivery of one endpoint's share once, one after another.

    For each: the endpoint is read afresh (deleted, or turned off: the delivery is given
    up unsent), the body is signed with its current secrets and sent with no transaction
    open, and the attempt is recorded with the delivery's new state: delivered on 2xx; on
    a failure retried at ``next_attempt_at`` (``random`` draws the jitter), or failed
    after the last attempt or when the endpoint was turned off during the send. A 410, or
    failures without a success for ``DISABLE_AFTER``, turn the endpoint off and give up
    its pending deliveries. The attempt's time (``Attempt.at``, and ``failing_since``
    when it starts a failing streak) is when it started: the instant whose seconds are
    its ``webhook-timestamp``. ``stop()`` is asked before each send; once it says so, or
    when less than ``SEND_BUDGET`` of a delivery's lease is left, the delivery is left in
    ``ShareSent.unsent`` (for ``release``). ``on_attempt`` hears of each attempt as soon
    as it is recorded (with the endpoint it turned off, if any): the worker logs it then,
    not when the whole share is done."""
    sent = ShareSent()
    for delivery in share.deliveries:
        if stop() or _lease_left(delivery, clock.now()) < SEND_BUDGET:
            # Not sent: its lease holds it until it ends (a stop hands it back sooner).
            sent.unsent.append(delivery)
            continue
        endpoint = _sendable_endpoint(delivery, uow_factory)
        if endpoint is None:
            sent.dropped += 1
            continue
        started = clock.now()
        signed = headers(
            endpoint.signing_secrets(started), delivery.message_id, _epoch(started), delivery.body
        )
        result = send(endpoint.url, signed, delivery.body)
        recorded = _record(
            delivery, result, started, uow_factory=uow_factory, clock=clock, random=random
        )
        if recorded is None:
            continue  # the endpoint was deleted on the way: nothing to count it against
        sent.attempts.append(recorded[0])
        if result.outcome == SendOutcome.DELIVERED:
            sent.delivered += 1
        if recorded[1] is not None:
            sent.disabled.append(recorded[1])
        on_attempt(*recorded)
    return sent


def _epoch(at: datetime) -> int:
    return int(at.timestamp())


def _lease_left(delivery: Delivery, now: datetime) -> timedelta:
    # A claimed delivery's next_attempt_at is the end of its lease.
    assert delivery.next_attempt_at is not None, "a claimed delivery is pending"
    return delivery.next_attempt_at - now


def _sendable_endpoint(
    delivery: Delivery, uow_factory: Callable[[], UnitOfWork]
) -> WebhookEndpoint | None:
    """The delivery's endpoint if it is still there and on; else the delivery is given up
    (an endpoint's deletion took its deliveries with it: nothing to write then). An
    endpoint that is off has every pending delivery given up, as turning it off does."""
    with uow_factory() as uow:
        try:
            endpoint = uow.webhooks.get(delivery.company_id, delivery.endpoint_id)
        except NotFoundError:
            return None
        if endpoint.active:
            return endpoint
        uow.webhooks.drop_pending(delivery.company_id, delivery.endpoint_id)
        uow.commit()
    return None


def _record(
    delivery: Delivery,
    result: Sent,
    started: datetime,
    *,
    uow_factory: Callable[[], UnitOfWork],
    clock: Clock,
    random: Callable[[], float],
) -> tuple[Attempt, Disabled | None] | None:
    """Write the attempt (at ``started``, when it began) and the delivery's and
    endpoint's new state; None (nothing written) when the endpoint was deleted while the
    delivery was on its way. The retry is timed from now, when the attempt ended."""
    number = delivery.attempts + 1
    with uow_factory() as uow:
        at = clock.now()
        try:
            stored = endpoint = uow.webhooks.get_for_update(
                delivery.company_id, delivery.endpoint_id
            )
        except NotFoundError:
            return None
        outcome = SendOutcome(result.outcome)
        retry_at: datetime | None = None
        reason: str | None = None
        if outcome is SendOutcome.DELIVERED:
            state = DeliveryState.DELIVERED
            endpoint = attrs.evolve(endpoint, failing_since=None)
        else:
            failing_since = endpoint.failing_since or started
            endpoint = attrs.evolve(endpoint, failing_since=failing_since)
            if outcome is SendOutcome.GONE:
                reason = gone_reason(at.astimezone(_zone(uow, delivery.company_id)))
            elif started - failing_since >= DISABLE_AFTER:
                zone = _zone(uow, delivery.company_id)
                reason = failing_reason(failing_since.astimezone(zone))
            elif stored.active:
                retry_at = next_attempt_at(number, at, random, result.retry_after)
            # else turned off during the send, which gave up its deliveries: this one too.
            state = DeliveryState.PENDING if retry_at is not None else DeliveryState.FAILED
        try:
            uow.webhooks.save_delivery(
                attrs.evolve(delivery, state=state, attempts=number, next_attempt_at=retry_at)
            )
        except NotFoundError:
            return None
        attempt = Attempt(
            id=new_id("att"),
            company_id=delivery.company_id,
            endpoint_id=delivery.endpoint_id,
            delivery_id=delivery.id,
            event_id=delivery.event_id,
            event_type=delivery.event_type,
            attempt=number,
            status_code=result.status_code,
            duration_ms=result.duration_ms,
            error=result.error,
            next_retry_at=retry_at,
            at=started,
        )
        uow.webhooks.log_attempt(attempt)
        disabled = None
        if reason is not None and endpoint.active:
            endpoint = attrs.evolve(endpoint, active=False, disabled_reason=reason)
            dropped = uow.webhooks.drop_pending(endpoint.company_id, endpoint.id)
            disabled = Disabled(endpoint.company_id, endpoint.id, reason, dropped)
        if endpoint != stored:
            # Only the worker's fields: a URL or secret changed during the send stays.
            uow.webhooks.save_health(endpoint)
        uow.commit()
    return attempt, disabled


def _zone(uow: UnitOfWork, company_id: str) -> ZoneInfo:
    """The company's timezone, in which a reason gives its time (as every answer does)."""
    return ZoneInfo(uow.companies.get(company_id).timezone)


def gone_reason(at: datetime) -> str:
    """Why an endpoint whose receiver answered 410 was turned off."""
    return (
        f"The receiver answered 410 Gone at {at.isoformat()}: it wants no more deliveries."
        " Turn the endpoint back on once it accepts them again."
    )


def failing_reason(since: datetime) -> str:
    """Why an endpoint failing for ``DISABLE_AFTER`` was turned off."""
    days = DISABLE_AFTER.days
    return (
        f"Every delivery since {since.isoformat()} failed ({days} days without a success)."
        " Turn the endpoint back on once the receiver works again."
    )


def release(
    unsent: Sequence[Delivery], *, uow_factory: Callable[[], UnitOfWork], clock: Clock
) -> int:
    """Hand claimed deliveries that were not sent back, due now, for the next claim.

    Only those with ``SEND_BUDGET`` of their lease left: no other worker can have claimed
    one of them yet, nor claim it before this unit commits. The others come back when
    their lease ends, soon."""
    released = 0
    with uow_factory() as uow:
        now = clock.now()
        for delivery in unsent:
            if _lease_left(delivery, now) < SEND_BUDGET:
                continue
            try:
                uow.webhooks.save_delivery(attrs.evolve(delivery, next_attempt_at=now))
            except NotFoundError:
                continue  # its endpoint was deleted with it
            released += 1
        uow.commit()
    return released
