"""Kept statements run straight on psycopg (PostgreSQL): compiled by SQLAlchemy once,
executed without SQLAlchemy's per-call execution machinery.

A booking runs six statements, each built once and kept (``UnitContext.shape``). Even
so, ``Connection.execute`` spent as much CPU again as psycopg itself on every call:
building an execution context, processing parameters and result metadata, firing events
(issue 9; ``docs/storage.md``, "Kept statements on psycopg"). ``run_kept`` does only
what those statements need: the SQL and its parameter processing come from SQLAlchemy's
own compilation of the statement for the connection's dialect, done once per statement
and kept; each call fills in the parameters (``construct_params``, which also checks
that every required one is given), applies the column types' bind processors
(``UtcDateTime`` refuses a naive instant as it does on the SQLAlchemy path), runs the
SQL on the DBAPI connection in the SQLAlchemy connection's transaction, and applies the
types' result processors.
Listeners of ``before_cursor_execute`` and ``after_cursor_execute`` on the engine or the
connection are called as SQLAlchemy calls them (with no execution context), so what
counts or explains statements sees these too; ``echo`` logging does not.

The statement runs in the same transaction as everything else in the unit of work
(SQLAlchemy's transaction is begun first when none is), so commit, rollback and
savepoints are unchanged. A driver error leaves as SQLAlchemy's own wrapper of it
(``DBAPIError.instance``: ``IntegrityError`` for a unique or exclusion violation), so
``translated_errors`` and ``retry.refusal_of`` read it as before; a connection the
error left broken is invalidated, and the pool never hands it out again.

Elsewhere (SQLite, or a statement whose SQL is only final at execution, such as an
expanding ``IN``) ``run_kept`` is ``Connection.execute``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple, cast

import psycopg
from psycopg.rows import namedtuple_row
from sqlalchemy import ClauseElement, Connection, Executable
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.compiler import SQLCompiler

Processor = Callable[[Any], Any]


class Rows:
    """What a kept statement answered on PostgreSQL: its rows, read by column name or
    unpacked, and how many rows it wrote; the few ``CursorResult`` methods callers use."""

    __slots__ = ("_rows", "rowcount")

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self.rowcount = rowcount

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rows)

    def all(self) -> list[Any]:
        return list(self._rows)

    def first(self) -> Any:
        return self._rows[0] if self._rows else None

    def one(self) -> Any:
        if len(self._rows) != 1:
            raise ValueError(f"expected one row, the statement answered {len(self._rows)}")
        return self._rows[0]

    def scalar(self) -> Any:
        return self._rows[0][0] if self._rows else None


class _Compiled(NamedTuple):
    statement: Executable  # held, so that the id keying it is never reused
    sql: str | None
    """None: only ``Connection.execute`` can run it (its SQL is completed at execution)."""
    compiled: SQLCompiler
    binds: tuple[tuple[str, Processor], ...]
    results: tuple[tuple[int, Processor], ...]


_COMPILED: dict[int, _Compiled] = {}
"""Kept statements by ``id``, compiled for PostgreSQL."""


def run_kept(connection: Connection, statement: Executable, params: Mapping[str, Any]) -> Any:
    """Run ``statement``, a statement built once and kept, with ``params``; its rows.

    The answer has ``first``, ``one``, ``all``, ``scalar``, ``rowcount`` and iteration,
    on both backends."""
    if connection.dialect.name != "postgresql":
        return connection.execute(statement, params)
    found = _COMPILED.get(id(statement))
    if found is None or found.statement is not statement:
        found = _COMPILED[id(statement)] = _compile(statement, connection.dialect)
    if found.sql is None:
        return connection.execute(statement, params)
    if not connection.in_transaction():
        connection.begin()  # as the SQLAlchemy path's autobegin: commit() then commits
    values = found.compiled.construct_params(params)
    for name, process in found.binds:
        values[name] = process(values[name])
    driver = connection.connection.driver_connection
    assert isinstance(driver, psycopg.Connection)
    sql: str = found.sql
    events = connection.dispatch
    try:
        with driver.cursor(row_factory=namedtuple_row) as cursor:
            # Listeners of the engine or the connection see the statement as on
            # SQLAlchemy's path (tests count round trips and explain plans so).
            for before in events.before_cursor_execute:
                sql, values = before(connection, cursor, sql, values, None, False)
            cursor.execute(sql, values)
            # ``pgresult.nfields`` rather than ``description``, which builds a Column
            # per field on every call (a few per cent of a booking's CPU).
            result = cursor.pgresult
            rows = cursor.fetchall() if result is not None and result.nfields else []
            rowcount = cursor.rowcount
            for after in events.after_cursor_execute:
                after(connection, cursor, sql, values, None, False)
    except psycopg.Error as error:
        broken = driver.broken
        if broken:
            connection.invalidate(error)
        raise DBAPIError.instance(
            sql,
            values,
            error,
            psycopg.Error,
            hide_parameters=connection.engine.hide_parameters,  # never in logs or answers
            connection_invalidated=broken,
            dialect=connection.dialect,
        ) from error
    if found.results and rows:
        rows = [_processed(row, found.results) for row in rows]
    return Rows(rows, rowcount)


def _processed(row: Any, results: tuple[tuple[int, Processor], ...]) -> Any:
    values = list(row)
    for index, process in results:
        values[index] = process(values[index])
    return row._make(values)


def _compile(statement: Executable, dialect: Dialect) -> _Compiled:
    compiled = cast(ClauseElement, statement).compile(dialect=dialect)
    assert isinstance(compiled, SQLCompiler)
    if compiled.literal_execute_params or compiled.post_compile_params:
        return _Compiled(statement, None, compiled, (), ())
    escaped = compiled.escaped_bind_names
    binds = []
    for key, bind in compiled.binds.items():
        process = bind.type.bind_processor(dialect)
        if process is not None:
            binds.append((escaped.get(key, key), process))
    results = []
    columns = list(getattr(statement, "exported_columns", ()))
    for index, column in enumerate(columns):
        process = column.type.result_processor(dialect, None)
        if process is not None:
            results.append((index, process))
    return _Compiled(statement, compiled.string, compiled, tuple(binds), tuple(results))
