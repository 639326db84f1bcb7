"""One company per connected domain: a unique index on ``companies.custom_domain``
(NULL, no domain, never collides). The settings check refused a taken domain already,
but two companies saving one domain at the same instant could both pass it; storage
now refuses the second. Should two companies hold one domain from before, the company
created first keeps it and the others are disconnected (their quote links go back to
the service address under their slug).

Revision ID: 0017_custom_domain_unique
Revises: 0016_referrals
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017_custom_domain_unique"
down_revision = "0016_referrals"
branch_labels = None
depends_on = None


def upgrade() -> None:
    companies = sa.table(
        "companies",
        sa.column("id", sa.String),
        sa.column("created_at", sa.String),
        sa.column("custom_domain", sa.String),
    )
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(companies.c.id, companies.c.custom_domain)
        .where(companies.c.custom_domain.is_not(None))
        .order_by(companies.c.created_at, companies.c.id)
    ).all()
    seen: set[str] = set()
    for company_id, domain in rows:
        if domain in seen:
            connection.execute(
                companies.update().where(companies.c.id == company_id).values(custom_domain=None)
            )
        seen.add(domain)
    op.create_index("uq_companies_custom_domain", "companies", ["custom_domain"], unique=True)


def downgrade() -> None:
    op.drop_index("uq_companies_custom_domain", table_name="companies")
