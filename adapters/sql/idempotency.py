"""Idempotency records: claimed by an ``INSERT ... ON CONFLICT DO NOTHING``, so two
processes sending one key at the same moment cannot both win."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select, update

from adapters.sql.context import AnyRow, UnitContext
from adapters.sql.tables import idempotency_records as records
from booking_core.errors import NotFoundError
from booking_core.idempotency import IdempotencyRecord, RecordState

CLAIM_ATTEMPTS = 3


def _record(row: AnyRow) -> IdempotencyRecord:
    return IdempotencyRecord(
        company_id=row.company_id,
        key=row.key,
        fingerprint=row.fingerprint,
        state=RecordState(row.state),
        created_at=row.created_at,
        response_status=row.response_status,
        response_body=None if row.response_body is None else bytes(row.response_body),
    )


class SqlIdempotencyRepository:
    """Stored answers of writes sent with an ``Idempotency-Key``, per company."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def claim(self, record: IdempotencyRecord) -> IdempotencyRecord | None:
        statement = (
            self._cx.insert(records)
            .values(
                company_id=record.company_id,
                key=record.key,
                fingerprint=record.fingerprint,
                state=record.state.value,
                created_at=record.created_at,
                response_status=record.response_status,
                response_body=record.response_body,
            )
            .on_conflict_do_nothing(index_elements=["company_id", "key"])
            .returning(records.c.key)
        )
        # On PostgreSQL the insert waits for a concurrent claim of the same key to
        # commit or roll back, then either inserts or sees the committed row. The row
        # can vanish again (a release) before we read it: then claim once more.
        for _ in range(CLAIM_ATTEMPTS):
            if self._cx.execute(statement).first() is not None:
                return None
            existing = self.get(record.company_id, record.key)
            if existing is not None:
                return existing
        raise RuntimeError("an idempotency key kept changing while being claimed")

    def get(self, company_id: str, key: str) -> IdempotencyRecord | None:
        statement = select(records).where(records.c.company_id == company_id, records.c.key == key)
        row = self._cx.execute(statement).first()
        return None if row is None else _record(row)

    def complete(self, company_id: str, key: str, status: int, body: bytes) -> None:
        statement = (
            update(records)
            .where(records.c.company_id == company_id, records.c.key == key)
            .values(state=RecordState.COMPLETED.value, response_status=status, response_body=body)
        )
        if self._cx.execute(statement).rowcount == 0:
            raise NotFoundError("idempotency key", key)

    def release(self, company_id: str, key: str) -> None:
        self._cx.execute(
            delete(records).where(records.c.company_id == company_id, records.c.key == key)
        )

    def purge(self, before: datetime) -> int:
        result = self._cx.execute(delete(records).where(records.c.created_at < before))
        return int(result.rowcount)
