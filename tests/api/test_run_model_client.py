"""``POST /v1/turns/{id}/run`` with a provider model (``SKILLHOUSE_MODEL=openai:...`` against a fake provider on
loopback): the app keeps one model client, so runs share the provider connection and none is left open when the
app stops; and a loop that uses every step says so in the spelling the loop and the API's schema share."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from fastapi import FastAPI
from fastapi.testclient import TestClient
from tests.host.models.fake_provider import FakeProvider, fake_provider
from tests.scratch import scratch_database

from skillhouse.api import create_app
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings

Headers = dict[str, str]
DONE = {"id": "c", "object": "chat.completion", "model": "small-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"}]}


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with fake_provider() as fake:
        yield fake


@pytest.fixture
def app(tmp_path: Path, provider: FakeProvider) -> Iterator[FastAPI]:
    with scratch_database("sqlite", tmp_path) as database:
        settings = Settings(data_dir=tmp_path, database_url=database.url, guest="inprocess", model="openai:small-model",
                            openai_base_url=f"{provider.url}/v1", secret_key=Fernet.generate_key().decode())
        app = create_app(settings, database)
        yield app
        app.state.gateway.close() if hasattr(app.state, "gateway") else None


def bound_turn(app: FastAPI, client: TestClient, files: dict[str, str]) -> tuple[Headers, str]:
    with app.state.database.transaction() as session:
        secret, _ = create_token(session, "acme", scope="admin")
    headers = {"Authorization": f"Bearer {secret}"}
    base = "/v1/skills/hollowbrook/versions/1.0.0"
    assert client.put(base, json={"files": files}, headers=headers).status_code == 200
    assert client.post(f"{base}/validate", headers=headers).status_code == 200
    assert client.post(f"{base}/publish", headers=headers).status_code == 201
    turn = client.post("/v1/turns", json={"skills": [{"name": "hollowbrook", "version": "1.0.0"}]}, headers=headers)
    assert turn.status_code == 201, turn.text
    return headers, str(turn.json()["id"])


def test_runs_share_one_model_client_and_the_app_closes_it_when_it_stops(
    app: FastAPI, provider: FakeProvider, hollowbrook_files: dict[str, str]
) -> None:
    with TestClient(app) as client:
        headers, turn_id = bound_turn(app, client, hollowbrook_files)
        for _ in range(3):
            provider.reply(DONE)
            run = client.post(f"/v1/turns/{turn_id}/run", json={"prompt": "Hello."}, headers=headers)
            assert (run.status_code, run.json()["stopped"]) == (200, "answer")
        # three runs, one connection: the client (and its pool) was built once, not per run
        assert len(provider.received) == 3 and len({request.peer for request in provider.received}) == 1
        assert provider.closed == []
    # the app stopped: its model client closed the connection
    assert provider.connection_closed.wait(10)
    assert provider.closed == [provider.received[0].peer]


def test_a_run_that_uses_every_step_stopped_at_the_step_limit(
    app: FastAPI, provider: FakeProvider, hollowbrook_files: dict[str, str]
) -> None:
    load = {"id": "l1", "type": "function",
            "function": {"name": "load_tools", "arguments": json.dumps({"names": ["list_rooms"]})}}
    provider.reply({**DONE, "choices": [{"index": 0, "finish_reason": "tool_calls",
                                        "message": {"role": "assistant", "content": None, "tool_calls": [load]}}]})
    with TestClient(app) as client:
        headers, turn_id = bound_turn(app, client, hollowbrook_files)
        run = client.post(f"/v1/turns/{turn_id}/run", json={"prompt": "Hello.", "max_steps": 1}, headers=headers)
        schema = client.get("/openapi.json").json()["components"]["schemas"]["RunOut"]["properties"]["stopped"]
    assert run.status_code == 200, run.text
    assert (run.json()["stopped"], run.json()["steps"]) == ("step-limit", 1)
    assert "step-limit" in schema["enum"] and "max-steps" not in json.dumps(schema)
