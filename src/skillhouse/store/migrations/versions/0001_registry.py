"""The registry: tenants, tokens, skill versions, releases, tool specs; release immutability triggers.

Revision ID: 0001_registry
Revises:
"""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from alembic import op

revision = "0001_registry"
down_revision = None
branch_labels = None
depends_on = None

STATE_CHECK = "state IN ('draft', 'validated', 'published', 'deprecated')"

_SQLITE_TRIGGERS = [
    """CREATE TRIGGER releases_refuse_update BEFORE UPDATE ON releases
       BEGIN SELECT RAISE(ABORT, 'releases are immutable: publish a new version instead'); END""",
    """CREATE TRIGGER releases_refuse_delete BEFORE DELETE ON releases
       BEGIN SELECT RAISE(ABORT, 'releases are immutable: they cannot be deleted'); END""",
    """CREATE TRIGGER skill_versions_published_frozen BEFORE UPDATE ON skill_versions
       WHEN OLD.state IN ('published', 'deprecated') AND (
            NEW.content_digest <> OLD.content_digest OR NEW.files <> OLD.files
            OR NEW.skill <> OLD.skill OR NEW.version <> OLD.version OR NEW.tenant_id <> OLD.tenant_id
            OR NEW.state NOT IN ('published', 'deprecated')
            OR (OLD.state = 'deprecated' AND NEW.state <> 'deprecated'))
       BEGIN SELECT RAISE(ABORT, 'a published skill version cannot change or go back to draft'); END""",
    """CREATE TRIGGER skill_versions_published_kept BEFORE DELETE ON skill_versions
       WHEN OLD.state IN ('published', 'deprecated')
       BEGIN SELECT RAISE(ABORT, 'a published skill version cannot be deleted'); END""",
]

_POSTGRES_TRIGGERS = [
    """CREATE FUNCTION skillhouse_refuse_release_change() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         RAISE EXCEPTION 'releases are immutable: publish a new version instead'
           USING ERRCODE = 'integrity_constraint_violation';
       END $$""",
    """CREATE TRIGGER releases_refuse_change BEFORE UPDATE OR DELETE ON releases
       FOR EACH ROW EXECUTE FUNCTION skillhouse_refuse_release_change()""",
    """CREATE TRIGGER releases_refuse_truncate BEFORE TRUNCATE ON releases
       FOR EACH STATEMENT EXECUTE FUNCTION skillhouse_refuse_release_change()""",
    """CREATE FUNCTION skillhouse_keep_published_version() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF OLD.state IN ('published', 'deprecated') THEN
           IF TG_OP = 'DELETE'
              OR NEW.content_digest <> OLD.content_digest OR NEW.files::text <> OLD.files::text
              OR NEW.skill <> OLD.skill OR NEW.version <> OLD.version OR NEW.tenant_id <> OLD.tenant_id
              OR NEW.state NOT IN ('published', 'deprecated')
              OR (OLD.state = 'deprecated' AND NEW.state <> 'deprecated') THEN
             RAISE EXCEPTION 'a published skill version cannot change, be deleted or go back to draft'
               USING ERRCODE = 'integrity_constraint_violation';
           END IF;
         END IF;
         IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
         RETURN NEW;
       END $$""",
    """CREATE TRIGGER skill_versions_published_frozen BEFORE UPDATE OR DELETE ON skill_versions
       FOR EACH ROW EXECUTE FUNCTION skillhouse_keep_published_version()""",
]


def _timestamps() -> list[sa.Column[dt.datetime]]:
    return [
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        "tenants",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("tenant_id", sa.String(64), sa.ForeignKey("tenants.id"), nullable=False, index=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("hint", sa.String(16), nullable=False),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "skill_versions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("tenant_id", sa.String(64), sa.ForeignKey("tenants.id"), nullable=False, index=True),
        sa.Column("skill", sa.String(64), nullable=False),
        sa.Column("version", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("files", sa.JSON, nullable=False),
        sa.Column("content_digest", sa.String(80), nullable=False),
        sa.Column("spec", sa.JSON, nullable=True),
        sa.Column("report", sa.JSON, nullable=False),
        *_timestamps(),
        sa.UniqueConstraint("tenant_id", "skill", "version", name="uq_skill_versions_tenant_skill_version"),
        sa.CheckConstraint(STATE_CHECK, name="ck_skill_versions_state"),
        sa.CheckConstraint("source IN ('package', 'spec')", name="ck_skill_versions_source"),
    )
    op.create_table(
        "releases",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("tenant_id", sa.String(64), sa.ForeignKey("tenants.id"), nullable=False, index=True),
        sa.Column("skill", sa.String(64), nullable=False),
        sa.Column("version", sa.String(64), nullable=False),
        sa.Column("digest", sa.String(80), nullable=False),
        sa.Column("document", sa.Text, nullable=False),
        sa.Column("files", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("tenant_id", "skill", "version", name="uq_releases_tenant_skill_version"),
        sa.UniqueConstraint("tenant_id", "digest", name="uq_releases_tenant_digest"),
        sa.CheckConstraint("digest LIKE 'sha256:%'", name="ck_releases_digest"),
    )
    op.create_table(
        "tool_specs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("tenant_id", sa.String(64), sa.ForeignKey("tenants.id"), nullable=False, index=True),
        sa.Column("tool_id", sa.String(128), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("tool_pack", sa.String(32), nullable=False),
        sa.Column("integration_id", sa.String(128), nullable=False, index=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("spec", sa.JSON, nullable=False),
        *_timestamps(),
        sa.UniqueConstraint("tenant_id", "tool_id", "version", name="uq_tool_specs_tenant_tool_version"),
        sa.CheckConstraint(STATE_CHECK, name="ck_tool_specs_state"),
        sa.CheckConstraint("version > 0", name="ck_tool_specs_version"),
    )
    triggers = _POSTGRES_TRIGGERS if op.get_bind().dialect.name == "postgresql" else _SQLITE_TRIGGERS
    for statement in triggers:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS skill_versions_published_frozen ON skill_versions")
        op.execute("DROP TRIGGER IF EXISTS releases_refuse_truncate ON releases")
        op.execute("DROP TRIGGER IF EXISTS releases_refuse_change ON releases")
        op.execute("DROP FUNCTION IF EXISTS skillhouse_keep_published_version()")
        op.execute("DROP FUNCTION IF EXISTS skillhouse_refuse_release_change()")
    for table in ("tool_specs", "releases", "skill_versions", "api_tokens", "tenants"):
        op.drop_table(table)
