"""``POST /v1/approvals/{id}/deny`` takes an optional reason: kept with the decision, shown on the approval,
and told to the model when the turn asks again; a reason too long is refused where it stands."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.api.test_scoped_decisions_and_sessions import CHARGE, HOLLOWBROOK, held_charge
from tests.gateway.wire import fetch_json

from skillhouse.compiler import compile_dir
from skillhouse.gateway import BoundReleases, Gateway, GatewayConfig, TurnContext
from skillhouse.gateway.approvals import NOTE_LIMIT

Headers = dict[str, str]


def test_a_denial_with_a_reason_is_on_the_approval_and_told_to_the_model(
        app: FastAPI, client: TestClient, token_for: Callable[..., Headers]) -> None:
    approval_id = held_charge(app)
    approver = token_for("acme", "approve")
    too_long = client.post(f"/v1/approvals/{approval_id}/deny", headers=approver, json={"reason": "x" * (NOTE_LIMIT + 1)})
    assert too_long.status_code == 422
    denied = client.post(f"/v1/approvals/{approval_id}/deny", headers=approver, json={"reason": "Wrong booking."})
    assert denied.status_code == 200
    assert (denied.json()["state"], denied.json()["note"]) == ("denied", "Wrong booking.")
    assert isinstance(denied.json()["decided_at"], float)

    compiled, _ = compile_dir(HOLLOWBROOK)
    assert compiled is not None
    gateway = Gateway(app.state.database, GatewayConfig(resolve={("hollowbrook.local", 8084): "127.0.0.1:9"}))
    try:
        again = fetch_json(gateway, TurnContext("acme", "turn-held", BoundReleases([compiled.document])), CHARGE)
    finally:
        gateway.close()
    assert again["error"]["code"] == "approval-denied"
    assert again["error"]["reason"] == "Wrong booking."


def test_a_denial_without_a_body_still_works(app: FastAPI, client: TestClient, token_for: Callable[..., Headers]) -> None:
    approval_id = held_charge(app)
    denied = client.post(f"/v1/approvals/{approval_id}/deny", headers=token_for("acme", "approve"))
    assert denied.status_code == 200 and denied.json()["note"] is None
