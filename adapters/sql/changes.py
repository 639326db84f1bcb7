"""The change feed: how a process learns, without asking the database on every read, that
a company, a catalog or an API key it remembers may have changed.

A feed hands out *stamps*. A remembered value is stored with the stamp taken before it
was read, and served again only while the feed still gives that same stamp (see
``adapters.sql.readcache``). ``stamp`` answers:

- ``None`` when the feed cannot vouch for anything (not listening yet, connection lost):
  remembered values are not served;
- a brand-new object, equal to nothing, while this process has a change of that kind
  and company on its way (written in the caller's own transaction, or committed and not
  yet heard back from PostgreSQL): nothing is served or remembered for it meanwhile;
- otherwise a value that stays equal until the next change.

Writers announce each change inside their own transaction (``announce``), so a change
is heard of if and only if it commits:

- **PostgreSQL**: ``SELECT pg_notify('booking_changes', ...)``, which PostgreSQL delivers
  when (and only if) the transaction commits. Each ``Database`` runs one daemon thread
  with its own autocommit connection that ``LISTEN``s and moves a generation counter
  per kind and company; it also runs ``SELECT 1`` every ``HEARTBEAT_SECONDS``, and the
  feed vouches for nothing once ``STALE_AFTER_SECONDS`` pass without one answering. On
  (re)connecting it listens first and then starts a new epoch, so nothing remembered
  before the gap is served after it. Every worker of every process hears every commit.
- **SQLite** (no network, possibly several processes on one file, e.g. the CLI beside
  the server): the change bumps the database's ``PRAGMA user_version`` in the same
  transaction, and the stamp is that number, read in the reader's own snapshot inside a
  unit of work, or on one small read-only connection of the feed's outside one. It is
  exact: a commit is visible in the number exactly when it is visible in the data.
"""

from __future__ import annotations

import enum
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from select import POLLIN, poll
from typing import Any

import psycopg
import structlog
from sqlalchemy import Connection, Engine, event, func, select

CHANNEL = "booking_changes"
ANY = "*"
"""The scope of API keys: a key is found by its lookup prefix, before its company is
known, so any key's change moves the one stamp of every key."""
HEARTBEAT_SECONDS = 0.3
"""How often the listener proves its connection still answers."""
STALE_AFTER_SECONDS = 0.9
"""Past this without a heartbeat answered the feed vouches for nothing: a connection lost
silently (no reset) never makes a change wait longer than this to be seen."""
PENDING_SECONDS = 10.0
"""How long a change this process committed waits, at most, to be heard back (it is
heard back in milliseconds; the bound only covers a commit that failed after the
driver was asked to commit). Meanwhile nothing of that kind and company is served."""
RETRY_SECONDS = (0.05, 0.2, 1.0, 2.0)
"""Pauses between attempts to reconnect the listener."""
CONNECT_TIMEOUT_SECONDS = 5
IO_WAIT_SECONDS = 0.05
"""How long a reader waits for the listening thread to finish with its connection."""
APPLICATION_NAME = "booking-change-feed"
USER_VERSION_LIMIT = 2**31 - 1
"""``PRAGMA user_version`` is a signed 32-bit integer."""
MARKS = "booking_change_marks"
"""Key of a DBAPI connection's ``info`` holding the changes its open transaction made."""

log = structlog.get_logger("booking.sql")

Stamp = Hashable


class Kind(enum.StrEnum):
    """What changed."""

    COMPANY = "company"
    CATALOG = "catalog"
    KEYS = "keys"
    CREW = "crew"
    """A company's active roster (``adapters.sql.crew``)."""
    ALL = "all"
    """Everything (``Database.truncate_all``)."""


KINDS = frozenset(kind.value for kind in Kind)
Marks = dict[tuple[Kind, str], list[str]]


def _scope(kind: Kind, company_id: str) -> str:
    return ANY if kind in (Kind.KEYS, Kind.ALL) else company_id


def _marks(connection: Connection) -> Marks | None:
    found: Marks | None = connection.info.get(MARKS)
    return found


