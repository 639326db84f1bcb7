"""What the repositories of one unit of work share: its connection, the rows it touched,
and the few statement shapes every repository uses (conflict-safe insert, keyset page).

Database errors never leave here as driver text: a unique-constraint violation becomes
``ConflictError``, and so does a deadlock or serialisation failure (a retry may pass).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Connection,
    CursorResult,
    Executable,
    Row,
    Table,
    Text,
    bindparam,
    cast,
    func,
    select,
    text,
    tuple_,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError, IntegrityError

from adapters.sql.columns import id_column_type, instant_type
from adapters.sql.direct import run_kept
from booking_core.errors import ConflictError, NotFoundError
from booking_core.paging import Page, PageRequest, Position, page_of

T = TypeVar("T")

if TYPE_CHECKING:
    from typing import TypeAlias

    from sqlalchemy import NestedTransaction

    from booking_core.idempotency import IdempotencyRecord

    AnyRow: TypeAlias = Row[*tuple[Any, ...]]
    """A result row of any columns (SQLAlchemy 2.1 types rows by a TypeVarTuple)."""
    AnyResult: TypeAlias = CursorResult[*tuple[Any, ...]]
else:
    AnyRow = Row
    AnyResult = CursorResult

UNIQUE_VIOLATION = "23505"
EXCLUSION_VIOLATION = "23P01"
RETRYABLE_STATES = frozenset({"40001", "40P01"})  # serialization_failure, deadlock_detected
SQLITE_UNIQUE = frozenset({"SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY"})


def is_unique_violation(error: DBAPIError) -> bool:
    """True when ``error`` is a unique or primary-key violation, on either backend."""
    orig = error.orig
    return (
        getattr(orig, "sqlstate", None) == UNIQUE_VIOLATION
        or getattr(orig, "sqlite_errorname", None) in SQLITE_UNIQUE
    )


def is_exclusion_violation(error: DBAPIError) -> bool:
    """True when ``error`` is a PostgreSQL exclusion-constraint violation."""
    return getattr(error.orig, "sqlstate", None) == EXCLUSION_VIOLATION


def is_retryable(error: DBAPIError) -> bool:
    """True for PostgreSQL's deadlock and serialisation failures."""
    return getattr(error.orig, "sqlstate", None) in RETRYABLE_STATES


@contextmanager
def translated_errors(conflict_message: str) -> Iterator[None]:
    """Turn unique violations and retryable failures into ``ConflictError``."""
    try:
        yield
    except IntegrityError as error:
        if is_unique_violation(error):
            raise ConflictError(conflict_message) from None
        raise
    except DBAPIError as error:
        if is_retryable(error):
            raise ConflictError("Another request changed the same data; try again.") from None
        raise


HOLD = text(
    "SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0)))"
    " FROM unnest(CAST(:keys AS text[])) WITH ORDINALITY AS held(k, n)"
)
"""Transaction-scoped advisory locks on ``keys``, taken in the order given (PostgreSQL)."""

_SHAPES: dict[tuple[str, str], Any] = {}
"""Statements kept by ``UnitContext.shape``, by (dialect, name)."""


def insert_of(dialect: str, table: Table) -> Any:
    """The dialect's own INSERT into ``table``, which knows ``ON CONFLICT``."""
    if dialect == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


