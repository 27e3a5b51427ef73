"""Through the HTTP API: a raw ``fetch_url`` that lands on a declared operation is that operation, and
``/calls`` runs only the tools the turn offers.

``POST /v1/turns/{id}/run`` runs the guest's agent loop with a model behind the OpenAI adapter whose
answers a fake provider on loopback plays (``SKILLHOUSE_MODEL=openai:...``, ``OPENAI_BASE_URL``): the
model composes the charge itself with ``fetch_url``, spelled the ways that once reached the house with
no approval. Against the real Hollowbrook house, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient
from tests.hollowbrook import running_hollowbrook
from tests.host.models.fake_provider import FakeProvider, fake_provider
from tests.real_parts import postgres_url
from tests.scratch import scratch_database

from skillhouse.api import create_app
from skillhouse.examples import HollowbrookHTTPServer
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings

Headers = dict[str, str]
BOOKING = {"room_id": 2, "guest_name": "Ada Lovelace", "arrival": "2030-05-01", "departure": "2030-05-03"}
HOUSE = "http://hollowbrook.local:8084"


@pytest.fixture
def house() -> Iterator[HollowbrookHTTPServer]:
    with running_hollowbrook() as server:
        yield server


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with fake_provider() as fake:
        yield fake


@pytest.fixture(params=["sqlite", "postgresql"])
def client(request: pytest.FixtureRequest, tmp_path: Path, house: HollowbrookHTTPServer,
           provider: FakeProvider) -> Iterator[TestClient]:  # fmt: skip
    server = postgres_url() if request.param == "postgresql" else None
    with scratch_database(request.param, tmp_path, server) as database:
        settings = Settings(data_dir=tmp_path, database_url=database.url, guest="inprocess", model="openai:small-model",
                            openai_base_url=f"{provider.url}/v1", openai_api_key="sk-test",
                            resolve={("hollowbrook.local", 8084): f"127.0.0.1:{house.port}"},
                            secret_key=Fernet.generate_key().decode())  # fmt: skip
        app = create_app(settings, database)
        with TestClient(app) as test_client:
            yield test_client
        app.state.gateway.close() if hasattr(app.state, "gateway") else None


@pytest.fixture
def acme(client: TestClient, hollowbrook_files: dict[str, str]) -> Headers:
    with client.app.state.database.transaction() as session:  # type: ignore[attr-defined]
        secret, _ = create_token(session, "acme", scope="admin")
    headers = {"Authorization": f"Bearer {secret}"}
    base = "/v1/skills/hollowbrook/versions/1.0.0"
    assert client.put(base, json={"files": hollowbrook_files}, headers=headers).status_code == 200
    assert client.post(f"{base}/validate", headers=headers).status_code == 200
    assert client.post(f"{base}/publish", headers=headers).status_code == 201
    return headers


@pytest.fixture
def turn_id(client: TestClient, acme: Headers) -> str:
    response = client.post("/v1/turns", json={"skills": [{"name": "hollowbrook", "version": "1.0.0"}]}, headers=acme)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion", "model": "small-model",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}]}  # fmt: skip


def fetch_call(call_id: str, method: str, url: str, body: dict[str, Any]) -> dict[str, Any]:
    arguments = {"method": method, "url": url, "headers": {"Content-Type": "application/json"}, "body": json.dumps(body)}
    return {"id": call_id, "type": "function", "function": {"name": "fetch_url", "arguments": json.dumps(arguments)}}


def run_with(client: TestClient, acme: Headers, turn_id: str, provider: FakeProvider, calls: list[dict[str, Any]]) -> list[Any]:
    """Run the turn with a model that makes ``calls`` (one step each), then answers; each call's result."""
    for call in calls:
        provider.reply(completion({"content": None, "tool_calls": [call]}))
    provider.reply(completion({"content": "Done."}))
    response = client.post(f"/v1/turns/{turn_id}/run", json={"prompt": "Charge the stay."}, headers=acme)
    assert response.status_code == 200, response.text
    transcript = response.json()
    assert transcript["stopped"] == "answer", transcript
    return [json.loads(m["content"]) for m in transcript["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("path", ["/x/../charges", "/./charges", "/charges/.", "/%63harges", "/%63%68arges/", "/a/b/../../charges"])
def test_a_charge_composed_with_fetch_url_in_any_spelling_is_held_for_approval(
    client: TestClient, acme: Headers, turn_id: str, provider: FakeProvider, house: HollowbrookHTTPServer, path: str
) -> None:
    charge = {"booking_id": "b1", "amount_cents": 123456, "description": "anything"}
    (result,) = run_with(client, acme, turn_id, provider, [fetch_call("c1", "POST", HOUSE + path, charge)])
    assert result["error"]["code"] == "approval-required"
    assert house.house.charges() == []
    approval = client.get(f"/v1/approvals/{result['error']['approval_id']}", headers=acme).json()
    assert approval["operation"] == "hollowbrook.charge"
    assert approval["request"]["url"].startswith(HOUSE) and "." not in approval["request"]["url"][len(HOUSE):]


def test_spellings_servers_disagree_on_are_refused_and_nothing_reaches_the_house(
    client: TestClient, acme: Headers, turn_id: str, provider: FakeProvider, house: HollowbrookHTTPServer
) -> None:
    charge = {"booking_id": "b1", "amount_cents": 1, "description": "x"}
    paths = ["/%2e%2e/charges", "/x%2F..%2Fcharges", "//charges", "/charges;a=b", "/x\\..\\charges"]
    results = run_with(client, acme, turn_id, provider, [fetch_call(f"c{i}", "POST", HOUSE + p, charge) for i, p in enumerate(paths)])
    assert [(r["error"]["code"], r["error"]["field"]) for r in results] == [("invalid-request", "url")] * len(paths)
    assert house.house.charges() == []
    assert client.get("/v1/approvals", headers=acme).json()["data"] == []


def test_a_booking_composed_with_fetch_url_gets_the_operations_identity(
    client: TestClient, acme: Headers, turn_id: str, provider: FakeProvider, house: HollowbrookHTTPServer
) -> None:
    booked = client.post(f"/v1/turns/{turn_id}/calls", json={"tool": "hollowbrook_create_booking", "arguments": BOOKING},
                         headers=acme).json()  # fmt: skip
    assert booked["status"] == 201
    by_hand = dict(sorted(BOOKING.items()))  # the guest's own bytes: sorted keys, compact
    call = fetch_call("c1", "POST", HOUSE + "/rooms/../%62ookings", by_hand)
    call["function"]["arguments"] = json.dumps({**json.loads(call["function"]["arguments"]),
                                               "body": json.dumps(by_hand, separators=(",", ":"))})  # fmt: skip
    (again,) = run_with(client, acme, turn_id, provider, [call])
    # the model reads the body parsed; the API answers it exactly
    assert again["replayed"] is True and again["body"] == json.loads(booked["body"])
    assert len(house.house.bookings()) == 1


@pytest.mark.parametrize("tool", ["fetch_url", "load_tools", "create_booking", "hollowbrook_create_bookings"])
def test_calls_refuses_a_tool_the_turn_does_not_offer(
    client: TestClient, acme: Headers, turn_id: str, house: HollowbrookHTTPServer, tool: str
) -> None:
    arguments = {"method": "POST", "url": HOUSE + "/charges", "body": "{}"} if tool == "fetch_url" else BOOKING
    response = client.post(f"/v1/turns/{turn_id}/calls", json={"tool": tool, "arguments": arguments}, headers=acme)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "tool-not-offered"
    assert house.house.bookings() == [] and house.house.charges() == []
