"""``booking_busy_held`` (PostgreSQL only): hold crew members' calendars and read their
open blocks in one statement.

A booking holds its crew (one transaction-scoped advisory lock per member) before it
reads their jobs, and the read must see every job committed before the hold was taken.
At READ COMMITTED a statement's snapshot is taken when the statement starts, so the read
used to be a statement of its own after the hold: a round trip more per booking. A
VOLATILE function takes a fresh snapshot for each statement it runs, so the read inside
it, after the ``PERFORM`` that holds, sees what a statement of its own would
(docs/storage.md, "Holding a crew member's calendar"). Its query is ``busy``'s for named
members (``adapters.sql.assignments``), with the same conditions, so the same indexes.

SQLite holds nothing (one writer at a time) and gets nothing.

Revision ID: 0019_busy_held
Revises: 0018_service_secrets
Create Date: 2026-11-25
"""

from __future__ import annotations

from alembic import op

revision = "0019_busy_held"
down_revision = "0018_service_secrets"
branch_labels = None
depends_on = None

FUNCTION = """
CREATE FUNCTION booking_busy_held(
    hold_keys text[],
    company text,
    asked_start timestamptz,
    asked_end timestamptz,
    after_start timestamptz,
    members text[]
) RETURNS TABLE (
    crew_id text, starts_at timestamptz, ends_at timestamptz, zip_code text, booking_id text
)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
    PERFORM count(pg_advisory_xact_lock(hashtextextended(held.k, 0)))
        FROM unnest(hold_keys) WITH ORDINALITY AS held(k, n);
    RETURN QUERY
        SELECT a.crew_id::text, a.starts_at, a.ends_at, a.zip_code::text, a.booking_id::text
        FROM booking_assignments AS a
        WHERE a.company_id = company
          AND a.open
          AND a.starts_at < asked_end
          AND a.starts_at > after_start
          AND a.ends_at > asked_start
          AND tstzrange(a.starts_at, a.ends_at, '[)') && tstzrange(asked_start, asked_end, '[)')
          AND a.crew_id = ANY(members)
        ORDER BY a.crew_id, a.starts_at, a.booking_id;
END
$$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(FUNCTION)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "DROP FUNCTION booking_busy_held(text[], text, timestamptz, timestamptz,"
            " timestamptz, text[])"
        )
