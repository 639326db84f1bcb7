"""The transactional outbox and webhooks: domain events, endpoints, their deliveries and
the delivery log. Partial indexes find what a worker claims (undispatched events, due
pending deliveries) without reading what is done.

Revision ID: 0006_webhooks
Revises: 0005_processor
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from adapters.sql.columns import id_column_type, instant_type, text_type

revision = "0006_webhooks"
down_revision = "0005_processor"
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
        "outbox_events",
        _id("id"),
        _id("company_id"),
        _text("type"),
        _at("created_at"),
        _text("subject_kind", nullable=True),
        sa.Column("document", sa.Text, nullable=True),
        _at("dispatched_at", nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_outbox_events"),
    )
    op.create_index(
        "ix_outbox_events_undispatched",
        "outbox_events",
        ["created_at", "id"],
        sqlite_where=sa.text("dispatched_at IS NULL"),
        postgresql_where=sa.text("dispatched_at IS NULL"),
    )

    op.create_table(
        "webhook_endpoints",
        _id("company_id"),
        _id("id"),
        _text("url"),
        sa.Column("events", sa.Text, nullable=False),
        sa.Column("active", sa.Boolean, nullable=False),
        _text("description"),
        sa.Column("secrets", sa.Text, nullable=False),
        _at("created_at"),
        _text("disabled_reason", nullable=True),
        _at("failing_since", nullable=True),
        sa.PrimaryKeyConstraint("company_id", "id", name="pk_webhook_endpoints"),
    )
    op.create_index(
        "ix_webhook_endpoints_created", "webhook_endpoints", ["company_id", "created_at", "id"]
    )

    op.create_table(
        "webhook_deliveries",
        _id("company_id"),
        _id("id"),
        _id("endpoint_id"),
        _id("event_id"),
        _text("event_type"),
        sa.Column("body", sa.LargeBinary, nullable=False),
        _text("state"),
        sa.Column("attempts", sa.Integer, nullable=False),
        _at("next_attempt_at", nullable=True),
        _at("created_at"),
        sa.PrimaryKeyConstraint("company_id", "id", name="pk_webhook_deliveries"),
    )
    op.create_index(
        "ix_webhook_deliveries_due",
        "webhook_deliveries",
        ["next_attempt_at", "created_at", "id"],
        sqlite_where=sa.text("state = 'pending'"),
        postgresql_where=sa.text("state = 'pending'"),
    )
    op.create_index(
        "ix_webhook_deliveries_endpoint",
        "webhook_deliveries",
        ["company_id", "endpoint_id", "state"],
    )

    op.create_table(
        "webhook_attempts",
        _id("company_id"),
        _id("id"),
        _id("endpoint_id"),
        _id("delivery_id"),
        _id("event_id"),
        _text("event_type"),
        sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("status_code", sa.Integer, nullable=True),
        sa.Column("duration_ms", sa.Integer, nullable=False),
        _text("error", nullable=True),
        _at("next_retry_at", nullable=True),
        _at("created_at"),
        sa.PrimaryKeyConstraint("company_id", "id", name="pk_webhook_attempts"),
    )
    op.create_index(
        "ix_webhook_attempts_log",
        "webhook_attempts",
        ["company_id", "endpoint_id", "created_at", "id"],
    )


def downgrade() -> None:
    op.drop_table("webhook_attempts")
    op.drop_table("webhook_deliveries")
    op.drop_table("webhook_endpoints")
    op.drop_table("outbox_events")
