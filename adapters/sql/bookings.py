"""Bookings: the fields queries look at as columns, the rest of the record one JSON
document; crew assignments beside them (``adapters.sql.assignments``).

Every write of ``add_all`` and ``save_all`` runs inside a savepoint (except one booking
holding one block on PostgreSQL, written by one statement: see ``_add_single``): a
refused batch (``SlotTaken``, ``ConflictError``, ``NotFoundError``) leaves nothing behind
and the unit of work usable, so a use case can redraw codes and try again in the same
transaction. A batch that meets a deadlock is rolled back to its savepoint and written
again, a few times at most (``adapters.sql.retry``); an exclusion violation (``23P01``)
is ``SlotTaken``, any other unique violation ``ConflictError``: 409 ``conflict`` either
way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    bindparam,
    delete,
    exists,
    func,
    select,
    update,
)
from sqlalchemy.dialects import postgresql
from sqlalchemy.exc import DBAPIError, IntegrityError

from adapters.sql import assignments, codecs, retry
from adapters.sql.assignments import rows_of
from adapters.sql.context import (
    AnyRow,
    UnitContext,
    is_exclusion_violation,
    is_retryable,
    is_unique_violation,
    without_keys,
)
from adapters.sql.direct import run_kept
from adapters.sql.tables import booking_assignments, bookings
from booking_core.availability import Block
from booking_core.bookings import Booking, BookingStatus
from booking_core.errors import ConflictError, NotFoundError, SlotTaken
from booking_core.paging import Page, PageRequest

COLUMN_OF_FIELD = {
    "id": "id",
    "company_id": "company_id",
    "code": "code",
    "customer_id": "customer_id",
    "status": "status",
    "plan_id": "plan_id",
    "visit_index": "visit_index",
    "group_id": "group_id",
    "start": "starts_at",
    "end": "ends_at",
    "tracking_token": "tracking_token",
    "version": "version",
    "created_at": "created_at",
    "form_id": "form_id",
}
"""Booking fields kept as columns (and not in the document), by column name."""
ANSWERS = "answers"
"""The intake answers' column: a JSON list, NULL for none (every booking made before
booking forms, or without a form)."""

_KEYS_TAKEN = "A booking with that id, code, tracking token or plan visit already exists."


def _values(booking: Booking) -> dict[str, Any]:
    plain = codecs.to_plain(booking)
    document = {
        name: value
        for name, value in plain.items()
        if name not in COLUMN_OF_FIELD and name != ANSWERS
    }
    values = {column: getattr(booking, field) for field, column in COLUMN_OF_FIELD.items()}
    values["status"] = booking.status.value
    values["document"] = codecs.dumps(document)
    values[ANSWERS] = codecs.dumps(plain[ANSWERS]) if booking.answers else None
    return values


def _booking(row: AnyRow) -> Booking:
    plain = json.loads(row.document)
    for field, column in COLUMN_OF_FIELD.items():
        plain[field] = codecs.to_plain(getattr(row, column))
    plain[ANSWERS] = json.loads(row.answers) if row.answers else []
    return codecs.from_plain(plain, Booking)


# PostgreSQL's one-booking path, built once (``UnitContext.shape`` says why); the
# values are given at execution, the columns named by the parameters' keys.
_INSERT_BOOKING = postgresql.insert(bookings).on_conflict_do_nothing().returning(bookings.c.id)

_BOOKING_COLUMNS = (*COLUMN_OF_FIELD.values(), "document", ANSWERS)
_BLOCK_COLUMNS = ("crew_id", "starts_at", "ends_at", "zip_code", "open")
"""The assignment row's own values; its company and booking come from the booking row."""


def _booking_with_block() -> Select[tuple[int, int]]:
    """One statement writing a booking and its one block, each ``ON CONFLICT DO NOTHING``:

    ``WITH added AS (INSERT INTO bookings ... RETURNING company_id, id), held AS (INSERT
    INTO booking_assignments ... SELECT ... FROM added ... RETURNING crew_id) SELECT (SELECT
    count(*) FROM added), (SELECT count(*) FROM held)``: how many booking rows (0 when a
    key is taken) and block rows (0 when the block is taken, or no booking was written)
    were written. The booking's values are bound by column name, the block's as
    ``block_<column>``."""
    added = (
        postgresql.insert(bookings)
        .values({name: bindparam(name, type_=bookings.c[name].type) for name in _BOOKING_COLUMNS})
        .on_conflict_do_nothing()
        .returning(bookings.c.company_id, bookings.c.id)
        .cte("added")
    )
    a = booking_assignments
    block = [bindparam(f"block_{name}", type_=a.c[name].type) for name in _BLOCK_COLUMNS]
    held = (
        postgresql.insert(a)
        .from_select(
            ["company_id", "booking_id", *_BLOCK_COLUMNS],
            select(added.c.company_id, added.c.id, *block),
        )
        .on_conflict_do_nothing()
        .returning(a.c.crew_id)
        .cte("held")
    )
    count = func.count()
    return select(
        select(count).select_from(added).scalar_subquery().label("booking_written"),
        select(count).select_from(held).scalar_subquery().label("block_written"),
    )


