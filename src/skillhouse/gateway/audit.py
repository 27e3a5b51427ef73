"""Audit rows: one per egress decision, holding where, what was decided and why, and nothing secret.

A row names the method, host, path (no query string: it may carry personal data), the matched
operation, the decision and its code, the upstream status and the checked address. Headers and bodies
are never written, so no credential can reach the audit trail.

A request that claims an idempotency key has its row opened in the claim's own commit (decision
``allowed``, no status yet; :func:`opening` gives its values), so the decision to let it leave is on
record before it leaves, even if the gateway is killed mid-call; the completion's commit then fills in
the status (:func:`finishing`). Both writes are in ``gateway/key_audit.py``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, fields
from typing import cast

from sqlalchemy import Table, bindparam, func, insert, select, update

from skillhouse.gateway.key_audit import AUDIT_FINISHED, AUDIT_OPENED
from skillhouse.json_types import JsonObject
from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import AuditRow
from skillhouse.store.group_commit import group_commit
from skillhouse.store.prepared import Prepared, one_statement

log = logging.getLogger("skillhouse.gateway")


@dataclass(frozen=True)
class AuditEntry:
    tenant_id: str
    turn_id: str | None
    method: str
    host: str
    path: str
    decision: str
    operation: str | None = None
    code: str | None = None
    status: int | None = None
    address: str | None = None
    idempotency_key: str | None = None
    approval_id: str | None = None
    actor: str | None = None


_TABLE = cast(Table, AuditRow.__table__)


_FIELDS = tuple(f.name for f in fields(AuditEntry))


def opening(entry: AuditEntry) -> JsonObject:
    """The values of a new row for ``entry``: every column but the id (every value is flat: no ``asdict`` copy)."""
    values: JsonObject = {name: getattr(entry, name) for name in _FIELDS}
    values["at"] = time.time()
    return values


def finishing(entry: AuditEntry) -> JsonObject:
    """The values an opened row takes when its decision ends as ``entry`` says (logged here)."""
    log_decision(entry)
    return {name: getattr(entry, name) for name in AUDIT_FINISHED}


def log_decision(entry: AuditEntry) -> None:
    log.info(
        "egress %s %s %s%s -> %s%s",
        entry.tenant_id, entry.method, entry.host, entry.path, entry.decision,
        f" ({entry.code})" if entry.code else f" {entry.status}" if entry.status else "",
    )  # fmt: skip


class AuditLog:
    def __init__(self, database: Database) -> None:
        self.database = database
        # typed binds: in the SELECT below PostgreSQL must know each value's type without a column
        opened = {name: bindparam(name, type_=_TABLE.c[name].type) for name in AUDIT_OPENED}
        self._open = Prepared(database, insert(_TABLE).values(opened))
        self._finish = Prepared(
            database, update(_TABLE).where(_TABLE.c.id == bindparam("row_id")).values({n: bindparam(n) for n in AUDIT_FINISHED})
        )
        # on PostgreSQL each write is one autocommit statement (one round trip, not BEGIN, statement, COMMIT);
        # a row that may be lost in an OS crash says so itself: set_config(..., true) is SET LOCAL for the
        # statement's own transaction (see gateway/key_audit.py)
        self._single = database.dialect == "postgresql"
        self._together = group_commit(database)
        """SQLite: each write shares its transaction with the writes handed in beside it (``store/group_commit.py``)."""
        asynchronous = func.set_config("synchronous_commit", "off", True) != ""
        self._open_async = Prepared(database, insert(_TABLE).from_select(AUDIT_OPENED, select(*opened.values()).where(asynchronous)))

    def record(self, entry: AuditEntry, durable: bool = True) -> None:
        """Write one finished decision in its own commit (``durable`` as in ``Database.transaction``)."""
        log_decision(entry)
        values = opening(entry)
        if not self._single:
            self._together.write(lambda transaction: transaction.execute(self._open, values))
            return
        with one_statement(self.database) as statement:
            statement.execute(self._open if durable else self._open_async, values)

    def finish(self, row_id: int, entry: AuditEntry) -> None:
        """Bring a row opened with a claim up to date with how the decision ended (a refusal after the claim)."""
        values = {"row_id": row_id, **finishing(entry)}
        if not self._single:
            self._together.write(lambda transaction: transaction.execute(self._finish, values))
            return
        with one_statement(self.database) as statement:
            statement.execute(self._finish, values)
