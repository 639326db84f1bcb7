"""Quote and lead follow-up notices: an index for the worker's daily look-up of the leads
due a follow-up reminder (``leads.list(follow_up_on=...)``). Quote follow-ups need no
column: they are stored with the quote (``quotes.follow_ups``, JSON), ``skipped`` being a
new value there.

Revision ID: 0013_follow_up_notices
Revises: 0012_messages
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0013_follow_up_notices"
down_revision = "0012_messages"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_leads_follow_up_on", "leads", ["company_id", "follow_up_on"])


def downgrade() -> None:
    op.drop_index("ix_leads_follow_up_on", table_name="leads")
