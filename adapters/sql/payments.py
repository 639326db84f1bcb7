"""The append-only payment ledger: rows are inserted, never deleted, and updated only to
file them under the survivor of a merge of customers (``refile``: ``customer_id`` and
the change stamps, never the money)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, func, select, text, update

from adapters.sql.context import AnyRow, UnitContext
from adapters.sql.tables import payments
from booking_core.errors import NotFoundError
from booking_core.ledger import Kind, Method, Origin, PaymentEntry
from booking_core.paging import Page, PageRequest


def _values(entry: PaymentEntry) -> dict[str, Any]:
    return {
        "company_id": entry.company_id,
        "id": entry.id,
        "booking_id": entry.booking_id,
        "customer_id": entry.customer_id,
        "kind": entry.kind.value,
        "method": entry.method.value,
        "amount_cents": entry.amount_cents,
        "offline": entry.offline,
        "note": entry.note,
        "reverses": entry.reverses,
        "external_ref": entry.external_ref,
        "dispute": entry.dispute,
        "origin": entry.origin.value,
        "created_at": entry.created_at,
    }


def _entry(row: AnyRow) -> PaymentEntry:
    return PaymentEntry(
        id=row.id,
        company_id=row.company_id,
        booking_id=row.booking_id,
        customer_id=row.customer_id,
        kind=Kind(row.kind),
        method=Method(row.method),
        amount_cents=row.amount_cents,
        offline=row.offline,
        note=row.note,
        reverses=row.reverses,
        external_ref=row.external_ref,
        dispute=row.dispute,
        origin=Origin(row.origin),
        created_at=row.created_at,
    )


_LOCK_LEDGERS = text(
    "SELECT pg_advisory_xact_lock(hashtextextended(key, 0))"
    " FROM unnest(CAST(:keys AS text[])) AS key ORDER BY key"
)
"""Several ledgers' locks (``lock_ledger``'s keys), taken in the keys' order: PostgreSQL
evaluates a volatile function of the select list after the sort."""


class SqlPaymentRepository:
    """Ledger entries; a booking's entries come oldest first by ``(created_at, id)``."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def lock_ledger(self, company_id: str, ledger_key: str) -> None:
        # SQLite already runs one writer at a time (BEGIN IMMEDIATE). On PostgreSQL a
        # transaction-scoped advisory lock per ledger, released at commit or rollback.
        if self._cx.dialect != "postgresql":
            return
        key = func.hashtextextended(f"ledger:{company_id}:{ledger_key}", 0)
        self._cx.execute(select(func.pg_advisory_xact_lock(key)))

    def lock_ledgers(self, company_id: str, ledger_keys: Collection[str]) -> None:
        if self._cx.dialect != "postgresql" or not ledger_keys:
            return
        # One statement; the keys in one order, so that two holders of several never
        # wait on each other in a circle.
        keys = sorted({f"ledger:{company_id}:{key}" for key in ledger_keys})
        self._cx.execute(_LOCK_LEDGERS, params={"keys": keys})

    def get(self, company_id: str, entry_id: str) -> PaymentEntry:
        statement = select(payments).where(
            payments.c.company_id == company_id, payments.c.id == entry_id
        )
        row = self._cx.execute(statement).first()
        if row is None:
            raise NotFoundError("payment", entry_id)
        return _entry(row)

    def add(self, entry: PaymentEntry) -> None:
        self._cx.insert_new(payments, _values(entry), f"Payment {entry.id} already exists.")
        self._cx.touch(payments, entry.company_id, entry.id)

    def for_booking(self, company_id: str, booking_id: str) -> Sequence[PaymentEntry]:
        statement = (
            select(payments)
            .where(payments.c.company_id == company_id, payments.c.booking_id == booking_id)
            .order_by(payments.c.created_at, payments.c.id)
        )
        return [_entry(row) for row in self._cx.execute(statement)]

    def for_bookings(
        self, company_id: str, booking_ids: Collection[str]
    ) -> dict[str, list[PaymentEntry]]:
        found: dict[str, list[PaymentEntry]] = {booking_id: [] for booking_id in booking_ids}
        if found:
            statement = (
                select(payments)
                .where(payments.c.company_id == company_id, payments.c.booking_id.in_(found))
                .order_by(payments.c.created_at, payments.c.id)
            )
            for row in self._cx.execute(statement):
                entry = _entry(row)
                found[entry.booking_id or ""].append(entry)
        return found

    def reversal_of(self, company_id: str, entry_id: str) -> PaymentEntry | None:
        statement = (
            select(payments)
            .where(
                payments.c.company_id == company_id,
                payments.c.reverses == entry_id,
                payments.c.kind == Kind.REVERSAL.value,
            )
            .order_by(payments.c.created_at, payments.c.id)
            .limit(1)
        )
        row = self._cx.execute(statement).first()
        return None if row is None else _entry(row)

    def with_external_ref(self, company_id: str, external_ref: str) -> Sequence[PaymentEntry]:
        statement = (
            select(payments)
            .where(payments.c.company_id == company_id, payments.c.external_ref == external_ref)
            .order_by(payments.c.created_at, payments.c.id)
        )
        return [_entry(row) for row in self._cx.execute(statement)]

    def refile(self, company_id: str, from_customer_id: str, to_customer_id: str) -> int:
        mine = (payments.c.company_id == company_id, payments.c.customer_id == from_customer_id)
        ids = [row.id for row in self._cx.execute(select(payments.c.id).where(*mine))]
        if ids:
            self._cx.execute(update(payments).where(*mine).values(customer_id=to_customer_id))
            for entry_id in ids:
                self._cx.touch(payments, company_id, entry_id)
        return len(ids)

    def list(
        self,
        company_id: str,
        page: PageRequest,
        *,
        customer_id: str | None = None,
        booking_id: str | None = None,
        created_from: datetime | None = None,
        created_until: datetime | None = None,
    ) -> Page[PaymentEntry]:
        where: list[ColumnElement[bool]] = []
        if customer_id is not None:
            where.append(payments.c.customer_id == customer_id)
        if booking_id is not None:
            where.append(payments.c.booking_id == booking_id)
        if created_from is not None:
            where.append(payments.c.created_at >= created_from)
        if created_until is not None:
            where.append(payments.c.created_at < created_until)
        return self._cx.keyset_page(payments, company_id, page, where, _entry)
