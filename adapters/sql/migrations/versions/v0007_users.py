"""Users of the admin workspace and crew portal, unique by email across the service, and
their one-time sign-in links (stored by the SHA-256 of the token).

Revision ID: 0007_users
Revises: 0006_webhooks
Create Date: 2026-12-08
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from adapters.sql.columns import id_column_type, instant_type, text_type

revision = "0007_users"
down_revision = "0006_webhooks"
branch_labels = None
depends_on = None


def _id(name: str, *, nullable: bool = False) -> sa.Column[str]:
    return sa.Column(name, id_column_type(), nullable=nullable)


def _text(name: str, *, nullable: bool = False) -> sa.Column[str]:
    return sa.Column(name, text_type(), nullable=nullable)


def _at(name: str, *, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, instant_type(), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "users",
        _id("id"),
        _id("company_id"),
        _text("email"),
        _text("name"),
        _text("role"),
        _id("crew_member_id", nullable=True),
        _text("password_hash", nullable=True),
        sa.Column("session_epoch", sa.Integer, nullable=False),
        _at("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_users"),
        sa.UniqueConstraint("email", name="uq_users_email"),
    )
    op.create_index("ix_users_company", "users", ["company_id", "created_at", "id"])

    op.create_table(
        "sign_in_links",
        _text("token_hash"),
        _id("user_id"),
        _at("created_at"),
        _at("expires_at"),
        _at("used_at", nullable=True),
        sa.PrimaryKeyConstraint("token_hash", name="pk_sign_in_links"),
    )


def downgrade() -> None:
    op.drop_table("sign_in_links")
    op.drop_table("users")
