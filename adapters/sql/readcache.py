"""Companies and catalogs kept decoded in memory, one small cache per database, served
without a statement for as long as the change feed (``adapters.sql.changes``) vouches
that nothing changed.

Each value is kept with the feed's stamp taken *before* it was read, and served only
while the feed still gives that stamp. So a value read just before a change committed
is never served after the change is heard, a value read during a gap in the feed is
never served after it, and what a transaction read after its own uncommitted change is
never kept (the feed gives that transaction a stamp equal to nothing). Misses are never
kept: an unknown id is asked for every time.

The repositories of every unit of work use it (``through``), so writes that read the
company or the catalog (a booking) benefit as well as reads; ``CachedReader``
(``adapters.sql.reader``) uses it before opening any connection at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast
from weakref import WeakKeyDictionary

from sqlalchemy import Connection, Engine

from adapters.sql.changes import ChangeFeed, Kind, Stamp
from adapters.sql.context import UnitContext

T = TypeVar("T")

MAX_ENTRIES = 4096
"""Values kept per database (a company and a catalog per active company); when full
the cache starts over rather than keep a recency order on every read."""


class ReadCache:
    """Decoded values by kind and company, each with the stamp it was read under."""

    def __init__(self, feed: ChangeFeed) -> None:
        self.feed = feed
        self._entries: dict[tuple[Kind, str], tuple[Stamp, object]] = {}

    def lookup(
        self, kind: Kind, company_id: str, connection: Connection | None = None
    ) -> tuple[object | None, Stamp | None]:
        """The value kept for ``kind`` of ``company_id`` if still current (else None), and
        the current stamp, under which a value read from now on may be kept."""
        stamp = self.feed.stamp(kind, company_id, connection)
        entry = self._entries.get((kind, company_id))
        if entry is not None and stamp is not None and entry[0] == stamp:
            return entry[1], stamp
        return None, stamp

    def keep(self, kind: Kind, company_id: str, stamp: Stamp | None, value: object) -> None:
        """Keep ``value``, read after ``stamp`` was taken (nothing when the feed gave none)."""
        if stamp is None:
            return
        key = (kind, company_id)
        if len(self._entries) >= MAX_ENTRIES and key not in self._entries:
            self._entries.clear()
        self._entries[key] = (stamp, value)

    def clear(self) -> None:
        """Forget everything kept."""
        self._entries.clear()


_CACHES: WeakKeyDictionary[Engine, ReadCache] = WeakKeyDictionary()


def register(engine: Engine, cache: ReadCache) -> None:
    """Make ``cache`` the read cache of every unit of work on ``engine``."""
    _CACHES[engine] = cache


def cache_of(engine: Engine) -> ReadCache | None:
    """The read cache of ``engine``, if it has one (a bare ``SqlUnitOfWork(engine)`` over an
    engine no ``Database`` made has none, and reads as it always did)."""
    return _CACHES.get(engine)


def through(cx: UnitContext, kind: Kind, company_id: str, read: Callable[[], T]) -> T:
    """The current value kept for ``kind`` of ``company_id``, else ``read()`` (kept)."""
    connection = cx.connection
    cache = _CACHES.get(connection.engine)
    if cache is None:
        return read()
    found, stamp = cache.lookup(kind, company_id, connection)
    if found is not None:
        return cast(T, found)
    value = read()
    cache.keep(kind, company_id, stamp, value)
    return value


def announce(cx: UnitContext, kind: Kind, company_id: str) -> None:
    """Announce, in the unit's transaction, that ``kind`` of ``company_id`` changed."""
    connection = cx.connection
    cache = _CACHES.get(connection.engine)
    if cache is not None:
        cache.feed.announce(connection, kind, company_id)
