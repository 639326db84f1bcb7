"""SQL storage on SQLite (embedded default) and PostgreSQL (production), in SQLAlchemy Core.

``Database.from_url(url)`` makes one; ``migrate()`` applies the Alembic revisions;
``uow()`` opens a unit of work whose repositories honour the same contracts as the
memory adapter (tests/contract runs both). docs/storage.md describes the schema.
"""

from adapters.sql.engine import Database
from adapters.sql.uow import SqlUnitOfWork

__all__ = ["Database", "SqlUnitOfWork"]
