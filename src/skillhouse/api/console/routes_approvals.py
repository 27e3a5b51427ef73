"""Approvals: held requests waiting for a person, one request in full, approve and deny, history.

A page leads with what a person decides on (:mod:`skillhouse.api.console.approval_facts`); the exact
request and its commitment follow. Decisions go through the gateway's
:class:`~skillhouse.gateway.ApprovalStore`, whose conditional updates make a decision count once
however many people press the button, and which writes the decision's own audit row in the same
commit; the decider is recorded as the console token that signed in (by id and label, never its
secret). A denial may carry a reason, which the model is told when it asks again. After deciding, the
approval's page confirms what was decided, by whom and when. Any session may read approvals;
deciding needs a token of scope ``approve`` or ``admin``, checked here on the server (the buttons are
only shown to such sessions, but hiding them is not what protects the decision). What the approved
request did next is read from the audit trail rows that carry the approval's id.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from skillhouse.api.console.approval_facts import ApprovalFacts, approval_facts, request_arguments
from skillhouse.api.console.pages import page
from skillhouse.api.console.paging import direction_of, query_string
from skillhouse.api.console.routing import ConsoleRoute
from skillhouse.api.console.sessions import (
    ApproveSessionDep,
    ConsoleRefusal,
    ConsoleSession,
    FormDep,
    RunSessionDep,
)
from skillhouse.gateway import Approval, ApprovalStore
from skillhouse.gateway.audit_queries import AuditFilter, TurnRecord, approval_page, audit_rows, turn_record
from skillhouse.json_types import OperationDocument
from skillhouse.registry.errors import NotFound
from skillhouse.registry.releases import get_release, list_releases
from skillhouse.store import Database
from skillhouse.wire.approvals import NOTE_LIMIT

router = APIRouter(route_class=ConsoleRoute)
SHOWS = {"waiting": "Waiting for a decision", "decided": "Decided"}


def _database(request: Request) -> Database:
    database: Database = request.app.state.database
    return database


def _operation(database: Database, tenant: str, approval: Approval, turn: TurnRecord | None) -> tuple[OperationDocument | None, str | None]:
    """The approval's operation document in the release its turn bound, and that release's version; for a
    turn not recorded, the operation of the skill's newest release, and no version (it is not known)."""
    skill, _, name = (approval.operation or "").partition(".")
    if not name:
        return None, None
    bound = turn.bound(skill) if turn is not None else None
    try:
        with database.sessions() as session:
            if bound is not None:
                version: str | None = bound.version
                document = get_release(session, tenant, skill, bound.version, with_files=False).document
            else:
                newest = list_releases(session, tenant, skill)
                version, document = None, (get_release(session, tenant, skill, newest[-1].version, with_files=False).document if newest else {})
    except NotFound:
        return None, bound.version if bound else None
    operation = next((op for op in document.get("operations", []) if op.get("name") == name), None)
    return operation, version


def _facts(database: Database, tenant: str, approval: Approval) -> tuple[ApprovalFacts, TurnRecord | None]:
    turn = turn_record(database, tenant, approval.turn_id) if approval.turn_id else None
    operation, version = _operation(database, tenant, approval, turn)
    return approval_facts(approval, operation, version), turn


@router.get("/console/approvals")
def approvals_page(request: Request, session: RunSessionDep, show: str = "waiting", before: str = "",
                   after: str = "") -> HTMLResponse:
    if show not in SHOWS:
        raise ConsoleRefusal(f"show is one of: {', '.join(SHOWS)}; not {show!r}", code="unknown-view")
    database = _database(request)
    cursor, direction = direction_of(before, after)
    found = approval_page(database, session.tenant, show == "waiting", cursor, direction, size=20 if show == "waiting" else 50)
    other = approval_page(database, session.tenant, show != "waiting", size=1)
    counts = {show: found.total, ("decided" if show == "waiting" else "waiting"): other.total}
    facts = {a.id: _facts(database, session.tenant, a)[0] for a in found.rows}
    return page(request, "approvals.html", session, title=SHOWS[show], show=show, shows=SHOWS, found=found,
                counts=counts, facts_of=facts, base=query_string(show=show), note_limit=NOTE_LIMIT)


@router.get("/console/approvals/{approval_id}")
def approval_detail(approval_id: str, request: Request, session: RunSessionDep, decided: str = "") -> HTMLResponse:
    database = _database(request)
    approval = ApprovalStore(database).get(session.tenant, approval_id)
    runs = audit_rows(database, session.tenant, AuditFilter(approval=approval.id))
    facts, turn = _facts(database, session.tenant, approval)
    # the confirmation reads the stored decision, so a link cannot make the page claim one that was not made
    confirm = decided in ("approved", "denied") and approval.decided_at is not None
    return page(request, "approval.html", session, title=facts.summary, approval=approval, facts=facts, runs=runs,
                turn=turn, arguments=request_arguments(approval.canonical), confirm=confirm, note_limit=NOTE_LIMIT)


def _decide(request: Request, session: ConsoleSession, approval_id: str, approve: bool, note: str = "") -> RedirectResponse:
    if len(note) > NOTE_LIMIT:
        raise ConsoleRefusal(f"reason: at most {NOTE_LIMIT} characters (this one has {len(note)})", code="reason-too-long")
    by = f"console, token #{session.token_id}" + (f" ({session.token_label})" if session.token_label else "")
    decided = ApprovalStore(_database(request)).decide(session.tenant, approval_id, approve, by[:200], note=note)
    return RedirectResponse(f"/console/approvals/{approval_id}?decided={decided.state}", status_code=303)


@router.post("/console/approvals/{approval_id}/approve")
def approve(approval_id: str, request: Request, session: ApproveSessionDep, form: FormDep) -> RedirectResponse:
    return _decide(request, session, approval_id, approve=True)


@router.post("/console/approvals/{approval_id}/deny")
def deny(approval_id: str, request: Request, session: ApproveSessionDep, form: FormDep) -> RedirectResponse:
    return _decide(request, session, approval_id, approve=False, note=form.get("reason", "").strip())
