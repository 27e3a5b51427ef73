"""Everything stored that a request's decision needs, read at once: allow-list, gates, credentials, key row,
and whether a rate limit or an upstream's wait may hold the request (so a tenant without any pays nothing more).

The read runs in autocommit (no ``BEGIN``/``COMMIT``, no lock) and is one statement on both databases:
a ``UNION ALL`` of the five reads, each row carrying a ``kind`` column saying which read it answers and
its values in shared columns (text, numbers, JSON), unused ones NULL. On PostgreSQL each statement is a
round trip, and under many client threads a round trip costs far more of the process's CPU than the
statement does (it releases and retakes the GIL); on SQLite the statements run in the process, but each
one still costs a cursor, a release and retake of the GIL and the driver's bookkeeping, several times
what SQLite spends answering these small reads. Without a key the key's branch binds NULL, which
matches no row. The limits branch answers at most one row: whether any of the tenant's limits may apply
to the target, or any of its upstream waits is for the host.

On PostgreSQL a request with an idempotency key and no gate of its turn's own (:meth:`StoredStateReader.read_and_claim`)
also claims its key in the read's statement, one round trip instead of two, but only where nothing the
read could find would stop or change the claim the pipeline makes after it: the tenant has no gates (one
may hold the request), no limit may apply and no wait is asked (the admission comes before the claim), no
credential of the host goes in a header the request carries (the commitment leaves injected headers
out), and the key is free (``ON CONFLICT DO NOTHING``: a stored answer is replayed as before). Its egress
rule, the one other step before the claim, reads nothing stored for an operation's own host, so the
pipeline decides it before the read. Every ``WITH`` part of a statement sees the same snapshot, so the
rows read are the state the claim was made on; the claim commits with the statement, synchronously,
before anything is sent, as the claim alone does (``gateway/key_audit.py``). Where the conditions do
not hold nothing is written, and the pipeline goes on as after a plain read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import (
    JSON,
    BindParameter,
    Float,
    Integer,
    Table,
    Text,
    and_,
    bindparam,
    func,
    literal,
    literal_column,
    null,
    or_,
    select,
    union_all,
)
from sqlalchemy import cast as sql_cast
from sqlalchemy.sql.elements import ColumnElement

from skillhouse.gateway.credentials import CredentialStore, Injection
from skillhouse.gateway.egress import Target
from skillhouse.gateway.idempotency import KEY_COLUMNS, KeyRow, key_row
from skillhouse.gateway.key_audit import claim_ctes
from skillhouse.gateway.matching import Gate
from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import AllowedHostRow, CredentialRow, IdempotencyRow, TenantGateRow
from skillhouse.store.limit_tables import RateLimitRow, UpstreamWaitRow
from skillhouse.store.prepared import DriverTransaction, Prepared, one_statement, read

# short aliases: psycopg caches a statement's conversion only up to 4,096 characters, and the read that
# claims is past that with the full table names before every column (then parsed again on every request)
_HOSTS = cast(Table, AllowedHostRow.__table__).alias("h")
_GATES = cast(Table, TenantGateRow.__table__).alias("g")
_CREDENTIALS = cast(Table, CredentialRow.__table__).alias("c")
_KEYS = cast(Table, IdempotencyRow.__table__).alias("k")
_LIMITS = cast(Table, RateLimitRow.__table__).alias("l")
_WAITS = cast(Table, UpstreamWaitRow.__table__).alias("w")
_TENANT: BindParameter[str] = bindparam("tenant")
_TEXTS, _NUMBERS = 4, 2


@dataclass(frozen=True)
class StoredState:
    """The tenant's allow-list and own gates, the target's credentials and its host's secrets, the key's row if any."""

    allow_list: list[str]
    tenant_gates: list[Gate]
    injections: Sequence[Injection]
    """The headers bound to the target's exact origin."""
    secrets: tuple[str, ...]
    """Every secret bound on the target's host (any scheme or port): what the answer is scrubbed of."""
    seen: KeyRow | None
    may_be_limited: bool = False
    """A limit of the tenant's may apply to the target (or the host asked for a wait): the pipeline checks them."""


