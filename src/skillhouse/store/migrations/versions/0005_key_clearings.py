"""The record of idempotency keys a person cleared after an unresolved call.

Revision ID: 0005_key_clearings
Revises: 0004_token_scopes
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_key_clearings"
down_revision = "0004_token_scopes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "gateway_key_clearings",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("key", sa.String(80), nullable=False),
        sa.Column("operation", sa.String(300), nullable=False),
        sa.Column("commitment", sa.String(80), nullable=False),
        sa.Column("key_created_at", sa.Float, nullable=False),
        sa.Column("cleared_by", sa.String(200), nullable=False),
        sa.Column("cleared_at", sa.Float, nullable=False),
    )
    op.create_index("ix_gateway_key_clearings_tenant", "gateway_key_clearings", ["tenant_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_gateway_key_clearings_tenant", table_name="gateway_key_clearings")
    op.drop_table("gateway_key_clearings")
