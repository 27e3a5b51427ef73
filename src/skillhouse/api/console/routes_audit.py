"""The audit trail: every egress decision of the tenant and every person's decision on an approval,
filtered by turn, skill, operation, decision and time range (UTC), a page at a time with the count of
all that match; nothing is left out silently."""

from __future__ import annotations

import datetime as dt

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from skillhouse.api.console.pages import page
from skillhouse.api.console.paging import direction_of, query_string
from skillhouse.api.console.routing import ConsoleRoute
from skillhouse.api.console.sessions import ConsoleRefusal, RunSessionDep
from skillhouse.gateway.audit_queries import AuditFilter, approval_states, audit_choices, audit_page
from skillhouse.store import Database

router = APIRouter(route_class=ConsoleRoute)
DECISIONS = ("allowed", "refused", "held", "replayed", "error", "approved", "denied")
PERSON_DECISIONS = ("approved", "denied")


def moment(field: str, text: str, end_of_day: bool = False) -> float | None:
    """``2026-12-01T09:30`` (or with seconds, or a date alone) read as UTC, in epoch seconds; a located
    refusal when it is neither. A date alone as the end of a range means the end of that day."""
    text = text.strip()
    if not text:
        return None
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ConsoleRefusal(f"{field}: {text[:40]!r} is not a date and time such as "
                             "2026-12-01T09:30 (UTC) or a date such as 2026-12-01", code="invalid-time") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    if end_of_day and len(text) == 10:
        parsed += dt.timedelta(days=1)
    return parsed.timestamp()


@router.get("/console/audit")
def audit_view(request: Request, session: RunSessionDep, turn: str = "", skill: str = "", operation: str = "",
               decision: str = "", since: str = "", until: str = "", before: str = "", after: str = "") -> HTMLResponse:
    database: Database = request.app.state.database
    where = AuditFilter(turn=turn.strip(), skill=skill.strip(), operation=operation.strip(),
                        decision=decision if decision in DECISIONS else "",
                        since=moment("since", since), until=moment("until", until, end_of_day=True))
    cursor, direction = direction_of(before, after)
    found = audit_page(database, session.tenant, where, cursor, direction)
    turns, skills = audit_choices(database, session.tenant)
    approvals = approval_states(database, session.tenant, (row.approval_id for row in found.rows if row.approval_id))
    filters = {"turn": where.turn, "skill": where.skill, "operation": where.operation, "decision": where.decision,
               "since": since.strip(), "until": until.strip()}
    return page(request, "audit.html", session, title="Audit", found=found, where=where, filters=filters,
                filtered=any(filters.values()), turns=turns, skills=skills, decisions=DECISIONS,
                person_decisions=PERSON_DECISIONS, approvals=approvals, base=query_string(**filters))
