"""Token scopes (``run``, ``approve``, ``admin``) and server-side console sessions.

Tokens that exist before this migration become ``admin``: they could do everything before, so
nothing running breaks. The column has no default afterwards: every new token names its scope.

Revision ID: 0004_token_scopes
Revises: 0002_gateway
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_token_scopes"
down_revision = "0003_credential_origins"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("api_tokens") as batch:
        batch.add_column(sa.Column("scope", sa.String(16), nullable=False, server_default="admin"))
    with op.batch_alter_table("api_tokens") as batch:
        batch.alter_column("scope", existing_type=sa.String(16), existing_nullable=False, server_default=None)
        batch.create_check_constraint("ck_api_tokens_scope", "scope IN ('run', 'approve', 'admin')")
    op.create_table(
        "console_sessions",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("token_id", sa.Integer, sa.ForeignKey("api_tokens.id", ondelete="CASCADE"), nullable=False),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_console_sessions_token_id", "console_sessions", ["token_id"])
    op.create_index("ix_console_sessions_expires_at", "console_sessions", ["expires_at"])


def downgrade() -> None:
    op.drop_table("console_sessions")
    with op.batch_alter_table("api_tokens") as batch:
        batch.drop_constraint("ck_api_tokens_scope", type_="check")
        batch.drop_column("scope")
