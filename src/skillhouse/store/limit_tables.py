"""The gateway's rate limits: one row per configured limit, which is also where its GCRA state lives, and the
waits upstreams asked for (``429``/``503`` with ``Retry-After``) per tenant and host.

A limit's row carries its theoretical arrival time (``tat``, epoch seconds) so that admitting a request is
one conditional ``UPDATE`` of that row: PostgreSQL's row lock orders concurrent replicas, SQLite's single
writer orders concurrent threads, and no request is admitted on a value another replica has since changed.
"""

from __future__ import annotations

from sqlalchemy import CheckConstraint, Float, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from skillhouse.store.base import Base

LIMIT_SCOPES = ("tenant", "operation", "host")


class RateLimitRow(Base):
    """``requests`` per ``window_seconds`` for a tenant's calls: all of them (``scope`` ``tenant``, ``subject``
    empty), those matching one operation (``operation``, ``skill.operation``) or those to one host (``host``)."""

    __tablename__ = "gateway_rate_limits"
    __table_args__ = (
        CheckConstraint("scope IN ('tenant', 'operation', 'host')", name="ck_gateway_rate_limits_scope"),
        CheckConstraint("requests > 0", name="ck_gateway_rate_limits_requests"),
        CheckConstraint("window_seconds > 0", name="ck_gateway_rate_limits_window"),
    )

    tenant_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    scope: Mapped[str] = mapped_column(String(16), primary_key=True)
    subject: Mapped[str] = mapped_column(String(255), primary_key=True)
    requests: Mapped[int] = mapped_column(Integer)
    window_seconds: Mapped[float] = mapped_column(Float)
    tat: Mapped[float] = mapped_column(Float, default=0.0)
    """GCRA's theoretical arrival time (epoch seconds): the next request is admitted once ``tat - window`` has passed."""
    updated_at: Mapped[float] = mapped_column(Float)


class UpstreamWaitRow(Base):
    """An upstream told this tenant's calls to ``host`` to wait (its ``Retry-After``) until ``until`` (epoch seconds)."""

    __tablename__ = "gateway_upstream_waits"

    tenant_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    host: Mapped[str] = mapped_column(String(255), primary_key=True)
    until: Mapped[float] = mapped_column(Float)
    status: Mapped[int] = mapped_column(Integer)
