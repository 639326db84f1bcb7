"""Card-processor accounts of companies (kept when disconnected; at most one connected
per company), the ids of processor events already ingested, and the index a reported
refund or dispute finds its card payment by (``payments.external_ref``).

Revision ID: 0005_processor
Revises: 0004_change_xid
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from adapters.sql.columns import id_column_type, instant_type, text_type

revision = "0005_processor"
down_revision = "0004_change_xid"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "processor_accounts",
        sa.Column("account_id", text_type(), nullable=False),
        sa.Column("company_id", id_column_type(), nullable=False),
        sa.Column("connected_at", instant_type(), nullable=False),
        sa.Column("disconnected_at", instant_type(), nullable=True),
        sa.PrimaryKeyConstraint("account_id", name="pk_processor_accounts"),
    )
    op.create_index(
        "uq_processor_accounts_connected",
        "processor_accounts",
        ["company_id"],
        unique=True,
        sqlite_where=sa.text("disconnected_at IS NULL"),
        postgresql_where=sa.text("disconnected_at IS NULL"),
    )
    op.create_table(
        "processor_events",
        sa.Column("event_id", text_type(), nullable=False),
        sa.Column("account_id", text_type(), nullable=False),
        sa.Column("ingested_at", instant_type(), nullable=False),
        sa.PrimaryKeyConstraint("event_id", name="pk_processor_events"),
    )
    op.create_index("ix_payments_external_ref", "payments", ["company_id", "external_ref"])


def downgrade() -> None:
    op.drop_index("ix_payments_external_ref", table_name="payments")
    op.drop_table("processor_events")
    op.drop_table("processor_accounts")
