"""Per-user OAuth 2.0 connections: the ``oauth2-authorization-code`` binding kind, the people's connections
(their tokens, encrypted), the connections being made (state and PKCE verifier, used once), and the
subject a turn acts for.

Revision ID: 0009_oauth_connections
Revises: 0008_rate_limits
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_oauth_connections"
down_revision = "0008_rate_limits"
branch_labels = None
depends_on = None

_OLD = "scheme IN ('bearer', 'basic', 'header', 'oauth2-client-credentials')"
_NEW = "scheme IN ('bearer', 'basic', 'header', 'oauth2-client-credentials', 'oauth2-authorization-code')"


def upgrade() -> None:
    with op.batch_alter_table("gateway_credentials") as batch:
        batch.drop_constraint("ck_gateway_credentials_scheme", type_="check")
        batch.create_check_constraint("ck_gateway_credentials_scheme", _NEW)
    op.create_table(
        "gateway_oauth_connections",
        sa.Column("tenant_id", sa.String(64), primary_key=True),
        sa.Column("subject", sa.String(255), primary_key=True),
        sa.Column("origin", sa.String(300), primary_key=True),
        sa.Column("client_id", sa.String(255), nullable=False),
        sa.Column("access_token", sa.Text, nullable=False),
        sa.Column("refresh_token", sa.Text, nullable=True),
        sa.Column("scopes", sa.Text, nullable=False, server_default=""),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("connected_at", sa.Float, nullable=False),
        sa.Column("refreshed_at", sa.Float, nullable=False),
        sa.Column("last_used_at", sa.Float, nullable=True),
        sa.Column("generation", sa.Integer, nullable=False, server_default="0"),
    )
    op.create_table(
        "gateway_oauth_pending",
        sa.Column("state_digest", sa.String(64), primary_key=True),
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("subject", sa.String(255), nullable=False),
        sa.Column("origin", sa.String(300), nullable=False),
        sa.Column("code_verifier", sa.Text, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
    )
    with op.batch_alter_table("gateway_turns") as batch:
        batch.add_column(sa.Column("subject", sa.String(255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("gateway_turns") as batch:
        batch.drop_column("subject")
    op.drop_table("gateway_oauth_pending")
    op.drop_table("gateway_oauth_connections")
    op.execute("DELETE FROM gateway_credentials WHERE scheme = 'oauth2-authorization-code'")
    with op.batch_alter_table("gateway_credentials") as batch:
        batch.drop_constraint("ck_gateway_credentials_scheme", type_="check")
        batch.create_check_constraint("ck_gateway_credentials_scheme", _OLD)
