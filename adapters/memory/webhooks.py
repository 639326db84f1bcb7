"""Dict-backed outbox and webhook repositories (the memory unit of work's tables
``outbox``, ``webhooks``, ``deliveries`` and ``attempts``)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

import attrs

from adapters.memory.repositories import Table
from booking_core.errors import ConflictError, NotFoundError
from booking_core.events import Event
from booking_core.paging import Page, PageRequest
from booking_core.webhook_endpoints import (
    Attempt,
    Delivery,
    DeliveryState,
    WebhookEndpoint,
    in_endpoint_order,
)


@attrs.frozen
class OutboxRow:
    """An event, when it was handed to webhooks and when it was turned into messages
    (None until then)."""

    event: Event
    dispatched_at: datetime | None = None
    mailed_at: datetime | None = None


def _by_date_only(page: PageRequest, what: str) -> None:
    # As the SQL tables, which carry no change stamps: these lists are newest first only.
    if page.by_change:
        raise ValueError(f"{what} are listed newest first only, not by change")


class MemoryOutboxRepository:
    def __init__(self, table: Table[OutboxRow]) -> None:
        self._t = table

    def add(self, event: Event) -> None:
        self._t.insert(event.company_id, event.id, OutboxRow(event), event.created_at)

    def add_all(self, events: Sequence[Event]) -> None:
        ids = [one.id for one in events]
        if len(set(ids)) != len(ids):
            raise ConflictError(f"Event {next(i for i in ids if ids.count(i) > 1)} is given twice.")
        taken = next((one.id for one in events if self._t.find(one.company_id, one.id)), None)
        if taken is not None:
            raise ConflictError(f"Event {taken} already exists.")
        for one in events:
            self.add(one)

    def claim_undispatched(self, limit: int) -> Sequence[Event]:
        waiting = [
            (row.created_at, row.value.event.id, row.value.event)
            for row in self._t.rows.values()
            if row.value.dispatched_at is None
        ]
        waiting.sort(key=lambda found: (found[0], found[1]))
        return [event for _, _, event in waiting[:limit]]

    def mark_dispatched(self, event_ids: Collection[str], at: datetime) -> None:
        wanted = set(event_ids)
        for (company_id, row_id), row in list(self._t.rows.items()):
            if row_id in wanted:
                self._t.replace(company_id, row_id, attrs.evolve(row.value, dispatched_at=at))

    def claim_unmailed(self, limit: int) -> Sequence[Event]:
        waiting = [
            (row.created_at, row.value.event.id, row.value.event)
            for row in self._t.rows.values()
            if row.value.mailed_at is None
        ]
        waiting.sort(key=lambda found: (found[0], found[1]))
        return [event for _, _, event in waiting[:limit]]

    def mark_mailed(self, event_ids: Collection[str], at: datetime) -> None:
        wanted = set(event_ids)
        for (company_id, row_id), row in list(self._t.rows.items()):
            if row_id in wanted:
                self._t.replace(company_id, row_id, attrs.evolve(row.value, mailed_at=at))


class MemoryWebhookRepository:
    def __init__(
        self,
        endpoints: Table[WebhookEndpoint],
        deliveries: Table[Delivery],
        attempts: Table[Attempt],
    ) -> None:
        self._e = endpoints
        self._d = deliveries
        self._a = attempts

    def get(self, company_id: str, endpoint_id: str) -> WebhookEndpoint:
        found = self._e.find(company_id, endpoint_id)
        if found is None:
            raise NotFoundError("webhook endpoint", endpoint_id)
        return found

    # A memory unit of work holds the store's one lock from start to end: every read in
    # it is already a read for update.
    get_for_update = get

    def add(self, endpoint: WebhookEndpoint) -> None:
        self._e.insert(endpoint.company_id, endpoint.id, endpoint, endpoint.created_at)

    def save(self, endpoint: WebhookEndpoint) -> None:
        self.get(endpoint.company_id, endpoint.id)
        self._e.replace(endpoint.company_id, endpoint.id, endpoint)

    def delete(self, company_id: str, endpoint_id: str) -> None:
        self.get(company_id, endpoint_id)
        del self._e.rows[(company_id, endpoint_id)]
        for key, delivery in list(self._d.rows.items()):
            if key[0] == company_id and delivery.value.endpoint_id == endpoint_id:
                del self._d.rows[key]
        for key, attempt in list(self._a.rows.items()):
            if key[0] == company_id and attempt.value.endpoint_id == endpoint_id:
                del self._a.rows[key]

    def list(self, company_id: str, page: PageRequest) -> Page[WebhookEndpoint]:
        _by_date_only(page, "webhook endpoints")
        return self._e.page(company_id, page, lambda _: True, lambda e: e.id)

    def count(self, company_id: str) -> int:
        return sum(1 for _ in self._e.values(company_id))

    def active(self, company_id: str) -> Sequence[WebhookEndpoint]:
        found = [e for e in self._e.values(company_id) if e.active]
        return sorted(found, key=lambda e: (e.created_at, e.id))

    def add_deliveries(self, deliveries: Sequence[Delivery]) -> None:
        for delivery in deliveries:
            self._d.insert(delivery.company_id, delivery.id, delivery, delivery.created_at)

    def claim_due(self, now: datetime, lease_until: datetime, limit: int) -> Sequence[Delivery]:
        pending = [
            row.value for row in self._d.rows.values() if row.value.state is DeliveryState.PENDING
        ]
        due = [d for d in pending if d.next_attempt_at is not None and d.next_attempt_at <= now]
        taken = sorted(due, key=lambda d: d.claim_order)[:limit]
        chosen = {d.id for d in taken}
        waiting = [
            ((d.company_id, d.endpoint_id), d.order)
            for d in pending
            if d.attempts == 0 and d.id not in chosen
        ]
        claimed = []
        for delivery in in_endpoint_order(taken, waiting):
            leased = attrs.evolve(delivery, next_attempt_at=lease_until)
            self._d.replace(delivery.company_id, delivery.id, leased)
            claimed.append(leased)
        return claimed

    def save_delivery(self, delivery: Delivery) -> None:
        if self._d.find(delivery.company_id, delivery.id) is None:
            raise NotFoundError("webhook delivery", delivery.id)
        self._d.replace(delivery.company_id, delivery.id, delivery)

    def log_attempt(self, attempt: Attempt) -> None:
        self._a.insert(attempt.company_id, attempt.id, attempt, attempt.at)

    def attempts(self, company_id: str, endpoint_id: str, page: PageRequest) -> Page[Attempt]:
        _by_date_only(page, "delivery attempts")
        return self._a.page(
            company_id, page, lambda a: a.endpoint_id == endpoint_id, lambda a: a.id
        )

    def drop_pending(self, company_id: str, endpoint_id: str) -> int:
        last_attempts: set[tuple[str, int]] = set()
        for (c, row_id), row in list(self._d.rows.items()):
            delivery = row.value
            if (
                c == company_id
                and delivery.endpoint_id == endpoint_id
                and delivery.state is DeliveryState.PENDING
            ):
                failed = attrs.evolve(delivery, state=DeliveryState.FAILED, next_attempt_at=None)
                self._d.replace(c, row_id, failed)
                last_attempts.add((delivery.id, delivery.attempts))
        # As the SQL adapter: the last attempt of each one no longer promises a retry.
        for (c, attempt_id), logged in list(self._a.rows.items()):
            attempt = logged.value
            if (
                c == company_id
                and attempt.next_retry_at is not None
                and (attempt.delivery_id, attempt.attempt) in last_attempts
            ):
                self._a.replace(c, attempt_id, attrs.evolve(attempt, next_retry_at=None))
        return len(last_attempts)

    def save_health(self, endpoint: WebhookEndpoint) -> None:
        stored = self.get(endpoint.company_id, endpoint.id)
        healthier = attrs.evolve(
            stored,
            active=endpoint.active,
            disabled_reason=endpoint.disabled_reason,
            failing_since=endpoint.failing_since,
        )
        self._e.replace(endpoint.company_id, endpoint.id, healthier)
