"""Freshly migrated databases for the integration tests: SQLite in a temporary file,
PostgreSQL in a schema of this run's own, dropped afterwards."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from adapters.sql import Database
from tests.services import postgres_url


@contextmanager
def migrated(db: Database) -> Iterator[Database]:
    """``db`` migrated from scratch, dropped and disposed of afterwards."""
    db.drop_schema()  # a schema left by a run that was killed
    try:
        db.migrate()
        yield db
    finally:
        db.drop_schema()
        db.dispose()


@pytest.fixture
def postgres() -> Iterator[Database]:
    """A migrated PostgreSQL database (skipped without one, failed in CI)."""
    with migrated(Database.from_url(postgres_url(), schema=f"it_{os.getpid()}")) as db:
        yield db


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """A migrated database of each backend."""
    if request.param == "sqlite":
        db = Database.from_url(f"sqlite:///{tmp_path / 'it.sqlite3'}")
    else:
        db = Database.from_url(postgres_url(), schema=f"it_{os.getpid()}")
    with migrated(db) as ready:
        yield ready