def wrote(connection: Connection, kind: Kind, scope: str) -> bool:
    """Whether the open transaction of ``connection`` changed this kind and company (its
    own reads must then go to the database, and what they read is never remembered)."""
    marks = _marks(connection)
    return marks is not None and ((kind, scope) in marks or (Kind.ALL, ANY) in marks)


class ChangeFeed:
    """What both feeds share: announcing in a writer's transaction, and the stamps."""

    def stamp(self, kind: Kind, scope: str, connection: Connection | None = None) -> Stamp | None:
        """The current stamp of ``kind`` for ``scope`` (a company id, or ``ANY`` for keys),
        as seen by ``connection``'s transaction when given."""
        raise NotImplementedError

    def announce(self, connection: Connection, kind: Kind, company_id: str) -> None:
        """Tell every process, once the transaction of ``connection`` commits, that this
        kind of ``company_id`` changed."""
        scope = _scope(kind, company_id)
        token = secrets.token_hex(8)
        marks = _marks(connection)
        if marks is None:
            marks = connection.info[MARKS] = {}
        marks.setdefault((kind, scope), []).append(token)
        self._publish(connection, kind, scope, token)

    def _publish(self, connection: Connection, kind: Kind, scope: str, token: str) -> None:
        raise NotImplementedError

    def committing(self, marks: Marks) -> None:
        """A transaction that announced ``marks`` is committing."""

    def close(self) -> None:
        """Stop listening (nothing to do without a listener)."""


def watch_transactions(engine: Engine, feed: ChangeFeed) -> None:
    """Hand ``feed`` the announcements of each transaction on ``engine`` as it commits,
    and forget them when it rolls back."""

    def on_commit(connection: Connection) -> None:
        marks = connection.info.pop(MARKS, None)
        if marks:
            feed.committing(marks)

    def on_rollback(connection: Connection) -> None:
        # An invalidated connection (the server ended it mid-unit) lets nothing be read
        # until this rollback ends: its marks were dropped with it (on_invalidate).
        if not connection.invalidated:
            connection.info.pop(MARKS, None)

    def on_invalidate(_dbapi: object, record: Any, _error: object) -> None:
        record.info.pop(MARKS, None)

    event.listen(engine, "commit", on_commit)
    event.listen(engine, "rollback", on_rollback)
    event.listen(engine.pool, "invalidate", on_invalidate)
    event.listen(engine.pool, "soft_invalidate", on_invalidate)


class SqliteFeed(ChangeFeed):
    """Stamps from ``PRAGMA user_version``, bumped by every announced change."""

    def __init__(self, path: str) -> None:
        self._uri = f"{Path(path).resolve().as_uri()}?mode=rw"
        self._lock = threading.Lock()
        self._watcher: sqlite3.Connection | None = None

    def stamp(self, kind: Kind, scope: str, connection: Connection | None = None) -> Stamp | None:
        if connection is None:
            return self._watched()
        if wrote(connection, kind, scope):
            return object()
        version: int = connection.exec_driver_sql("PRAGMA user_version").scalar_one()
        return version

    def _publish(self, connection: Connection, kind: Kind, scope: str, token: str) -> None:
        # A writing unit of work holds the write lock from its first statement (BEGIN
        # IMMEDIATE), so reading and bumping the number cannot interleave with another.
        version: int = connection.exec_driver_sql("PRAGMA user_version").scalar_one()
        connection.exec_driver_sql(f"PRAGMA user_version = {version % USER_VERSION_LIMIT + 1}")

    def _watched(self) -> int | None:
        """The committed number, on the feed's own connection (never creating the file;
        never waiting on a lock: busy means unknown)."""
        with self._lock:
            try:
                if self._watcher is None:
                    self._watcher = sqlite3.connect(
                        self._uri,
                        uri=True,
                        timeout=0,
                        isolation_level=None,
                        check_same_thread=False,
                    )
                row = self._watcher.execute("PRAGMA user_version").fetchone()
            except sqlite3.Error:
                self._close_watcher()
                return None
        version: int = row[0]
        return version

    def _close_watcher(self) -> None:
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None

    def close(self) -> None:
        with self._lock:
            self._close_watcher()


