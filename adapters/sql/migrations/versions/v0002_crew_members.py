"""Crew members: roster fields as columns, service areas and hours as JSON documents.

Revision ID: 0002_crew_members
Revises: 0001_initial
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from adapters.sql.columns import id_column_type, instant_type, text_type

revision = "0002_crew_members"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "crew_members",
        sa.Column("company_id", id_column_type(), nullable=False),
        sa.Column("id", id_column_type(), nullable=False),
        sa.Column("name", text_type(), nullable=False),
        sa.Column("home_zip", text_type(), nullable=False),
        sa.Column("service_areas", sa.Text, nullable=False),
        sa.Column("excluded_service_ids", sa.Text, nullable=False),
        sa.Column("working_hours", sa.Text, nullable=False),
        sa.Column("time_off", sa.Text, nullable=False),
        sa.Column("active", sa.Boolean, nullable=False),
        sa.Column("created_at", instant_type(), nullable=False),
        sa.Column("updated_at", instant_type(), nullable=False),
        sa.Column("changed_at", instant_type(), nullable=True),
        sa.PrimaryKeyConstraint("company_id", "id", name="pk_crew_members"),
    )
    op.create_index("ix_crew_members_created", "crew_members", ["company_id", "created_at", "id"])
    op.create_index("ix_crew_members_changed", "crew_members", ["company_id", "changed_at", "id"])


def downgrade() -> None:
    op.drop_table("crew_members")
