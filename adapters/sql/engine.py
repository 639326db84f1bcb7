"""``Database``: an engine for SQLite or PostgreSQL, its migrations and units of work.

SQLite (the embedded default) runs in WAL mode with foreign keys on and a 10 s busy
timeout; pysqlite's own transaction handling is switched off and every unit of work
begins with ``BEGIN IMMEDIATE``, so writers queue for the one write lock instead of
interleaving. PostgreSQL goes through psycopg 3 with a connection pool at READ
COMMITTED whose check-out refuses a connection the server closed without a round trip
(``adapters.sql.liveness``, instead of ``pool_pre_ping``'s ``SELECT 1``); an optional
schema of its own is put first on every connection's ``search_path`` (tests and
benchmarks use one each).

Both engines hide statement parameters (``hide_parameters=True``): a driver error's text
then holds the SQL but never the values bound to it (emails, names, tokens).

Each ``Database`` keeps a read cache of decoded companies and catalogs
(``adapters.sql.readcache``) kept true by a change feed (``adapters.sql.changes``):
``reader()`` answers from it without opening a connection, ``memory_reader()`` never
opens one, and ``key_stamp()`` lets a cache of API keys elsewhere know when to let go.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Hashable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from adapters.sql.changes import ANY, ChangeFeed, Kind, feed_for
from adapters.sql.context import insert_of
from adapters.sql.liveness import check_on_checkout
from adapters.sql.readcache import ReadCache, register
from adapters.sql.reader import CachedReader
from adapters.sql.tables import ALL_TABLES, service_secrets
from adapters.sql.uow import SqlUnitOfWork

BUSY_TIMEOUT_SECONDS = 10
POOL_SIZE = 10
"""Connections kept open between bursts."""
POOL_OVERFLOW = 40
"""More opened in a burst: 50 in all, above the 40 worker threads of a uvicorn process
(each request holds one connection at a time), so a request never waits for one."""
POOL_TIMEOUT_SECONDS = 30
"""How long a unit of work waits for a free connection before failing."""
CONNECT_TIMEOUT_SECONDS = 10
"""How long opening a PostgreSQL connection may take (``/readyz`` reports failure then)."""
MIGRATIONS = Path(__file__).parent / "migrations"
SCHEMA_PATTERN = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class Database:
    """One database: make it with ``from_url``, ``migrate()`` it, open ``uow()``s."""

    def __init__(self, engine: Engine, *, schema: str | None = None) -> None:
        self.engine = engine
        self.schema = schema
        self.changes: ChangeFeed = feed_for(engine, schema)
        self.cache = ReadCache(self.changes)
        register(engine, self.cache)

    @classmethod
    def from_url(cls, url: str, *, schema: str | None = None) -> Database:
        """``sqlite:///path/to/file.sqlite3`` or ``postgresql://user@host/db``.

        ``schema`` (PostgreSQL only) keeps every table, and Alembic's version table,
        in a schema of that name, created by ``migrate()`` if missing.
        """
        if schema is not None and not SCHEMA_PATTERN.match(schema):
            raise ValueError("a schema name is lowercase letters, digits and underscores")
        scheme = url.split(":", 1)[0].lower()
        if scheme in _SCHEMES:
            try:
                make_url(url)
            except (ArgumentError, ValueError):  # "sqlite:", a port that is no number
                raise ValueError(  # not echoed: it may hold a password
                    "not a database URL: write sqlite:///path/to/file.sqlite3 or"
                    " postgresql://user@host:5432/db"
                ) from None
        if scheme in ("sqlite", "sqlite+pysqlite"):
            if schema is not None:
                raise ValueError("SQLite has no schemas; leave schema unset")
            return cls(_sqlite_engine(url))
        if scheme in ("postgresql", "postgres", "postgresql+psycopg"):
            return cls(_postgres_engine(url, schema), schema=schema)
        raise ValueError(f"unsupported database URL scheme {scheme!r}: use sqlite or postgresql")

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.engine.dialect.name

    def uow(self) -> SqlUnitOfWork:
        """A fresh unit of work (use it in a ``with`` block)."""
        return SqlUnitOfWork(self.engine)

    def reader(self) -> CachedReader:
        """A read-only unit of work: companies and catalogs the read cache holds cost no
        connection; anything else is read in a read-only transaction, which on SQLite
        takes no write lock, so reads never queue behind writers. It cannot commit."""
        return CachedReader(self.engine, self.cache)

    def memory_reader(self, miss: type[BaseException]) -> CachedReader:
        """A reader that answers only from the read cache and raises ``miss()`` for
        anything it would have to ask the database (a caller on an event loop then moves
        the work to a thread)."""
        return CachedReader(self.engine, self.cache, miss)

    def key_stamp(self) -> Hashable | None:
        """The change feed's stamp of API keys: equal from one call to the next while no
        key changed anywhere; None while the feed cannot tell (nothing may be trusted).
        Costs no statement on PostgreSQL, one local read of the file on SQLite."""
        return self.changes.stamp(Kind.KEYS, ANY)

    def kept_secret(self, name: str) -> str:
        """The database's secret ``name`` (``service_secrets``): 32 random bytes in hex,
        made by the first caller and the same for every caller after, whatever process or
        server asks (two making it at once keep the first stored)."""
        made = insert_of(self.dialect, service_secrets).values(
            name=name, value=secrets.token_hex(32), created_at=datetime.now(UTC)
        )
        with self.engine.begin() as connection:
            connection.execute(made.on_conflict_do_nothing())
            kept = select(service_secrets.c.value).where(service_secrets.c.name == name)
            value: str = connection.execute(kept).scalar_one()
        return value

    def migrate(self) -> set[str]:
        """Apply every Alembic revision not yet applied (``alembic upgrade head``); the
        revisions the database was at when this migration took the migration lock (on
        PostgreSQL two at once run one after the other: the second finds the work done)."""
        if self.dialect == "sqlite":  # its folder is made here, not when merely opened
            Path(self.engine.url.database or "").parent.mkdir(parents=True, exist_ok=True)
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        with self.engine.begin() as connection:
            config.attributes["connection"] = connection
            config.attributes["schema"] = self.schema
            command.upgrade(config, "head")
            self.changes.announce(connection, Kind.ALL, ANY)
        before: set[str] = config.attributes.get("before", set())
        return before

    def is_migrated(self) -> bool:
        """Whether every migration has been applied. A SQLite file that does not exist is
        not migrated, and asking does not create it."""
        if self.dialect == "sqlite" and not Path(self.engine.url.database or "").is_file():
            return False
        return self._applied() == set(ScriptDirectory(str(MIGRATIONS)).get_heads())

    def revisions(self) -> set[str]:
        """The revisions the database is at (empty before its first migration; asking
        creates no SQLite file)."""
        if self.dialect == "sqlite" and not Path(self.engine.url.database or "").is_file():
            return set()
        return self._applied()

    def newer_revisions(self) -> set[str]:
        """The revisions the database is at that this code does not know: a newer release
        migrated it (empty when none, or when there is no database yet)."""
        if self.dialect == "sqlite" and not Path(self.engine.url.database or "").is_file():
            return set()
        scripts = ScriptDirectory(str(MIGRATIONS))
        known = {script.revision for script in scripts.walk_revisions()}
        return self._applied() - known

    def _applied(self) -> set[str]:
        """The revisions Alembic's version table holds."""
        with self.engine.connect() as connection:
            connection.execution_options(booking_read_only=True)
            context = MigrationContext.configure(
                connection, opts={"version_table_schema": self.schema}
            )
            current = set(context.get_current_heads())
            connection.rollback()
        return current

    @property
    def location(self) -> str:
        """Where the data lives, for messages: the SQLite file's absolute path, or the URL
        without its password (and the schema, if any)."""
        url = self.engine.url
        if self.dialect == "sqlite":
            return str(Path(url.database or "").resolve())
        shown = url.set(drivername="postgresql").render_as_string(hide_password=True)
        return f"{shown} (schema {self.schema})" if self.schema else shown

    def truncate_all(self) -> None:
        """Empty every table but Alembic's (for tests)."""
        with self.engine.begin() as connection:
            if self.dialect == "postgresql":
                names = ", ".join(table.name for table in ALL_TABLES)
                connection.execute(text(f"TRUNCATE TABLE {names}"))
            else:
                for table in reversed(ALL_TABLES):
                    connection.execute(table.delete())
            self.changes.announce(connection, Kind.ALL, ANY)

    def drop_schema(self) -> None:
        """Drop this database's PostgreSQL schema and all in it; nothing on SQLite."""
        if self.dialect != "postgresql":
            return
        if self.schema is None:
            raise RuntimeError("this database has no schema of its own to drop")
        with self.engine.begin() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE'))
            self.changes.announce(connection, Kind.ALL, ANY)

    def ping(self) -> None:
        """``SELECT 1`` on a pooled connection; raises when the database cannot answer."""
        with self.engine.connect() as connection:
            connection.exec_driver_sql("SELECT 1")
            connection.rollback()

    def dispose(self) -> None:
        """Close every pooled connection, and the change feed's."""
        self.changes.close()
        self.cache.clear()
        self.engine.dispose()


