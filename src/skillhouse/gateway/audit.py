"""Audit rows: one per egress decision, holding where, what was decided and why, and nothing secret.

A row names the method, host, path (no query string: it may carry personal data), the matched
operation, the decision and its code, the upstream status and the checked address. Headers and bodies
are never written, so no credential can reach the audit trail.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import select

from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import AuditRow

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


class AuditLog:
    def __init__(self, database: Database) -> None:
        self.database = database

    def record(self, entry: AuditEntry) -> None:
        log.info(
            "egress %s %s %s%s -> %s%s",
            entry.tenant_id, entry.method, entry.host, entry.path, entry.decision,
            f" ({entry.code})" if entry.code else f" {entry.status}" if entry.status else "",
        )  # fmt: skip
        with self.database.transaction() as session:
            session.add(AuditRow(at=time.time(), **asdict(entry)))

    def rows(self, tenant: str, limit: int = 100) -> list[dict[str, Any]]:
        with self.database.transaction() as session:
            found = session.scalars(
                select(AuditRow).where(AuditRow.tenant_id == tenant).order_by(AuditRow.id.desc()).limit(limit)
            )
            return [
                {column.name: getattr(row, column.name) for column in AuditRow.__table__.columns} for row in found
            ]
