"""A person's decision is on the record: its own audit row beside the gateway's (who, when, which
approval), the reason given with a denial reaches the model that asks again, and the audit trail and
approvals come a page at a time with a count of all that match."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.gateway.test_approvals import charge
from tests.gateway.wire import fetch_json

from skillhouse.gateway import Gateway, GatewayError, TurnContext
from skillhouse.gateway.approvals import NOTE_LIMIT
from skillhouse.gateway.audit_queries import AuditFilter, approval_page, audit_page, audit_rows


def held(gateway: Gateway, turn: TurnContext, amount: int = 19000) -> str:
    answer = fetch_json(gateway, turn, charge(amount))
    assert answer["error"]["code"] == "approval-required", answer
    return str(answer["error"]["approval_id"])


def test_approving_writes_the_persons_row_beside_the_gateways(gateway: Gateway, turn: TurnContext) -> None:
    approval_id = held(gateway, turn)
    decided = gateway.approvals.decide(turn.tenant, approval_id, True, by="console, token #7 (ops)")
    rows = audit_rows(gateway.database, turn.tenant, AuditFilter(approval=approval_id))
    assert [(r.decision, r.actor) for r in rows] == [("approved", "console, token #7 (ops)"), ("held", None)]
    person = rows[0]
    assert (person.method, person.host, person.path) == ("POST", "hollowbrook.local:8084", "/charges")
    assert (person.turn_id, person.operation, person.at) == (turn.turn_id, "hollowbrook.charge", decided.decided_at)
    assert decided.decided_by == "console, token #7 (ops)" and decided.note is None


def test_a_denials_reason_is_kept_and_the_model_is_told_it(gateway: Gateway, turn: TurnContext) -> None:
    approval_id = held(gateway, turn)
    denied = gateway.approvals.decide(turn.tenant, approval_id, False, by="ops", note="  Not before the guest arrives.  ")
    assert (denied.state, denied.note) == ("denied", "Not before the guest arrives.")
    again: dict[str, Any] = fetch_json(gateway, turn, charge())["error"]
    assert again["code"] == "approval-denied"
    assert again["reason"] == "Not before the guest arrives."
    assert "Not before the guest arrives." in again["message"]
    assert [r.decision for r in audit_rows(gateway.database, turn.tenant, AuditFilter(decision="denied"))] == ["denied"]


def test_a_reason_longer_than_the_limit_is_refused_and_nothing_is_decided(gateway: Gateway, turn: TurnContext) -> None:
    approval_id = held(gateway, turn)
    with pytest.raises(GatewayError) as refused:
        gateway.approvals.decide(turn.tenant, approval_id, False, by="ops", note="x" * (NOTE_LIMIT + 1))
    assert (refused.value.code, refused.value.details["field"]) == ("invalid-request", "reason")
    assert gateway.approvals.get(turn.tenant, approval_id).state == "pending"


def test_a_second_decision_writes_no_second_row(gateway: Gateway, turn: TurnContext) -> None:
    approval_id = held(gateway, turn)
    gateway.approvals.decide(turn.tenant, approval_id, False, by="first")
    with pytest.raises(GatewayError) as refused:
        gateway.approvals.decide(turn.tenant, approval_id, True, by="second")
    assert refused.value.code == "approval-not-pending"
    actors = [r.actor for r in audit_rows(gateway.database, turn.tenant, AuditFilter(approval=approval_id)) if r.actor]
    assert actors == ["first"]


def test_the_audit_comes_a_page_at_a_time_forwards_and_back(gateway: Gateway, turn: TurnContext) -> None:
    for amount in range(7):
        held(gateway, turn, 100 + amount)
    first = audit_page(gateway.database, turn.tenant, AuditFilter(), size=3)
    assert (len(first.rows), first.total, first.newer) == (3, 7, None) and first.older is not None
    second = audit_page(gateway.database, turn.tenant, AuditFilter(), first.older, "older", size=3)
    last = audit_page(gateway.database, turn.tenant, AuditFilter(), second.older or "", "older", size=3)
    assert (len(last.rows), last.older) == (1, None) and last.newer is not None
    ids = [r.id for page in (first, second, last) for r in page.rows]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 7
    back = audit_page(gateway.database, turn.tenant, AuditFilter(), second.newer or "", "newer", size=3)
    assert [r.id for r in back.rows] == [r.id for r in first.rows] and back.newer is None
    # a filter counts only what it matches; an unreadable cursor is the first page
    assert audit_page(gateway.database, turn.tenant, AuditFilter(operation="charge", until=0.0)).total == 0
    assert audit_page(gateway.database, turn.tenant, AuditFilter(), "'; drop", "older", size=3).rows == first.rows


def test_approvals_waiting_and_decided_are_paged_apart(gateway: Gateway, turn: TurnContext) -> None:
    ids = [held(gateway, turn, 200 + amount) for amount in range(5)]
    gateway.approvals.decide(turn.tenant, ids[0], False, by="ops")
    waiting = approval_page(gateway.database, turn.tenant, True, size=2)
    assert (waiting.total, len(waiting.rows), waiting.newer) == (4, 2, None)
    rest = approval_page(gateway.database, turn.tenant, True, waiting.older or "", "older", size=2)
    assert {a.id for a in waiting.rows + rest.rows} == set(ids[1:]) and rest.older is None
    decided = approval_page(gateway.database, turn.tenant, False)
    assert [(a.id, a.state) for a in decided.rows] == [(ids[0], "denied")]
    assert approval_page(gateway.database, "another-tenant", True).total == 0
    assert json.dumps(decided.rows[0].document())  # what the API shows is plain JSON
