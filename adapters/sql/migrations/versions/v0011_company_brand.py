"""A company's brand colour for its customer pages: ``companies.brand_color``, ``#rrggbb``
or NULL for the default colours.

Revision ID: 0011_company_brand
Revises: 0010_booking_forms
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from adapters.sql.columns import text_type

revision = "0011_company_brand"
down_revision = "0010_booking_forms"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("companies", sa.Column("brand_color", text_type(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("companies") as batch:
        batch.drop_column("brand_color")
