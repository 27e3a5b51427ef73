"""Rate limits that hold across replicas, and an upstream's own ``Retry-After`` honoured for later calls.

A tenant sets limits of ``requests`` per ``window_seconds``, of ``concurrent`` calls in flight, or both, on
all of its calls (scope ``tenant``), on the calls matching one operation (``operation``, ``skill.operation``:
one tool) or on the calls to one host (``host``). Every applicable limit must admit a call before it is sent; a call any of them refuses is
not sent and answers ``rate-limited`` with ``retry_after`` seconds, and the limits that did admit it are
not charged (one transaction: all or nothing).

The algorithm is GCRA (the generic cell rate algorithm, a token bucket kept as one number): each limit
has a theoretical arrival time ``tat``; a call at ``now`` is admitted when ``max(tat, now) + interval -
window <= now`` (``interval = window / requests``), which lets a burst of ``requests`` through at once and
then one every ``interval``; admitting sets ``tat = max(tat, now) + interval``. The state is the limit's
own row (``store/limit_tables.py``), read ``FOR UPDATE`` in key order inside the call's transaction, so
replicas on one PostgreSQL queue on the row lock and never admit on a value another has since changed;
on SQLite (one process) the single writer does the same. The engine is the database the replicas
already share: it needs no second service to run, watch and secure, and the check is one locked read and
one update in a transaction that does not wait on anything but other admissions of the same tenant. On
PostgreSQL a call under rate limits only is admitted in one statement (one round trip, see ``_AT_ONCE``);
every statement is compiled once and run on the driver's connection (``store/prepared.py``), which took the
admission's CPU per call from about 2.7 ms to under 0.1 ms on SQLite and from 4.7 ms to 0.5 ms on PostgreSQL.

A concurrent-call limit counts leases: admitting a call under one inserts a lease row (in the same
transaction, under the same row lock), and the call deletes it when it ends, however it ends. A replica
that dies mid-call leaves its leases to expire after the upstream deadline and :data:`LEASE_MARGIN_SECONDS`,
so a crash costs capacity for that long, never forever. A call refused for concurrency is told to retry in
one second: when a call in flight will end is not known.

An upstream that answers ``429`` or ``503`` with ``Retry-After`` has asked for a wait: it is recorded
per tenant and host (an upstream's limit is usually its credential's, and credentials are per tenant),
at most :data:`MAX_UPSTREAM_WAIT_SECONDS`, and the tenant's calls to that host answer ``rate-limited``
until it passes. Limits are checked after the egress rule, the match and the approval gate and before
the idempotency key is claimed (``gateway/pipeline.py``), so a limited call claims no key and gives back
an approval it used.
"""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Literal, NamedTuple, cast

from sqlalchemy import (
    Executable,
    Float,
    String,
    Table,
    and_,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from skillhouse.gateway.errors import InvalidRequest, RateLimited, RateLimitNotFound
from skillhouse.store.database import Database
from skillhouse.store.limit_tables import LIMIT_SCOPES, CallLeaseRow, RateLimitRow, UpstreamWaitRow
from skillhouse.store.prepared import Prepared, one_statement, writing

Scope = Literal["tenant", "operation", "host"]
MAX_REQUESTS = 1_000_000
MAX_WINDOW_SECONDS = 31 * 24 * 3600.0
MAX_UPSTREAM_WAIT_SECONDS = 3600.0
"""The longest wait an upstream's ``Retry-After`` imposes: a hostile or broken upstream cannot stop a host for days."""
WAIT_STATUSES = frozenset({429, 503})
LEASE_MARGIN_SECONDS = 30.0
"""How long past the upstream deadline a dead replica's lease still counts."""


@dataclass(frozen=True)
class RateLimit:
    """``requests`` per ``window_seconds`` and/or ``concurrent`` calls in flight on a tenant's calls in ``scope``
    (``subject``: the operation or host)."""

    scope: Scope
    subject: str
    requests: int | None
    window_seconds: float | None
    concurrent: int | None = None

    @property
    def name(self) -> str:
        return self.scope if self.scope == "tenant" else f"{self.scope} {self.subject}"

    @property
    def shown(self) -> str:
        rate = f"{self.requests} per {self.window_seconds:g} s" if self.requests and self.window_seconds else ""
        concurrent = f"{self.concurrent} at once" if self.concurrent else ""
        return ", ".join(part for part in (rate, concurrent) if part)


@dataclass(frozen=True)
class UpstreamWait:
    """An upstream asked this tenant's calls to ``host`` to wait until ``until`` (epoch seconds)."""

    host: str
    until: float
    status: int


def gcra(tat: float, now: float, requests: int, window_seconds: float) -> tuple[bool, float]:
    """One GCRA step: (admitted, the new ``tat``) when admitted, else (False, seconds until it would be)."""
    interval = window_seconds / requests
    arrival = max(tat, now) + interval
    allowed_at = arrival - window_seconds
    if allowed_at <= now:
        return True, arrival
    return False, allowed_at - now


def retry_after_seconds(value: str, now: float) -> float | None:
    """An HTTP ``Retry-After`` value (delay-seconds or an HTTP-date) as seconds from ``now``; ``None`` if unreadable."""
    value = value.strip()
    if value.isdigit():
        return float(int(value))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, when.timestamp() - now)


