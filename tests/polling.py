"""Waiting for PostgreSQL's change watermark in tests.

On PostgreSQL a by-change list shows a committed row only once every transaction that
began writing before it has ended (docs/storage.md). Nothing of a test's own is in the
way once it has committed, but another test run on the same server may hold a
transaction open for a moment; a test that lists by change right after writing waits
for those first, so that it checks order, not timing.
"""

from __future__ import annotations

import time

from sqlalchemy import text

from adapters.sql import Database

WAIT_SECONDS = 60
XMIN = text("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint")
NEXT_XID = text("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint")


def settle(db: Database, xid: int | None = None) -> None:
    """Wait until every transaction up to ``xid`` has ended (by default, every one that
    had begun writing by now: call it with no write transaction of your own open).
    Nothing to wait for on SQLite."""
    if db.dialect != "postgresql":
        return
    deadline = time.monotonic() + WAIT_SECONDS
    with db.engine.connect() as connection:
        horizon = connection.execute(NEXT_XID).scalar_one() if xid is None else xid + 1
        while connection.execute(XMIN).scalar_one() < horizon:
            connection.rollback()
            assert time.monotonic() < deadline, f"a transaction below {horizon} never ended"
            time.sleep(0.01)
