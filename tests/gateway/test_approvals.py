"""Approvals bound by commitment: the approved request runs once; anything else needs a new approval."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from tests.gateway.conftest import gateway_for
from tests.gateway.upstream_server import Upstream
from tests.gateway.wire import fetch_json

from skillhouse.gateway import Gateway, GatewayError, TurnContext
from skillhouse.store.database import Database


def charge(amount: int = 19000, description: str = "Two nights") -> dict[str, Any]:
    body = {"amount_cents": amount, "booking_id": "b1", "description": description}
    return {
        "method": "POST",
        "url": "http://hollowbrook.local:8084/charges",
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(body),
    }


def test_a_gated_request_is_held_and_not_sent(gateway: Gateway, turn: TurnContext, upstream: Upstream) -> None:
    answer = fetch_json(gateway, turn, charge())
    assert answer["error"]["code"] == "approval-required"
    assert answer["error"]["approval_id"].startswith("apr_")
    assert upstream.recorder.charges == []
    approval = gateway.approvals.get(turn.tenant, answer["error"]["approval_id"])
    assert approval.state == "pending"
    assert approval.commitment.startswith("sha256:")
    assert approval.canonical["method"] == "POST"


def test_the_same_held_request_names_the_same_approval(gateway: Gateway, turn: TurnContext) -> None:
    first = fetch_json(gateway, turn, charge())["error"]["approval_id"]
    assert fetch_json(gateway, turn, charge())["error"]["approval_id"] == first


def test_an_approved_identical_request_runs_once(gateway: Gateway, turn: TurnContext, upstream: Upstream) -> None:
    approval_id = fetch_json(gateway, turn, charge())["error"]["approval_id"]
    gateway.approvals.decide(turn.tenant, approval_id, approve=True, by="ops@example.com")
    assert fetch_json(gateway, turn, charge())["status"] == 201
    again = fetch_json(gateway, turn, charge())
    assert len(upstream.recorder.charges) == 1
    # the identity key answers the identical retry from the store: still one charge
    assert again.get("replayed") is True


def test_a_modified_request_needs_a_new_approval(gateway: Gateway, turn: TurnContext, upstream: Upstream) -> None:
    approval_id = fetch_json(gateway, turn, charge())["error"]["approval_id"]
    gateway.approvals.decide(turn.tenant, approval_id, approve=True, by="ops")
    modified = fetch_json(gateway, turn, charge(description="Two nights and breakfast"))
    assert modified["error"]["code"] == "approval-required"
    assert modified["error"]["approval_id"] != approval_id
    assert upstream.recorder.charges == []


def test_a_replayed_approval_is_refused(gateway: Gateway, turn: TurnContext) -> None:
    approval_id = fetch_json(gateway, turn, charge(amount=500))["error"]["approval_id"]
    gateway.approvals.decide(turn.tenant, approval_id, approve=True, by="ops")
    fetch_json(gateway, turn, charge(amount=500))
    assert gateway.approvals.get(turn.tenant, approval_id).state == "used"
    with pytest.raises(GatewayError) as refused:
        gateway.approvals.decide(turn.tenant, approval_id, approve=True, by="ops")
    assert refused.value.code == "approval-not-pending"


def test_an_expired_approval_is_refused_and_does_not_run(
    database: Database, upstream: Upstream, turn: TurnContext
) -> None:
    gateway = gateway_for(database, upstream, approval_ttl_seconds=60)
    approval_id = fetch_json(gateway, turn, charge())["error"]["approval_id"]
    gateway.approvals.decide(turn.tenant, approval_id, approve=True, by="ops")
    later = time.time() + 120
    gateway.approvals.clock = lambda: later
    answer = fetch_json(gateway, turn, charge())
    assert answer["error"]["code"] == "approval-required"
    assert answer["error"]["approval_id"] != approval_id
    assert gateway.approvals.get(turn.tenant, approval_id).state == "expired"
    assert upstream.recorder.charges == []
    pending = answer["error"]["approval_id"]
    gateway.approvals.clock = lambda: later + 120
    with pytest.raises(GatewayError) as refused:
        gateway.approvals.decide(turn.tenant, pending, approve=True, by="ops")
    assert refused.value.code == "approval-expired"
    gateway.close()


def test_a_denied_request_does_not_run_and_its_retry_is_refused_not_held_again(
    gateway: Gateway, turn: TurnContext, upstream: Upstream
) -> None:
    approval_id = fetch_json(gateway, turn, charge())["error"]["approval_id"]
    assert gateway.approvals.decide(turn.tenant, approval_id, approve=False, by="ops").state == "denied"
    retried = fetch_json(gateway, turn, charge())["error"]
    assert (retried["code"], retried["approval_id"]) == ("approval-denied", approval_id)
    assert [a.id for a in gateway.approvals.list(turn.tenant)] == [approval_id]
    assert upstream.recorder.charges == []
    # a different request is a different question
    assert fetch_json(gateway, turn, charge(amount=100))["error"]["code"] == "approval-required"


def test_another_tenant_cannot_see_or_decide_an_approval(gateway: Gateway, turn: TurnContext) -> None:
    approval_id = fetch_json(gateway, turn, charge())["error"]["approval_id"]
    with pytest.raises(GatewayError) as refused:
        gateway.approvals.decide("tenant-b", approval_id, approve=True, by="intruder")
    assert refused.value.code == "approval-not-found"


def test_an_approval_is_not_used_up_by_a_request_that_did_not_run(
    gateway: Gateway, turn: TurnContext, upstream: Upstream
) -> None:
    # The charge's identity is (booking_id, amount_cents). While the first approved charge is still
    # in flight, a second one with the same identity and another description is approved and sent:
    # its key is taken by a different request, so it does not run, and its approval stays usable.
    first = fetch_json(gateway, turn, charge())["error"]["approval_id"]
    gateway.approvals.decide(turn.tenant, first, approve=True, by="ops")
    upstream.recorder.hold = threading.Event()
    running = threading.Thread(target=fetch_json, args=(gateway, turn, charge()))
    running.start()
    assert upstream.recorder.received.wait(10)
    other = charge(description="Two nights, paid twice")
    second = fetch_json(gateway, turn, other)["error"]["approval_id"]
    gateway.approvals.decide(turn.tenant, second, approve=True, by="ops")
    refused = fetch_json(gateway, turn, other)
    upstream.recorder.hold.set()
    running.join(10)
    assert refused["error"]["code"] in ("idempotency-mismatch", "idempotency-conflict")
    assert gateway.approvals.get(turn.tenant, second).state == "approved"
    assert len(upstream.recorder.charges) == 1
