"""Waitlist requests: a customer asks for a date or range with no opening.

One row per entry, paged newest first only (no change stamps).

Revision ID: 0009_waitlist
Revises: 0008_teams
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from adapters.sql.columns import id_column_type, instant_type, text_type

revision = "0009_waitlist"
down_revision = "0008_teams"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "waitlist_entries",
        sa.Column("company_id", id_column_type(), nullable=False),
        sa.Column("id", id_column_type(), nullable=False),
        sa.Column("service_id", id_column_type(), nullable=False),
        sa.Column("zip", text_type(), nullable=False),
        sa.Column("date_from", sa.Date, nullable=False),
        sa.Column("date_to", sa.Date, nullable=False),
        sa.Column("frequency_slug", text_type(), nullable=False),
        sa.Column("name", text_type(), nullable=False),
        sa.Column("email", text_type(), nullable=False),
        sa.Column("phone", text_type(), nullable=True),
        sa.Column("note", text_type(), nullable=False),
        sa.Column("created_at", instant_type(), nullable=False),
        sa.PrimaryKeyConstraint("company_id", "id", name="pk_waitlist_entries"),
    )
    op.create_index(
        "ix_waitlist_entries_created",
        "waitlist_entries",
        ["company_id", "created_at", "id"],
    )


def downgrade() -> None:
    op.drop_index("ix_waitlist_entries_created", table_name="waitlist_entries")
    op.drop_table("waitlist_entries")