_SCHEMES = ("sqlite", "sqlite+pysqlite", "postgresql", "postgres", "postgresql+psycopg")


def _sqlite_engine(url: str) -> Engine:
    parsed = make_url(url).set(drivername="sqlite+pysqlite")
    if parsed.database in (None, "", ":memory:"):
        raise ValueError("give SQLite a file (sqlite:///path/to/file.sqlite3), not :memory:")
    engine = create_engine(
        parsed,
        connect_args={"timeout": BUSY_TIMEOUT_SECONDS, "check_same_thread": False},
        pool_size=POOL_SIZE,
        max_overflow=POOL_OVERFLOW,
        pool_timeout=POOL_TIMEOUT_SECONDS,
        hide_parameters=True,
    )
    event.listen(engine, "connect", _sqlite_on_connect)
    event.listen(engine, "begin", _sqlite_on_begin)
    return engine


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    # Stop pysqlite from issuing BEGIN (and COMMIT before DDL) itself: transactions
    # begin when SQLAlchemy says so, with the statement of _sqlite_on_begin.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_SECONDS * 1000}")
    finally:
        cursor.close()


def _sqlite_on_begin(connection: Any) -> None:
    # Take the write lock up front: a unit of work never upgrades a read lock
    # mid-way (which SQLite answers with SQLITE_BUSY at once, timeout or not).
    # A read-only unit reads a WAL snapshot instead and never blocks a writer.
    if connection.get_execution_options().get("booking_read_only"):
        connection.exec_driver_sql("BEGIN DEFERRED")
    else:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def _postgres_engine(url: str, schema: str | None) -> Engine:
    parsed = make_url(url).set(drivername="postgresql+psycopg")
    connect_args: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_SECONDS}
    if schema is not None:
        connect_args["options"] = f"-c search_path={schema}"
    engine = create_engine(
        parsed,
        connect_args=connect_args,
        pool_size=POOL_SIZE,
        max_overflow=POOL_OVERFLOW,
        pool_timeout=POOL_TIMEOUT_SECONDS,
        isolation_level="READ COMMITTED",
        hide_parameters=True,
    )
    check_on_checkout(engine)
    return engine
