"""The SQL unit of work: one transaction, rolled back unless committed. A database
refusal that leaves it (deadlock, serialisation failure, lock timeout, a constraint no
repository translated) leaves as ``ConflictError``; see ``adapters.sql.retry``.

What lets an ``updatedSince`` poller pass the last change it saw and never miss a late
commit differs by backend (docs/storage.md). On PostgreSQL a trigger stamps every write
of a listed row with its transaction id, and lists read only below the oldest
transaction still running (``UnitContext.keyset_page``): a commit is a bare ``COMMIT``,
and no two units wait on each other for it. On SQLite, which runs one writer at a
time, the commit stamps the rows the unit touched with the next tick of the company's
``change_clock`` while it holds the write lock, so stamps follow commit order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Self

from sqlalchemy import Connection, Engine, select, update

from adapters.sql.booking_forms import SqlBookingFormRepository
from adapters.sql.bookings import SqlBookingRepository
from adapters.sql.catalogs import SqlCatalogRepository, SqlCouponRedemptionRepository
from adapters.sql.context import UnitContext, translated_errors
from adapters.sql.crew import SqlCrewRepository
from adapters.sql.customers import SqlCustomerRepository
from adapters.sql.idempotency import (
    SESSION_LOCK,
    SESSION_UNLOCK,
    SqlIdempotencyRepository,
    lock_id,
)
from adapters.sql.leads import SqlLeadRepository
from adapters.sql.messages import SqlMessageRepository
from adapters.sql.payments import SqlPaymentRepository
from adapters.sql.processor import SqlProcessorRepository
from adapters.sql.quotes import SqlQuoteRepository
from adapters.sql.retry import refusal_of
from adapters.sql.tables import STAMPED, change_clock
from adapters.sql.teams import SqlTeamRepository
from adapters.sql.tenancy import SqlApiKeyRepository, SqlCompanyRepository
from adapters.sql.users import SqlUserRepository
from adapters.sql.waitlist import SqlWaitlistRepository
from adapters.sql.webhooks import SqlOutboxRepository, SqlWebhookRepository
from booking_core.ports import UnitOfWork

TICK = timedelta(microseconds=1)
CLOCK_START = datetime(2000, 1, 1, tzinfo=UTC)
STAMP_CHUNK = 500
"""Ids per ``UPDATE ... WHERE id IN (...)`` when stamping."""


def utc_now() -> datetime:
    """The wall clock, in UTC."""
    return datetime.now(UTC)


class SqlUnitOfWork:
    """A unit of work over one pooled connection; use it in a ``with`` block."""

    def __init__(
        self, engine: Engine, now: Callable[[], datetime] = utc_now, *, read_only: bool = False
    ) -> None:
        self._engine = engine
        self._now = now
        self.read_only = read_only
        self._connection: Connection | None = None
        self._cx = UnitContext(engine.dialect.name)
        self._kept_locks: list[int] = []
        """Session-level advisory locks ``undo_since_claims`` took (PostgreSQL), given
        back when the unit's transaction ends."""
        self.companies = SqlCompanyRepository(self._cx)
        self.api_keys = SqlApiKeyRepository(self._cx)
        self.catalogs = SqlCatalogRepository(self._cx)
        self.coupon_redemptions = SqlCouponRedemptionRepository(self._cx)
        self.customers = SqlCustomerRepository(self._cx)
        self.leads = SqlLeadRepository(self._cx)
        self.quotes = SqlQuoteRepository(self._cx)
        self.payments = SqlPaymentRepository(self._cx)
        self.idempotency = SqlIdempotencyRepository(self._cx)
        self.crew = SqlCrewRepository(self._cx)
        self.teams = SqlTeamRepository(self._cx)
        self.bookings = SqlBookingRepository(self._cx)
        self.booking_forms = SqlBookingFormRepository(self._cx)
        self.outbox = SqlOutboxRepository(self._cx)
        self.webhooks = SqlWebhookRepository(self._cx)
        self.processor = SqlProcessorRepository(self._cx)
        self.users = SqlUserRepository(self._cx)
        self.waitlist = SqlWaitlistRepository(self._cx)
        self.messages = SqlMessageRepository(self._cx)

    def __enter__(self) -> Self:
        if self._connection is not None:
            raise RuntimeError("a unit of work is not re-entrant; make another")
        # The transaction begins with the first statement (BEGIN IMMEDIATE on SQLite).
        self._connection = self._engine.connect()
        if self.read_only:
            # Read-only units take no write lock on SQLite (see engine._sqlite_on_begin).
            self._connection.execution_options(booking_read_only=True)
        self._cx.attach(self._connection)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        connection = self._connection
        try:
            self.rollback()
        finally:
            self._give_back_locks()
            self._cx.attach(None)
            self._connection = None
            if connection is not None:
                connection.close()
        # A deadlock, lock timeout or constraint that no repository translated is still a
        # lost race (409, try again), never a fault: say so, without the driver's text.
        refusal = refusal_of(exc) if exc is not None else None
        if refusal is not None:
            raise refusal from None

    def commit(self) -> None:
        """Commit; on SQLite, stamp the touched rows' ``changed_at`` first.

        SQLite: the unit holds the database's one write lock (``BEGIN IMMEDIATE``) until
        its commit, so for each company touched the stamp ``max(now, last + 1 µs)`` read
        from and stored in ``change_clock`` is later than every stamp committed before,
        and no unit commits an earlier one after it. PostgreSQL: nothing to stamp (the
        trigger did at each write), so this is the ``COMMIT`` alone.
        """
        connection = self._require_connection()
        if self.read_only:
            raise RuntimeError("a read-only unit of work cannot commit")
        with translated_errors("Another request changed the same data; try again."):
            touched = self._cx.touched
            companies = sorted({company for rows in touched.values() for company in rows})
            for company_id in companies:
                stamp = self._next_change(connection, company_id)
                for table_name, by_company in touched.items():
                    ids = sorted(by_company.get(company_id, ()))
                    self._stamp(connection, table_name, company_id, ids, stamp)
            connection.commit()
        touched.clear()
        self._cx.forget_claims()
        self._give_back_locks()

    def rollback(self) -> None:
        """Discard every change since ``__enter__`` or the last commit."""
        if self._connection is not None:
            self._connection.rollback()
        self._cx.touched.clear()
        self._cx.forget_claims()

    def undo_since_claims(self) -> None:
        """SQLite: roll back to the savepoint taken after the claims; the unit holds the
        database's one write lock all along. PostgreSQL: a claim holds its key by a
        transaction-scoped advisory lock (``SqlIdempotencyRepository``), so the key is
        first locked again at session level (one session may hold a lock at both
        levels), which outlives the rollback; then the unit rolls back and claims the
        keys afresh, and gives the session locks back when its transaction ends. A
        second claim of the key meanwhile finds it busy (``in use``), as before. Nothing
        of this runs on the usual way through a unit, only when it undoes."""
        connection = self._require_connection()
        if self._cx.dialect != "postgresql":
            self._cx.undo_to_claims()
            self._cx.touched.clear()  # the rows written since are no more
            return
        claims = list(self._cx.claims)
        for record in claims:
            number = lock_id(record.company_id, record.key)
            connection.execute(SESSION_LOCK, {"lock_id": number})
            self._kept_locks.append(number)
        self.rollback()
        for record in claims:
            if self.idempotency.claim(record) is not None:
                raise RuntimeError("a key held by this unit was claimed by another")

    def _give_back_locks(self) -> None:
        """Unlock the session-level locks ``undo_since_claims`` took; a connection that
        cannot is dropped from the pool (its locks end with it). Ends the transaction it
        ran them in."""
        if not self._kept_locks or self._connection is None:
            return
        numbers, self._kept_locks = self._kept_locks, []
        try:
            for number in numbers:
                self._connection.execute(SESSION_UNLOCK, {"lock_id": number})
            self._connection.rollback()
        except Exception:  # the connection is broken; its locks end with it
            self._connection.invalidate()

    def _require_connection(self) -> Connection:
        if self._connection is None:
            raise RuntimeError("commit outside a unit of work")
        return self._connection

    def _next_change(self, connection: Connection, company_id: str) -> datetime:
        """Move the company's clock on (SQLite, under the write lock); the new last change."""
        where = change_clock.c.company_id == company_id
        current = select(change_clock.c.last_change).where(where)
        last: datetime | None = connection.execute(current).scalar()
        if last is None:
            first = self._cx.insert(change_clock).values(
                company_id=company_id, last_change=CLOCK_START
            )
            connection.execute(first.on_conflict_do_nothing())
            last = CLOCK_START
        stamp: datetime = max(self._now(), last + TICK)
        connection.execute(update(change_clock).where(where).values(last_change=stamp))
        return stamp

    def _stamp(
        self,
        connection: Connection,
        table_name: str,
        company_id: str,
        ids: Sequence[str],
        stamp: datetime,
    ) -> None:
        table = STAMPED[table_name]
        for start in range(0, len(ids), STAMP_CHUNK):
            chunk = ids[start : start + STAMP_CHUNK]
            connection.execute(
                update(table)
                .where(table.c.company_id == company_id, table.c.id.in_(chunk))
                .values(changed_at=stamp)
            )


def _satisfies_the_port(uow: SqlUnitOfWork) -> UnitOfWork:
    """Never called: mypy checks here that ``SqlUnitOfWork`` is a ``UnitOfWork``."""
    return uow
