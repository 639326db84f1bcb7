"""Checking a pooled PostgreSQL connection before use, without a round trip.

SQLAlchemy's ``pool_pre_ping`` sends ``SELECT 1`` at every check-out: one round trip per
unit of work, a fifth of a booking's. Instead, the check-out looks at the connection's
socket: an idle connection the server still holds has nothing to read, while one the
server closed (a restart, ``pg_terminate_backend``, an idle timeout) has its farewell
message or end-of-file waiting. A connection with anything waiting (an idle pooled
connection listens to nothing, so a rare notice costs only a reconnect), one libpq
already knows is broken, or one left mid-transaction is refused with
``DisconnectionError``, and the pool replaces it with a fresh one before handing it out
(SQLAlchemy's documented pessimistic disconnect handling). A connection that dies after
the check is a failed statement, as with pre-ping.
"""

from __future__ import annotations

import select
from typing import Any

from psycopg import pq
from sqlalchemy import Engine, event
from sqlalchemy.exc import DisconnectionError


def check_on_checkout(engine: Engine) -> None:
    """Refuse dead connections at check-out from ``engine``'s pool (PostgreSQL)."""
    event.listen(engine, "checkout", _refuse_if_dead)


def is_alive(dbapi_connection: Any) -> bool:
    """True unless the server closed this idle psycopg connection (no round trip)."""
    if dbapi_connection.closed:
        return False
    pgconn = dbapi_connection.pgconn
    if pgconn.status != pq.ConnStatus.OK:
        return False
    if pgconn.transaction_status != pq.TransactionStatus.IDLE:
        return False
    readable, _, _ = select.select([pgconn.socket], [], [], 0)
    return not readable


def _refuse_if_dead(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
    if not is_alive(dbapi_connection):
        raise DisconnectionError("the server closed this pooled connection")
