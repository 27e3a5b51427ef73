"""The two writes that move an idempotency key and its request's audit row together: claim and completion.

A request with a key writes twice: the claim (the key row, ``running``, and the request's audit row,
``allowed`` with no status yet), durable before anything is sent; and the completion (the redacted
response under the key, the upstream's status on the audit row). Both rows of each write commit
together, so no request leaves without its audit row and no answer is stored without its status.

On SQLite each write is a transaction of two statements, which the driver runs in the process at about
10 µs each; its ``COMMIT`` costs more than both, so the write shares its transaction with the writes
other threads hand in at the same moment (``store/group_commit.py``) and returns once that commits.
On PostgreSQL every statement is a round trip to the server, and under many client threads each round
trip also costs a release and retake of the GIL (bench/bench_gateway.py), so each write is one
statement in autocommit, a single round trip instead of four or five:

- claim: ``WITH claim AS (INSERT INTO gateway_idempotency ... ON CONFLICT DO NOTHING RETURNING key),
  opened AS (INSERT INTO gateway_audit ... SELECT ... FROM claim RETURNING id) SELECT id FROM opened``
  (:func:`claim_ctes`; the stored-state read may carry the same claim, ``gateway/stored_state.py``). A returned id means this request
  inserted the key (and its audit row exists); no row means another request holds the key, and no audit
  row was written. An autocommit statement commits synchronously (the server's default), so the claim
  is on disk before the caller sends anything.
- completion: ``WITH done AS (UPDATE gateway_idempotency ...) UPDATE gateway_audit ... WHERE id = :row
  AND set_config('synchronous_commit', 'off', true) <> ''``. PostgreSQL runs a data-modifying ``WITH``
  whether or not the outer statement reads it; ``set_config(..., true)`` is ``SET LOCAL`` for the
  statement's own implicit transaction (the commit reads the setting; it is gone afterwards), so this
  commit alone is asynchronous without a separate ``SET`` round trip. Losing it in an OS crash leaves
  the key ``running``, then ``unresolved``, never resent (see ``gateway/idempotency.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from sqlalchemy import CTE, Table, bindparam, func, insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.sql.elements import ColumnElement

from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import AuditRow, IdempotencyRow
from skillhouse.store.group_commit import group_commit
from skillhouse.store.prepared import DriverTransaction, Prepared, one_statement

_KEYS = cast(Table, IdempotencyRow.__table__)
_AUDIT = cast(Table, AuditRow.__table__)
AUDIT_OPENED = tuple(c.name for c in _AUDIT.c if c.name != "id")
"""The audit columns a claim writes (each bound as ``audit_<name>``)."""
AUDIT_FINISHED = ("decision", "code", "status", "approval_id")
"""The audit columns a completion rewrites."""

# typed binds: PostgreSQL must know a value's type where it stands in a SELECT list, not a column
_NEW_KEY = {c.name: bindparam(c.name, type_=c.type) for c in _KEYS.c}
_NEW_AUDIT = [bindparam(f"audit_{c.name}", type_=c.type) for c in _AUDIT.c if c.name != "id"]
_FINISH = {name: bindparam(name, type_=_AUDIT.c[name].type) for name in AUDIT_FINISHED}
_THIS_KEY = (_KEYS.c.tenant_id == bindparam("tenant"), _KEYS.c.key == bindparam("key"))
# an unresolved key may still learn its answer from a holder that was only slow
_COMPLETING = or_(_KEYS.c.state == "running", _KEYS.c.state == "unresolved")
_COMPLETED = {"state": "completed", "response": bindparam("response"), "expires_at": bindparam("expires_at")}


def claim_ctes(where: ColumnElement[bool] | None = None) -> CTE:
    """PostgreSQL: the claim as ``WITH`` parts of one statement, bound as :func:`claim_binds` lays out.

    ``claim`` inserts the key row, only where ``where`` holds and the key is free; ``opened`` inserts one
    audit row per key row inserted and returns its id (none when another request holds the key). The
    ``opened`` CTE is returned: selecting from it runs both.
    """
    free = select(*_NEW_KEY.values())
    if where is not None:
        free = free.where(where)
    won = postgresql.insert(_KEYS).from_select(list(_NEW_KEY), free).on_conflict_do_nothing().returning(_KEYS.c.key).cte("claim")
    return insert(_AUDIT).from_select(AUDIT_OPENED, select(*_NEW_AUDIT).select_from(won)).returning(_AUDIT.c.id).cte("opened")


def claim_binds(key: Mapping[str, Any], audit: Mapping[str, Any]) -> dict[str, Any]:
    """A claim's values: every idempotency column of ``key``, and ``audit``'s :data:`AUDIT_OPENED` as ``audit_<name>``."""
    return {**key, **{f"audit_{name}": audit[name] for name in AUDIT_OPENED}}


class KeyAuditWrites:
    """:meth:`claim` and :meth:`complete` for one database, in its dialect's fewest round trips."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.single = database.dialect == "postgresql"
        complete_key = update(_KEYS).where(*_THIS_KEY, _COMPLETING).values(_COMPLETED)
        finish_audit = update(_AUDIT).where(_AUDIT.c.id == bindparam("row_id")).values(_FINISH)
        if self.single:
            opened = claim_ctes()
            self._claim = Prepared(database, select(opened.c.id))
            asynchronous = func.set_config("synchronous_commit", "off", True) != ""
            self._complete = Prepared(database, finish_audit.where(asynchronous).add_cte(complete_key.cte("done")))
        else:
            # RETURNING, not rowcount: an INSERT ... ON CONFLICT reports no reliable rowcount on every driver
            claimed = sqlite.insert(_KEYS).values(_NEW_KEY).on_conflict_do_nothing().returning(_KEYS.c.key)
            self._claim = Prepared(database, claimed)
            self._open_audit = Prepared(database, insert(_AUDIT).values(dict(zip(AUDIT_OPENED, _NEW_AUDIT, strict=True))).returning(_AUDIT.c.id))
            self._complete_key = Prepared(database, complete_key)
            self._finish_audit = Prepared(database, finish_audit)
            self._together = group_commit(database)

    def claim(self, key: Mapping[str, Any], audit: Mapping[str, Any]) -> int | None:
        """Insert the key row and open the audit row, durably: the audit row's id, or None if the key is taken.

        ``key`` holds every idempotency column; ``audit`` every column in :data:`AUDIT_OPENED`.
        """
        values = claim_binds(key, audit)
        if self.single:
            with one_statement(self.database) as statement:
                row = statement.first(self._claim, values)
            return None if row is None else int(row[0])
        def claim(transaction: DriverTransaction) -> int | None:
            if transaction.first(self._claim, values) is None:
                return None
            opened = transaction.first(self._open_audit, values)
            assert opened is not None  # INSERT ... RETURNING always returns its row
            return int(opened[0])
        return self._together.write(claim)

    def complete(self, key: Mapping[str, Any], audit_row: int, audit: Mapping[str, Any]) -> None:
        """Store the response under the key and finish the audit row, in one asynchronous commit.

        ``key`` holds ``tenant``, ``key``, ``response`` (JSON text) and ``expires_at``; ``audit`` every
        column in :data:`AUDIT_FINISHED`. A key no longer ``running`` or ``unresolved`` (released, or
        removed after expiring) is left as it is; the audit row is finished either way.
        """
        values = {**key, "row_id": audit_row, **{name: audit[name] for name in AUDIT_FINISHED}}
        if self.single:
            with one_statement(self.database) as statement:
                statement.execute(self._complete, values)
            return
        def complete(transaction: DriverTransaction) -> None:
            transaction.execute(self._complete_key, values)
            transaction.execute(self._finish_audit, values)
        self._together.write(complete)
