"""The console's table: signed-in sessions, kept on the server so signing out (or revoking the token)
ends them for every copy of the cookie.

A row is named by the SHA-256 of the session secret the cookie carries, never the secret itself, so a
database dump holds no usable session. A session belongs to the API token that signed in; its tenant
and scope are the token's, read live on every request.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from skillhouse.store.base import Base
from skillhouse.store.registry_tables import UTCDateTime, utcnow


class ConsoleSessionRow(Base):
    """One console sign-in: live until it expires, is signed out of, or its token is revoked."""

    __tablename__ = "console_sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    """SHA-256 (hex) of the session secret in the cookie."""
    token_id: Mapped[int] = mapped_column(ForeignKey("api_tokens.id", ondelete="CASCADE"), index=True)
    csrf: Mapped[str] = mapped_column(String(64))
    """The value every form of this session must carry."""
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), index=True)
    ended_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    """When the person signed out or the token was revoked; a session with this set is over."""