def checked_limit(scope: str, subject: str, requests: int | None, window_seconds: float | None,
                  concurrent: int | None = None) -> RateLimit:
    """The limit these values describe, or :class:`InvalidRequest` (``invalid-limit``) naming the field at fault."""
    if scope not in LIMIT_SCOPES:
        raise _refused(f"scope {scope!r} is not one of {', '.join(LIMIT_SCOPES)}", field="scope", reason="unknown-scope")
    subject = subject.strip().lower() if scope == "host" else subject.strip()
    if scope == "tenant" and subject:
        raise _refused("a tenant-wide limit has no subject; leave it empty", field="subject", reason="subject-not-allowed")
    if scope != "tenant" and not subject:
        what = "the operation (skill.operation)" if scope == "operation" else "the host name"
        raise _refused(f"a {scope} limit needs its subject: {what}", field="subject", reason="subject-missing")
    if len(subject) > 255 or any(c.isspace() or c in "/?#@" for c in subject):
        raise _refused(f"subject {subject[:60]!r} is not an operation or a host name", field="subject",
                             reason="subject-invalid")
    if requests is None and window_seconds is None and concurrent is None:
        raise _refused("give requests and window_seconds, concurrent, or both", field="requests", reason="missing")
    if (requests is None) != (window_seconds is None):
        missing = "window_seconds" if window_seconds is None else "requests"
        raise _refused("a rate needs both requests and window_seconds", field=missing, reason="missing")
    if requests is not None and (isinstance(requests, bool) or not 1 <= requests <= MAX_REQUESTS):
        raise _refused(f"requests must be 1 to {MAX_REQUESTS}", field="requests", reason="out-of-range")
    if window_seconds is not None and not (math.isfinite(window_seconds) and 0 < window_seconds <= MAX_WINDOW_SECONDS):
        raise _refused(f"window_seconds must be above 0 and at most {MAX_WINDOW_SECONDS:.0f} (31 days)",
                             field="window_seconds", reason="out-of-range")
    if concurrent is not None and (isinstance(concurrent, bool) or not 1 <= concurrent <= MAX_REQUESTS):
        raise _refused(f"concurrent must be 1 to {MAX_REQUESTS}", field="concurrent", reason="out-of-range")
    window = None if window_seconds is None else float(window_seconds)
    return RateLimit(cast(Scope, scope), subject, requests, window, concurrent)


def _refused(message: str, *, field: str, reason: str) -> InvalidRequest:
    # its own code: the API's schema cannot state these rules, and a schema-valid body is never ``invalid-request``
    return InvalidRequest(message, code="invalid-limit", field=field, reason=reason)


def _limit(row: RateLimitRow) -> RateLimit:
    return RateLimit(cast(Scope, row.scope), row.subject, row.requests, row.window_seconds, row.concurrent)


@dataclass(frozen=True)
class Admission:
    """What admitting a call took: the leases (ids) it holds until :meth:`RateLimits.release`."""

    leases: tuple[int, ...] = ()


class _Row(NamedTuple):
    """A limit's row as the admission reads it (locked)."""

    scope: str
    subject: str
    requests: int | None
    window_seconds: float | None
    concurrent: int | None
    tat: float

    @property
    def name(self) -> str:
        return self.scope if self.scope == "tenant" else f"{self.scope} {self.subject}"


_LIMITS = cast(Table, RateLimitRow.__table__)
_LEASES = cast(Table, CallLeaseRow.__table__)
_WAITS = cast(Table, UpstreamWaitRow.__table__)


