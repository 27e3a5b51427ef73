"""Turns, calls, approvals and credentials through the HTTP API, against the real Hollowbrook house.

The app's gateway reaches the house on loopback through ``SKILLHOUSE_RESOLVE``-style settings
(``hollowbrook.local:8084`` mapped to the house's port); nothing leaves the machine.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient
from tests.hollowbrook import running_hollowbrook
from tests.real_parts import guest_cache, postgres_url
from tests.scratch import scratch_database

from skillhouse.api import create_app
from skillhouse.examples import HollowbrookHTTPServer
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings

Headers = dict[str, str]
CANARY = "canary-7f3e9b1c-never-shown"
BOOKING = {"room_id": 2, "guest_name": "Ada Lovelace", "arrival": "2030-05-01", "departure": "2030-05-03"}


@pytest.fixture
def house() -> Iterator[HollowbrookHTTPServer]:
    with running_hollowbrook() as server:
        yield server


# The default guest (the wasm component, from SKILLHOUSE_GUEST_CACHE) on both databases; the
# in-process guest once, so the two runners are held to the same answers.
@pytest.fixture(params=[("sqlite", "wasm"), ("postgresql", "wasm"), ("sqlite", "inprocess")], ids="-".join)
def client(request: pytest.FixtureRequest, tmp_path: Path, house: HollowbrookHTTPServer) -> Iterator[TestClient]:
    kind, guest = request.param
    server = postgres_url() if kind == "postgresql" else None
    with scratch_database(kind, tmp_path, server) as database:
        settings = Settings(data_dir=tmp_path, database_url=database.url, guest=guest, guest_cache=guest_cache(),
                            model="scripted",
                            resolve={("hollowbrook.local", 8084): f"127.0.0.1:{house.port}"},
                            secret_key=Fernet.generate_key().decode())
        app = create_app(settings, database)
        with TestClient(app) as test_client:
            yield test_client
        app.state.gateway.close() if hasattr(app.state, "gateway") else None


@pytest.fixture
def token_for(client: TestClient) -> Callable[[str], Headers]:
    def make(tenant: str) -> Headers:
        with client.app.state.database.transaction() as session:  # type: ignore[attr-defined]
            secret, _ = create_token(session, tenant, scope="admin")
        return {"Authorization": f"Bearer {secret}"}

    return make


@pytest.fixture
def acme(token_for: Callable[[str], Headers], client: TestClient, hollowbrook_files: dict[str, str]) -> Headers:
    headers = token_for("acme")
    base = "/v1/skills/hollowbrook/versions/1.0.0"
    assert client.put(base, json={"files": hollowbrook_files}, headers=headers).status_code == 200
    assert client.post(f"{base}/validate", headers=headers).status_code == 200
    assert client.post(f"{base}/publish", headers=headers).status_code == 201
    return headers


@pytest.fixture
def globex(token_for: Callable[[str], Headers]) -> Headers:
    return token_for("globex")


def bind(client: TestClient, headers: Headers, profile: str = "anthropic") -> dict[str, Any]:
    response = client.post("/v1/turns", json={"skills": [{"name": "hollowbrook", "version": "1.0.0"}], "profile": profile},
                           headers=headers)
    assert response.status_code == 201, response.text
    turn: dict[str, Any] = response.json()
    return turn


def call(client: TestClient, headers: Headers, turn_id: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    response = client.post(f"/v1/turns/{turn_id}/calls", json={"tool": tool, "arguments": arguments}, headers=headers)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def charge_of(booking: dict[str, Any], amount: int | None = None) -> dict[str, Any]:
    return {"booking_id": booking["booking_id"], "amount_cents": amount or booking["total_cents"],
            "description": "Two nights"}


def test_a_turn_binds_a_published_release_and_offers_its_tools_in_the_profile(client: TestClient, acme: Headers) -> None:
    turn = bind(client, acme, "anthropic")
    assert turn["releases"][0]["skill"] == "hollowbrook" and turn["releases"][0]["digest"].startswith("sha256:")
    names = {tool["name"] for tool in turn["tools"]}
    assert {"hollowbrook_create_booking", "hollowbrook_charge", "read_object"} <= names
    assert all("input_schema" in tool for tool in turn["tools"])  # Anthropic's wire format
    assert client.get(f"/v1/turns/{turn['id']}", headers=acme).json() == turn


def test_binding_reports_every_problem_with_its_path(client: TestClient, acme: Headers) -> None:
    body = {"skills": [{"name": "hollowbrook", "version": "9.9.9"}, {"name": "hollowbrook", "version": "1.0.0"},
                       {"name": "hollowbrook", "version": "1.0.0"}]}
    refused = client.post("/v1/turns", json=body, headers=acme)
    assert refused.status_code == 422
    assert [(p["path"], p["code"]) for p in refused.json()["error"]["problems"]] == [
        ("skills.0", "unknown-release"), ("skills.1.name", "duplicate-skill"), ("skills.2.name", "duplicate-skill")]


def test_builtin_skills_bind_for_every_tenant(client: TestClient, globex: Headers) -> None:
    response = client.post("/v1/turns", json={"skills": [{"name": "github-coding", "version": "1"}]}, headers=globex)
    assert response.status_code == 201, response.text
    assert "github-coding_get_issue" in {tool["function"]["name"] for tool in response.json()["tools"]}


def test_another_tenants_turn_is_not_found_and_cannot_be_called(client: TestClient, acme: Headers, globex: Headers) -> None:
    turn = bind(client, acme)
    assert client.get(f"/v1/turns/{turn['id']}", headers=globex).status_code == 404
    refused = client.post(f"/v1/turns/{turn['id']}/calls", json={"tool": "hollowbrook_list_rooms"}, headers=globex)
    assert (refused.status_code, refused.json()["error"]["code"]) == (404, "not-found")
    # globex cannot bind acme's release either
    assert client.post("/v1/turns", json={"skills": [{"name": "hollowbrook", "version": "1.0.0"}]},
                       headers=globex).status_code == 422


def test_a_call_answers_what_the_guest_answers_and_a_resent_booking_is_replayed(
    client: TestClient, acme: Headers, house: HollowbrookHTTPServer
) -> None:
    turn = bind(client, acme)
    rooms = call(client, acme, turn["id"], "hollowbrook_list_rooms", {})
    assert rooms["status"] == 200 and "replayed" not in rooms
    first = call(client, acme, turn["id"], "hollowbrook_create_booking", BOOKING)
    again = call(client, acme, turn["id"], "hollowbrook_create_booking", BOOKING)
    assert first["status"] == 201 and again["replayed"] is True and again["body"] == first["body"]
    assert len(house.house.bookings()) == 1
    wrong = call(client, acme, turn["id"], "hollowbrook_create_booking", {"room_id": "two", "extra": 1})
    assert wrong["error"]["code"] == "invalid-arguments"
    assert {v["path"] for v in wrong["error"]["violations"]} >= {"$.room_id", "$.extra"}
    unknown = client.post(f"/v1/turns/{turn['id']}/calls", json={"tool": "hollowbrook_create_bookings", "arguments": BOOKING},
                          headers=acme)
    assert unknown.status_code == 422 and unknown.json()["error"]["code"] == "tool-not-offered"
    assert "hollowbrook_create_booking" in unknown.json()["error"]["problems"][0]["message"]


def test_a_held_charge_runs_once_when_approved_and_a_changed_one_needs_its_own_approval(
    client: TestClient, acme: Headers, globex: Headers, house: HollowbrookHTTPServer
) -> None:
    turn = bind(client, acme)
    booking = json.loads(call(client, acme, turn["id"], "hollowbrook_create_booking", BOOKING)["body"])
    held = call(client, acme, turn["id"], "hollowbrook_charge", charge_of(booking))["error"]
    assert held["code"] == "approval-required" and house.house.charges() == []
    approval_id = held["approval_id"]

    pending = client.get("/v1/approvals", params={"state": "pending"}, headers=acme).json()["data"]
    assert [a["id"] for a in pending] == [approval_id]
    shown = client.get(f"/v1/approvals/{approval_id}", headers=acme).json()
    assert shown["commitment"].startswith("sha256:") and shown["turn_id"] == turn["id"]
    # the approver reads the body's exact text: what is sent
    assert shown["request"]["method"] == "POST" and json.loads(shown["request"]["body"]["text"])["amount_cents"] == booking["total_cents"]
    assert shown["expires_at"] > shown["created_at"]
    for path in (f"/v1/approvals/{approval_id}", "/v1/approvals"):
        other = client.get(path, headers=globex)
        assert other.status_code == 404 or other.json()["data"] == []
    assert client.post(f"/v1/approvals/{approval_id}/approve", headers=globex).status_code == 404

    approved = client.post(f"/v1/approvals/{approval_id}/approve", headers=acme)
    assert approved.status_code == 200 and approved.json()["state"] == "approved"
    assert client.post(f"/v1/approvals/{approval_id}/deny", headers=acme).json()["error"]["code"] == "approval-not-pending"
    ran = call(client, acme, turn["id"], "hollowbrook_charge", charge_of(booking))
    again = call(client, acme, turn["id"], "hollowbrook_charge", charge_of(booking))
    assert ran["status"] == 201 and again["replayed"] is True
    assert len(house.house.charges()) == 1
    assert client.get(f"/v1/approvals/{approval_id}", headers=acme).json()["state"] == "used"

    changed = call(client, acme, turn["id"], "hollowbrook_charge", charge_of(booking, amount=100))["error"]
    assert changed["code"] == "approval-required" and changed["approval_id"] != approval_id
    assert len(house.house.charges()) == 1


def test_a_denied_charge_is_refused_when_retried_and_never_runs(
    client: TestClient, acme: Headers, house: HollowbrookHTTPServer
) -> None:
    turn = bind(client, acme)
    booking = json.loads(call(client, acme, turn["id"], "hollowbrook_create_booking", BOOKING)["body"])
    approval_id = call(client, acme, turn["id"], "hollowbrook_charge", charge_of(booking))["error"]["approval_id"]
    denied = client.post(f"/v1/approvals/{approval_id}/deny", headers=acme)
    assert denied.status_code == 200 and denied.json()["state"] == "denied"
    retried = call(client, acme, turn["id"], "hollowbrook_charge", charge_of(booking))["error"]
    assert (retried["code"], retried["approval_id"]) == ("approval-denied", approval_id)
    assert client.post(f"/v1/approvals/{approval_id}/approve", headers=acme).status_code == 409
    assert house.house.charges() == []


def test_a_credential_is_write_only_and_never_shown(client: TestClient, acme: Headers, globex: Headers) -> None:
    put = client.put("/v1/credentials", json={"origin": "http://hollowbrook.local:8084", "allow_http": True,
                                              "scheme": "bearer", "value": CANARY}, headers=acme)
    assert put.status_code == 200 and put.json() == {
        "origin": "http://hollowbrook.local:8084", "host": "hollowbrook.local", "port": 8084, "header": "authorization",
        "scheme": "bearer", "allow_http": True, "client": None}
    listed = client.get("/v1/credentials", headers=acme)
    assert listed.json()["data"] == [put.json()] and CANARY not in listed.text
    assert client.get("/v1/credentials", headers=globex).json()["data"] == []
    turn = bind(client, acme)
    answer = client.post(f"/v1/turns/{turn['id']}/calls", json={"tool": "hollowbrook_list_rooms"}, headers=acme)
    assert answer.json()["status"] == 200 and CANARY not in answer.text
    gone = "/v1/credentials/hollowbrook.local:8084/authorization?origin_scheme=http"
    assert client.delete(gone, headers=globex).status_code == 404
    assert client.delete(gone.partition("?")[0], headers=acme).status_code == 404  # https://hollowbrook.local:8084
    assert client.delete(gone, headers=acme).status_code == 204
    assert client.get("/v1/credentials", headers=acme).json()["data"] == []
    bad = client.put("/v1/credentials", json={"host": "x.test", "scheme": "header", "value": CANARY}, headers=acme)
    assert bad.status_code == 422 and CANARY not in bad.text


def test_the_allow_list_and_tenant_gates_are_the_tenants_own(client: TestClient, acme: Headers, globex: Headers) -> None:
    hosts = client.put("/v1/egress/allowed-hosts", json={"hosts": ["API.example.com", "files.example.com:8443"]}, headers=acme)
    assert hosts.json() == {"hosts": ["api.example.com", "files.example.com:8443"]}
    assert client.get("/v1/egress/allowed-hosts", headers=globex).json() == {"hosts": []}
    gates = client.put("/v1/egress/gates", json={"gates": [{"matches": "POST /bookings", "reason": "all bookings"}]},
                       headers=acme)
    assert gates.json()["gates"] == [{"matches": "POST /bookings", "reason": "all bookings"}]
    turn = bind(client, acme)
    held = call(client, acme, turn["id"], "hollowbrook_create_booking", BOOKING)
    assert held["error"]["code"] == "approval-required"
    assert client.get("/v1/egress/gates", headers=globex).json() == {"gates": []}


# POST /v1/turns/{id}/run: the agent loop with the deployment's model (scripted here).


def tool_results(transcript: dict[str, Any], tool: str) -> list[Any]:
    names = {c["id"]: c["name"] for m in transcript["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []}
    return [json.loads(m["content"]) for m in transcript["messages"] if m["role"] == "tool" and names.get(m["tool_call_id"]) == tool]


def test_the_scripted_demo_books_once_and_holds_the_charge(client: TestClient, acme: Headers, house: HollowbrookHTTPServer) -> None:
    turn = bind(client, acme)
    response = client.post(f"/v1/turns/{turn['id']}/run", json={"prompt": "Book a double room."}, headers=acme)
    assert response.status_code == 200, response.text
    transcript = response.json()
    assert transcript["stopped"] == "answer"
    bookings = tool_results(transcript, "hollowbrook_create_booking")
    assert [b.get("replayed", False) for b in bookings] == [False, True]
    assert len(house.house.bookings()) == 1
    (charge,) = tool_results(transcript, "hollowbrook_charge")
    assert charge["error"]["code"] == "approval-required"
    assert house.house.charges() == []
    assert charge["error"]["approval_id"] in transcript["final"]


def test_a_run_needs_a_prompt_or_messages_and_a_known_turn(client: TestClient, acme: Headers, globex: Headers) -> None:
    turn = bind(client, acme)
    assert client.post(f"/v1/turns/{turn['id']}/run", json={}, headers=acme).status_code == 422
    assert client.post(f"/v1/turns/{turn['id']}/run", json={"prompt": "hi"}, headers=globex).status_code == 404
