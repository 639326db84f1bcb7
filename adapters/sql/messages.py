"""Emails queued for the worker: one row per message, claimed across companies as webhook
deliveries are (``FOR UPDATE SKIP LOCKED`` on PostgreSQL, one writer at a time on SQLite),
paged newest first only (no change stamps)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import attrs
from sqlalchemy import literal_column, select, update

from adapters.sql.context import AnyRow, UnitContext, without_keys
from adapters.sql.tables import messages
from booking_core.errors import NotFoundError
from booking_core.notifications import Message, MessageKind, MessageStatus
from booking_core.paging import Page, PageRequest

_PENDING = messages.c.status == literal_column(f"'{MessageStatus.PENDING.value}'")
"""A constant, not a bound value, so that PostgreSQL matches the partial index
``ix_messages_due`` in a prepared statement's generic plan as well."""


def _values(message: Message) -> dict[str, Any]:
    return {
        "company_id": message.company_id,
        "id": message.id,
        "kind": message.kind.value,
        "to_address": message.to,
        "subject": message.subject,
        "text_body": message.text,
        "html_body": message.html,
        "dedupe_key": message.dedupe_key,
        "reply_to": message.reply_to,
        "subject_id": message.subject_id,
        "status": message.status.value,
        "attempts": message.attempts,
        "next_attempt_at": message.next_attempt_at,
        "last_error": message.last_error,
        "sent_at": message.sent_at,
        "created_at": message.created_at,
    }


def _message(row: AnyRow) -> Message:
    return Message(
        id=row.id,
        company_id=row.company_id,
        kind=MessageKind(row.kind),
        to=row.to_address,
        subject=row.subject,
        text=row.text_body,
        html=row.html_body,
        dedupe_key=row.dedupe_key,
        reply_to=row.reply_to,
        subject_id=row.subject_id,
        status=MessageStatus(row.status),
        attempts=row.attempts,
        next_attempt_at=row.next_attempt_at,
        last_error=row.last_error,
        sent_at=row.sent_at,
        created_at=row.created_at,
    )


class SqlMessageRepository:
    """Messages by company; due ones claimed across companies."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def add(self, message: Message) -> bool:
        # ON CONFLICT DO NOTHING: a duplicate cause (or id) writes nothing, raises nothing,
        # and leaves the transaction usable.
        statement = (
            self._cx.insert(messages)
            .values(**_values(message))
            .on_conflict_do_nothing()
            .returning(messages.c.id)
        )
        return self._cx.execute(statement).first() is not None

    def get(self, company_id: str, message_id: str) -> Message:
        statement = select(messages).where(
            messages.c.company_id == company_id, messages.c.id == message_id
        )
        row = self._cx.execute(statement).first()
        if row is None:
            raise NotFoundError("message", message_id)
        return _message(row)

    def claim_due(self, now: datetime, lease_until: datetime, limit: int) -> Sequence[Message]:
        statement = (
            select(messages)
            .where(_PENDING, messages.c.next_attempt_at <= now)
            .order_by(messages.c.next_attempt_at, messages.c.created_at, messages.c.id)
            .limit(limit)
        )
        if self._cx.dialect == "postgresql":
            statement = statement.with_for_update(skip_locked=True)
        rows = self._cx.execute(statement).all()
        if not rows:
            return []
        # Ids are random (96 bits): one UPDATE by id leases every row claimed.
        self._cx.execute(
            update(messages)
            .where(messages.c.id.in_([row.id for row in rows]))
            .values(next_attempt_at=lease_until)
        )
        return [attrs.evolve(_message(row), next_attempt_at=lease_until) for row in rows]

    def save(self, message: Message) -> None:
        statement = (
            update(messages)
            .where(messages.c.company_id == message.company_id, messages.c.id == message.id)
            .values(**without_keys(_values(message)))
        )
        if self._cx.execute(statement).rowcount == 0:
            raise NotFoundError("message", message.id)

    def list(
        self, company_id: str, page: PageRequest, *, subject_id: str | None = None
    ) -> Page[Message]:
        if page.by_change:
            raise ValueError("messages are listed newest first only, not by change")
        where = [] if subject_id is None else [messages.c.subject_id == subject_id]
        return self._cx.keyset_page(messages, company_id, page, where, _message)

    def for_subject(self, company_id: str, subject_id: str) -> Sequence[Message]:
        statement = (
            select(messages)
            .where(messages.c.company_id == company_id, messages.c.subject_id == subject_id)
            .order_by(messages.c.created_at, messages.c.id)
        )
        return [_message(row) for row in self._cx.execute(statement)]
