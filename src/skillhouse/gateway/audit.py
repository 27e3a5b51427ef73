"""Audit rows: one per egress decision, holding where, what was decided and why, and nothing secret.

A row names the method, host, path (no query string: it may carry personal data), the matched
operation, the decision and its code, the upstream status and the checked address. Headers and bodies
are never written, so no credential can reach the audit trail.

A request that claims an idempotency key has its row opened in the claim's own transaction (decision
``allowed``, no status yet), so the decision to let it leave is on record before it leaves, even if
the gateway is killed mid-call; the completion's transaction then fills in the status.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, cast

from sqlalchemy import Table, bindparam, insert, select, update

from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import AuditRow
from skillhouse.store.prepared import DriverTransaction, Prepared, writing

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


_TABLE = cast(Table, AuditRow.__table__)
_FINISHED = ("decision", "code", "status", "approval_id")


def _log(entry: AuditEntry) -> None:
    log.info(
        "egress %s %s %s%s -> %s%s",
        entry.tenant_id, entry.method, entry.host, entry.path, entry.decision,
        f" ({entry.code})" if entry.code else f" {entry.status}" if entry.status else "",
    )  # fmt: skip


class AuditLog:
    def __init__(self, database: Database) -> None:
        self.database = database
        columns = [c.name for c in _TABLE.c if c.name != "id"]
        self._open = Prepared(database, insert(_TABLE).values({n: bindparam(n) for n in columns}).returning(_TABLE.c.id))
        self._finish = Prepared(
            database, update(_TABLE).where(_TABLE.c.id == bindparam("row_id")).values({n: bindparam(n) for n in _FINISHED})
        )

    def record(self, entry: AuditEntry, durable: bool = True) -> None:
        """Write one finished decision in its own transaction (``durable`` as in ``Database.transaction``)."""
        _log(entry)
        with writing(self.database, durable) as transaction:
            self.open(transaction, entry)

    def open(self, transaction: DriverTransaction, entry: AuditEntry) -> Callable[[], int]:
        """Write ``entry`` in the caller's transaction; call the result for its row id (for :meth:`finish`).

        The id is read only when asked for, so the insert can travel with the transaction's ``COMMIT``.
        """
        pending = transaction.send(self._open, {"at": time.time(), **asdict(entry)})

        def row_id() -> int:
            row = pending.first()
            assert row is not None  # INSERT ... RETURNING always returns the row
            return int(row[0])

        return row_id

    def finish(self, transaction: DriverTransaction, row_id: int, entry: AuditEntry) -> None:
        """Bring an opened row up to date with how the decision ended, in the caller's transaction."""
        _log(entry)
        transaction.execute(self._finish, {"row_id": row_id, **{n: getattr(entry, n) for n in _FINISHED}})

    def rows(self, tenant: str, limit: int = 100) -> list[dict[str, Any]]:
        with self.database.reading() as session:
            found = session.scalars(
                select(AuditRow).where(AuditRow.tenant_id == tenant).order_by(AuditRow.id.desc()).limit(limit)
            )
            return [
                {column.name: getattr(row, column.name) for column in AuditRow.__table__.columns} for row in found
            ]
