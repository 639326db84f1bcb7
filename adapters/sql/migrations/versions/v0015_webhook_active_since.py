"""When a webhook endpoint was last turned back on: ``webhook_endpoints.active_since``,
NULL for one on since it was created. Events recorded before it are not sent to it.

Revision ID: 0015_webhook_active_since
Revises: 0014_portal
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from adapters.sql.columns import instant_type

revision = "0015_webhook_active_since"
down_revision = "0014_portal"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("webhook_endpoints", sa.Column("active_since", instant_type(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("webhook_endpoints") as batch:
        batch.drop_column("active_since")
