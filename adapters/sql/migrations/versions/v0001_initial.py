"""The first schema: companies, API keys, catalogs, coupon redemptions, customers, leads,
quotes, payments, idempotency records and the per-company change clock.

Revision ID: 0001_initial
Revises:
Create Date: 2026-11-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from adapters.sql.columns import id_column_type, instant_type, money_type, text_type

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None


def _id(name: str, *, nullable: bool = False) -> sa.Column[str]:
    return sa.Column(name, id_column_type(), nullable=nullable)


def _text(name: str, *, nullable: bool = False) -> sa.Column[str]:
    return sa.Column(name, text_type(), nullable=nullable)


def _at(name: str, *, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, instant_type(), nullable=nullable)


def _keyset_indexes(table: str) -> None:
    op.create_index(f"ix_{table}_created", table, ["company_id", "created_at", "id"])
    op.create_index(f"ix_{table}_changed", table, ["company_id", "changed_at", "id"])


def upgrade() -> None:
    op.create_table(
        "companies",
        _id("id"),
        _text("slug"),
        _text("name"),
        _text("timezone"),
        _text("code_prefix"),
        _at("created_at"),
        sa.Column("tax_rate_bps", sa.Integer, nullable=False),
        _text("custom_domain", nullable=True),
        sa.Column("self_service_cutoff_hours", sa.Integer, nullable=False),
        sa.Column("min_notice_minutes", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_companies"),
        sa.UniqueConstraint("slug", name="uq_companies_slug"),
    )
    op.create_table(
        "api_keys",
        _id("company_id"),
        _id("id"),
        _text("name"),
        sa.Column("scopes", sa.Text, nullable=False),
        sa.Column("rate_limit_per_minute", sa.Integer, nullable=False),
        _text("lookup_prefix"),
        _text("secret_hash"),
        _text("status"),
        _at("created_at"),
        _at("updated_at"),
        _at("revoked_at", nullable=True),
        sa.PrimaryKeyConstraint("company_id", "id", name="pk_api_keys"),
        sa.UniqueConstraint("lookup_prefix", name="uq_api_keys_lookup_prefix"),
    )
    op.create_index("ix_api_keys_created", "api_keys", ["company_id", "created_at", "id"])
    op.create_table(
        "catalogs",
        _id("company_id"),
        sa.Column("document", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("company_id", name="pk_catalogs"),
    )
    op.create_table(
        "coupon_redemptions",
        _id("company_id"),
        _id("booking_id"),
        _id("coupon_id"),
        _id("customer_id"),
        sa.PrimaryKeyConstraint(
            "company_id", "booking_id", "coupon_id", name="pk_coupon_redemptions"
        ),
    )
    op.create_index(
        "ix_coupon_redemptions_usage",
        "coupon_redemptions",
        ["company_id", "coupon_id", "customer_id"],
    )
    op.create_table(
        "customers",
        _id("company_id"),
        _id("id"),
        _text("name"),
        _text("name_key"),
        _text("email"),
        _text("email_key"),
        _text("phone", nullable=True),
        sa.Column("addresses", sa.Text, nullable=False),
        _id("default_address_id", nullable=True),
        _id("merged_into", nullable=True),
        _text("notes"),
        _at("created_at"),
        _at("updated_at"),
        _at("changed_at", nullable=True),
        sa.PrimaryKeyConstraint("company_id", "id", name="pk_customers"),
        sa.UniqueConstraint("company_id", "email_key", name="uq_customers_company_id_email_key"),
    )
    _keyset_indexes("customers")
    op.create_table(
        "leads",
        _id("company_id"),
        _id("id"),
        _text("name"),
        _text("email", nullable=True),
        _text("email_key", nullable=True),
        _text("phone_e164", nullable=True),
        _text("stage"),
        _text("owner", nullable=True),
        sa.Column("follow_up_on", sa.Date, nullable=True),
        _text("source"),
        _text("message"),
        _id("service_id", nullable=True),
        sa.Column("timeline", sa.Text, nullable=False),
        _at("created_at"),
        _at("updated_at"),
        _at("changed_at", nullable=True),
        sa.PrimaryKeyConstraint("company_id", "id", name="pk_leads"),
    )
    op.create_index("ix_leads_email_key", "leads", ["company_id", "email_key"])
    op.create_index("ix_leads_phone_e164", "leads", ["company_id", "phone_e164"])
    op.create_index("ix_leads_stage", "leads", ["company_id", "stage", "created_at", "id"])
    op.create_index("ix_leads_owner", "leads", ["company_id", "owner", "created_at", "id"])
    _keyset_indexes("leads")
    op.create_table(
        "quotes",
        _id("company_id"),
        _id("id"),
        _id("customer_id", nullable=True),
        _id("lead_id", nullable=True),
        _text("status"),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("total_cents", money_type(), nullable=False),
        sa.Column("selection", sa.Text, nullable=True),
        sa.Column("breakdown", sa.Text, nullable=True),
        sa.Column("manual_lines", sa.Text, nullable=False),
        sa.Column("follow_ups", sa.Text, nullable=False),
        sa.Column("follow_ups_paused", sa.Boolean, nullable=False),
        _text("public_token"),
        _id("booking_id", nullable=True),
        _text("message"),
        _text("note"),
        _at("expires_at", nullable=True),
        _at("sent_at", nullable=True),
        _at("accepted_at", nullable=True),
        _at("declined_at", nullable=True),
        _at("converted_at", nullable=True),
        _at("created_at"),
        _at("updated_at"),
        _at("changed_at", nullable=True),
        sa.PrimaryKeyConstraint("company_id", "id", name="pk_quotes"),
    )
    op.create_index("ix_quotes_status", "quotes", ["company_id", "status", "created_at", "id"])
    op.create_index("ix_quotes_lead", "quotes", ["company_id", "lead_id", "created_at", "id"])
    op.create_index(
        "ix_quotes_customer", "quotes", ["company_id", "customer_id", "created_at", "id"]
    )
    op.create_index("ix_quotes_public_token", "quotes", ["public_token"])
    _keyset_indexes("quotes")
    op.create_table(
        "payments",
        _id("company_id"),
        _id("id"),
        _id("booking_id", nullable=True),
        _id("customer_id", nullable=True),
        _text("kind"),
        _text("method"),
        sa.Column("amount_cents", money_type(), nullable=False),
        sa.Column("offline", sa.Boolean, nullable=False),
        _text("note"),
        _id("reverses", nullable=True),
        _text("external_ref", nullable=True),
        sa.Column("dispute", sa.Boolean, nullable=False),
        _text("origin"),
        _at("created_at"),
        _at("changed_at", nullable=True),
        sa.PrimaryKeyConstraint("company_id", "id", name="pk_payments"),
    )
    op.create_index(
        "ix_payments_booking", "payments", ["company_id", "booking_id", "created_at", "id"]
    )
    op.create_index(
        "ix_payments_customer", "payments", ["company_id", "customer_id", "created_at", "id"]
    )
    op.create_index("ix_payments_reverses", "payments", ["company_id", "reverses"])
    _keyset_indexes("payments")
    op.create_table(
        "idempotency_records",
        _id("company_id"),
        _text("key"),
        _text("fingerprint"),
        _text("state"),
        _at("created_at"),
        sa.Column("response_status", sa.Integer, nullable=True),
        sa.Column("response_body", sa.LargeBinary, nullable=True),
        sa.PrimaryKeyConstraint("company_id", "key", name="pk_idempotency_records"),
    )
    op.create_index("ix_idempotency_records_created", "idempotency_records", ["created_at"])
    op.create_table(
        "change_clock",
        _id("company_id"),
        _at("last_change"),
        sa.PrimaryKeyConstraint("company_id", name="pk_change_clock"),
    )


def downgrade() -> None:
    for table in (
        "change_clock",
        "idempotency_records",
        "payments",
        "quotes",
        "leads",
        "customers",
        "coupon_redemptions",
        "catalogs",
        "api_keys",
        "companies",
    ):
        op.drop_table(table)
