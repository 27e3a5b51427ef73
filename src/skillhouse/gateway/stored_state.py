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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import (
    JSON,
    BindParameter,
    Float,
    Integer,
    Table,
    Text,
    bindparam,
    literal,
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
from skillhouse.gateway.matching import Gate
from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import AllowedHostRow, CredentialRow, IdempotencyRow, TenantGateRow
from skillhouse.store.limit_tables import RateLimitRow, UpstreamWaitRow
from skillhouse.store.prepared import DriverTransaction, Prepared, read

_HOSTS = cast(Table, AllowedHostRow.__table__)
_GATES = cast(Table, TenantGateRow.__table__)
_CREDENTIALS = cast(Table, CredentialRow.__table__)
_KEYS = cast(Table, IdempotencyRow.__table__)
_LIMITS = cast(Table, RateLimitRow.__table__)
_WAITS = cast(Table, UpstreamWaitRow.__table__)
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
    return select(literal(kind, Text), *padded_texts, *padded_numbers, document if document is not None else sql_cast(null(), JSON))


def _limits_read() -> Any:
    """At most one row when a limit may apply to a request to ``host`` (any operation limit may: the caller
    checks which) or the host asked for a wait, whether or not it has passed."""
    limits = select(_LIMITS.c.scope).where(_LIMITS.c.tenant_id == _TENANT, or_(
        _LIMITS.c.scope != "host", _LIMITS.c.subject == bindparam("host")))
    waits = select(literal("wait", Text)).where(_WAITS.c.tenant_id == _TENANT, _WAITS.c.host == bindparam("host"))
    return union_all(limits, waits).limit(1)


def _one_read() -> Any:
    """The five reads as one statement (see the module docstring)."""
    state, commitment, lease_until, expires_at, response = KEY_COLUMNS
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
        _branch("limited", []).where(_limits_read().exists()),
    )


class StoredStateReader:
    """Reads a request's :class:`StoredState` in one statement (one round trip on PostgreSQL)."""

    def __init__(self, database: Database, credentials: CredentialStore) -> None:
        self.database = database
        self.credentials = credentials
        self._one_read = Prepared(database, _one_read())

    def read(self, tenant: str, target: Target, key: str | None) -> StoredState:
        return read(self.database, lambda transaction: self._read(transaction, tenant, target, key))

    def _read(self, transaction: DriverTransaction, tenant: str, target: Target, key: str | None) -> StoredState:
        values = {"tenant": tenant, "host": target.host, "key": key}
        hosts, gates, credentials, seen, limited = [], [], [], None, False
        for kind, text1, text2, text3, text4, number1, number2, document in transaction.rows(self._one_read, values):
            if kind == "host":
                hosts.append(text1)
            elif kind == "gate":
                gates.append(_gate(text1, text2))
            elif kind == "credential":
                credentials.append((text1, int(number1), bool(number2), text2, text3, text4))
            elif kind == "limited":
                limited = True
            else:
                seen = key_row((text1, text2, number1, number2, document))
        found = self.credentials.for_rows(target, credentials)
        return StoredState(hosts, gates, found.injections, found.secrets, seen, limited)


def _gate(matches: str, reason: str | None) -> Gate:
    """A tenant gate from its stored ``METHOD /path`` and reason."""
    method, _, path = str(matches).partition(" ")
    return Gate(method, path, reason=reason or "")
