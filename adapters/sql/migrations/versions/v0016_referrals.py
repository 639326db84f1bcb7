"""The referral programme: each customer's ``referral_code`` (eight Crockford characters,
unique per company; existing customers are given fresh random codes), and the companies'
``referral_discount_cents`` (0, the programme off).

Revision ID: 0016_referrals
Revises: 0015_webhook_active_since
Create Date: 2026-11-25
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa
from alembic import op

from adapters.sql.columns import money_type, text_type

revision = "0016_referrals"
down_revision = "0015_webhook_active_since"
branch_labels = None
depends_on = None

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
"""Crockford's base32 (no I, L, O, U), as ``booking_core.ids`` draws codes from."""


def _code() -> str:
    return "".join(secrets.choice(CROCKFORD) for _ in range(8))


def upgrade() -> None:
    op.add_column(
        "companies",
        sa.Column("referral_discount_cents", money_type(), nullable=False, server_default="0"),
    )
    op.add_column("customers", sa.Column("referral_code", text_type(), nullable=True))
    customers = sa.table(
        "customers",
        sa.column("company_id", sa.String),
        sa.column("id", sa.String),
        sa.column("referral_code", sa.String),
    )
    connection = op.get_bind()
    # Giving a code is no change of the customer's a poller should be shown: on
    # PostgreSQL the change-stamping trigger (revision 0004) is off while codes are given,
    # so each row keeps its place in updatedSince order (SQLite stamps in the service).
    stamping = connection.dialect.name == "postgresql"
    if stamping:
        op.execute("ALTER TABLE customers DISABLE TRIGGER stamp_change")
    rows = connection.execute(sa.select(customers.c.company_id, customers.c.id)).all()
    taken: set[tuple[str, str]] = set()
    for company_id, customer_id in rows:
        code = _code()
        while (company_id, code) in taken:
            code = _code()
        taken.add((company_id, code))
        connection.execute(
            customers.update()
            .where(customers.c.company_id == company_id, customers.c.id == customer_id)
            .values(referral_code=code)
        )
    if stamping:
        op.execute("ALTER TABLE customers ENABLE TRIGGER stamp_change")
    with op.batch_alter_table("customers") as batch:
        batch.alter_column("referral_code", existing_type=text_type(), nullable=False)
        batch.create_unique_constraint(
            "uq_customers_company_id_referral_code", ["company_id", "referral_code"]
        )


def downgrade() -> None:
    with op.batch_alter_table("customers") as batch:
        batch.drop_constraint("uq_customers_company_id_referral_code", type_="unique")
        batch.drop_column("referral_code")
    with op.batch_alter_table("companies") as batch:
        batch.drop_column("referral_discount_cents")
