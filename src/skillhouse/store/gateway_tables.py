"""The gateway's tables: credentials, tenant egress policy, approvals, idempotency keys, audit, turns.

What must hold across replicas is a constraint here: one credential per (tenant, origin, header), http only by opt-in; one
idempotency row per (tenant, key), which is what makes the first of many concurrent identical requests
the only one that runs; approval and key states limited to their lifecycles. Times that SQL compares
(leases, expiries) are epoch seconds so SQLite and PostgreSQL compare them alike. No column holds a
secret in the clear: credential values are encrypted, stored responses are redacted, audit rows carry
no headers or bodies.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column

from skillhouse.json_types import FetchAnswerDocument, JsonObject
from skillhouse.store.base import Base

APPROVAL_STATES = ("pending", "approved", "denied", "used", "expired")
KEY_STATES = ("running", "completed", "unresolved")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _one_of(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class CredentialRow(Base):
    """A secret bound to (tenant, origin, header): ``value`` is the encrypted header value, or for
    ``oauth2-client-credentials`` the encrypted client configuration the header's token is fetched with.

    The origin is ``origin_scheme`` + ``host`` + ``port``; an http origin exists only with its
    ``allow_http`` opt-in, which the database itself enforces.
    """

    __tablename__ = "gateway_credentials"
    __table_args__ = (
        UniqueConstraint("tenant_id", "host", "origin_scheme", "port", "header", name="uq_gateway_credentials_origin"),
        CheckConstraint(
            "scheme IN ('bearer', 'basic', 'header', 'oauth2-client-credentials', 'oauth2-authorization-code')",
            name="ck_gateway_credentials_scheme",
        ),
        CheckConstraint("origin_scheme IN ('http', 'https')", name="ck_gateway_credentials_origin_scheme"),
        CheckConstraint("origin_scheme = 'https' OR allow_http", name="ck_gateway_credentials_http_opt_in"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(64))
    host: Mapped[str] = mapped_column(String(255))
    origin_scheme: Mapped[str] = mapped_column(String(8), server_default="https")
    port: Mapped[int] = mapped_column(Integer, server_default="443")
    allow_http: Mapped[bool] = mapped_column(Boolean, server_default=false())
    header: Mapped[str] = mapped_column(String(128))
    scheme: Mapped[str] = mapped_column(String(32))
    value: Mapped[str] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=_now)


class OAuthTokenRow(Base):
    """An access token fetched for an OAuth 2.0 binding, shared by every replica until ``expires_at``.

    ``binding`` is a digest of the binding's encrypted value, so binding the client again (a new
    value) orphans the old token rather than reusing it. ``access_token`` is encrypted like a credential.
    """

    __tablename__ = "gateway_oauth_tokens"

    tenant_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    binding: Mapped[str] = mapped_column(String(64), primary_key=True)
    access_token: Mapped[str] = mapped_column(Text)
    expires_at: Mapped[float] = mapped_column(Float)
    fetched_at: Mapped[float] = mapped_column(Float)


class OAuthConnectionRow(Base):
    """A person's connection to an ``oauth2-authorization-code`` binding: the tokens the provider issued to
    the binding's client for ``subject`` (the end user turns act for), both encrypted like a credential.

    One row per (tenant, subject, origin of the binding). ``client_id`` is the client that obtained the
    tokens: a binding re-bound with another client id does not use them. A refresh replaces the tokens
    under this row's lock (``generation`` counts refreshes), so replicas refresh one at a time and a
    rotated refresh token is stored before the new access token is used.
    """

    __tablename__ = "gateway_oauth_connections"

    tenant_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    subject: Mapped[str] = mapped_column(String(255), primary_key=True)
    origin: Mapped[str] = mapped_column(String(300), primary_key=True)
    client_id: Mapped[str] = mapped_column(String(255))
    access_token: Mapped[str] = mapped_column(Text)
    refresh_token: Mapped[str | None] = mapped_column(Text, nullable=True)
    scopes: Mapped[str] = mapped_column(Text, server_default="")
    expires_at: Mapped[float] = mapped_column(Float)
    connected_at: Mapped[float] = mapped_column(Float)
    refreshed_at: Mapped[float] = mapped_column(Float)
    last_used_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    generation: Mapped[int] = mapped_column(Integer, server_default="0")


class OAuthPendingRow(Base):
    """A connection being made: the ``state`` sent to the provider (stored as its SHA-256), for whom, and the
    PKCE verifier (encrypted). Used once by the callback, then deleted; worthless after ``expires_at``."""

    __tablename__ = "gateway_oauth_pending"

    state_digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(64))
    subject: Mapped[str] = mapped_column(String(255))
    origin: Mapped[str] = mapped_column(String(300))
    code_verifier: Mapped[str] = mapped_column(Text)
    expires_at: Mapped[float] = mapped_column(Float)


class AllowedHostRow(Base):
    """A tenant's allow-list entry: ``host`` or ``host:port`` its turns may reach besides bound operations."""

    __tablename__ = "gateway_allowed_hosts"

    tenant_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    host: Mapped[str] = mapped_column(String(300), primary_key=True)


