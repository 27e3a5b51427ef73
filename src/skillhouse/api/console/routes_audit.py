"""The audit trail: every egress decision of the tenant, filterable by turn, skill and decision."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from skillhouse.api.console.pages import page
from skillhouse.api.console.routing import ConsoleRoute
from skillhouse.api.console.sessions import RunSessionDep
from skillhouse.gateway.audit_queries import (
    AUDIT_LIMIT,
    AuditFilter,
    approval_states,
    audit_choices,
    audit_rows,
)
from skillhouse.store import Database

router = APIRouter(route_class=ConsoleRoute)
DECISIONS = ("allowed", "refused", "held", "replayed", "error")


@router.get("/console/audit")
def audit_page(request: Request, session: RunSessionDep, turn: str = "", skill: str = "", decision: str = "") -> HTMLResponse:
    database: Database = request.app.state.database
    where = AuditFilter(turn=turn.strip(), skill=skill.strip(), decision=decision if decision in DECISIONS else "")
    rows = audit_rows(database, session.tenant, where)
    turns, skills = audit_choices(database, session.tenant)
    approvals = approval_states(database, session.tenant, (row["approval_id"] for row in rows if row["approval_id"]))
    return page(request, "audit.html", session, title="Audit", rows=rows, where=where, turns=turns, skills=skills,
                decisions=DECISIONS, limit=AUDIT_LIMIT, approvals=approvals)
