"""Column types shared by every table: instants, ids and money.

Instants go in and come out aware. PostgreSQL stores them as ``TIMESTAMP WITH TIME
ZONE``; SQLite, which has no date type, as UTC ISO-8601 text of one fixed width
(``2026-11-02T15:00:00.000000+00:00``) so that text order is time order and the
keyset indexes sort correctly. Ids use the byte-order ``C`` collation on PostgreSQL so
that ``ORDER BY id`` matches Python's string order, as the memory adapter sorts.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import BigInteger, DateTime, String
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

SQLITE_INSTANT_WIDTH = len("2026-11-02T15:00:00.000000+00:00")


class UtcDateTime(TypeDecorator[datetime]):
    """An aware instant; naive datetimes are refused rather than guessed at."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(String(SQLITE_INSTANT_WIDTH))
        return dialect.type_descriptor(DateTime(timezone=True))

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if not isinstance(value, datetime) or value.utcoffset() is None:
            raise ValueError("instants are stored aware: give a datetime with a UTC offset")
        utc = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return utc.isoformat(timespec="microseconds")
        return utc

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):
            return datetime.fromisoformat(value)
        assert isinstance(value, datetime)
        return value if value.tzinfo is UTC else value.astimezone(UTC)


def id_column_type() -> TypeEngine[str]:
    """An id: text compared byte by byte on every backend (SQLite's default BINARY)."""
    return String().with_variant(String(collation="C"), "postgresql")


def text_type() -> TypeEngine[str]:
    """Free text of any length; the domain bounds lengths, not the column."""
    return String()


def money_type() -> TypeEngine[int]:
    """Integer cents, 64 bits."""
    return BigInteger()


def instant_type() -> UtcDateTime:
    """An aware instant (see ``UtcDateTime``)."""
    return UtcDateTime()
