"""Secrets kept in the database: ``service_secrets`` holds the secrets that sign
pagination cursors and the pages' session cookies when the environment sets none
(``BOOKING_SECRET_KEY``, ``BOOKING_SESSION_SECRET``). Before, each run of ``booking
serve`` made its own, so a restart refused every cursor a poller kept and signed every
user out.

Revision ID: 0018_service_secrets
Revises: 0017_custom_domain_unique
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from adapters.sql.columns import instant_type, text_type

revision = "0018_service_secrets"
down_revision = "0017_custom_domain_unique"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "service_secrets",
        sa.Column("name", text_type(), nullable=False),
        sa.Column("value", text_type(), nullable=False),
        sa.Column("created_at", instant_type(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )


def downgrade() -> None:
    op.drop_table("service_secrets")
