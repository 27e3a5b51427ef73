"""What ``/metrics`` reads from the gateway: the approvals pending and keys unresolved over every tenant,
and each decision's outcome code told to the gateway's observers."""

from __future__ import annotations

from tests.gateway.test_approvals import charge
from tests.gateway.upstream_server import Upstream
from tests.gateway.wire import fetch_json

from skillhouse.gateway import Gateway, TurnContext
from skillhouse.gateway.waiting import Waiting, waiting
from skillhouse.store.database import Database


def test_a_held_request_is_pending_until_a_person_decides(gateway: Gateway, turn: TurnContext, database: Database) -> None:
    assert waiting(database) == Waiting(approvals_pending=0, keys_unresolved=0)
    held = fetch_json(gateway, turn, charge())
    assert waiting(database).approvals_pending == 1
    gateway.approvals.decide(turn.tenant, held["error"]["approval_id"], True, "ops")
    assert waiting(database) == Waiting(approvals_pending=0, keys_unresolved=0)


def test_every_decision_is_told_to_the_observers_with_its_code(
    gateway: Gateway, turn: TurnContext, upstream: Upstream
) -> None:
    told: list[str] = []
    gateway.observers.append(lambda code, seconds: told.append(code) if seconds >= 0 else None)
    fetch_json(gateway, turn, charge())
    fetch_json(gateway, turn, {"method": "GET", "url": "http://elsewhere.example/x", "headers": {}, "body": None})
    assert told == ["approval-required", "egress-refused"]
