"""The gateway: credentials, tenant allow-lists and gates, approvals, idempotency keys, audit, turns.

Revision ID: 0002_gateway
Revises: 0001_registry
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_gateway"
down_revision = "0001_registry"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "gateway_credentials",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("header", sa.String(128), nullable=False),
        sa.Column("scheme", sa.String(16), nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("tenant_id", "host", "header", name="uq_gateway_credentials_binding"),
        sa.CheckConstraint("scheme IN ('bearer', 'basic', 'header')", name="ck_gateway_credentials_scheme"),
    )
    op.create_table(
        "gateway_allowed_hosts",
        sa.Column("tenant_id", sa.String(64), primary_key=True),
        sa.Column("host", sa.String(300), primary_key=True),
    )
    op.create_table(
        "gateway_tenant_gates",
        sa.Column("tenant_id", sa.String(64), primary_key=True),
        sa.Column("matches", sa.String(500), primary_key=True),
        sa.Column("reason", sa.Text, nullable=False),
    )
    op.create_table(
        "gateway_approvals",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("turn_id", sa.String(40), nullable=True),
        sa.Column("operation", sa.String(300), nullable=True),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("canonical", sa.JSON, nullable=False),
        sa.Column("commitment", sa.String(80), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("decided_at", sa.Float, nullable=True),
        sa.Column("decided_by", sa.String(200), nullable=True),
        sa.Column("used_at", sa.Float, nullable=True),
        sa.CheckConstraint(
            "state IN ('pending', 'approved', 'denied', 'used', 'expired')", name="ck_gateway_approvals_state"
        ),
    )
    op.create_index("ix_gateway_approvals_commitment", "gateway_approvals", ["tenant_id", "commitment", "state"])
    op.create_table(
        "gateway_idempotency",
        sa.Column("tenant_id", sa.String(64), primary_key=True),
        sa.Column("key", sa.String(80), primary_key=True),
        sa.Column("operation", sa.String(300), nullable=False),
        sa.Column("commitment", sa.String(80), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("lease_until", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("response", sa.JSON, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.CheckConstraint("state IN ('running', 'completed', 'unresolved')", name="ck_gateway_idempotency_state"),
    )
    op.create_table(
        "gateway_audit",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", sa.Float, nullable=False),
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("turn_id", sa.String(40), nullable=True),
        sa.Column("method", sa.String(16), nullable=False),
        sa.Column("host", sa.String(300), nullable=False),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("operation", sa.String(300), nullable=True),
        sa.Column("decision", sa.String(24), nullable=False),
        sa.Column("code", sa.String(40), nullable=True),
        sa.Column("status", sa.Integer, nullable=True),
        sa.Column("address", sa.String(64), nullable=True),
        sa.Column("idempotency_key", sa.String(80), nullable=True),
        sa.Column("approval_id", sa.String(40), nullable=True),
    )
    op.create_index("ix_gateway_audit_tenant", "gateway_audit", ["tenant_id", "id"])
    op.create_table(
        "gateway_turns",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("profile", sa.String(32), nullable=False),
        sa.Column("releases", sa.JSON, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    for table in (
        "gateway_turns",
        "gateway_audit",
        "gateway_idempotency",
        "gateway_approvals",
        "gateway_tenant_gates",
        "gateway_allowed_hosts",
        "gateway_credentials",
    ):
        op.drop_table(table)
