"""OAuth 2.0 client-credentials bindings and the access tokens the gateway fetched for them.

A binding of scheme ``oauth2-client-credentials`` is a credential row like any other (one per tenant,
origin and header); its encrypted value is the client's configuration (token URL, client id and
secret, scopes). The access token fetched with it is cached in ``gateway_oauth_tokens``, encrypted,
keyed by the binding it was fetched for, so every replica uses one token until shortly before expiry.

Revision ID: 0007_oauth_tokens
Revises: 0006_decisions_on_record
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_oauth_tokens"
down_revision = "0006_decisions_on_record"
branch_labels = None
depends_on = None

_OLD = "scheme IN ('bearer', 'basic', 'header')"
_NEW = "scheme IN ('bearer', 'basic', 'header', 'oauth2-client-credentials')"


def upgrade() -> None:
    with op.batch_alter_table("gateway_credentials") as batch:
        batch.drop_constraint("ck_gateway_credentials_scheme", type_="check")
        batch.alter_column("scheme", type_=sa.String(32), existing_type=sa.String(16), existing_nullable=False)
        batch.create_check_constraint("ck_gateway_credentials_scheme", _NEW)
    op.create_table(
        "gateway_oauth_tokens",
        sa.Column("tenant_id", sa.String(64), primary_key=True),
        sa.Column("binding", sa.String(64), primary_key=True),
        sa.Column("access_token", sa.Text, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("fetched_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("gateway_oauth_tokens")
    op.execute("DELETE FROM gateway_credentials WHERE scheme = 'oauth2-client-credentials'")
    with op.batch_alter_table("gateway_credentials") as batch:
        batch.drop_constraint("ck_gateway_credentials_scheme", type_="check")
        batch.alter_column("scheme", type_=sa.String(16), existing_type=sa.String(32), existing_nullable=False)
        batch.create_check_constraint("ck_gateway_credentials_scheme", _OLD)