class PostgresFeed(ChangeFeed):
    """Stamps moved by ``LISTEN``/``NOTIFY`` on ``CHANNEL``, heard by a daemon thread."""

    def __init__(self, conninfo: str, schema: str | None) -> None:
        self._conninfo = conninfo
        self._schema = schema or ""
        self._lock = threading.Lock()
        self._epoch = 0
        self._generations: dict[tuple[Kind, str], int] = {}
        self._pending: dict[str, tuple[tuple[Kind, str], float]] = {}
        """Changes committed here and not yet heard back: token -> (kind and scope, until)."""
        self._confirmed_at: float | None = None
        """When the listener last proved its connection answers; None: not listening."""
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()
        self._listening: psycopg.Connection[Any] | None = None
        self._io = threading.Lock()
        """Held by whoever uses the listening connection (the thread, or a reader
        draining what has arrived)."""
        self._poller: poll | None = None
        self._stalled_until = 0.0

    @property
    def backend_pid(self) -> int | None:
        """The PostgreSQL backend of the listening connection, while there is one (what
        ``pg_stat_activity`` shows under ``application_name`` ``booking-change-feed``)."""
        connection = self._listening
        return connection.info.backend_pid if connection is not None else None

    @property
    def live(self) -> bool:
        """Whether the listener is listening and answered a heartbeat lately."""
        confirmed = self._confirmed_at
        return confirmed is not None and time.monotonic() - confirmed < STALE_AFTER_SECONDS

    def stamp(self, kind: Kind, scope: str, connection: Connection | None = None) -> Stamp | None:
        if self._thread is None:
            self._start()
        if connection is not None and wrote(connection, kind, scope):
            return object()
        if not self.live or not self._caught_up():
            return None
        key = (kind, scope)
        with self._lock:
            if self._pending and self._is_pending(key):
                return object()
            return (self._epoch, self._generations.get(key, 0))

    def _is_pending(self, key: tuple[Kind, str]) -> bool:
        now = time.monotonic()
        expired = [token for token, (_, until) in self._pending.items() if until <= now]
        for token in expired:
            del self._pending[token]
        return any(found in (key, (Kind.ALL, ANY)) for found, _ in self._pending.values())

    def _publish(self, connection: Connection, kind: Kind, scope: str, token: str) -> None:
        payload = "|".join((self._schema, kind.value, scope, token))
        connection.execute(select(func.pg_notify(CHANNEL, payload)))

    def committing(self, marks: Marks) -> None:
        if self._confirmed_at is None:
            # Not listening, so nothing is served now; whatever is read once listening
            # begins belongs to a new epoch, and this commit is heard if it comes later.
            return
        until = time.monotonic() + PENDING_SECONDS
        with self._lock:
            for key, tokens in marks.items():
                for token in tokens:
                    self._pending[token] = (key, until)

    def heard(self, payload: str) -> None:
        """One notification: move the generation of what changed (all, for ``ALL``)."""
        schema, kind, scope, token = [*payload.split("|"), "", "", ""][:4]
        if schema != self._schema:
            return  # another schema of the same database (tests, benchmarks)
        known = kind in KINDS and kind != Kind.ALL
        with self._lock:
            self._pending.pop(token, None)
            if known:
                key = (Kind(kind), scope)
                self._generations[key] = self._generations.get(key, 0) + 1
            else:  # everything, or a kind this version does not know: forget it all
                self._new_epoch()

    def _new_epoch(self) -> None:
        self._epoch += 1
        self._generations.clear()

    def _start(self) -> None:
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(
                target=self._listen_forever, name="booking-change-feed", daemon=True
            )
        self._thread.start()

    def _listen_forever(self) -> None:
        """Listen, reconnecting after any failure, until ``close``."""
        attempt = 0
        while not self._stopped.is_set():
            try:
                self._listen()
                attempt = 0
            except (psycopg.Error, OSError) as error:
                self._went_dark(error, attempt)
                attempt += 1
            self._stopped.wait(RETRY_SECONDS[min(attempt, len(RETRY_SECONDS) - 1)])

    def _listen(self) -> None:
        with psycopg.connect(
            self._conninfo,
            autocommit=True,
            connect_timeout=CONNECT_TIMEOUT_SECONDS,
            application_name=APPLICATION_NAME,
        ) as connection:
            connection.add_notify_handler(lambda note: self.heard(note.payload))
            connection.execute(f"LISTEN {CHANNEL}")
            waiting = poll()
            waiting.register(connection.pgconn.socket, POLLIN)
            draining = poll()
            draining.register(connection.pgconn.socket, POLLIN)
            with self._lock:
                # Listening now: every later commit is heard. Values read before this
                # moment belong to the old epoch and are never served again.
                self._new_epoch()
                self._poller, self._listening = draining, connection
                self._confirmed_at = time.monotonic()
            try:
                self._serve(connection, waiting)
            finally:
                with self._lock:
                    self._poller = self._listening = None
                    self._confirmed_at = None

    def _serve(self, connection: psycopg.Connection[Any], waiting: poll) -> None:
        """Hear notifications as they arrive, and prove the connection every heartbeat."""
        beat = time.monotonic() + HEARTBEAT_SECONDS
        while not self._stopped.is_set():
            arrived = waiting.poll(max(0.0, beat - time.monotonic()) * 1000)
            with self._io:
                if arrived:
                    _drain(connection, self.heard)
                if time.monotonic() >= beat:
                    connection.execute("SELECT 1")
                    beat = time.monotonic() + HEARTBEAT_SECONDS
                    if not self._stopped.is_set():
                        self._confirmed_at = time.monotonic()

    def _caught_up(self) -> bool:
        """Apply whatever notifications have reached this process and not been heard yet,
        so that a change delivered before a request is never missed by it for want of the
        listening thread's turn. While the thread uses the connection (a heartbeat, well
        under a millisecond) this waits for it. False when that cannot be done (the
        connection failed, or a heartbeat hangs): the caller then trusts nothing."""
        if time.monotonic() < self._stalled_until:
            return False
        if not self._io.acquire(timeout=IO_WAIT_SECONDS):
            # The thread is stuck in a heartbeat: stop waiting on it for a while.
            self._stalled_until = time.monotonic() + STALE_AFTER_SECONDS
            return False
        try:
            connection, poller = self._listening, self._poller
            if connection is None or poller is None:
                return False
            if poller.poll(0):
                _drain(connection, self.heard)
            return True
        except (psycopg.Error, OSError):
            self._confirmed_at = None
            return False
        finally:
            self._io.release()

    def _went_dark(self, error: BaseException, attempt: int) -> None:
        self._confirmed_at = None
        if attempt == 0:
            # The error's class only: its text may name the host and the user.
            log.warning("change_feed_unavailable", error_type=type(error).__name__)

    def close(self) -> None:
        # The thread sees this within one heartbeat and closes its connection itself.
        self._stopped.set()
        self._confirmed_at = None


def _drain(connection: psycopg.Connection[Any], heard: Callable[[str], None]) -> None:
    """Read what the server sent and hand each notification's payload to ``heard``;
    raises when the connection is lost."""
    pgconn = connection.pgconn
    pgconn.consume_input()
    if pgconn.status != psycopg.pq.ConnStatus.OK:
        raise psycopg.OperationalError("the change feed's connection is lost")
    while (note := pgconn.notifies()) is not None:
        heard(note.extra.decode())


def feed_for(engine: Engine, schema: str | None) -> ChangeFeed:
    """The feed of ``engine``'s database, watching its transactions."""
    feed: ChangeFeed
    if engine.dialect.name == "postgresql":
        conninfo = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        feed = PostgresFeed(conninfo, schema)
    else:
        feed = SqliteFeed(engine.url.database or "")
    watch_transactions(engine, feed)
    return feed
