"""Kept statements run straight on psycopg (``adapters.sql.direct``) behave as they do
through SQLAlchemy: same rows, same transaction, same errors, seen by the same listeners.

Each test runs a real statement of the booking path on PostgreSQL; where the backend
matters, SQLite is checked too (there ``run_kept`` is ``Connection.execute``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from sqlalchemy import bindparam, event, select, text
from sqlalchemy.exc import DBAPIError, IntegrityError

from adapters.sql import Database
from adapters.sql.context import UnitContext
from adapters.sql.direct import run_kept
from adapters.sql.idempotency import _GET, _claim
from adapters.sql.tables import idempotency_records
from booking_core.errors import ConflictError
from tests.services import postgres_url, terminate_backend

AT = datetime(2026, 11, 24, 15, 30, 0, 123456, tzinfo=UTC)
CLAIM = _claim("postgresql")
BY_CREATED = select(idempotency_records.c.key).where(
    idempotency_records.c.created_at
    >= bindparam("since", type_=idempotency_records.c.created_at.type)
)
BY_KEYS = select(idempotency_records.c.key).where(
    idempotency_records.c.key.in_(bindparam("keys", expanding=True))
)


def record(key: str, **changes: object) -> dict[str, object]:
    return {
        "company_id": "cmp_direct",
        "key": key,
        "fingerprint": "f" * 64,
        "state": "in_progress",
        "created_at": AT,
        "response_status": None,
        "response_body": None,
        **changes,
    }


def test_a_write_commits_with_the_unit_and_rolls_back_with_it(postgres: Database):
    with postgres.engine.connect() as connection:
        assert run_kept(connection, CLAIM, record("kept")).first().key == "kept"
        connection.commit()
        assert run_kept(connection, CLAIM, record("dropped")).first().key == "dropped"
        connection.rollback()
    with postgres.engine.connect() as connection:
        keys = connection.execute(select(idempotency_records.c.key)).scalars().all()
    assert keys == ["kept"]


def test_rows_are_those_sqlalchemy_answers_with_instants_in_utc(postgres: Database):
    body = b'{"id": "bkg_1"}'
    with postgres.engine.begin() as connection:
        run_kept(connection, CLAIM, record("k1", response_status=201, response_body=body))
    with postgres.engine.connect() as connection:
        connection.exec_driver_sql("SET TIME ZONE 'America/New_York'")
        direct = run_kept(connection, _GET, {"company_id": "cmp_direct", "key": "k1"}).one()
        through = connection.execute(_GET, {"company_id": "cmp_direct", "key": "k1"}).one()
    assert tuple(direct) == tuple(through)
    assert direct.created_at == AT
    assert direct.created_at.utcoffset() == timedelta(0)
    assert direct.created_at.isoformat() == AT.isoformat()
    assert bytes(direct.response_body) == body


def test_a_naive_instant_is_refused_before_anything_is_sent(postgres: Database):
    sent: list[str] = []
    event.listen(postgres.engine, "before_cursor_execute", lambda *a: sent.append(a[2]))
    with postgres.engine.connect() as connection, pytest.raises(ValueError, match="aware"):
        run_kept(connection, CLAIM, record("naive", created_at=AT.replace(tzinfo=None)))
    assert sent == []


def test_a_missing_parameter_is_refused_as_sqlalchemy_refuses_it(postgres: Database):
    values = record("missing")
    del values["fingerprint"]
    with postgres.engine.connect() as connection, pytest.raises(Exception, match="fingerprint"):
        run_kept(connection, CLAIM, values)


def test_a_constraint_violation_is_sqlalchemys_integrity_error_and_a_conflict(
    postgres: Database,
):
    duplicate = text(
        "INSERT INTO idempotency_records (company_id, key, fingerprint, state, created_at)"
        " VALUES ('cmp_direct', :key, 'f', 'in_progress', now())"
    )
    primary_key = idempotency_records.insert().values(
        company_id=bindparam("company_id"),
        key=bindparam("key"),
        fingerprint="f",
        state="in_progress",
        created_at=bindparam("created_at", type_=idempotency_records.c.created_at.type),
    )
    with postgres.engine.connect() as connection:
        connection.execute(duplicate, {"key": "taken"})
        with pytest.raises(IntegrityError) as raised:
            run_kept(
                connection,
                primary_key,
                {"company_id": "cmp_direct", "key": "taken", "created_at": AT},
            )
        assert isinstance(raised.value.orig, psycopg.errors.UniqueViolation)
        assert "parameters hidden" in str(raised.value)  # as the engine hides them
        assert "INSERT INTO idempotency_records" in str(raised.value)
        connection.rollback()
        cx = UnitContext("postgresql")
        cx.attach(connection)
        connection.execute(duplicate, {"key": "taken"})
        with pytest.raises(ConflictError, match="is taken"):
            cx.run_kept(
                primary_key,
                {"company_id": "cmp_direct", "key": "taken", "created_at": AT},
                "is taken",
            )
        connection.rollback()


def test_listeners_see_each_statement_once_with_its_parameters(postgres: Database):
    seen: list[tuple[str, object]] = []
    after: list[str] = []
    event.listen(postgres.engine, "before_cursor_execute", lambda *a: seen.append((a[2], a[3])))
    event.listen(postgres.engine, "after_cursor_execute", lambda *a: after.append(a[2]))
    with postgres.engine.connect() as connection:
        run_kept(connection, _GET, {"company_id": "cmp_direct", "key": "absent"})
    [(statement, parameters)] = seen
    assert statement.startswith("SELECT")
    assert "idempotency_records" in statement
    assert isinstance(parameters, dict)
    assert parameters["key"] == "absent"
    assert after == [statement]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_every_shape_of_statement_answers_on_both_backends(backend: str, tmp_path):
    url = f"sqlite:///{tmp_path / 'd.sqlite3'}" if backend == "sqlite" else postgres_url()
    db = Database.from_url(url, schema=None if backend == "sqlite" else f"it_direct_{os.getpid()}")
    db.drop_schema()
    db.migrate()
    try:
        claim = _claim(db.dialect)
        with db.engine.begin() as connection:
            for key in ("a", "b", "c"):
                assert run_kept(connection, claim, record(key)).scalar() == key
            assert run_kept(connection, claim, record("a")).first() is None  # taken: no row
        with db.engine.connect() as connection:
            since = {"since": AT - timedelta(seconds=1)}
            assert sorted(row.key for row in run_kept(connection, BY_CREATED, since)) == [
                "a",
                "b",
                "c",
            ]
            # An expanding IN is completed at execution: SQLAlchemy runs it.
            in_list = run_kept(connection, BY_KEYS, {"keys": ["a", "c", "x"]}).all()
            assert sorted(key for (key,) in in_list) == ["a", "c"]
    finally:
        db.drop_schema()
        db.dispose()


@pytest.mark.parametrize(
    "read",
    [
        pytest.param(lambda uow: uow.idempotency.get("cmp_direct", "k"), id="direct"),
        pytest.param(lambda uow: uow.bookings.get("cmp_direct", "bkg_x"), id="sqlalchemy"),
    ],
)
def test_a_unit_whose_connection_the_server_ended_leaves_with_the_drivers_error(
    postgres: Database, read: Callable[[Any], object]
):
    """Either way a statement runs, the unit of work leaves with the driver's error
    (marked as a lost connection), not with one from its own rollback, and the pool
    never hands the dead connection out again."""
    pids: list[int] = []

    def read_after_the_server_ended_it() -> None:
        with postgres.uow() as uow:
            connection = uow._cx.connection
            pids.append(connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one())
            terminate_backend(postgres_url(), pids[0])
            read(uow)

    with pytest.raises(DBAPIError) as raised:
        read_after_the_server_ended_it()
    assert isinstance(raised.value.orig, psycopg.OperationalError)
    assert raised.value.connection_invalidated
    with postgres.uow() as uow:
        assert uow.idempotency.get("cmp_direct", "k") is None
        assert uow._cx.connection.exec_driver_sql("SELECT pg_backend_pid()").scalar() != pids[0]
