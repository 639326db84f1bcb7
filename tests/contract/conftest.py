"""Every repository port's contract runs against memory, SQLite and PostgreSQL.

PostgreSQL comes from ``BOOKING_TEST_POSTGRES_URL``. Without it the Postgres cases are
skipped, except where ``BOOKING_REQUIRE_SERVICES=1`` (CI): then they fail loudly.
Each test gets a clean database: a fresh SQLite file, or emptied Postgres tables in a
schema of this test run's own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from adapters.memory import MemoryStore, MemoryUnitOfWork
from booking_core.ports import UnitOfWork
from tests.services import postgres_url

UowFactory = Callable[[], UnitOfWork]


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[object]:
    from adapters.sql import Database

    schema = f"test_{os.getpid()}"
    db = Database.from_url(postgres_url(), schema=schema)
    db.migrate()
    yield db
    db.drop_schema()
    db.dispose()


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """The name of the backend under test."""
    return str(request.param)


@pytest.fixture
def uow_factory(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[UowFactory]:
    """Makes units of work over one clean database of the backend under test."""
    if backend == "memory":
        store = MemoryStore()
        yield lambda: MemoryUnitOfWork(store)
        return
    from adapters.sql import Database

    if backend == "sqlite":
        db = Database.from_url(f"sqlite:///{tmp_path / 'contract.sqlite3'}")
        db.migrate()
        yield db.uow
        db.dispose()
        return
    pg = request.getfixturevalue("postgres_database")
    pg.truncate_all()
    yield pg.uow


@pytest.fixture
def settle(backend: str, request: pytest.FixtureRequest) -> Callable[[], None]:
    """Call before listing by change: on PostgreSQL it waits until every transaction that
    had begun writing has ended (``tests.polling``); nothing to wait for elsewhere."""
    if backend != "postgres":
        return lambda: None
    from tests.polling import settle

    pg = request.getfixturevalue("postgres_database")
    return lambda: settle(pg)
