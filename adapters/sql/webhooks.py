"""The transactional outbox and webhook endpoints, deliveries and delivery log.

Events are written in the transaction of the change that caused them; a worker claims
the undispatched ones and fans them out into deliveries, then claims the deliveries that
are due and sends them (the webhook worker). Both claims are
one indexed ``SELECT ... ORDER BY ... LIMIT`` across companies: on PostgreSQL with ``FOR
UPDATE SKIP LOCKED``, so workers running side by side each take rows no other holds,
never waiting on one another; on SQLite a plain select, since the unit of work already
holds the database's one write lock (``BEGIN IMMEDIATE``). A delivery claim then leaves
out any delivery that an earlier one of its endpoint, still waiting for its first
attempt, holds back (``in_endpoint_order``), so each endpoint gets its events in order.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

import attrs
from sqlalchemy import (
    ColumnElement,
    Select,
    case,
    delete,
    func,
    literal_column,
    select,
    tuple_,
    update,
)

from adapters.sql import codecs
from adapters.sql.context import AnyRow, UnitContext, insert_of, without_keys
from adapters.sql.tables import (
    outbox_events,
    webhook_attempts,
    webhook_deliveries,
    webhook_endpoints,
)
from booking_core.bookings import Booking
from booking_core.customers import Customer, CustomerMerge
from booking_core.errors import ConflictError, NotFoundError
from booking_core.events import Event, EventType, Subject
from booking_core.leads import Lead
from booking_core.ledger import PaymentEntry
from booking_core.paging import Page, PageRequest
from booking_core.quotes import Quote
from booking_core.waitlist import WaitlistEntry
from booking_core.webhook_endpoints import (
    Attempt,
    Delivery,
    DeliveryState,
    EndpointKey,
    Order,
    Secret,
    WebhookEndpoint,
    in_endpoint_order,
)

SUBJECT_KINDS: dict[str, type[Any]] = {
    "booking": Booking,
    "customer": Customer,
    "customer_merge": CustomerMerge,
    "lead": Lead,
    "quote": Quote,
    "payment": PaymentEntry,
    "waitlist": WaitlistEntry,
}
"""What ``outbox_events.subject_kind`` names; NULL is no subject (``webhook.test``)."""

KIND = "webhook endpoint"
"""What a ``NotFoundError`` for an endpoint names."""

UPDATE_CHUNK = 500
"""Ids per ``UPDATE ... WHERE id IN (...)``."""

INSERT_CHUNK = 500
"""Events per multi-row ``INSERT`` of ``add_all`` (8 bound values each: far below
SQLite's 32,766 and PostgreSQL's 65,535 parameters per statement)."""


_PENDING = webhook_deliveries.c.state == literal_column(f"'{DeliveryState.PENDING.value}'")
"""Written as a constant, not a bound value, so that PostgreSQL matches the partial index
``ix_webhook_deliveries_due`` in a prepared statement's generic plan as well."""


def _claimed(statement: Select[Any], dialect: str) -> Select[Any]:
    """``statement`` locking the rows it returns and skipping rows another unit holds
    (PostgreSQL); SQLite runs one writer at a time and needs no lock."""
    if dialect == "postgresql":
        return statement.with_for_update(skip_locked=True)
    return statement


def _by_date_only(page: PageRequest, what: str) -> None:
    if page.by_change:
        raise ValueError(f"{what} are listed newest first only, not by change")


# --- Outbox --------------------------------------------------------------------------


def _subject_kind(subject: Subject) -> str | None:
    if subject is None:
        return None
    return next(kind for kind, cls in SUBJECT_KINDS.items() if isinstance(subject, cls))


def _event_values(event: Event) -> dict[str, Any]:
    kind = _subject_kind(event.subject)
    return {
        "id": event.id,
        "company_id": event.company_id,
        "type": event.type.value,
        "created_at": event.created_at,
        "subject_kind": kind,
        "document": None if kind is None else codecs.dumps(event.subject),
        "dispatched_at": None,
        "mailed_at": None,
    }