class _AdmissionSQL:
    """The admission's statements, compiled once for the database's dialect and run on the driver's connection
    (``store/prepared.py``): through an ORM session the same work cost milliseconds of CPU per call."""

    def __init__(self, database: Database) -> None:
        tenant, host, operation = (bindparam(name, type_=String) for name in ("tenant", "host", "operation"))
        scope, subject = bindparam("scope", type_=String), bindparam("subject", type_=String)
        now = bindparam("now", type_=Float)
        self.wait = Prepared(database, select(_WAITS.c.until, _WAITS.c.status).where(
            _WAITS.c.tenant_id == tenant, _WAITS.c.host == host, _WAITS.c.until > now))
        limits = _LIMITS.c
        # an operation-less call binds NULL, which no subject equals
        self.applying = Prepared(database, select(
            limits.scope, limits.subject, limits.requests, limits.window_seconds, limits.concurrent, limits.tat,
        ).where(limits.tenant_id == tenant, or_(
            limits.scope == "tenant", and_(limits.scope == "host", limits.subject == host),
            and_(limits.scope == "operation", limits.subject == operation),
        )).order_by(limits.scope, limits.subject).with_for_update())
        self.charge = Prepared(database, update(_LIMITS).where(
            limits.tenant_id == tenant, limits.scope == scope, limits.subject == subject).values(tat=bindparam("tat")))
        leases = _LEASES.c
        same = (leases.tenant_id == tenant, leases.scope == scope, leases.subject == subject)
        self.expire_leases = Prepared(database, delete(_LEASES).where(*same, leases.expires_at <= now))
        self.count_leases = Prepared(database, select(func.count()).select_from(_LEASES).where(*same))
        # PostgreSQL: both in one round trip (a DELETE in WITH runs though nothing reads it; the count leaves out
        # what it deletes, which the statement's snapshot still shows)
        gone = delete(_LEASES).where(*same, leases.expires_at <= now).cte("gone")
        self.live_leases = Prepared(database, select(func.count()).select_from(_LEASES).where(
            *same, leases.expires_at > now).add_cte(gone)) if database.dialect == "postgresql" else None
        self.lease = Prepared(database, insert(_LEASES).values(
            tenant_id=tenant, scope=scope, subject=subject, expires_at=bindparam("expires_at")).returning(leases.id))
        self.release = Prepared(database, delete(_LEASES).where(leases.id == bindparam("lease")))
        # PostgreSQL, one autocommit statement: set_config(..., true) is SET LOCAL for its own transaction
        asynchronous = func.set_config("synchronous_commit", "off", True) != ""
        self.release_async = Prepared(database, delete(_LEASES).where(leases.id == bindparam("lease"), asynchronous))
        self.at_once = Prepared(database, text(_AT_ONCE)) if database.dialect == "postgresql" else None


# PostgreSQL: the whole admission of a call under rate limits in one statement, its own transaction (one round
# trip where the steps above take six). It locks the applicable rows in key order, decides GCRA for each and
# charges them all only if all admit and none counts calls at once (leases need the steps above); it answers the
# wait (if any) and the locked rows as they were, from which the caller reads the verdict. ``now`` is the time
# the call was read before the locks: one that waited for them decides on an earlier time, which can only
# refuse, never admit, more.
_AT_ONCE = """
WITH wait AS (
    SELECT until, status FROM gateway_upstream_waits
    WHERE tenant_id = :tenant AND host = :host AND until > CAST(:now AS double precision)
), locked AS (
    SELECT scope, subject, requests, window_seconds, concurrent, tat FROM gateway_rate_limits
    WHERE tenant_id = :tenant AND NOT EXISTS (SELECT 1 FROM wait)
      AND (scope = 'tenant' OR (scope = 'host' AND subject = :host) OR (scope = 'operation' AND subject = :operation))
    ORDER BY scope, subject FOR UPDATE
), verdict AS (
    SELECT coalesce(bool_and(concurrent IS NULL AND (requests IS NULL OR
        greatest(tat, CAST(:now AS double precision)) + window_seconds / requests - window_seconds
        <= CAST(:now AS double precision))), true) AS charge
    FROM locked
), charged AS (
    UPDATE gateway_rate_limits AS row SET tat = greatest(locked.tat, CAST(:now AS double precision))
                                                + locked.window_seconds / locked.requests
    FROM locked, verdict
    WHERE verdict.charge AND locked.requests IS NOT NULL AND row.tenant_id = :tenant
      AND row.scope = locked.scope AND row.subject = locked.subject
      AND set_config('synchronous_commit', 'off', true) != ''
    RETURNING row.scope
)
SELECT 'wait', NULL, NULL, NULL, NULL, until, status, NULL FROM wait
UNION ALL
SELECT scope, subject, requests, window_seconds, concurrent, tat, NULL, (SELECT charge FROM verdict) FROM locked
UNION ALL
SELECT 'charged', NULL, NULL, NULL, NULL, NULL, count(*), NULL FROM charged
"""