class UnitContext:
    """The connection of one unit of work and the listed rows it touched."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self._connection: Connection | None = None
        self._to_hold: tuple[str, ...] = ()
        self.claims: list[IdempotencyRecord] = []
        """The ``Idempotency-Key`` claims this unit made (``note_claim``)."""
        self._after_claims: NestedTransaction | None = None
        self.touched: defaultdict[str, defaultdict[str, set[str]]] = defaultdict(
            lambda: defaultdict(set)
        )

    @property
    def connection(self) -> Connection:
        """The open connection; using a repository outside ``with uow:`` is a bug.

        Locks asked for with ``hold`` and not yet taken are taken first, so no statement
        runs before them."""
        if self._connection is None:
            raise RuntimeError("repositories are used inside `with uow:` only")
        if self._to_hold:
            keys, self._to_hold = self._to_hold, ()
            with translated_errors("Another request changed the same data; try again."):
                run_kept(self._connection, HOLD, {"keys": list(keys)})
        return self._connection

    def attach(self, connection: Connection | None) -> None:
        """Start (or, with None, end) serving one unit of work."""
        self._connection = connection
        self.forget_claims()
        self.touched.clear()

    def forget_claims(self) -> None:
        """The unit's transaction ended: no claim of its is held any more, and nothing it
        asked ``hold`` for (the locks, if taken, ended with it)."""
        self._to_hold = ()
        self.claims.clear()
        self._after_claims = None

    def note_claim(self, record: IdempotencyRecord) -> None:
        """This unit claimed ``record``'s key. On SQLite a savepoint marks the moment, for
        ``undo_to_claims``; on PostgreSQL the unit of work keeps the key's lock past a
        rollback instead (``SqlUnitOfWork.undo_since_claims``), which costs no statement
        on the way that needs none."""
        self.claims.append(record)
        if self.dialect != "postgresql":
            self._after_claims = self.connection.begin_nested()

    def undo_to_claims(self) -> None:
        """SQLite: roll back to the savepoint taken after the last claim (the claims, made
        before it, stay). The unit keeps the database's one write lock throughout."""
        if self._after_claims is None:
            raise RuntimeError("no claim to undo to")
        self._to_hold = ()
        self._after_claims.rollback()
        self._after_claims = self.connection.begin_nested()

    def hold(self, keys: Collection[str]) -> None:
        """Hold a transaction-scoped advisory lock on each of ``keys`` (PostgreSQL) before
        the unit's next statement, released at commit or rollback; all of them in sorted
        order, so two units holding overlapping keys never wait on each other in a
        circle.

        The locks are taken by the next statement through ``connection``, or by the one
        that asks for them with ``take_hold`` to take them itself (``booking_busy_held``
        holds and reads in one statement). A unit that runs no statement after asking
        holds nothing: it reads nothing under the locks and writes nothing."""
        self._to_hold = tuple(sorted({*self._to_hold, *keys}))

    def take_hold(self) -> tuple[str, ...]:
        """The keys ``hold`` was asked for and not yet taken; the caller promises to take
        them in its next statement, before it reads anything."""
        keys, self._to_hold = self._to_hold, ()
        return keys

    def touch(self, table: Table, company_id: str, row_id: str) -> None:
        """Note that a listed row changed, so that the commit stamps its ``changed_at``
        (SQLite; on PostgreSQL a trigger stamps every write, and nothing is noted)."""
        if self.dialect != "postgresql":
            self.touched[table.name][company_id].add(row_id)

    def execute(
        self,
        statement: Executable,
        conflict_message: str = "That already exists.",
        *,
        params: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
    ) -> AnyResult:
        """Run a statement (with ``params`` for its bound parameters; a sequence of them
        runs it for each, an INSERT as one multi-row statement), translating constraint
        and retryable errors."""
        with translated_errors(conflict_message):
            return self.connection.execute(statement, params)

    def shape(self, name: str, build: Callable[[str], T]) -> T:
        """The statement ``name`` as ``build`` makes it for this dialect, built once per
        process and kept, its values left as bound parameters given at ``execute``.

        For the statements every booking runs: SQLAlchemy then neither builds the
        statement nor computes its cache key again on each call (the key is memoised on
        the kept object), and finds the compiled SQL in the engine's cache, which was a
        fifth of a booking's CPU in the issue 9 profile."""
        key = (self.dialect, name)
        found: T | None = _SHAPES.get(key)
        if found is None:
            found = _SHAPES.setdefault(key, build(self.dialect))
        return found

    def run_kept(
        self,
        statement: Executable,
        params: Mapping[str, Any],
        conflict_message: str = "That already exists.",
    ) -> Any:
        """``execute`` for a statement built once and kept (``shape``, or a module's
        constant): on PostgreSQL it runs straight on psycopg (``adapters.sql.direct``).
        The answer has ``first``, ``one``, ``all``, ``scalar``, ``rowcount`` and
        iteration."""
        with translated_errors(conflict_message):
            return run_kept(self.connection, statement, params)

    def execute_guarded(self, statement: Executable, conflict_message: str) -> AnyResult:
        """Run a write that may break a unique constraint inside a savepoint, so that a
        ``ConflictError`` leaves the unit of work usable (PostgreSQL aborts the whole
        transaction on an error otherwise)."""
        with translated_errors(conflict_message), self.connection.begin_nested():
            return self.connection.execute(statement)

    def insert_new(self, table: Table, values: Mapping[str, Any], conflict_message: str) -> None:
        """Insert a row; ``ConflictError`` if it collides with any unique key.

        ``ON CONFLICT DO NOTHING`` reports the collision without an error, so the
        transaction stays usable and no savepoint is needed.
        """
        statement = self.insert(table).values(**values).on_conflict_do_nothing()
        key = table.primary_key.columns.values()[0]
        result = self.execute(statement.returning(key), conflict_message)
        if result.first() is None:
            raise ConflictError(conflict_message)

    def row(
        self,
        table: Table,
        company_id: str,
        row_id: str,
        kind: str,
        *,
        locked: bool = False,
        lock: Literal["held"] | None = None,
    ) -> AnyRow:
        """The company's row ``row_id`` of ``table``; ``NotFoundError`` naming ``kind`` for an
        unknown id or another company's. ``locked`` (a ``get_for_update``): on PostgreSQL
        the row stays locked until the unit ends, so no other unit reads it so or writes it
        meanwhile; on SQLite a unit that may write holds the write lock from its ``BEGIN
        IMMEDIATE`` on already. ``lock="held"`` (a held read): on PostgreSQL ``FOR NO KEY
        UPDATE``, so the row cannot change, nor be held by another unit, until this unit
        ends (a later ``locked`` read of it in this unit cannot deadlock with another
        holder, as two ``FOR SHARE`` holders upgrading at once would)."""
        statement = select(table).where(table.c.company_id == company_id, table.c.id == row_id)
        if self.dialect == "postgresql" and (locked or lock == "held"):
            statement = statement.with_for_update(key_share=not locked)
        found = self.execute(statement).first()
        if found is None:
            raise NotFoundError(kind, row_id)
        return found

    def insert(self, table: Table) -> Any:
        """The dialect's own INSERT, which knows ``ON CONFLICT``."""
        return insert_of(self.dialect, table)

    def keyset_page(
        self,
        table: Table,
        company_id: str,
        request: PageRequest,
        where: Sequence[ColumnElement[bool]],
        decode: Callable[[AnyRow], T],
    ) -> Page[T]:
        """One page in either list order, straight off the keyset indexes.

        Newest first: ``(created_at, id)`` descending, strictly before the cursor.
        By change, from ``updated_since`` on, ascending and strictly after the cursor:
        ``(changed_at, id)`` on SQLite, where commits stamp in commit order;
        ``(changed_xid, id)`` on PostgreSQL, below the watermark (``_change_page``).
        """
        if request.updated_since is not None and self.dialect == "postgresql":
            conditions = [*where, table.c.changed_at >= _instant(request.updated_since)]
            return self._change_page(table, company_id, request, conditions, decode)
        by_change = request.updated_since is not None
        at = table.c.changed_at if by_change else table.c.created_at
        conditions = [table.c.company_id == company_id, *where]
        if request.updated_since is not None:
            conditions.append(at >= _instant(request.updated_since))
        if request.after is not None:
            cursor = tuple_(_instant(request.after.at), _id(request.after.id))
            row_key = tuple_(at, table.c.id)
            conditions.append(row_key > cursor if by_change else row_key < cursor)
        order = (at.asc(), table.c.id.asc()) if by_change else (at.desc(), table.c.id.desc())
        statement = (
            select(table, at.label("page_position_at"))
            .where(*conditions)
            .order_by(*order)
            .limit(request.limit + 1)
        )
        rows = self.execute(statement).all()
        return page_of(
            [(Position(row.page_position_at, row.id), decode(row)) for row in rows], request
        )

    def _change_page(
        self,
        table: Table,
        company_id: str,
        request: PageRequest,
        where: Sequence[ColumnElement[bool]],
        decode: Callable[[AnyRow], T],
    ) -> Page[T]:
        """A by-change page on PostgreSQL (``where`` holds the ``updated_since`` bound):
        ``(changed_xid, id)`` ascending, only rows of transactions below the watermark,
        the oldest transaction id still running.

        Every transaction still running when the statement's snapshot was taken, and
        every later one, has an id at or above the watermark, so whatever commits after
        this page lands after its last position, however early its change was made. A
        position without a sequence (a cursor made before ``changed_xid`` existed)
        continues after its ``(changed_at, id)``; the revision that added the column
        numbered the rows it found in that order.
        """
        xid, at, row_id = table.c.changed_xid, table.c.changed_at, table.c.id
        conditions = [
            table.c.company_id == company_id,
            *where,
            xid < WATERMARK,
        ]
        after = request.after
        if after is not None and after.seq is not None:
            conditions.append(tuple_(xid, row_id) > tuple_(_seq(after.seq), _id(after.id)))
        elif after is not None:
            conditions.append(tuple_(at, row_id) > tuple_(_instant(after.at), _id(after.id)))
        statement = (
            select(table, at.label("page_position_at"), xid.label("page_position_seq"))
            .where(*conditions)
            .order_by(xid.asc(), row_id.asc())
            .limit(request.limit + 1)
        )
        rows = self.execute(statement).all()
        positions = (Position(r.page_position_at, r.id, r.page_position_seq) for r in rows)
        return page_of([(p, decode(r)) for p, r in zip(positions, rows, strict=True)], request)


def without_keys(values: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """``values`` for an UPDATE's SET, without the key columns (they never change)."""
    dropped = set(keys or ("company_id", "id"))
    return {name: value for name, value in values.items() if name not in dropped}


WATERMARK = cast(cast(func.pg_snapshot_xmin(func.pg_current_snapshot()), Text), BigInteger)
"""The oldest transaction id still running as the statement's snapshot was taken (every
lower one has ended), as a number comparable with ``changed_xid``."""


def _seq(value: int) -> Any:
    return bindparam(None, value, type_=BigInteger())


def _instant(value: datetime) -> Any:
    return bindparam(None, value, type_=instant_type())


def _id(value: str) -> Any:
    return bindparam(None, value, type_=id_column_type())
