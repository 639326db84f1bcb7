"""A pooled PostgreSQL connection the server closed is never handed out, and checking
costs no statement (``adapters.sql.liveness``)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import event, text

from adapters.sql import Database
from adapters.sql.liveness import is_alive
from tests.services import required_service, terminate_backend


@pytest.fixture
def url() -> str:
    return required_service("BOOKING_TEST_POSTGRES_URL", "PostgreSQL")


@pytest.fixture
def database(url: str) -> Iterator[Database]:
    db = Database.from_url(url)
    try:
        yield db
    finally:
        db.dispose()


def test_a_connection_the_server_closed_is_replaced_before_use(url: str, database: Database):
    with database.engine.connect() as connection:  # the pool now holds this one
        first = connection.execute(text("SELECT pg_backend_pid()")).scalar_one()
    terminate_backend(url, first)
    statements: list[str] = []
    event.listen(database.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    with database.engine.connect() as connection:
        second = connection.execute(text("SELECT pg_backend_pid()")).scalar_one()
    assert second != first
    assert statements == ["SELECT pg_backend_pid()"]  # no ping was sent


def test_a_live_idle_connection_is_alive_and_a_closed_one_is_not(url: str):
    with psycopg.connect(url) as connection:
        assert is_alive(connection)
        connection.execute("SELECT 1")
        assert not is_alive(connection)  # inside a transaction: not for the pool
        connection.rollback()
        assert is_alive(connection)
        terminate_backend(url, connection.info.backend_pid)
        assert not is_alive(connection)