_INSERT_BOOKING_WITH_BLOCK = _booking_with_block()


class SqlBookingRepository:
    """Bookings of every company, each reached only through its own company."""

    def __init__(self, context: UnitContext) -> None:
        self._cx = context

    def get(self, company_id: str, booking_id: str) -> Booking:
        found = self._one(bookings.c.company_id == company_id, bookings.c.id == booking_id)
        if found is None:
            raise NotFoundError("booking", booking_id)
        return found

    def by_code(self, company_id: str, code: str) -> Booking | None:
        return self._one(bookings.c.company_id == company_id, bookings.c.code == code)

    def by_tracking_token(self, token: str) -> Booking | None:
        return self._one(bookings.c.tracking_token == token)

    def add_all(self, batch: Sequence[Booking]) -> None:
        if not batch:
            return
        taken = assignments.first_collision(batch, {})
        if taken is not None:
            raise taken

        def write() -> None:
            self._check_free(batch, saving=False)
            assignments.replace_rows(self._cx.connection, batch, new=True)
            assignments.insert_rows(self._cx.connection, bookings, [_values(b) for b in batch])

        if self._cx.dialect == "postgresql" and len(batch) == 1 and len(rows_of(batch[0])) <= 1:
            self._add_single(batch[0])
        else:
            self._guarded(batch, write, saving=False)
        for booking in batch:
            self._cx.touch(bookings, booking.company_id, booking.id)

    def _add_single(self, booking: Booking) -> None:
        """PostgreSQL, one booking holding at most one block: one statement and no
        savepoint. The booking row and its block row are written by one statement of two
        data-modifying CTEs (``_booking_with_block``; a booking without a block by a plain
        insert), each ``ON CONFLICT DO NOTHING``, which PostgreSQL also applies to the
        exclusion constraint: a taken key or block is reported as a row not written, never
        an error, so the unit stays usable. A taken key writes nothing (the block is
        selected from the booking rows written) and is ``ConflictError``; a taken block
        leaves the booking row written, which a second statement deletes again before
        ``SlotTaken`` is raised. One row per table cannot deadlock, so there is nothing to
        retry either."""
        connection = self._cx.connection
        values = _values(booking)
        rows = rows_of(booking)
        if not rows:
            if run_kept(connection, _INSERT_BOOKING, values).first() is None:
                raise ConflictError(_KEYS_TAKEN)
            return
        block = {f"block_{name}": rows[0][name] for name in _BLOCK_COLUMNS}
        written = run_kept(connection, _INSERT_BOOKING_WITH_BLOCK, values | block).one()
        if not written.booking_written:
            raise ConflictError(_KEYS_TAKEN)
        if not written.block_written:
            where = (bookings.c.company_id == booking.company_id, bookings.c.id == booking.id)
            connection.execute(delete(bookings).where(*where))
            start = rows[0]["starts_at"].astimezone(booking.zone).isoformat()
            raise SlotTaken(start, rows[0]["crew_id"])

    def save_all(self, batch: Sequence[Booking]) -> None:
        if not batch:
            return
        keys = [(b.company_id, b.id) for b in batch]
        if len(set(keys)) != len(keys):
            raise ValueError("save_all was given one booking twice")
        taken = assignments.first_collision(batch, {})
        if taken is not None:
            raise taken

        def write() -> None:
            for booking in batch:
                self._update(booking)
            self._check_free(batch, saving=True)
            assignments.replace_rows(self._cx.connection, batch, new=False)

        self._guarded(batch, write, saving=True)
        for booking in batch:
            self._cx.touch(bookings, booking.company_id, booking.id)

    def of_plan(self, company_id: str, plan_id: str) -> list[Booking]:
        where = (bookings.c.company_id == company_id, bookings.c.plan_id == plan_id)
        return self._all(where, (bookings.c.visit_index, bookings.c.id))

    def of_group(self, company_id: str, group_id: str) -> list[Booking]:
        where = (bookings.c.company_id == company_id, bookings.c.group_id == group_id)
        return self._all(where, (bookings.c.visit_index, bookings.c.id))

    def for_customer(self, company_id: str, customer_id: str) -> list[Booking]:
        where = (bookings.c.company_id == company_id, bookings.c.customer_id == customer_id)
        return self._all(where, (bookings.c.starts_at, bookings.c.id))

    def for_customers(
        self, company_id: str, customer_ids: Collection[str]
    ) -> dict[str, list[Booking]]:
        found: dict[str, list[Booking]] = {customer_id: [] for customer_id in customer_ids}
        if found:
            where = (bookings.c.company_id == company_id, bookings.c.customer_id.in_(found))
            for booking in self._all(where, (bookings.c.starts_at, bookings.c.id)):
                found[booking.customer_id].append(booking)
        return found

    def hold_crew(self, company_id: str, crew_ids: Collection[str]) -> None:
        # SQLite already runs one writer at a time (BEGIN IMMEDIATE). On PostgreSQL one
        # transaction-scoped advisory lock per member (``UnitContext.hold``), released at
        # commit or rollback, taken before the unit's next statement; when that statement
        # is ``busy``'s read of named members, the read takes them itself and sees every
        # job committed before they were held (``booking_busy_held``, migration 0019).
        if self._cx.dialect != "postgresql" or not crew_ids:
            return
        self._cx.hold({f"crew:{company_id}:{crew_id}" for crew_id in crew_ids})

    def busy(
        self,
        company_id: str,
        start: datetime,
        end: datetime,
        crew_ids: Collection[str] | None = None,
    ) -> dict[str, list[Block]]:
        hold = self._cx.take_hold()
        return assignments.busy(self._cx.connection, company_id, start, end, crew_ids, hold=hold)

    # --- helpers --------------------------------------------------------------------

    def _one(self, *where: ColumnElement[bool]) -> Booking | None:
        row = self._cx.execute(select(bookings).where(*where)).first()
        return None if row is None else _booking(row)

    def _all(self, where: Sequence[ColumnElement[bool]], order: Sequence[Any]) -> list[Booking]:
        rows = self._cx.execute(select(bookings).where(*where).order_by(*order)).all()
        return [_booking(row) for row in rows]

    def _update(self, booking: Booking) -> None:
        """``UPDATE ... WHERE version = booking.version - 1``: of two writers that read one
        version, the second updates nothing (PostgreSQL re-checks once the first commits)."""
        statement = (
            update(bookings)
            .where(
                bookings.c.company_id == booking.company_id,
                bookings.c.id == booking.id,
                bookings.c.version == booking.version - 1,
            )
            .values(**without_keys(_values(booking)))
        )
        if self._cx.connection.execute(statement).rowcount == 0:
            self.get(booking.company_id, booking.id)  # NotFoundError when there is none
            raise ConflictError(f"Booking {booking.id} was changed by another request.")

    def _check_free(self, batch: Sequence[Booking], *, saving: bool) -> None:
        """On SQLite, where this unit holds the write lock, look for overlaps first;
        PostgreSQL's exclusion constraint decides there (see ``_guarded``)."""
        if self._cx.dialect == "postgresql":
            return
        held = assignments.held_elsewhere(self._cx.connection, batch, saving=saving)
        taken = assignments.first_collision(batch, held)
        if taken is not None:
            raise taken

    def _guarded(
        self, batch: Sequence[Booking], write: Callable[[], None], *, saving: bool
    ) -> None:
        """Run the batch's writes in a savepoint, again after a deadlock (bounded, with
        jitter: ``adapters.sql.retry``); translate what the database refused once it is
        rolled back (no SQL or driver text leaves here)."""
        try:
            retry.in_savepoint(self._cx.connection, write)
        except IntegrityError as error:
            if is_exclusion_violation(error):
                raise self._taken_after_violation(batch, saving=saving) from None
            if is_unique_violation(error):
                raise ConflictError(_KEYS_TAKEN) from None
            raise
        except DBAPIError as error:
            if is_retryable(error):
                raise ConflictError(retry.RETRY_MESSAGE) from None
            raise

    def _taken_after_violation(self, batch: Sequence[Booking], *, saving: bool) -> SlotTaken:
        """Which member the exclusion constraint refused: the overlapping row committed
        before the violation was raised, so a fresh statement (READ COMMITTED) sees it."""
        held = assignments.held_elsewhere(self._cx.connection, batch, saving=saving)
        taken = assignments.first_collision(batch, held)
        if taken is not None:
            return taken
        # The other job was closed again in the meantime: still a lost race.
        first = next(b for b in batch if b.is_open)
        return SlotTaken(first.local_start.isoformat())

    def list(
        self,
        company_id: str,
        page: PageRequest,
        *,
        status: BookingStatus | None = None,
        customer_id: str | None = None,
        crew_id: str | None = None,
        starts_from: datetime | None = None,
        starts_until: datetime | None = None,
    ) -> Page[Booking]:
        where: list[ColumnElement[bool]] = []
        if status is not None:
            where.append(bookings.c.status == status.value)
        if customer_id is not None:
            where.append(bookings.c.customer_id == customer_id)
        if crew_id is not None:
            a = booking_assignments
            where.append(
                exists().where(
                    a.c.company_id == bookings.c.company_id,
                    a.c.booking_id == bookings.c.id,
                    a.c.crew_id == crew_id,
                )
            )
        if starts_from is not None:
            where.append(bookings.c.starts_at >= starts_from)
        if starts_until is not None:
            where.append(bookings.c.starts_at < starts_until)
        return self._cx.keyset_page(bookings, company_id, page, where, _booking)
