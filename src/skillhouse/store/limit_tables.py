"""The gateway's rate limits: one row per configured limit, which is also where its GCRA state lives; the leases
of calls in flight that concurrent-call limits count; and the waits upstreams asked for (``429``/``503`` with
``Retry-After``) per tenant and host.

A limit's row carries its theoretical arrival time (``tat``, epoch seconds) so that admitting a request is
one conditional ``UPDATE`` of that row: PostgreSQL's row lock orders concurrent replicas, SQLite's single
writer orders concurrent threads, and no request is admitted on a value another replica has since changed.
"""

from __future__ import annotations

from sqlalchemy import CheckConstraint, Float, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from skillhouse.store.base import Base

LIMIT_SCOPES = ("tenant", "operation", "host")


class RateLimitRow(Base):
    """``requests`` per ``window_seconds`` and/or ``concurrent`` calls in flight for a tenant's calls: all of them
    (``scope`` ``tenant``, ``subject`` empty), those matching one operation (``operation``, ``skill.operation``)
    or those to one host (``host``)."""

    __tablename__ = "gateway_rate_limits"
    __table_args__ = (
        CheckConstraint("scope IN ('tenant', 'operation', 'host')", name="ck_gateway_rate_limits_scope"),
        CheckConstraint("requests IS NULL OR requests > 0", name="ck_gateway_rate_limits_requests"),
        CheckConstraint("window_seconds IS NULL OR window_seconds > 0", name="ck_gateway_rate_limits_window"),
        CheckConstraint("(requests IS NULL) = (window_seconds IS NULL)", name="ck_gateway_rate_limits_rate"),
        CheckConstraint("concurrent IS NULL OR concurrent > 0", name="ck_gateway_rate_limits_concurrent"),
        CheckConstraint("requests IS NOT NULL OR concurrent IS NOT NULL", name="ck_gateway_rate_limits_something"),
    )

    tenant_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    scope: Mapped[str] = mapped_column(String(16), primary_key=True)
    subject: Mapped[str] = mapped_column(String(255), primary_key=True)
    requests: Mapped[int | None] = mapped_column(Integer, nullable=True)
    window_seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
    concurrent: Mapped[int | None] = mapped_column(Integer, nullable=True)
    """Calls in flight at once (counted by their leases), across replicas."""
    tat: Mapped[float] = mapped_column(Float, default=0.0)
    """GCRA's theoretical arrival time (epoch seconds): the next request is admitted once ``tat - window`` has passed."""
    updated_at: Mapped[float] = mapped_column(Float)


class CallLeaseRow(Base):
    """A call in flight that a concurrent-call limit counts, until it ends or ``expires_at`` (a replica that died
    mid-call leaves its leases to expire: the upstream deadline and a margin)."""

    __tablename__ = "gateway_call_leases"
    __table_args__ = (Index("ix_gateway_call_leases_limit", "tenant_id", "scope", "subject"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(64))
    scope: Mapped[str] = mapped_column(String(16))
    subject: Mapped[str] = mapped_column(String(255))
    expires_at: Mapped[float] = mapped_column(Float)


class UpstreamWaitRow(Base):
    """An upstream told this tenant's calls to ``host`` to wait (its ``Retry-After``) until ``until`` (epoch seconds)."""

    __tablename__ = "gateway_upstream_waits"

    tenant_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    host: Mapped[str] = mapped_column(String(255), primary_key=True)
    until: Mapped[float] = mapped_column(Float)
    status: Mapped[int] = mapped_column(Integer)
