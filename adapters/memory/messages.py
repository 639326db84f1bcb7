"""Dict-backed message repository (the memory unit of work's table ``messages``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import attrs

from adapters.memory.repositories import Table
from booking_core.errors import NotFoundError
from booking_core.notifications import Message, MessageStatus
from booking_core.paging import Page, PageRequest


class MemoryMessageRepository:
    def __init__(self, table: Table[Message]) -> None:
        self._t = table

    def add(self, message: Message) -> bool:
        if any(m.dedupe_key == message.dedupe_key for m in self._t.values(message.company_id)):
            return False
        self._t.insert(message.company_id, message.id, message, message.created_at)
        return True

    def get(self, company_id: str, message_id: str) -> Message:
        found = self._t.find(company_id, message_id)
        if found is None:
            raise NotFoundError("message", message_id)
        return found

    def claim_due(self, now: datetime, lease_until: datetime, limit: int) -> Sequence[Message]:
        due = [
            m
            for m in self._t.values()
            if m.status is MessageStatus.PENDING and m.next_attempt_at <= now
        ]
        due.sort(key=lambda m: (m.next_attempt_at, m.created_at, m.id))
        claimed = []
        for message in due[:limit]:
            leased = attrs.evolve(message, next_attempt_at=lease_until)
            self._t.replace(message.company_id, message.id, leased)
            claimed.append(leased)
        return claimed

    def save(self, message: Message) -> None:
        self.get(message.company_id, message.id)
        self._t.replace(message.company_id, message.id, message)

    def list(
        self, company_id: str, page: PageRequest, *, subject_id: str | None = None
    ) -> Page[Message]:
        if page.by_change:
            raise ValueError("messages are listed newest first only, not by change")
        return self._t.page(
            company_id,
            page,
            lambda m: subject_id is None or m.subject_id == subject_id,
            lambda m: m.id,
        )

    def for_subject(self, company_id: str, subject_id: str) -> Sequence[Message]:
        found = [m for m in self._t.values(company_id) if m.subject_id == subject_id]
        return sorted(found, key=lambda m: (m.created_at, m.id))
