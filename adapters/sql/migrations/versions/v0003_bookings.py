"""Bookings and their crew assignments; on PostgreSQL the exclusion constraint that keeps
one crew member's open jobs from overlapping.

Revision ID: 0003_bookings
Revises: 0002_crew_members
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from adapters.sql.columns import id_column_type, instant_type, text_type

revision = "0003_bookings"
down_revision = "0002_crew_members"
branch_labels = None
depends_on = None


def _id(name: str, *, nullable: bool = False) -> sa.Column[str]:
    return sa.Column(name, id_column_type(), nullable=nullable)


def _at(name: str, *, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, instant_type(), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "bookings",
        _id("company_id"),
        _id("id"),
        sa.Column("code", text_type(), nullable=False),
        _id("customer_id"),
        sa.Column("status", text_type(), nullable=False),
        _id("plan_id", nullable=True),
        sa.Column("visit_index", sa.Integer, nullable=False),
        _id("group_id", nullable=True),
        _at("starts_at"),
        _at("ends_at"),
        sa.Column("tracking_token", text_type(), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("document", sa.Text, nullable=False),
        _at("created_at"),
        _at("changed_at", nullable=True),
        sa.PrimaryKeyConstraint("company_id", "id", name="pk_bookings"),
        sa.UniqueConstraint("company_id", "code", name="uq_bookings_company_id_code"),
        sa.UniqueConstraint("tracking_token", name="uq_bookings_tracking_token"),
    )
    op.create_index(
        "uq_bookings_plan_visit",
        "bookings",
        ["company_id", "plan_id", "visit_index"],
        unique=True,
        sqlite_where=sa.text("plan_id IS NOT NULL"),
        postgresql_where=sa.text("plan_id IS NOT NULL"),
    )
    op.create_index("ix_bookings_group", "bookings", ["company_id", "group_id", "visit_index"])
    op.create_index(
        "ix_bookings_customer", "bookings", ["company_id", "customer_id", "created_at", "id"]
    )
    op.create_index("ix_bookings_status", "bookings", ["company_id", "status", "created_at", "id"])
    op.create_index("ix_bookings_starts", "bookings", ["company_id", "starts_at"])
    op.create_index("ix_bookings_created", "bookings", ["company_id", "created_at", "id"])
    op.create_index("ix_bookings_changed", "bookings", ["company_id", "changed_at", "id"])

    op.create_table(
        "booking_assignments",
        _id("company_id"),
        _id("booking_id"),
        _id("crew_id"),
        _at("starts_at"),
        _at("ends_at"),
        sa.Column("zip_code", text_type(), nullable=False),
        sa.Column("open", sa.Boolean, nullable=False),
        sa.PrimaryKeyConstraint(
            "company_id", "booking_id", "crew_id", "starts_at", name="pk_booking_assignments"
        ),
    )
    op.create_index(
        "ix_booking_assignments_busy",
        "booking_assignments",
        ["company_id", "crew_id", "starts_at"],
    )
    if op.get_bind().dialect.name == "postgresql":
        _create_overlap_constraint()


def _create_overlap_constraint() -> None:
    """btree_gist (a trusted extension: the database owner may create it) gives GiST the
    `=` on text. It is database-wide; it goes to `public` when that schema exists, so that
    dropping a schema of this service (tests use one each) never drops it from under
    another schema's constraint."""
    bind = op.get_bind()
    installed = bind.execute(
        sa.text("SELECT 1 FROM pg_extension WHERE extname = 'btree_gist'")
    ).scalar()
    if installed is None:
        public = bind.execute(
            sa.text("SELECT 1 FROM pg_namespace WHERE nspname = 'public'")
        ).scalar()
        op.execute(
            "CREATE EXTENSION IF NOT EXISTS btree_gist" + (" SCHEMA public" if public else "")
        )
    op.execute(
        "ALTER TABLE booking_assignments ADD CONSTRAINT ex_booking_assignments_overlap "
        "EXCLUDE USING gist (company_id WITH =, crew_id WITH =, "
        "tstzrange(starts_at, ends_at, '[)') WITH &&) WHERE (open)"
    )


def downgrade() -> None:
    op.drop_table("booking_assignments")
    op.drop_table("bookings")