def _branch(kind: str, texts: Sequence[ColumnElement[Any]], numbers: Sequence[ColumnElement[Any]] = (),
            document: ColumnElement[Any] | None = None) -> Any:  # fmt: skip
    """One read's SELECT laid out in the union's columns: kind, text 1-4, number 1-2, JSON."""
    padded_texts = [sql_cast(c, Text) for c in texts] + [sql_cast(null(), Text)] * (_TEXTS - len(texts))
    padded_numbers = [sql_cast(c, Float) for c in numbers] + [sql_cast(null(), Float)] * (_NUMBERS - len(numbers))
    # the kind written in the SQL, not bound: a constant of ours, and shorter (see the aliases above)
    return select(literal_column(f"'{kind}'", Text), *padded_texts, *padded_numbers, document if document is not None else sql_cast(null(), JSON))


def _limits_read() -> Any:
    """At most one row when a limit may apply to a request to ``host`` (any operation limit may: the caller
    checks which) or the host asked for a wait, whether or not it has passed."""
    limits = select(_LIMITS.c.scope).where(_LIMITS.c.tenant_id == _TENANT, or_(
        _LIMITS.c.scope != "host", _LIMITS.c.subject == bindparam("host")))
    waits = select(literal("wait", Text)).where(_WAITS.c.tenant_id == _TENANT, _WAITS.c.host == bindparam("host"))
    return union_all(limits, waits).limit(1)


def _nothing_may_hold(may_be_limited: ColumnElement[bool]) -> ColumnElement[bool]:
    """Nothing stored may hold a request to ``host`` or change its commitment (see the module docstring).
    ``names`` binds the request's header names, lower-case, as ``,name,name,`` (an HTTP token has no comma)."""
    gates = select(_GATES.c.tenant_id).where(_GATES.c.tenant_id == _TENANT)
    spelled = literal(",", Text).concat(func.lower(_CREDENTIALS.c.header)).concat(",")
    injected = select(_CREDENTIALS.c.header).where(
        _CREDENTIALS.c.tenant_id == _TENANT, _CREDENTIALS.c.host == bindparam("host"),
        func.strpos(bindparam("names", type_=Text), spelled) > 0,
    )  # fmt: skip
    return and_(~gates.exists(), ~may_be_limited, ~injected.exists())


def _one_read(may_be_limited: ColumnElement[bool], *more: Any) -> Any:
    """The five reads as one statement (see the module docstring), and ``more`` branches."""
    state, commitment, lease_until, expires_at, response = (_KEYS.c[column.name] for column in KEY_COLUMNS)
    return union_all(
        _branch("host", [_HOSTS.c.host]).where(_HOSTS.c.tenant_id == _TENANT),
        _branch("gate", [_GATES.c.matches, _GATES.c.reason]).where(_GATES.c.tenant_id == _TENANT),
        # every binding of the host: the origin's are injected, all of them are redacted
        _branch(
            "credential",
            [_CREDENTIALS.c.origin_scheme, _CREDENTIALS.c.header, _CREDENTIALS.c.scheme, _CREDENTIALS.c.value],
            [_CREDENTIALS.c.port, sql_cast(_CREDENTIALS.c.allow_http, Integer)],  # PostgreSQL casts no boolean to float
        ).where(_CREDENTIALS.c.tenant_id == _TENANT, _CREDENTIALS.c.host == bindparam("host")),
        _branch("key", [state, commitment], [lease_until, expires_at], response).where(
            _KEYS.c.tenant_id == _TENANT, _KEYS.c.key == bindparam("key")
        ),
        _branch("limited", []).where(may_be_limited),
        *more,
    )


