"""The registry's tables: tenants, API tokens, skills and their versions, releases, tool specs.

Rules the registry relies on are constraints here, so no code path (or second replica) can
break them: one row per (tenant, skill, version); one release per (tenant, skill, version) and
per (tenant, digest); a state that is one of the four; and, through the triggers created by the
``0001_registry`` migration, release rows that can be neither updated nor deleted and published
versions whose content cannot change.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    Dialect,
    ForeignKey,
    Integer,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from skillhouse.json_types import JsonObject
from skillhouse.store.base import Base

STATE_CHECK = "state IN ('draft', 'validated', 'published', 'deprecated')"
SCOPE_CHECK = "scope IN ('run', 'approve', 'admin')"


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class UTCDateTime(TypeDecorator[dt.datetime]):
    """A timezone-aware UTC timestamp on every database (SQLite stores it without its zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_result_value(self, value: dt.datetime | None, dialect: Dialect) -> dt.datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=dt.UTC)
        return value


class TenantRow(Base):
    """A tenant: the owner of tokens, skills, specs and (for the gateway) credentials."""

    __tablename__ = "tenants"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class TokenRow(Base):
    """An API token, stored as the SHA-256 of the secret; the secret itself is shown once."""

    __tablename__ = "api_tokens"
    __table_args__ = (CheckConstraint(SCOPE_CHECK, name="ck_api_tokens_scope"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenants.id"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    hint: Mapped[str] = mapped_column(String(16))
    """The first characters of the token, so a person can tell tokens apart in a listing."""
    label: Mapped[str] = mapped_column(String(200), default="")
    scope: Mapped[str] = mapped_column(String(16))
    """``run``, ``approve`` or ``admin``: what the token may do (see ``registry/tokens.py``)."""
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class SkillVersionRow(Base):
    """One version of a skill: its files (uploaded or generated from a skill spec) and state."""

    __tablename__ = "skill_versions"
    __table_args__ = (
        UniqueConstraint("tenant_id", "skill", "version", name="uq_skill_versions_tenant_skill_version"),
        CheckConstraint(STATE_CHECK, name="ck_skill_versions_state"),
        CheckConstraint("source IN ('package', 'spec')", name="ck_skill_versions_source"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenants.id"), index=True)
    skill: Mapped[str] = mapped_column(String(64))
    version: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(16))
    source: Mapped[str] = mapped_column(String(16))
    """``package`` (uploaded files) or ``spec`` (generated from a skill spec of the runtime contract)."""
    files: Mapped[dict[str, str]] = mapped_column(JSON)
    content_digest: Mapped[str] = mapped_column(String(80))
    """``sha256:`` over the canonical JSON of ``files`` (and ``spec``): what "identical content" means."""
    spec: Mapped[JsonObject | None] = mapped_column(JSON, nullable=True)
    report: Mapped[JsonObject] = mapped_column(JSON)
    """The check report: ``{"ok": bool, "errors": [{file, line, code, message}]}``."""
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ReleaseRow(Base):
    """A published release: the canonical release document and its digest. Never updated."""

    __tablename__ = "releases"
    __table_args__ = (
        UniqueConstraint("tenant_id", "skill", "version", name="uq_releases_tenant_skill_version"),
        UniqueConstraint("tenant_id", "digest", name="uq_releases_tenant_digest"),
        CheckConstraint("digest LIKE 'sha256:%'", name="ck_releases_digest"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenants.id"), index=True)
    skill: Mapped[str] = mapped_column(String(64))
    version: Mapped[str] = mapped_column(String(64))
    digest: Mapped[str] = mapped_column(String(80))
    document: Mapped[str] = mapped_column(Text, deferred=True)
    """RFC 8785 canonical JSON of the release document (its digest is over these bytes minus ``digest``)."""
    files: Mapped[dict[str, str]] = mapped_column(JSON, deferred=True)
    """The Agent Skills bundle: file path to text."""
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ToolSpecRow(Base):
    """A tool spec of the runtime contract (``skills/tool-specs``), owned by a tenant."""

    __tablename__ = "tool_specs"
    __table_args__ = (
        UniqueConstraint("tenant_id", "tool_id", "version", name="uq_tool_specs_tenant_tool_version"),
        CheckConstraint(STATE_CHECK, name="ck_tool_specs_state"),
        CheckConstraint("version > 0", name="ck_tool_specs_version"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(ForeignKey("tenants.id"), index=True)
    tool_id: Mapped[str] = mapped_column(String(128))
    version: Mapped[int] = mapped_column(Integer)
    tool_pack: Mapped[str] = mapped_column(String(32))
    integration_id: Mapped[str] = mapped_column(String(128), index=True)
    state: Mapped[str] = mapped_column(String(16))
    spec: Mapped[JsonObject] = mapped_column(JSON)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
