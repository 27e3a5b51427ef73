"""Unresolved idempotency keys through the HTTP API: listed, cleared once by a person (audited), and the
request runs again; one tenant's hanging upstream leaves another tenant's calls and API requests alone.

The app's gateway reaches a misbehaving loopback upstream (``tests/gateway/hostile_upstream.py``) as
``hollowbrook.local:8084``; nothing leaves the machine.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.api.served import serving_in_thread
from tests.gateway.hostile_upstream import Hostile
from tests.real_parts import postgres_url
from tests.scratch import scratch_database

from skillhouse.api import create_app
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings

Headers = dict[str, str]
BOOKING = {"room_id": 2, "arrival": "2030-05-01", "departure": "2030-05-03"}
KEYS = "/v1/idempotency-keys"


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    with Hostile() as server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def app(request: pytest.FixtureRequest, tmp_path: Path, hostile: Hostile) -> Iterator[FastAPI]:
    server = postgres_url() if request.param == "postgresql" else None
    with scratch_database(request.param, tmp_path, server) as database:
        settings = Settings(data_dir=tmp_path, database_url=database.url, guest="inprocess",
                            resolve={("hollowbrook.local", 8084): f"127.0.0.1:{hostile.port}"},
                            secret_key=Fernet.generate_key().decode(), tenant_upstream_calls=2,
                            tenant_slot_wait_seconds=0.2)  # fmt: skip
        app = create_app(settings, database)
        yield app
        if hasattr(app.state, "gateway"):
            app.state.gateway.close()


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as test_client:
        yield test_client


@pytest.fixture
def tenant(app: FastAPI, hollowbrook_files: dict[str, str]) -> Callable[[str, str], tuple[Headers, str]]:
    """A token (with ``label``) for ``name``, with Hollowbrook published and bound to a new turn; (headers, turn id)."""

    def make(name: str, label: str = "") -> tuple[Headers, str]:
        with app.state.database.transaction() as session:
            secret, _ = create_token(session, name, label, scope="admin")
        headers = {"Authorization": f"Bearer {secret}"}
        with TestClient(app) as client:
            base = "/v1/skills/hollowbrook/versions/1.0.0"
            assert client.put(base, json={"files": hollowbrook_files}, headers=headers).status_code == 200
            assert client.post(f"{base}/validate", headers=headers).status_code == 200
            assert client.post(f"{base}/publish", headers=headers).status_code == 201
            turn = client.post("/v1/turns", json={"skills": [{"name": "hollowbrook", "version": "1.0.0"}]}, headers=headers)
            assert turn.status_code == 201, turn.text
        return headers, str(turn.json()["id"])

    return make


def book(client: TestClient | httpx.Client, headers: Headers, turn_id: str, guest: str) -> dict[str, Any]:
    body = {"tool": "hollowbrook_create_booking", "arguments": {**BOOKING, "guest_name": guest}}
    response = client.post(f"/v1/turns/{turn_id}/calls", json=body, headers=headers)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_an_unresolved_key_is_listed_cleared_once_with_who_cleared_it_and_the_request_runs_again(
    client: TestClient, hostile: Hostile, tenant: Callable[[str, str], tuple[Headers, str]]
) -> None:
    acme, turn_id = tenant("acme", "ops-alice")
    globex, _ = tenant("globex", "")
    hostile.mode = "close"  # reads the booking, then hangs up: did it happen? nobody knows
    lost = book(client, acme, turn_id, "Ada")["error"]
    assert lost["code"] == "upstream-unresolved"
    key = lost["idempotency_key"]
    listed = client.get(KEYS, params={"state": "unresolved"}, headers=acme).json()["data"]
    assert [(k["key"], k["state"], k["operation"]) for k in listed] == [(key, "unresolved", "hollowbrook.create_booking")]
    assert "response" not in listed[0]
    assert client.get(KEYS, params={"state": "unresolved"}, headers=globex).json()["data"] == []
    assert client.delete(f"{KEYS}/{key}", headers=globex).json()["error"]["code"] == "idempotency-key-not-found"
    hostile.mode = "ok"
    assert book(client, acme, turn_id, "Ada")["error"]["code"] == "upstream-unresolved"
    assert len(hostile.requests) == 1  # never resent while unresolved
    cleared = client.delete(f"{KEYS}/{key}", headers=acme)
    assert cleared.status_code == 200, cleared.text
    assert cleared.json()["key"] == key and cleared.json()["cleared_by"].endswith("(ops-alice)")
    assert client.delete(f"{KEYS}/{key}", headers=acme).status_code == 404  # cleared once
    assert book(client, acme, turn_id, "Ada")["status"] == 201
    assert len(hostile.bookings) == 1
    done = client.delete(f"{KEYS}/{key}", headers=acme)
    assert done.status_code == 409 and done.json()["error"]["code"] == "idempotency-key-not-unresolved"
    audit = client.get(f"{KEYS}/clearings", headers=acme).json()["data"]
    assert [(c["key"], c["cleared_by"]) for c in audit] == [(key, cleared.json()["cleared_by"])]
    assert client.get(f"{KEYS}/clearings", headers=globex).json()["data"] == []


def test_a_malformed_key_or_state_is_a_located_422(client: TestClient, tenant: Callable[[str, str], tuple[Headers, str]]) -> None:
    acme, _ = tenant("acme", "")
    assert client.delete(f"{KEYS}/not-a-key", headers=acme).json()["error"]["problems"][0]["path"] == "key"
    assert client.get(KEYS, params={"state": "lost"}, headers=acme).json()["error"]["problems"][0]["path"] == "state"


def test_a_tenant_whose_upstream_hangs_is_busy_while_another_tenants_calls_go_through(
    app: FastAPI, hostile: Hostile, tenant: Callable[[str, str], tuple[Headers, str]]
) -> None:
    acme, acme_turn = tenant("acme", "")
    globex, globex_turn = tenant("globex", "")
    hostile.mode = "hang"
    hostile.by_guest = {"Grace": "ok"}
    with serving_in_thread(app) as url, httpx.Client(base_url=url, timeout=60) as http:
        hanging = [threading.Thread(target=book, args=(http, acme, acme_turn, name)) for name in ("Ada", "Alan")]
        for thread in hanging:
            thread.start()
        for _ in range(100):  # until both of acme's slots hold a call the upstream is sitting on
            if len(hostile.requests) == 2:
                break
            hostile.received.wait(0.1)
            hostile.received.clear()
        assert len(hostile.requests) == 2
        busy = book(http, acme, acme_turn, "Edsger")["error"]
        assert busy["code"] == "tenant-busy" and busy["sent"] is False
        assert book(http, globex, globex_turn, "Grace")["status"] == 201
        assert http.get(KEYS, headers=globex).status_code == 200
        assert len(hostile.requests) == 3  # Edsger's booking never left
        hostile.release.set()
        for thread in hanging:
            thread.join(30)
