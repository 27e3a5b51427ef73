"""A person's decision on the record: the reason given with a denial, and who made an audit row's decision;
and an index for reading a tenant's approvals a page at a time, newest first.

Revision ID: 0006_decisions_on_record
Revises: 0005_key_clearings
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_decisions_on_record"
down_revision = "0005_key_clearings"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("gateway_approvals", sa.Column("decision_note", sa.Text, nullable=True))
    op.add_column("gateway_audit", sa.Column("actor", sa.String(200), nullable=True))
    op.create_index("ix_gateway_approvals_tenant_created", "gateway_approvals", ["tenant_id", "created_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_gateway_approvals_tenant_created", table_name="gateway_approvals")
    with op.batch_alter_table("gateway_audit") as table:
        table.drop_column("actor")
    with op.batch_alter_table("gateway_approvals") as table:
        table.drop_column("decision_note")
