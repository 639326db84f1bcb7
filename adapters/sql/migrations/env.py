"""Alembic's environment: runs on the connection ``Database.migrate()`` hands over.

On PostgreSQL with a schema of its own, the schema is created if missing, put on the
``search_path`` of this connection, and holds Alembic's version table too. A
transaction-scoped advisory lock keeps two processes from migrating at once. On SQLite
the revisions run in batch mode (SQLite alters tables by copying them).
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, text

from adapters.sql.tables import metadata

MIGRATION_LOCK = 7_206_113_001
"""Advisory lock key held while migrating (an arbitrary constant of this project)."""


def run_migrations(connection: Connection, schema: str | None) -> None:
    """Bring the database on ``connection`` to the newest revision."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        if schema is not None:
            # The name was checked against a strict pattern by Database.from_url.
            connection.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
            connection.execute(text(f'SET search_path TO "{schema}"'))
    context.configure(
        connection=connection,
        target_metadata=metadata,
        version_table_schema=schema,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    # What the database was at once the lock is held: a migration that waited on another
    # finds that one's work done, and says so (``Database.migrate`` answers it).
    context.config.attributes["before"] = set(context.get_context().get_current_heads())
    with context.begin_transaction():
        context.run_migrations()


def _main() -> None:
    if context.is_offline_mode():
        raise RuntimeError("offline (SQL script) migrations are not supported")
    connection = context.config.attributes.get("connection")
    if connection is None:
        raise RuntimeError("run migrations with `booking migrate` or Database.migrate()")
    run_migrations(connection, context.config.attributes.get("schema"))


_main()