def _insert(dialect: str) -> Any:
    """``INSERT ... ON CONFLICT DO NOTHING RETURNING id`` of one event, given many rows of
    values at once: SQLAlchemy sends them as one multi-row statement ("insertmanyvalues")
    compiled once, where a statement written with ``.values([...])`` is compiled anew on
    every call (SQLAlchemy does not cache multi-row VALUES)."""
    return insert_of(dialect, outbox_events).on_conflict_do_nothing().returning(outbox_events.c.id)


def _event(row: AnyRow) -> Event:
    subject: Subject = None
    if row.subject_kind is not None:
        subject = codecs.from_plain(json.loads(row.document), SUBJECT_KINDS[row.subject_kind])
    return Event(
        id=row.id,
        company_id=row.company_id,
        type=EventType(row.type),
        created_at=row.created_at,
        subject=subject,
    )


class SqlOutboxRepository:
    """Domain events until the worker has handed them to webhooks."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def add(self, event: Event) -> None:
        conflict = f"Event {event.id} already exists."
        self._cx.insert_new(outbox_events, _event_values(event), conflict)

    def add_all(self, events: Sequence[Event]) -> None:
        """One multi-row ``INSERT ... ON CONFLICT DO NOTHING RETURNING id`` per
        ``INSERT_CHUNK`` events (one statement for any use case's events), built once
        (``_insert``)."""
        ids = [one.id for one in events]
        if len(set(ids)) != len(ids):
            raise ConflictError(f"Event {next(i for i in ids if ids.count(i) > 1)} is given twice.")
        for start in range(0, len(events), INSERT_CHUNK):
            chunk = events[start : start + INSERT_CHUNK]
            statement = self._cx.shape("outbox_insert", _insert)
            if len(chunk) == 1:  # most use cases record one event
                result = self._cx.run_kept(statement, _event_values(chunk[0]))
            else:
                result = self._cx.execute(statement, params=[_event_values(one) for one in chunk])
            written = {row.id for row in result}
            missing = next((one.id for one in chunk if one.id not in written), None)
            if missing is not None:
                raise ConflictError(f"Event {missing} already exists.")

    def claim_undispatched(self, limit: int) -> Sequence[Event]:
        statement = (
            select(outbox_events)
            .where(outbox_events.c.dispatched_at.is_(None))
            .order_by(outbox_events.c.created_at, outbox_events.c.id)
            .limit(limit)
        )
        rows = self._cx.execute(_claimed(statement, self._cx.dialect))
        return [_event(row) for row in rows]

    def mark_dispatched(self, event_ids: Collection[str], at: datetime) -> None:
        ids = sorted(event_ids)
        for start in range(0, len(ids), UPDATE_CHUNK):
            statement = (
                update(outbox_events)
                .where(outbox_events.c.id.in_(ids[start : start + UPDATE_CHUNK]))
                .values(dispatched_at=at)
            )
            self._cx.execute(statement)

    def claim_unmailed(self, limit: int) -> Sequence[Event]:
        statement = (
            select(outbox_events)
            .where(outbox_events.c.mailed_at.is_(None))
            .order_by(outbox_events.c.created_at, outbox_events.c.id)
            .limit(limit)
        )
        rows = self._cx.execute(_claimed(statement, self._cx.dialect))
        return [_event(row) for row in rows]

    def mark_mailed(self, event_ids: Collection[str], at: datetime) -> None:
        ids = sorted(event_ids)
        for start in range(0, len(ids), UPDATE_CHUNK):
            statement = (
                update(outbox_events)
                .where(outbox_events.c.id.in_(ids[start : start + UPDATE_CHUNK]))
                .values(mailed_at=at)
            )
            self._cx.execute(statement)


# --- Endpoints -----------------------------------------------------------------------


def _secrets(secrets: Sequence[Secret]) -> str:
    plain = [{"value": s.value, "expiresAt": codecs.to_plain(s.expires_at)} for s in secrets]
    return json.dumps(plain, separators=(",", ":"))


def _secret(plain: dict[str, Any]) -> Secret:
    expires_at = plain["expiresAt"]
    return Secret(
        value=plain["value"],
        expires_at=None if expires_at is None else codecs.from_plain(expires_at, datetime),
    )


def _endpoint_values(endpoint: WebhookEndpoint) -> dict[str, Any]:
    return {
        "company_id": endpoint.company_id,
        "id": endpoint.id,
        "url": endpoint.url,
        "events": codecs.dumps(endpoint.events, tuple[str, ...]),
        "active": endpoint.active,
        "description": endpoint.description,
        "secrets": _secrets(endpoint.secrets),
        "created_at": endpoint.created_at,
        "disabled_reason": endpoint.disabled_reason,
        "failing_since": endpoint.failing_since,
        "active_since": endpoint.active_since,
    }


def _endpoint(row: AnyRow) -> WebhookEndpoint:
    return WebhookEndpoint(
        id=row.id,
        company_id=row.company_id,
        url=row.url,
        events=codecs.loads_any(row.events, tuple[str, ...]),
        active=row.active,
        description=row.description,
        secrets=tuple(_secret(plain) for plain in json.loads(row.secrets)),
        created_at=row.created_at,
        disabled_reason=row.disabled_reason,
        failing_since=row.failing_since,
        active_since=row.active_since,
    )


# --- Deliveries and the log ----------------------------------------------------------


def _delivery_values(delivery: Delivery) -> dict[str, Any]:
    return {
        "company_id": delivery.company_id,
        "id": delivery.id,
        "endpoint_id": delivery.endpoint_id,
        "event_id": delivery.event_id,
        "event_type": delivery.event_type,
        "body": delivery.body,
        "state": delivery.state.value,
        "attempts": delivery.attempts,
        "next_attempt_at": delivery.next_attempt_at,
        "created_at": delivery.created_at,
    }


def _delivery(row: AnyRow) -> Delivery:
    return Delivery(
        id=row.id,
        company_id=row.company_id,
        endpoint_id=row.endpoint_id,
        event_id=row.event_id,
        event_type=row.event_type,
        body=bytes(row.body),
        state=DeliveryState(row.state),
        attempts=row.attempts,
        next_attempt_at=row.next_attempt_at,
        created_at=row.created_at,
    )


def _attempt_values(attempt: Attempt) -> dict[str, Any]:
    return {
        "company_id": attempt.company_id,
        "id": attempt.id,
        "endpoint_id": attempt.endpoint_id,
        "delivery_id": attempt.delivery_id,
        "event_id": attempt.event_id,
        "event_type": attempt.event_type,
        "attempt": attempt.attempt,
        "status_code": attempt.status_code,
        "duration_ms": attempt.duration_ms,
        "error": attempt.error,
        "next_retry_at": attempt.next_retry_at,
        "created_at": attempt.at,
    }


def _attempt(row: AnyRow) -> Attempt:
    return Attempt(
        id=row.id,
        company_id=row.company_id,
        endpoint_id=row.endpoint_id,
        delivery_id=row.delivery_id,
        event_id=row.event_id,
        event_type=row.event_type,
        attempt=row.attempt,
        status_code=row.status_code,
        duration_ms=row.duration_ms,
        error=row.error,
        next_retry_at=row.next_retry_at,
        at=row.created_at,
    )


class SqlWebhookRepository:
    """A company's endpoints; deliveries claimed across companies; the delivery log."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def get(self, company_id: str, endpoint_id: str) -> WebhookEndpoint:
        return _endpoint(self._cx.row(webhook_endpoints, company_id, endpoint_id, KIND))

    def get_for_update(self, company_id: str, endpoint_id: str) -> WebhookEndpoint:
        return _endpoint(
            self._cx.row(webhook_endpoints, company_id, endpoint_id, KIND, locked=True)
        )

    def add(self, endpoint: WebhookEndpoint) -> None:
        conflict = f"Webhook endpoint {endpoint.id} already exists."
        self._cx.insert_new(webhook_endpoints, _endpoint_values(endpoint), conflict)

    def save(self, endpoint: WebhookEndpoint) -> None:
        statement = (
            update(webhook_endpoints)
            .where(
                webhook_endpoints.c.company_id == endpoint.company_id,
                webhook_endpoints.c.id == endpoint.id,
            )
            .values(**without_keys(_endpoint_values(endpoint)))
        )
        if self._cx.execute(statement).rowcount == 0:
            raise NotFoundError("webhook endpoint", endpoint.id)

    def delete(self, company_id: str, endpoint_id: str) -> None:
        gone = self._cx.execute(
            delete(webhook_endpoints).where(
                webhook_endpoints.c.company_id == company_id,
                webhook_endpoints.c.id == endpoint_id,
            )
        )
        if gone.rowcount == 0:
            raise NotFoundError("webhook endpoint", endpoint_id)
        # Nothing can read an endpoint's deliveries or log once it is gone: keep neither.
        for table in (webhook_deliveries, webhook_attempts):
            self._cx.execute(
                delete(table).where(
                    table.c.company_id == company_id, table.c.endpoint_id == endpoint_id
                )
            )

    def list(self, company_id: str, page: PageRequest) -> Page[WebhookEndpoint]:
        _by_date_only(page, "webhook endpoints")
        return self._cx.keyset_page(webhook_endpoints, company_id, page, [], _endpoint)

    def count(self, company_id: str) -> int:
        if self._cx.dialect == "postgresql":
            # The cap is checked by counting, then adding: a transaction-scoped advisory
            # lock per company makes a second creation wait for the first to end, and its
            # count (a statement of its own, so a snapshot taken after the wait) sees the
            # first one's row. SQLite runs one writer at a time already.
            key = func.hashtextextended(f"webhook_endpoints:{company_id}", 0)
            self._cx.execute(select(func.pg_advisory_xact_lock(key)))
        statement = (
            select(func.count())
            .select_from(webhook_endpoints)
            .where(webhook_endpoints.c.company_id == company_id)
        )
        return int(self._cx.execute(statement).scalar_one())

    def active(self, company_id: str) -> Sequence[WebhookEndpoint]:
        statement = (
            select(webhook_endpoints)
            .where(webhook_endpoints.c.company_id == company_id, webhook_endpoints.c.active)
            .order_by(webhook_endpoints.c.created_at, webhook_endpoints.c.id)
        )
        return [_endpoint(row) for row in self._cx.execute(statement)]

    def add_deliveries(self, deliveries: Sequence[Delivery]) -> None:
        for delivery in deliveries:
            conflict = f"Webhook delivery {delivery.id} already exists."
            self._cx.insert_new(webhook_deliveries, _delivery_values(delivery), conflict)

    def claim_due(self, now: datetime, lease_until: datetime, limit: int) -> Sequence[Delivery]:
        d = webhook_deliveries.c
        # Delivery.claim_order: a first attempt by its event's instant, a retry by when
        # it came due.
        due_since = case((d.attempts == 0, d.created_at), else_=d.next_attempt_at)
        statement = (
            select(webhook_deliveries)
            .where(_PENDING, d.next_attempt_at <= now)
            .order_by(due_since, d.created_at, d.id)
            .limit(limit)
        )
        taken = [_delivery(row) for row in self._cx.execute(_claimed(statement, self._cx.dialect))]
        due = in_endpoint_order(taken, self._waiting(taken)) if taken else []
        keys = [(delivery.company_id, delivery.id) for delivery in due]
        for start in range(0, len(keys), UPDATE_CHUNK):
            lease = (
                update(webhook_deliveries)
                .where(tuple_(d.company_id, d.id).in_(keys[start : start + UPDATE_CHUNK]))
                .values(next_attempt_at=lease_until)
            )
            self._cx.execute(lease)
        return [attrs.evolve(delivery, next_attempt_at=lease_until) for delivery in due]

    def _waiting(self, taken: Sequence[Delivery]) -> Sequence[tuple[EndpointKey, Order]]:
        """The pending deliveries of the taken ones' endpoints that still wait for their
        first attempt and that this claim did not take: held by another worker (leased, or
        locked by a claim in progress, which this statement sees as it was before), or
        made after the claim's select. Only those up to the latest taken instant can hold
        a taken delivery back; any other such delivery that is due comes after every
        taken one in claim order, so this reads few rows even behind a long queue."""
        d = webhook_deliveries.c
        endpoints = sorted({(one.company_id, one.endpoint_id) for one in taken})
        chosen = {(one.company_id, one.id) for one in taken}
        statement = select(d.company_id, d.endpoint_id, d.created_at, d.id).where(
            _PENDING,
            d.attempts == 0,
            tuple_(d.company_id, d.endpoint_id).in_(endpoints),
            d.created_at <= max(one.created_at for one in taken),
        )
        return [
            ((row.company_id, row.endpoint_id), (row.created_at, row.id))
            for row in self._cx.execute(statement)
            if (row.company_id, row.id) not in chosen
        ]

    def save_delivery(self, delivery: Delivery) -> None:
        statement = (
            update(webhook_deliveries)
            .where(
                webhook_deliveries.c.company_id == delivery.company_id,
                webhook_deliveries.c.id == delivery.id,
            )
            .values(**without_keys(_delivery_values(delivery)))
        )
        if self._cx.execute(statement).rowcount == 0:
            raise NotFoundError("webhook delivery", delivery.id)

    def log_attempt(self, attempt: Attempt) -> None:
        conflict = f"Webhook attempt {attempt.id} already exists."
        self._cx.insert_new(webhook_attempts, _attempt_values(attempt), conflict)

    def attempts(self, company_id: str, endpoint_id: str, page: PageRequest) -> Page[Attempt]:
        _by_date_only(page, "delivery attempts")
        where: list[ColumnElement[bool]] = [webhook_attempts.c.endpoint_id == endpoint_id]
        return self._cx.keyset_page(webhook_attempts, company_id, page, where, _attempt)

    def drop_pending(self, company_id: str, endpoint_id: str) -> int:
        d, a = webhook_deliveries.c, webhook_attempts.c
        pending = (d.company_id == company_id, d.endpoint_id == endpoint_id, _PENDING)
        # The last attempt of each delivery given up promised a retry that never comes:
        # the log reads nextRetryAt null once a delivery is given up. Earlier attempts keep
        # theirs, the times the retries after them were made.
        last_attempts = select(d.id, d.attempts).where(*pending)
        promised = (
            update(webhook_attempts)
            .where(
                a.company_id == company_id,
                a.endpoint_id == endpoint_id,
                a.next_retry_at.is_not(None),
                tuple_(a.delivery_id, a.attempt).in_(last_attempts),
            )
            .values(next_retry_at=None)
        )
        self._cx.execute(promised)
        statement = (
            update(webhook_deliveries)
            .where(*pending)
            .values(state=DeliveryState.FAILED.value, next_attempt_at=None)
        )
        return self._cx.execute(statement).rowcount

    def save_health(self, endpoint: WebhookEndpoint) -> None:
        e = webhook_endpoints.c
        statement = (
            update(webhook_endpoints)
            .where(e.company_id == endpoint.company_id, e.id == endpoint.id)
            .values(
                active=endpoint.active,
                disabled_reason=endpoint.disabled_reason,
                failing_since=endpoint.failing_since,
            )
        )
        if self._cx.execute(statement).rowcount == 0:
            raise NotFoundError("webhook endpoint", endpoint.id)