class TenantGateRow(Base):
    """A tenant's own approval gate, ``METHOD /path/{param}`` on any host."""

    __tablename__ = "gateway_tenant_gates"

    tenant_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    matches: Mapped[str] = mapped_column(String(500), primary_key=True)
    reason: Mapped[str] = mapped_column(Text, default="")


class ApprovalRow(Base):
    """A held request: its canonical form, the commitment an approval binds to, and its state."""

    __tablename__ = "gateway_approvals"
    __table_args__ = (
        CheckConstraint(_one_of("state", APPROVAL_STATES), name="ck_gateway_approvals_state"),
        Index("ix_gateway_approvals_commitment", "tenant_id", "commitment", "state"),
        Index("ix_gateway_approvals_tenant_created", "tenant_id", "created_at", "id"),  # the console's pages, newest first
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(64))
    turn_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    operation: Mapped[str | None] = mapped_column(String(300), nullable=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    canonical: Mapped[JsonObject] = mapped_column(JSON)
    commitment: Mapped[str] = mapped_column(String(80))
    state: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float] = mapped_column(Float)
    decided_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    decided_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    decision_note: Mapped[str | None] = mapped_column(Text, nullable=True)
    """What the person who decided said (a denial's reason, handed to the model that asks again)."""
    used_at: Mapped[float | None] = mapped_column(Float, nullable=True)


class IdempotencyRow(Base):
    """One derived key: who holds it (``lease_until``), the payload it was first seen with, the response."""

    __tablename__ = "gateway_idempotency"
    __table_args__ = (CheckConstraint(_one_of("state", KEY_STATES), name="ck_gateway_idempotency_state"),)

    tenant_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    key: Mapped[str] = mapped_column(String(80), primary_key=True)
    operation: Mapped[str] = mapped_column(String(300))
    commitment: Mapped[str] = mapped_column(String(80))
    state: Mapped[str] = mapped_column(String(16))
    lease_until: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float] = mapped_column(Float)
    response: Mapped[FetchAnswerDocument | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[float] = mapped_column(Float)


class AuditRow(Base):
    """One egress decision, or a person's decision on an approval (``approved``/``denied``, with ``actor``).

    Never a header, a body or a query string: nothing that could hold a secret.
    """

    __tablename__ = "gateway_audit"
    __table_args__ = (Index("ix_gateway_audit_tenant", "tenant_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[float] = mapped_column(Float)
    tenant_id: Mapped[str] = mapped_column(String(64))
    turn_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    method: Mapped[str] = mapped_column(String(16))
    host: Mapped[str] = mapped_column(String(300))
    path: Mapped[str] = mapped_column(Text)
    operation: Mapped[str | None] = mapped_column(String(300), nullable=True)
    decision: Mapped[str] = mapped_column(String(24))
    code: Mapped[str | None] = mapped_column(String(40), nullable=True)
    status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    address: Mapped[str | None] = mapped_column(String(64), nullable=True)
    idempotency_key: Mapped[str | None] = mapped_column(String(80), nullable=True)
    approval_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    actor: Mapped[str | None] = mapped_column(String(200), nullable=True)
    """Who made the decision when a person did (the deciding token); ``None`` for the gateway's own rows."""


class TurnRow(Base):
    """A turn: the tenant, the releases it bound (by digest) and the provider profile it offers tools for."""

    __tablename__ = "gateway_turns"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(64))
    profile: Mapped[str] = mapped_column(String(32))
    releases: Mapped[list[JsonObject]] = mapped_column(JSON)
    created_at: Mapped[float] = mapped_column(Float)
    subject: Mapped[str | None] = mapped_column(String(255), nullable=True)
    """The end user the turn acts for (their OAuth connections are used); ``None``: nobody in particular."""


class KeyClearingRow(Base):
    """A person cleared an unresolved idempotency key: which, who, when. Kept after the key row is gone."""

    __tablename__ = "gateway_key_clearings"
    __table_args__ = (Index("ix_gateway_key_clearings_tenant", "tenant_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(64))
    key: Mapped[str] = mapped_column(String(80))
    operation: Mapped[str] = mapped_column(String(300))
    commitment: Mapped[str] = mapped_column(String(80))
    key_created_at: Mapped[float] = mapped_column(Float)
    cleared_by: Mapped[str] = mapped_column(String(200))
    cleared_at: Mapped[float] = mapped_column(Float)
