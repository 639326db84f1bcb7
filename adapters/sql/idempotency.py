"""Idempotency records: claimed by an ``INSERT ... ON CONFLICT DO NOTHING``, so two
processes sending one key at the same moment cannot both win. On PostgreSQL the insert
also takes the key's advisory lock without waiting (see ``_claim_unless_busy``)."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

import attrs
from sqlalchemy import BigInteger, bindparam, delete, func, select, update

from adapters.sql.context import AnyRow, UnitContext, insert_of
from adapters.sql.tables import idempotency_records as records
from booking_core.errors import NotFoundError
from booking_core.idempotency import IdempotencyRecord, RecordState

CLAIM_ATTEMPTS = 3


def lock_id(company_id: str, key: str) -> int:
    """The key's advisory lock number: 64 bits of a digest of company and key (two keys
    sharing one only answer ``in use`` for each other, never replay each other)."""
    digest = hashlib.sha256(f"{company_id}\x00{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


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


COLUMNS = (
    "company_id",
    "key",
    "fingerprint",
    "state",
    "created_at",
    "response_status",
    "response_body",
)
"""The columns a claim writes, given as parameters of the same names."""


def _claim(dialect: str) -> Any:
    """SQLite's claim: insert the record unless the key is taken."""
    return (
        insert_of(dialect, records)
        .values({name: bindparam(name, type_=records.c[name].type) for name in COLUMNS})
        .on_conflict_do_nothing(index_elements=["company_id", "key"])
        .returning(records.c.key)
    )


def _claim_unless_busy(dialect: str) -> Any:
    """PostgreSQL's claim: insert only while taking the key's advisory lock (parameter
    ``lock_id``) without waiting."""
    lock = func.pg_try_advisory_xact_lock(bindparam("lock_id", type_=BigInteger()))
    row = select(*(bindparam(name, type_=records.c[name].type) for name in COLUMNS)).where(lock)
    return (
        insert_of(dialect, records)
        .from_select(list(COLUMNS), row)
        .on_conflict_do_nothing(index_elements=["company_id", "key"])
        .returning(records.c.key)
    )


SESSION_LOCK = select(func.pg_advisory_lock(bindparam("lock_id", type_=BigInteger())))
"""A key's advisory lock at session level: outlives the transaction, until unlocked."""
SESSION_UNLOCK = select(func.pg_advisory_unlock(bindparam("lock_id", type_=BigInteger())))

_GET = select(records).where(
    records.c.company_id == bindparam("company_id"), records.c.key == bindparam("key")
)
_COMPLETE = (
    update(records)
    .where(
        records.c.company_id == bindparam("of_company"),
        records.c.key == bindparam("of_key"),
    )
    .values(
        state=RecordState.COMPLETED.value,
        response_status=bindparam("status", type_=records.c.response_status.type),
        response_body=bindparam("body", type_=records.c.response_body.type),
    )
)


class SqlIdempotencyRepository:
    """Stored answers of writes sent with an ``Idempotency-Key``, per company. Its
    statements are built once (``UnitContext.shape``): every idempotent write runs them."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def claim(self, record: IdempotencyRecord) -> IdempotencyRecord | None:
        values: dict[str, object] = {
            "company_id": record.company_id,
            "key": record.key,
            "fingerprint": record.fingerprint,
            "state": record.state.value,
            "created_at": record.created_at,
            "response_status": record.response_status,
            "response_body": record.response_body,
        }
        if self._cx.dialect == "postgresql":
            return self._claim_unless_busy(record, values)
        statement = self._cx.shape("idempotency.claim", _claim)
        # SQLite runs one writer at a time: a concurrent claim of the same key has
        # committed (or rolled back) before this insert runs. The row can vanish again
        # (a release) before we read it: then claim once more.
        for _ in range(CLAIM_ATTEMPTS):
            if self._cx.execute(statement, params=values).first() is not None:
                self._cx.note_claim(record)
                return None
            existing = self.get(record.company_id, record.key)
            if existing is not None:
                return existing
        raise RuntimeError("an idempotency key kept changing while being claimed")

    def _claim_unless_busy(
        self, record: IdempotencyRecord, values: dict[str, object]
    ) -> IdempotencyRecord | None:
        """PostgreSQL: insert only while holding the key's transaction-scoped advisory
        lock, taken without waiting. A transaction that claimed the key holds that lock
        until it ends, so a second claim never waits on the first: it finds the committed
        record, or, while the first still runs, an in-progress record is answered."""
        statement = self._cx.shape("idempotency.claim_unless_busy", _claim_unless_busy)
        values["lock_id"] = lock_id(record.company_id, record.key)
        if self._cx.run_kept(statement, values).first() is not None:
            self._cx.note_claim(record)
            return None
        existing = self.get(record.company_id, record.key)
        if existing is not None:
            return existing
        # Not ours and not committed: another request holds the key right now.
        return attrs.evolve(record, state=RecordState.IN_PROGRESS)

    def get(self, company_id: str, key: str) -> IdempotencyRecord | None:
        row = self._cx.run_kept(_GET, {"company_id": company_id, "key": key}).first()
        return None if row is None else _record(row)

    def complete(self, company_id: str, key: str, status: int, body: bytes) -> None:
        params = {"of_company": company_id, "of_key": key, "status": status, "body": body}
        if self._cx.run_kept(_COMPLETE, params).rowcount == 0:
            raise NotFoundError("idempotency key", key)

    def release(self, company_id: str, key: str) -> None:
        self._cx.execute(
            delete(records).where(records.c.company_id == company_id, records.c.key == key)
        )

    def purge(self, before: datetime) -> int:
        result = self._cx.execute(delete(records).where(records.c.created_at < before))
        return int(result.rowcount)