def _read_and_claim() -> Any:
    """The five reads and, where nothing may hold it, the claim: its audit row's id as a ``claimed`` row."""
    # read once for both (and the statement stays short enough for psycopg to cache its conversion)
    limited = _limits_read().cte("limited")
    may_be_limited = select(limited).exists()
    opened = claim_ctes(_nothing_may_hold(may_be_limited))
    return _one_read(may_be_limited, _branch("claimed", [], [opened.c.id]).select_from(opened))


@dataclass(frozen=True)
class ReadAndClaim:
    """What :meth:`StoredStateReader.read_and_claim` found and did."""

    audit_row: int | None
    """The audit row the claim opened; ``None``: nothing was claimed (or written)."""
    state: Callable[[], StoredState]
    """The state as read, its credentials opened now: that can refuse the request, after a claim the
    caller then releases."""


class StoredStateReader:
    """Reads a request's :class:`StoredState` in one statement (one round trip on PostgreSQL)."""

    def __init__(self, database: Database, credentials: CredentialStore) -> None:
        self.database = database
        self.credentials = credentials
        self._one_read = Prepared(database, _one_read(_limits_read().exists()))
        self.claims = database.dialect == "postgresql"
        """Whether :meth:`read_and_claim` is open: on PostgreSQL only, where it saves a round trip. On SQLite the
        read is an in-process call, and a claim takes the write lock (``BEGIN IMMEDIATE``): every read
        taking it would queue replays and refusals behind the writers."""
        self.claiming_read = Prepared(database, _read_and_claim()) if self.claims else None
        """The statement of :meth:`read_and_claim` (PostgreSQL only)."""

    def read(self, tenant: str, target: Target, key: str | None) -> StoredState:
        return read(self.database, lambda transaction: self._read(transaction, tenant, target, key))

    def read_and_claim(self, tenant: str, target: Target, header_names: Iterable[str], claim: Mapping[str, Any]) -> ReadAndClaim:
        """PostgreSQL: the request's stored state, and its key claimed in the same statement where nothing
        stored may hold the request or change its commitment (module docstring).

        ``header_names`` are the request's (lower-case); ``claim`` is laid out by :func:`~skillhouse.gateway.key_audit.claim_binds`,
        its commitment the request's with no header left out. Like the claim alone, never run twice: a
        connection lost on the way is dropped and the error raised.
        """
        if self.claiming_read is None:
            raise ValueError("read_and_claim needs PostgreSQL: on SQLite the read and the claim are separate")
        values = {**claim, "tenant": tenant, "host": target.host, "names": "," + ",".join(header_names) + ","}
        with one_statement(self.database) as statement:
            rows = statement.rows(self.claiming_read, values)
        claimed = next((int(row[5]) for row in rows if row[0] == "claimed"), None)
        return ReadAndClaim(claimed, lambda: self._state(target, rows))

    def _read(self, transaction: DriverTransaction, tenant: str, target: Target, key: str | None) -> StoredState:
        values = {"tenant": tenant, "host": target.host, "key": key}
        return self._state(target, transaction.rows(self._one_read, values))

    def _state(self, target: Target, rows: list[tuple[Any, ...]]) -> StoredState:
        hosts, gates, credentials, seen, limited = [], [], [], None, False
        for kind, text1, text2, text3, text4, number1, number2, document in rows:
            if kind == "host":
                hosts.append(text1)
            elif kind == "gate":
                gates.append(_gate(text1, text2))
            elif kind == "credential":
                credentials.append((text1, int(number1), bool(number2), text2, text3, text4))
            elif kind == "limited":
                limited = True
            elif kind == "key":
                seen = key_row((text1, text2, number1, number2, document))
        found = self.credentials.for_rows(target, credentials)
        return StoredState(hosts, gates, found.injections, found.secrets, seen, limited)


def _gate(matches: str, reason: str | None) -> Gate:
    """A tenant gate from its stored ``METHOD /path`` and reason."""
    method, _, path = str(matches).partition(" ")
    return Gate(method, path, reason=reason or "")
