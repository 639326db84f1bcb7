"""Teams: named sets of one company's crew members (not in the API), unique by name in a
company as names are matched (case-folded, runs of spaces as one).

Revision ID: 0008_teams
Revises: 0007_users
Create Date: 2026-12-10
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from adapters.sql.columns import id_column_type, instant_type, text_type

revision = "0008_teams"
down_revision = "0007_users"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "teams",
        sa.Column("company_id", id_column_type(), nullable=False),
        sa.Column("id", id_column_type(), nullable=False),
        sa.Column("name", text_type(), nullable=False),
        sa.Column("name_key", text_type(), nullable=False),
        sa.Column("member_ids", sa.Text, nullable=False),
        sa.Column("created_at", instant_type(), nullable=False),
        sa.Column("updated_at", instant_type(), nullable=False),
        sa.PrimaryKeyConstraint("company_id", "id", name="pk_teams"),
        sa.UniqueConstraint("company_id", "name_key", name="uq_teams_company_id_name_key"),
    )


def downgrade() -> None:
    op.drop_table("teams")
