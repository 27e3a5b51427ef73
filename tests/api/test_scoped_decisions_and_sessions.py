"""Deciding approvals needs an ``approve`` token, through the API and the console alike; console sessions
live on the server, so a copied cookie stops working after sign-out or after its token is revoked."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select
from tests.api.test_token_scopes import console_session
from tests.gateway.wire import fetch_json

from skillhouse.api.console.sessions import SESSION_COOKIE
from skillhouse.compiler import compile_dir
from skillhouse.gateway import ApprovalStore, BoundReleases, Gateway, GatewayConfig, TurnContext
from skillhouse.store.console_tables import ConsoleSessionRow

Headers = dict[str, str]
HOLLOWBROOK = Path(__file__).resolve().parents[2] / "examples" / "hollowbrook"
CHARGE = {"method": "POST", "url": "http://hollowbrook.local:8084/charges", "headers": {"Content-Type": "application/json"},
          "body": json.dumps({"amount_cents": 1200, "booking_id": "b1", "description": "One night"})}


def held_charge(app: FastAPI, tenant: str = "acme") -> str:
    """A charge the real gateway holds for approval (held before anything is sent: no house needed)."""
    compiled, errors = compile_dir(HOLLOWBROOK)
    assert compiled is not None, errors
    gateway = Gateway(app.state.database, GatewayConfig(resolve={("hollowbrook.local", 8084): "127.0.0.1:9"}))
    try:
        answer = fetch_json(gateway, TurnContext(tenant, "turn-held", BoundReleases([compiled.document])), CHARGE)
    finally:
        gateway.close()
    assert answer["error"]["code"] == "approval-required", answer
    return str(answer["error"]["approval_id"])


def state_of(app: FastAPI, approval_id: str) -> str:
    return ApprovalStore(app.state.database).get("acme", approval_id).state


def token_id_of(client: TestClient, admin: Headers, headers: Headers) -> int:
    hint = headers["Authorization"].removeprefix("Bearer ")[:10]
    return next(t["id"] for t in client.get("/v1/tokens", headers=admin).json()["data"] if t["hint"] == hint)


def test_a_run_token_reads_approvals_but_cannot_decide_them_over_the_api(
        app: FastAPI, client: TestClient, token_for: Callable[..., Headers], acme: Headers) -> None:
    approval_id = held_charge(app)
    runner, approver = token_for("acme", "run"), token_for("acme", "approve")
    assert client.get(f"/v1/approvals/{approval_id}", headers=runner).json()["state"] == "pending"
    for action in ("approve", "deny"):
        refused = client.post(f"/v1/approvals/{approval_id}/{action}", headers=runner)
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == "insufficient-scope"
    assert state_of(app, approval_id) == "pending"
    approved = client.post(f"/v1/approvals/{approval_id}/approve", headers=approver)
    assert approved.status_code == 200 and approved.json()["state"] == "approved"
    assert approved.json()["decided_by"] == f"api, token #{token_id_of(client, acme, approver)}"


def test_a_run_token_cannot_approve_through_the_console_and_sees_no_buttons(
        app: FastAPI, client: TestClient, token_for: Callable[..., Headers], acme: Headers) -> None:
    approval_id = held_charge(app)
    browser, csrf = console_session(app, token_for("acme", "run"))
    page = browser.get(f"/console/approvals/{approval_id}")
    assert page.status_code == 200
    assert 'action="/console/approvals/' not in page.text and "cannot decide approvals" in page.text
    assert '<strong id="session-scope">run</strong>' in page.text
    for action in ("approve", "deny"):
        refused = browser.post(f"/console/approvals/{approval_id}/{action}", data={"csrf": csrf}, follow_redirects=False)
        assert refused.status_code == 403 and "insufficient-scope" in refused.text
    assert state_of(app, approval_id) == "pending"
    approver_headers = token_for("acme", "approve")
    approver, approver_csrf = console_session(app, approver_headers)
    assert f'action="/console/approvals/{approval_id}/approve"' in approver.get(f"/console/approvals/{approval_id}").text
    decided = approver.post(f"/console/approvals/{approval_id}/approve", data={"csrf": approver_csrf}, follow_redirects=False)
    assert decided.status_code == 303 and state_of(app, approval_id) == "approved"
    decider = ApprovalStore(app.state.database).get("acme", approval_id).decided_by
    assert decider is not None and decider.startswith(f"console, token #{token_id_of(client, acme, approver_headers)}")


def test_a_cookie_copied_before_sign_out_signs_no_one_in_afterwards(
        app: FastAPI, token_for: Callable[..., Headers]) -> None:
    approval_id = held_charge(app)
    browser, csrf = console_session(app, token_for("acme", "approve"))
    copied = browser.cookies.get(SESSION_COOKIE, path="/console")
    assert copied is not None
    assert browser.post("/console/sign-out", data={"csrf": csrf}, follow_redirects=False).status_code == 303
    replay = TestClient(app, base_url="http://testserver")
    replay.cookies.set(SESSION_COOKIE, copied, path="/console")
    page = replay.get("/console/approvals", follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"].startswith("/console/sign-in?")
    forged = replay.post(f"/console/approvals/{approval_id}/approve", data={"csrf": csrf}, follow_redirects=False)
    assert forged.status_code == 303 and forged.headers["location"].startswith("/console/sign-in")
    assert state_of(app, approval_id) == "pending"
    with app.state.database.sessions() as session:
        assert all(row.ended_at is not None for row in session.scalars(select(ConsoleSessionRow)))


def test_revoking_a_token_over_the_api_ends_its_console_sessions(
        app: FastAPI, client: TestClient, token_for: Callable[..., Headers], acme: Headers) -> None:
    headers = token_for("acme", "approve")
    first, _ = console_session(app, headers)
    second, _ = console_session(app, headers)
    assert first.get("/console/skills", follow_redirects=False).status_code == 200
    token_id = token_id_of(client, acme, headers)
    assert client.post(f"/v1/tokens/{token_id}/revoke", headers=acme).status_code == 200
    for browser in (first, second):
        assert browser.get("/console/skills", follow_redirects=False).status_code == 303
    with app.state.database.sessions() as session:
        rows = session.scalars(select(ConsoleSessionRow).where(ConsoleSessionRow.token_id == token_id)).all()
    assert len(rows) == 2 and all(row.ended_at is not None for row in rows)


def test_tokens_are_created_with_a_scope_run_unless_asked_and_listed_with_it(
        client: TestClient, acme: Headers) -> None:
    plain = client.post("/v1/tokens", json={"label": "agent"}, headers=acme)
    approver = client.post("/v1/tokens", json={"label": "ops", "scope": "approve"}, headers=acme)
    assert plain.status_code == 201 and plain.json()["scope"] == "run"
    assert approver.status_code == 201 and approver.json()["scope"] == "approve"
    listed = {t["label"]: t["scope"] for t in client.get("/v1/tokens", headers=acme).json()["data"]}
    assert listed == {"": "admin", "agent": "run", "ops": "approve"}
    refused = client.post("/v1/tokens", json={"scope": "root"}, headers=acme)
    assert refused.status_code == 422 and refused.json()["error"]["problems"][0]["path"] == "scope"
    made = {"Authorization": f"Bearer {plain.json()['token']}"}
    assert client.get("/v1/skills", headers=made).status_code == 200
    assert client.post("/v1/tokens", json={"scope": "admin"}, headers=made).json()["error"]["code"] == "insufficient-scope"
