"""Rate limits per tenant, operation and host (with their GCRA state), and the waits upstreams asked for.

Revision ID: 0007_rate_limits
Revises: 0006_decisions_on_record
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_rate_limits"
down_revision = "0006_decisions_on_record"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "gateway_rate_limits",
        sa.Column("tenant_id", sa.String(64), primary_key=True),
        sa.Column("scope", sa.String(16), primary_key=True),
        sa.Column("subject", sa.String(255), primary_key=True),
        sa.Column("requests", sa.Integer, nullable=False),
        sa.Column("window_seconds", sa.Float, nullable=False),
        sa.Column("tat", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.CheckConstraint("scope IN ('tenant', 'operation', 'host')", name="ck_gateway_rate_limits_scope"),
        sa.CheckConstraint("requests > 0", name="ck_gateway_rate_limits_requests"),
        sa.CheckConstraint("window_seconds > 0", name="ck_gateway_rate_limits_window"),
    )
    op.create_table(
        "gateway_upstream_waits",
        sa.Column("tenant_id", sa.String(64), primary_key=True),
        sa.Column("host", sa.String(255), primary_key=True),
        sa.Column("until", sa.Float, nullable=False),
        sa.Column("status", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("gateway_upstream_waits")
    op.drop_table("gateway_rate_limits")
