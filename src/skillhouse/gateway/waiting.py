"""What is waiting on a person, over every tenant, for the deployment's gauges (``/metrics``).

Counts only: approvals still ``pending`` (and not yet expired) and idempotency keys ``unresolved`` (their outcome unknown
until someone checks the upstream and clears them). No tenant, request or key is named.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sqlalchemy import func, select

from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import ApprovalRow, IdempotencyRow


@dataclass(frozen=True)
class Waiting:
    approvals_pending: int
    keys_unresolved: int


def waiting(database: Database) -> Waiting:
    """The counts now, in one read."""
    with database.reading() as session:
        approvals = session.scalar(select(func.count()).select_from(ApprovalRow)
                                    .where(ApprovalRow.state == "pending", ApprovalRow.expires_at > time.time()))
        keys = session.scalar(select(func.count()).select_from(IdempotencyRow).where(IdempotencyRow.state == "unresolved"))
    return Waiting(int(approvals or 0), int(keys or 0))
