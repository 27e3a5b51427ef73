"""Rate limits per tenant, operation and host (with their GCRA state), the leases concurrent-call limits count,
and the waits upstreams asked for.

Revision ID: 0008_rate_limits
Revises: 0007_oauth_tokens
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_rate_limits"
down_revision = "0007_oauth_tokens"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "gateway_rate_limits",
        sa.Column("tenant_id", sa.String(64), primary_key=True),
        sa.Column("scope", sa.String(16), primary_key=True),
        sa.Column("subject", sa.String(255), primary_key=True),
        sa.Column("requests", sa.Integer, nullable=True),
        sa.Column("window_seconds", sa.Float, nullable=True),
        sa.Column("concurrent", sa.Integer, nullable=True),
        sa.Column("tat", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.CheckConstraint("scope IN ('tenant', 'operation', 'host')", name="ck_gateway_rate_limits_scope"),
        sa.CheckConstraint("requests IS NULL OR requests > 0", name="ck_gateway_rate_limits_requests"),
        sa.CheckConstraint("window_seconds IS NULL OR window_seconds > 0", name="ck_gateway_rate_limits_window"),
        sa.CheckConstraint("(requests IS NULL) = (window_seconds IS NULL)", name="ck_gateway_rate_limits_rate"),
        sa.CheckConstraint("concurrent IS NULL OR concurrent > 0", name="ck_gateway_rate_limits_concurrent"),
        sa.CheckConstraint("requests IS NOT NULL OR concurrent IS NOT NULL", name="ck_gateway_rate_limits_something"),
    )
    op.create_table(
        "gateway_call_leases",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("subject", sa.String(255), nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
    )
    op.create_index("ix_gateway_call_leases_limit", "gateway_call_leases", ["tenant_id", "scope", "subject"])
    op.create_table(
        "gateway_upstream_waits",
        sa.Column("tenant_id", sa.String(64), primary_key=True),
        sa.Column("host", sa.String(255), primary_key=True),
        sa.Column("until", sa.Float, nullable=False),
        sa.Column("status", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("gateway_upstream_waits")
    op.drop_index("ix_gateway_call_leases_limit", table_name="gateway_call_leases")
    op.drop_table("gateway_call_leases")
    op.drop_table("gateway_rate_limits")
