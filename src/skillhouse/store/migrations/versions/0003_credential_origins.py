"""Credentials bound to an origin: scheme + host + port, plain http only by a per-binding opt-in.

Existing rows held ``host`` or ``host:port`` and were injected for any scheme. They become https
origins: ``host`` is ``https://host:443``; ``host:port`` is ``https://host:port``. None becomes http,
because nothing recorded an opt-in to send it in the clear: a binding that was used over plain http
stops being injected until it is bound again as ``http://host:port`` with ``allow_http``. Where a
``host`` row and a ``host:443`` row of one header now name the same origin, the ``host:443`` row is
kept: it was the more specific one, the one the gateway injected for port 443.

Revision ID: 0003_credential_origins
Revises: 0002_gateway
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_credential_origins"
down_revision = "0002_gateway"
branch_labels = None
depends_on = None

_ROWS = sa.table(
    "gateway_credentials",
    sa.column("id", sa.Integer),
    sa.column("tenant_id", sa.String),
    sa.column("host", sa.String),
    sa.column("header", sa.String),
    sa.column("origin_scheme", sa.String),
    sa.column("port", sa.Integer),
)


def _split(written: str) -> tuple[str, int, bool]:
    """A legacy ``host``/``host:port``/``[v6]:port`` entry: (host, port, whether the port was given)."""
    if written.startswith("["):
        host, _, rest = written[1:].partition("]")
        return (host, int(rest[1:]), True) if rest[1:].isdigit() else (host, 443, False)
    if written.count(":") == 1:
        host, _, port = written.partition(":")
        if port.isdigit():
            return host, int(port), True
    return written, 443, False


def upgrade() -> None:
    with op.batch_alter_table("gateway_credentials") as batch:
        batch.add_column(sa.Column("origin_scheme", sa.String(8), nullable=False, server_default="https"))
        batch.add_column(sa.Column("port", sa.Integer, nullable=False, server_default="443"))
        batch.add_column(sa.Column("allow_http", sa.Boolean, nullable=False, server_default=sa.false()))
        # dropped before the rows move: "b:8080" becoming host "b" would collide with a "b" row under it
        batch.drop_constraint("uq_gateway_credentials_binding", type_="unique")
    connection = op.get_bind()
    rows = connection.execute(sa.select(_ROWS.c.id, _ROWS.c.tenant_id, _ROWS.c.host, _ROWS.c.header)).all()
    kept: dict[tuple[str, str, int, str], tuple[int, bool]] = {}
    for row_id, tenant, written, header in rows:
        host, port, explicit = _split(written)
        key = (tenant, host, port, header)
        earlier = kept.get(key)
        if earlier is not None:
            # two legacy rows name one origin now: keep the one written with its port
            loser = row_id if earlier[1] or not explicit else earlier[0]
            connection.execute(sa.delete(_ROWS).where(_ROWS.c.id == loser))
            if loser == row_id:
                continue
        kept[key] = (row_id, explicit)
        connection.execute(sa.update(_ROWS).where(_ROWS.c.id == row_id).values(host=host, port=port))
    with op.batch_alter_table("gateway_credentials") as batch:
        batch.create_unique_constraint(
            "uq_gateway_credentials_origin", ["tenant_id", "host", "origin_scheme", "port", "header"]
        )
        batch.create_check_constraint("ck_gateway_credentials_origin_scheme", "origin_scheme IN ('http', 'https')")
        batch.create_check_constraint("ck_gateway_credentials_http_opt_in", "origin_scheme = 'https' OR allow_http")


def downgrade() -> None:
    """Back to ``host``/``host:port`` rows; where an http and an https origin collide, the https one stays."""
    with op.batch_alter_table("gateway_credentials") as batch:
        batch.drop_constraint("ck_gateway_credentials_http_opt_in", type_="check")
        batch.drop_constraint("ck_gateway_credentials_origin_scheme", type_="check")
        batch.drop_constraint("uq_gateway_credentials_origin", type_="unique")
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(_ROWS.c.id, _ROWS.c.tenant_id, _ROWS.c.host, _ROWS.c.header, _ROWS.c.origin_scheme, _ROWS.c.port)
        .order_by(sa.desc(_ROWS.c.origin_scheme))
    ).all()
    seen: set[tuple[str, str, str]] = set()
    for row_id, tenant, host, header, scheme, port in rows:
        shown = f"[{host}]" if ":" in host else host
        written = shown if (scheme, port) == ("https", 443) else f"{shown}:{port}"
        if (tenant, written, header) in seen:
            connection.execute(sa.delete(_ROWS).where(_ROWS.c.id == row_id))
            continue
        seen.add((tenant, written, header))
        connection.execute(sa.update(_ROWS).where(_ROWS.c.id == row_id).values(host=written))
    with op.batch_alter_table("gateway_credentials") as batch:
        batch.drop_column("allow_http")
        batch.drop_column("port")
        batch.drop_column("origin_scheme")
        batch.create_unique_constraint("uq_gateway_credentials_binding", ["tenant_id", "host", "header"])
