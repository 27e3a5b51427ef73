"""Console sessions on the server: opened at sign-in, read on every page, ended at sign-out.

The cookie carries a random session secret; the ``console_sessions`` row is named by its SHA-256.
A session is live while its row is not ended, not expired, and its API token not revoked; its tenant,
scope and label are the token's, read on every request. So signing out ends the session for every
copy of the cookie, and revoking the token ends all of its sessions at once.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from dataclasses import dataclass

from sqlalchemy import delete, select, update

from skillhouse.registry.tokens import Scope, check_scope
from skillhouse.store.console_tables import ConsoleSessionRow
from skillhouse.store.database import Database
from skillhouse.store.registry_tables import TokenRow, utcnow


@dataclass(frozen=True)
class LiveSession:
    """A live session: the token's tenant, id, label and scope, and the session's CSRF value."""

    tenant: str
    token_id: int
    label: str
    scope: Scope
    csrf: str


def _row_id(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def open_session(database: Database, token_id: int, seconds: float) -> str:
    """A new session for token ``token_id`` lasting ``seconds``: its secret, for the cookie only."""
    secret = secrets.token_urlsafe(32)
    now = utcnow()
    with database.transaction() as session:
        # sessions past their expiry are dead anyway; sign-in is a quiet moment to forget them
        session.execute(delete(ConsoleSessionRow).where(ConsoleSessionRow.expires_at < now))
        session.add(ConsoleSessionRow(id=_row_id(secret), token_id=token_id, csrf=secrets.token_urlsafe(24),
                                      created_at=now, expires_at=now + dt.timedelta(seconds=seconds)))
    return secret


def live_session(database: Database, secret: str) -> LiveSession | None:
    """The session of ``secret`` if it is live; ``None`` when unknown, ended, expired or its token revoked."""
    if not secret:
        return None
    query = (select(ConsoleSessionRow, TokenRow).join(TokenRow, TokenRow.id == ConsoleSessionRow.token_id)
             .where(ConsoleSessionRow.id == _row_id(secret)))
    with database.reading() as session:
        found = session.execute(query).one_or_none()
    if found is None:
        return None
    row, token = found
    if row.ended_at is not None or row.expires_at <= utcnow() or token.revoked_at is not None:
        return None
    return LiveSession(token.tenant_id, token.id, token.label, check_scope(token.scope), row.csrf)


def end_session(database: Database, secret: str) -> None:
    """End the session of ``secret`` (a no-op for one already over)."""
    with database.transaction() as session:
        session.execute(update(ConsoleSessionRow).where(ConsoleSessionRow.id == _row_id(secret),
                                                        ConsoleSessionRow.ended_at.is_(None)).values(ended_at=utcnow()))
