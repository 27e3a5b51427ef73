"""Read-only queries over the audit trail, approvals and turns, for a person looking (the web console).

The audit trail filtered by turn, skill, decision or approval (``AuditLog.rows`` lists a tenant's
latest rows only), and a turn's row. Each query is scoped to one tenant: another tenant's rows are never returned.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import select

from skillhouse.json_types import JsonObject
from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import ApprovalRow, AuditRow, TurnRow

AUDIT_LIMIT = 200


@dataclass(frozen=True)
class AuditFilter:
    """Which audit rows to show; an empty field does not filter."""

    turn: str = ""
    skill: str = ""
    decision: str = ""
    approval: str = ""


def audit_rows(database: Database, tenant: str, where: AuditFilter, limit: int = AUDIT_LIMIT) -> list[JsonObject]:
    """The tenant's audit rows matching ``where``, newest first, as column-name dicts."""
    query = select(AuditRow).where(AuditRow.tenant_id == tenant)
    if where.turn:
        query = query.where(AuditRow.turn_id == where.turn)
    if where.skill:
        # operations are recorded qualified, ``<skill>.<operation>``; escape LIKE's wildcards in the name
        escaped = where.skill.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        query = query.where(AuditRow.operation.like(f"{escaped}.%", escape="\\"))
    if where.decision:
        query = query.where(AuditRow.decision == where.decision)
    if where.approval:
        query = query.where(AuditRow.approval_id == where.approval)
    with database.sessions() as session:
        rows = session.scalars(query.order_by(AuditRow.id.desc()).limit(limit))
        return [{column.name: getattr(row, column.name) for column in AuditRow.__table__.columns} for row in rows]


def audit_choices(database: Database, tenant: str) -> tuple[list[str], list[str]]:
    """The turns and skills seen in the tenant's audit trail, for the filter form's lists."""
    with database.sessions() as session:
        turns = session.scalars(select(AuditRow.turn_id).where(AuditRow.tenant_id == tenant, AuditRow.turn_id.is_not(None))
                                .distinct()).all()
        operations = session.scalars(select(AuditRow.operation).where(AuditRow.tenant_id == tenant,
                                                                      AuditRow.operation.is_not(None)).distinct()).all()
    skills = {str(operation).partition(".")[0] for operation in operations}
    return sorted(str(turn) for turn in turns), sorted(skills)


def approval_states(database: Database, tenant: str, approval_ids: Iterable[str]) -> dict[str, str]:
    """The current state of each of the tenant's approvals named (a lapsed one reads ``expired``)."""
    wanted = sorted(set(approval_ids))
    if not wanted:
        return {}
    now = time.time()
    with database.sessions() as session:
        rows = session.execute(select(ApprovalRow.id, ApprovalRow.state, ApprovalRow.expires_at)
                               .where(ApprovalRow.tenant_id == tenant, ApprovalRow.id.in_(wanted)))
        return {str(id_): "expired" if state in ("pending", "approved") and expires_at <= now else str(state)
                for id_, state, expires_at in rows}


def turn_row(database: Database, tenant: str, turn_id: str) -> JsonObject | None:
    """The turn's profile and bound releases, when the turn was recorded for this tenant."""
    with database.sessions() as session:
        row = session.get(TurnRow, turn_id)
        if row is None or row.tenant_id != tenant:
            return None
        return {"id": row.id, "profile": row.profile, "releases": list(row.releases), "created_at": row.created_at}
