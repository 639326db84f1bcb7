"""What the database refuses for a moment, retried or answered as a lost race.

PostgreSQL ends one side of a deadlock (SQLSTATE ``40P01``) and may refuse a serialisation
(``40001``). Neither says anything about the data: the same statements a moment later may
well pass. Both abort only the statement's (sub)transaction, so a write that can meet them
runs inside a savepoint (``in_savepoint``): on such a failure it rolls back to it, which
releases the locks taken since and lets the other side go on, waits a random short while
(full jitter, so the two sides do not meet again in step) and runs again, a bounded
number of times. Past that, or outside a savepoint, the unit of work turns the failure
into ``ConflictError`` (``refusal_of``): the client may retry, as for any lost race.

A lock wait that ran out (PostgreSQL ``55P03`` under a ``lock_timeout``; SQLite's
``database is locked`` after its busy timeout) is a lost race too, and so are the unique
and exclusion violations no repository translated on its own.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

from adapters.sql.context import is_exclusion_violation, is_retryable, is_unique_violation
from booking_core.errors import ConflictError

T = TypeVar("T")

ATTEMPTS = 5
"""Runs of a write in all, the first included."""
FIRST_DELAY_SECONDS = 0.01
MAX_DELAY_SECONDS = 0.25
LOCK_NOT_AVAILABLE = "55P03"
SQLITE_BUSY = frozenset({"SQLITE_BUSY", "SQLITE_BUSY_SNAPSHOT", "SQLITE_LOCKED"})

RETRY_MESSAGE = "Another request changed the same data at the same moment; try again."
BUSY_MESSAGE = "Another request held the same data too long; try again."
TAKEN_MESSAGE = "Another request just took what this one asked for; list it again."


def backoff(attempt: int) -> float:
    """Seconds to wait before run ``attempt + 1``: uniform in [0, min(cap, first * 2^n)]."""
    return random.uniform(0.0, min(MAX_DELAY_SECONDS, FIRST_DELAY_SECONDS * 2**attempt))


def in_savepoint(
    connection: Connection,
    work: Callable[[], T],
    *,
    attempts: int = ATTEMPTS,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """``work()`` inside a savepoint, run again (after a jittered pause) while it meets a
    deadlock or serialisation failure, at most ``attempts`` times in all.

    Any other error, or the last retryable one, propagates with the savepoint rolled back
    and the unit of work still usable.
    """
    for attempt in range(attempts):
        try:
            with connection.begin_nested():
                return work()
        except DBAPIError as error:
            if not is_retryable(error) or attempt + 1 >= attempts:
                raise
        sleep(backoff(attempt))
    raise ValueError("attempts must be at least 1")


def is_lock_timeout(error: DBAPIError) -> bool:
    """True when a lock wait ran out (PostgreSQL ``lock_timeout``, SQLite busy timeout)."""
    orig = error.orig
    return (
        getattr(orig, "sqlstate", None) == LOCK_NOT_AVAILABLE
        or getattr(orig, "sqlite_errorname", None) in SQLITE_BUSY
    )


def refusal_of(error: BaseException) -> ConflictError | None:
    """The ``ConflictError`` a database refusal amounts to, or None for any other error."""
    if not isinstance(error, DBAPIError):
        return None
    if is_retryable(error):
        return ConflictError(RETRY_MESSAGE)
    if is_lock_timeout(error):
        return ConflictError(BUSY_MESSAGE)
    if is_exclusion_violation(error) or is_unique_violation(error):
        return ConflictError(TAKEN_MESSAGE)
    return None
