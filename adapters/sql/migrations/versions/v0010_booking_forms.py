"""Booking forms, and the intake answers stored with a booking: ``booking_forms`` (one
row per form, what it offers and asks a JSON document) and the bookings' ``form_id`` and
``answers`` columns (NULL on every booking made before, or without a form).

Revision ID: 0010_booking_forms
Revises: 0009_waitlist
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from adapters.sql.columns import id_column_type, instant_type, text_type

revision = "0010_booking_forms"
down_revision = "0009_waitlist"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "booking_forms",
        sa.Column("company_id", id_column_type(), nullable=False),
        sa.Column("id", id_column_type(), nullable=False),
        sa.Column("name", text_type(), nullable=False),
        sa.Column("active", sa.Boolean, nullable=False),
        sa.Column("document", sa.Text, nullable=False),
        sa.Column("created_at", instant_type(), nullable=False),
        sa.Column("updated_at", instant_type(), nullable=False),
        sa.PrimaryKeyConstraint("company_id", "id", name="pk_booking_forms"),
    )
    op.create_index("ix_booking_forms_created", "booking_forms", ["company_id", "created_at", "id"])
    # Nullable, no default: adding them rewrites no row (PostgreSQL and SQLite alike).
    op.add_column("bookings", sa.Column("form_id", id_column_type(), nullable=True))
    op.add_column("bookings", sa.Column("answers", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bookings") as batch:
        batch.drop_column("answers")
        batch.drop_column("form_id")
    op.drop_index("ix_booking_forms_created", table_name="booking_forms")
    op.drop_table("booking_forms")