class RateLimits:
    """A tenant's limits and upstream waits in the store, and the admission check the pipeline makes."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self._sql = _AdmissionSQL(database)

    def set(self, tenant: str, scope: str, subject: str, requests: int | None, window_seconds: float | None,
            concurrent: int | None = None) -> RateLimit:
        """Set (or change) a limit; it holds for the next call on every replica."""
        limit = checked_limit(scope, subject, requests, window_seconds, concurrent)
        values = {"requests": limit.requests, "window_seconds": limit.window_seconds, "concurrent": limit.concurrent,
                  "updated_at": time.time()}
        row = {"tenant_id": tenant, "scope": limit.scope, "subject": limit.subject, "tat": 0.0, **values}
        with self.database.transaction() as session:
            session.execute(_upsert(session, RateLimitRow, row, ["tenant_id", "scope", "subject"], values))
        return limit

    def limits(self, tenant: str) -> list[RateLimit]:
        with self.database.reading() as session:
            rows = session.scalars(select(RateLimitRow).where(RateLimitRow.tenant_id == tenant)
                                   .order_by(RateLimitRow.scope, RateLimitRow.subject))
            return [_limit(row) for row in rows]

    def delete(self, tenant: str, scope: str, subject: str) -> None:
        """Remove a limit (:class:`RateLimitNotFound` when it is not set)."""
        subject = subject.strip().lower() if scope == "host" else subject.strip()
        with self.database.transaction() as session:
            deleted = session.execute(delete(RateLimitRow).where(
                RateLimitRow.tenant_id == tenant, RateLimitRow.scope == scope, RateLimitRow.subject == subject))
        if not getattr(deleted, "rowcount", 0):
            shown = scope if scope == "tenant" else f"{scope} {subject}"
            raise RateLimitNotFound(f"tenant {tenant} has no {shown} limit; list them with GET /v1/limits")

    def waits(self, tenant: str, now: float | None = None) -> list[UpstreamWait]:
        """The waits upstreams asked for that have not passed."""
        now = time.time() if now is None else now
        with self.database.reading() as session:
            rows = session.scalars(select(UpstreamWaitRow).where(UpstreamWaitRow.tenant_id == tenant,
                                                                 UpstreamWaitRow.until > now)
                                   .order_by(UpstreamWaitRow.host))
            return [UpstreamWait(row.host, row.until, row.status) for row in rows]

    def admit(self, tenant: str, operation: str | None, host: str, now: float | None = None,
              lease_seconds: float = 60.0) -> Admission:
        """Charge every limit that applies to this call, or none: :class:`RateLimited` when one refuses it or
        the host asked for a wait that has not passed. The leases taken (``lease_seconds`` at most) are given
        back with :meth:`release` when the call ends."""
        clock = now is None
        now = time.time() if now is None else now
        sql = self._sql
        key = {"tenant": tenant, "host": host, "operation": operation}
        if sql.at_once is not None and self._admitted_at_once(sql.at_once, key, host, now):
            return Admission()
        # losing an admission in an OS crash only lets one more call through: no fsync for it
        with writing(self.database, durable=False) as transaction:
            wait = transaction.first(sql.wait, {**key, "now": now})
            if wait is not None:
                until, status = wait
                raise RateLimited(f"{host} answered {status} and asked for a wait; call again after it",
                                  _whole_seconds(until - now), f"upstream {host}")
            rows = [_Row(*row) for row in transaction.rows(sql.applying, key)]  # locked, in key order
            if clock:
                now = time.time()  # after the row locks: a replica that waited for them decides on the time it got them
            admitted: list[tuple[_Row, float]] = []
            for row in rows:
                if row.requests is not None and row.window_seconds is not None:
                    ok, value = gcra(row.tat, now, row.requests, row.window_seconds)
                    if not ok:
                        raise RateLimited(f"the {row.name} limit of {row.requests} requests per "
                                          f"{row.window_seconds:g} s is reached; nothing was sent",
                                          _whole_seconds(value), row.name)
                    admitted.append((row, value))
                if row.concurrent is not None:
                    same = {"tenant": tenant, "scope": row.scope, "subject": row.subject, "now": now}
                    # its row is locked: no lease of it is taken meanwhile; expired ones (a dead replica's) go
                    if sql.live_leases is not None:
                        (in_flight,) = transaction.first(sql.live_leases, same) or (0,)
                    else:
                        transaction.execute(sql.expire_leases, same)
                        (in_flight,) = transaction.first(sql.count_leases, same) or (0,)
                    if in_flight >= row.concurrent:
                        raise RateLimited(f"the {row.name} limit of {row.concurrent} calls at once is reached; "
                                          "nothing was sent", 1, row.name)
            for row, tat in admitted:
                transaction.execute(sql.charge, {"tenant": tenant, "scope": row.scope, "subject": row.subject, "tat": tat})
            leases = tuple(
                int(lease[0]) for row in rows if row.concurrent is not None
                if (lease := transaction.first(sql.lease, {"tenant": tenant, "scope": row.scope, "subject": row.subject,
                                                             "expires_at": now + lease_seconds})) is not None
            )
        return Admission(leases)

    @staticmethod
    def _refuse_if_limited(rows: list[_Row], now: float) -> None:
        for row in rows:
            if row.requests is not None and row.window_seconds is not None:
                ok, value = gcra(row.tat, now, row.requests, row.window_seconds)
                if not ok:
                    raise RateLimited(f"the {row.name} limit of {row.requests} requests per "
                                      f"{row.window_seconds:g} s is reached; nothing was sent",
                                      _whole_seconds(value), row.name)

    def _admitted_at_once(self, statement: Prepared, key: Mapping[str, str | None], host: str, now: float) -> bool:
        """PostgreSQL: admit in one statement (``_AT_ONCE``). True when it charged every limit; raises
        :class:`RateLimited` when a wait or a rate refuses; False when a concurrent-call limit applies, for the
        steps that take leases to decide (nothing was charged)."""
        with one_statement(self.database) as transaction:
            found = transaction.rows(statement, {**key, "now": now})
        rows: list[_Row] = []
        charge = True
        for scope, subject, requests, window, concurrent, tat, number, verdict in found:
            if scope == "wait":
                raise RateLimited(f"{host} answered {int(number)} and asked for a wait; call again after it",
                                  _whole_seconds(float(tat) - now), f"upstream {host}")
            if scope != "charged":
                rows.append(_Row(scope, subject, requests, window, concurrent, float(tat)))
                charge = bool(verdict)
        if charge:
            return True
        self._refuse_if_limited(rows, now)
        return False  # no rate refuses: a concurrent-call limit applies

    def release(self, admission: Admission) -> None:
        """The call has ended: its leases no longer count."""
        if not admission.leases:
            return
        if len(admission.leases) == 1 and self.database.dialect == "postgresql":
            with one_statement(self.database) as statement:  # one round trip; losing it only expires the lease later
                statement.execute(self._sql.release_async, {"lease": admission.leases[0]})
            return
        with writing(self.database, durable=False) as transaction:
            for lease in admission.leases:
                transaction.execute(self._sql.release, {"lease": lease})

    def note_answer(self, tenant: str, host: str, status: int, headers: dict[str, str], now: float | None = None) -> None:
        """Record the wait an upstream's ``429``/``503`` answer asks for with ``Retry-After`` (nothing otherwise)."""
        if status not in WAIT_STATUSES:
            return
        value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
        now = time.time() if now is None else now
        seconds = retry_after_seconds(value, now) if value is not None else None
        if not seconds:
            return
        until = now + min(seconds, MAX_UPSTREAM_WAIT_SECONDS)
        row = {"tenant_id": tenant, "host": host, "until": until, "status": status}
        with self.database.transaction(durable=False) as session:
            session.execute(_upsert(session, UpstreamWaitRow, row, ["tenant_id", "host"], {"until": until, "status": status}))


def _upsert(session: Session, table: type[RateLimitRow] | type[UpstreamWaitRow], row: Mapping[str, object],
            keys: list[str], changed: Mapping[str, object]) -> Executable:
    """Insert ``row``, or update ``changed`` on the row with the same ``keys``: one statement on either dialect."""
    if session.get_bind().dialect.name == "postgresql":
        return postgresql_insert(table).values(**row).on_conflict_do_update(index_elements=keys, set_=changed)
    return sqlite_insert(table).values(**row).on_conflict_do_update(index_elements=keys, set_=changed)


def _whole_seconds(seconds: float) -> int:
    """``Retry-After`` is whole seconds; rounding up never invites a call that would be refused again."""
    return max(1, math.ceil(seconds))
