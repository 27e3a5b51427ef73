"""Tenants and API tokens: creation (the secret shown once), lookup by bearer secret, scopes, revocation.

A token is ``skh_`` followed by 43 URL-safe characters (256 random bits); the prefix lets secret
scanners recognise a leak. Only its SHA-256 is stored, so a database dump holds no usable token.

Who may do what. Every token carries one scope; scopes nest, each including the one before it:

- ``run``: read skills, releases, tool specs, turns and approvals; create and run turns and calls;
  ``tools/execute``; serve MCP; use the console read-only.
- ``approve``: what ``run`` may, and approve or deny held requests (API and console).
- ``admin``: everything: upload, validate, publish and deprecate skills and specs; credentials; the
  tenant's egress allow-list and gates; tokens.

A new token is ``run`` unless asked otherwise (least privilege); tokens made before scopes existed
became ``admin`` (migration ``0004_token_scopes``) so nothing running broke. :func:`require_scope` is
the one comparison; the API's and the console's dependencies call it (``docs/security.md`` has the
route-by-route table, which a test checks against the app).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from skillhouse.errors import Forbidden, Unauthenticated
from skillhouse.registry.errors import Invalid, NotFound, problem
from skillhouse.registry.scopes import DEFAULT_SCOPE as DEFAULT_SCOPE  # re-exported: the API names them here
from skillhouse.registry.scopes import SCOPES as SCOPES
from skillhouse.registry.scopes import Scope as Scope
from skillhouse.store.console_tables import ConsoleSessionRow
from skillhouse.store.registry_tables import TenantRow, TokenRow, utcnow

TOKEN_PREFIX = "skh_"
TOKEN_SHAPE = re.compile(r"^skh_[A-Za-z0-9_-]{43}$")
TENANT_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
RESERVED_TENANTS = frozenset({"builtin"})



@dataclass(frozen=True)
class Tenant:
    """The tenant a request acts for, and the scope and id of the token that says so."""

    id: str
    scope: Scope
    token_id: int


@dataclass(frozen=True)
class TokenInfo:
    """A token as listed: never its secret."""

    id: int
    tenant: str
    hint: str
    label: str
    scope: Scope
    created_at: dt.datetime
    revoked_at: dt.datetime | None


class TokenRejected(Unauthenticated):
    """No usable bearer token; ``code`` says why: ``missing-token``, ``malformed-token``, ``unknown-token``
    or ``revoked-token``. Send a valid token (``skillhouse tokens create``)."""

    code = "unknown-token"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, code=code)


class InsufficientScope(Forbidden):
    """A valid token whose scope is below what the action needs (code ``insufficient-scope``); ``needed`` names it."""

    code = "insufficient-scope"

    def __init__(self, held: str, needed: Scope) -> None:
        super().__init__(f"this needs a token of scope {needed!r} (or above); this token's scope is {held!r}: "
                         f"create one with `skillhouse tokens create --tenant T --scope {needed}`")
        self.held = held
        self.needed = needed


def scope_allows(held: str, needed: Scope) -> bool:
    """Whether a token of scope ``held`` may do what needs ``needed``."""
    return held in SCOPES and SCOPES.index(held) >= SCOPES.index(needed)


def require_scope(held: str, needed: Scope) -> None:
    """The one check of who may do what: :class:`InsufficientScope` unless ``held`` includes ``needed``."""
    if not scope_allows(held, needed):
        raise InsufficientScope(held, needed)


def check_scope(scope: str) -> Scope:
    """``scope`` if it is one of :data:`SCOPES`; ``invalid-scope`` otherwise."""
    if scope not in SCOPES:
        raise Invalid("invalid-scope", f"scope {scope!r} must be one of {', '.join(SCOPES)}",
                      [problem("scope", "invalid-scope", " | ".join(SCOPES))])
    return scope


def hash_token(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def check_tenant_id(tenant: str) -> None:
    if not TENANT_ID.match(tenant) or tenant in RESERVED_TENANTS:
        raise Invalid(
            "invalid-tenant",
            f"tenant {tenant!r} must be 1-64 lowercase letters, digits, '-' or '_' and not a reserved name",
            [problem("tenant", "invalid-tenant", "lowercase letters, digits, '-' and '_'; not 'builtin'")],
        )


def create_token(session: Session, tenant: str, label: str = "", scope: str = DEFAULT_SCOPE) -> tuple[str, TokenInfo]:
    """A new token of ``scope`` for ``tenant`` (created if new): the secret, to show once, and its listing."""
    check_tenant_id(tenant)
    chosen = check_scope(scope)
    if session.get(TenantRow, tenant) is None:
        session.add(TenantRow(id=tenant))
        session.flush()
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = TokenRow(tenant_id=tenant, token_hash=hash_token(secret), hint=secret[:10], label=label, scope=chosen)
    session.add(row)
    session.flush()
    return secret, _info(row)


def authenticate(session: Session, secret: str) -> Tenant:
    """The tenant (and scope) of bearer ``secret``; :class:`TokenRejected` when malformed, unknown or revoked."""
    if not TOKEN_SHAPE.match(secret):
        raise TokenRejected("malformed-token", "the bearer token is not a skillhouse token (skh_ followed by 43 characters)")
    row = session.scalars(select(TokenRow).where(TokenRow.token_hash == hash_token(secret))).one_or_none()
    if row is None:
        raise TokenRejected("unknown-token", "the bearer token is not known; create one with `skillhouse tokens create`")
    if row.revoked_at is not None:
        raise TokenRejected("revoked-token", "the bearer token was revoked; create a new one")
    return Tenant(row.tenant_id, check_scope(row.scope), row.id)


def list_tokens(session: Session, tenant: str | None = None) -> list[TokenInfo]:
    """Tokens of ``tenant`` (all tenants when ``None``), oldest first."""
    query = select(TokenRow).order_by(TokenRow.id)
    if tenant is not None:
        query = query.where(TokenRow.tenant_id == tenant)
    return [_info(row) for row in session.scalars(query)]


def token_label(session: Session, token_id: int) -> str | None:
    """The label token ``token_id`` was given (``None`` when it has none or does not exist)."""
    return session.scalars(select(TokenRow.label).where(TokenRow.id == token_id)).one_or_none() or None


def revoke_token(session: Session, token_id: int, tenant: str | None = None) -> TokenInfo:
    """Revoke token ``token_id`` (of ``tenant`` when given) and end its console sessions.

    Revoking twice keeps the first time.
    """
    row = session.get(TokenRow, token_id)
    if row is None or (tenant is not None and row.tenant_id != tenant):
        raise NotFound("token-not-found", f"no token with id {token_id}")
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        session.execute(update(ConsoleSessionRow).where(ConsoleSessionRow.token_id == row.id,
                                                        ConsoleSessionRow.ended_at.is_(None)).values(ended_at=row.revoked_at))
        session.flush()
    return _info(row)


def _info(row: TokenRow) -> TokenInfo:
    return TokenInfo(row.id, row.tenant_id, row.hint, row.label, check_scope(row.scope), row.created_at, row.revoked_at)
