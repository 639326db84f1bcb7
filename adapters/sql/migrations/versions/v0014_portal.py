"""Customer portal sign-in links: one-time, per company and customer, stored by the
SHA-256 of the token (``booking_core.portal``).

Revision ID: 0014_portal
Revises: 0013_follow_up_notices
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from adapters.sql.columns import id_column_type, instant_type, text_type

revision = "0014_portal"
down_revision = "0013_follow_up_notices"
branch_labels = None
depends_on = None


def _id(name: str) -> sa.Column[str]:
    return sa.Column(name, id_column_type(), nullable=False)


def _at(name: str, *, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, instant_type(), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "portal_links",
        sa.Column("token_hash", text_type(), nullable=False),
        _id("id"),
        _id("company_id"),
        _id("customer_id"),
        _at("created_at"),
        _at("expires_at"),
        _at("used_at", nullable=True),
        sa.PrimaryKeyConstraint("token_hash", name="pk_portal_links"),
    )


def downgrade() -> None:
    op.drop_table("portal_links")
