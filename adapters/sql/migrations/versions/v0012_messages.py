"""Email messages queued with their cause and sent by the worker: the ``messages`` table,
``outbox_events.mailed_at`` (the messages' own marker beside the webhooks'
``dispatched_at``), and the companies' ``notify_email`` and ``reminder_hours``.

Events already in the outbox are marked mailed: an upgrade does not mail the customers
of every booking made before it.

Revision ID: 0012_messages
Revises: 0011_company_brand
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from adapters.sql.columns import id_column_type, instant_type, text_type

revision = "0012_messages"
down_revision = "0011_company_brand"
branch_labels = None
depends_on = None


def _id(name: str, *, nullable: bool = False) -> sa.Column[str]:
    return sa.Column(name, id_column_type(), nullable=nullable)


def _text(name: str, *, nullable: bool = False) -> sa.Column[str]:
    return sa.Column(name, text_type(), nullable=nullable)


def _at(name: str, *, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, instant_type(), nullable=nullable)


def upgrade() -> None:
    op.add_column("companies", _text("notify_email", nullable=True))
    op.add_column(
        "companies",
        sa.Column("reminder_hours", sa.Integer, nullable=False, server_default="24"),
    )
    op.add_column("outbox_events", _at("mailed_at", nullable=True))
    op.execute("UPDATE outbox_events SET mailed_at = created_at")
    op.create_index(
        "ix_outbox_events_unmailed",
        "outbox_events",
        ["created_at", "id"],
        sqlite_where=sa.text("mailed_at IS NULL"),
        postgresql_where=sa.text("mailed_at IS NULL"),
    )

    op.create_table(
        "messages",
        _id("company_id"),
        _id("id"),
        _text("kind"),
        _text("to_address"),
        _text("subject"),
        sa.Column("text_body", sa.Text, nullable=False),
        sa.Column("html_body", sa.Text, nullable=False),
        _text("dedupe_key"),
        _text("reply_to", nullable=True),
        _id("subject_id", nullable=True),
        _text("status"),
        sa.Column("attempts", sa.Integer, nullable=False),
        _at("next_attempt_at"),
        _text("last_error", nullable=True),
        _at("sent_at", nullable=True),
        _at("created_at"),
        sa.PrimaryKeyConstraint("company_id", "id", name="pk_messages"),
        sa.UniqueConstraint("company_id", "dedupe_key", name="uq_messages_company_id_dedupe_key"),
    )
    op.create_index(
        "ix_messages_due",
        "messages",
        ["next_attempt_at", "created_at", "id"],
        sqlite_where=sa.text("status = 'pending'"),
        postgresql_where=sa.text("status = 'pending'"),
    )
    op.create_index("ix_messages_created", "messages", ["company_id", "created_at", "id"])
    op.create_index(
        "ix_messages_subject", "messages", ["company_id", "subject_id", "created_at", "id"]
    )


def downgrade() -> None:
    op.drop_table("messages")
    op.drop_index("ix_outbox_events_unmailed", table_name="outbox_events")
    with op.batch_alter_table("outbox_events") as batch:
        batch.drop_column("mailed_at")
    with op.batch_alter_table("companies") as batch:
        batch.drop_column("reminder_hours")
        batch.drop_column("notify_email")
