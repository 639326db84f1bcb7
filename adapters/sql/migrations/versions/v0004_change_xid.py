"""Listed rows carry the id of the transaction that last wrote them (``changed_xid``).

On PostgreSQL a row trigger sets ``changed_xid`` and ``changed_at`` on every insert and
update, and ``(company_id, changed_xid, id)`` is the order an ``updatedSince`` list pages
through: a commit no longer stamps its rows under the company's ``change_clock`` lock
(docs/storage.md, "updatedSince: why a poller never misses a late commit"). Rows written
before this revision get negative numbers in their old ``(changed_at, id)`` order, below
every real transaction id, so a cursor made before it still continues where it was.
On SQLite the column is added and stays NULL: SQLite keeps stamping at commit.

Revision ID: 0004_change_xid
Revises: 0003_bookings
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_change_xid"
down_revision = "0003_bookings"
branch_labels = None
depends_on = None

STAMPED = ("customers", "leads", "quotes", "payments", "crew_members", "bookings")
FUNCTION = "booking_stamp_change"
TRIGGER = "stamp_change"


def upgrade() -> None:
    for table in STAMPED:
        op.add_column(table, sa.Column("changed_xid", sa.BigInteger, nullable=True))
    if op.get_bind().dialect.name != "postgresql":
        return
    function = _function_name()
    op.execute(
        f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$\n"
        "BEGIN\n"
        "    NEW.changed_xid := pg_current_xact_id()::text::bigint;\n"
        "    NEW.changed_at := statement_timestamp();\n"
        "    RETURN NEW;\n"
        "END\n"
        "$$"
    )
    for table in STAMPED:
        _number_existing_rows(table)  # before the trigger, which would stamp them now
        op.execute(
            f"CREATE TRIGGER {TRIGGER} BEFORE INSERT OR UPDATE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {function}()"
        )
        op.create_index(f"ix_{table}_changed_xid", table, ["company_id", "changed_xid", "id"])


def _function_name() -> str:
    """The trigger function, qualified by the schema the tables are in (the first of the
    ``search_path``: ``BOOKING_DATABASE_SCHEMA`` when set, see env.py), so every schema
    of this service has its own and dropping one never drops another's."""
    bind = op.get_bind()
    schema = bind.execute(sa.text("SELECT current_schema()")).scalar_one()
    return f"{bind.dialect.identifier_preparer.quote_schema(schema)}.{FUNCTION}"


def _number_existing_rows(table: str) -> None:
    """-N .. -1 in the old ``(changed_at, id)`` order: below any transaction id, and in
    the order pollers saw them (a cursor without a sequence is read by that order)."""
    op.execute(
        f"UPDATE {table} AS t SET changed_xid = o.seq FROM ("
        "SELECT company_id, id, "
        "row_number() OVER (ORDER BY changed_at, id) - count(*) OVER () - 1 AS seq "
        f"FROM {table}) AS o "
        "WHERE t.company_id = o.company_id AND t.id = o.id"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        function = _function_name()
        for table in STAMPED:
            op.drop_index(f"ix_{table}_changed_xid", table)
            op.execute(f"DROP TRIGGER {TRIGGER} ON {table}")
        op.execute(f"DROP FUNCTION {function}()")
    for table in STAMPED:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("changed_xid")
