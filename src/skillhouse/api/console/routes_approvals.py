"""Approvals: held requests waiting for a person, one request in full, approve and deny, history.

Decisions go through the gateway's :class:`~skillhouse.gateway.ApprovalStore`, whose conditional
updates make a decision count once however many people press the button; the decider is recorded
as the console token that signed in (by id, never its secret). Any session may read approvals;
deciding needs a token of scope ``approve`` or ``admin``, checked here on the server (the buttons are
only shown to such sessions, but hiding them is not what protects the decision). What the approved request did next is
read from the audit trail rows that carry the approval's id.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from skillhouse.api.console.pages import page
from skillhouse.api.console.routing import ConsoleRoute
from skillhouse.api.console.sessions import ApproveSessionDep, ConsoleSession, FormDep, RunSessionDep
from skillhouse.gateway import Approval, ApprovalStore
from skillhouse.gateway.audit_queries import AuditFilter, audit_rows, turn_row
from skillhouse.store import Database

router = APIRouter(route_class=ConsoleRoute)
HISTORY_LIMIT = 100


def _store(request: Request) -> ApprovalStore:
    database: Database = request.app.state.database
    return ApprovalStore(database)


def skill_of(approval: Approval) -> str | None:
    """The skill of the operation the request matched (operations are ``<skill>.<operation>``)."""
    return approval.operation.partition(".")[0] if approval.operation else None


@router.get("/console/approvals")
def approvals_page(request: Request, session: RunSessionDep) -> HTMLResponse:
    found = _store(request).list(session.tenant, limit=HISTORY_LIMIT)
    pending = [a for a in found if a.state == "pending"]
    decided = [a for a in found if a.state != "pending"]
    return page(request, "approvals.html", session, title="Approvals", pending=pending, decided=decided, skill_of=skill_of)


@router.get("/console/approvals/{approval_id}")
def approval_page(approval_id: str, request: Request, session: RunSessionDep) -> HTMLResponse:
    approval = _store(request).get(session.tenant, approval_id)
    database: Database = request.app.state.database
    runs = audit_rows(database, session.tenant, AuditFilter(approval=approval.id))
    turn = turn_row(database, session.tenant, approval.turn_id) if approval.turn_id else None
    return page(request, "approval.html", session, title=f"Approval {approval.id}", approval=approval,
                skill=skill_of(approval), runs=runs, turn=turn)


def _decide(request: Request, session: ConsoleSession, approval_id: str, approve: bool) -> RedirectResponse:
    by = f"console, token #{session.token_id}" + (f" ({session.token_label})" if session.token_label else "")
    _store(request).decide(session.tenant, approval_id, approve, by[:200])
    return RedirectResponse(f"/console/approvals/{approval_id}", status_code=303)


@router.post("/console/approvals/{approval_id}/approve")
def approve(approval_id: str, request: Request, session: ApproveSessionDep, form: FormDep) -> RedirectResponse:
    return _decide(request, session, approval_id, approve=True)


@router.post("/console/approvals/{approval_id}/deny")
def deny(approval_id: str, request: Request, session: ApproveSessionDep, form: FormDep) -> RedirectResponse:
    return _decide(request, session, approval_id, approve=False)
