"""A deployment names its model: without ``SKILLHOUSE_MODEL``, ``POST /v1/turns/{id}/run`` answers
``503 model-not-configured`` saying what to set, never a scripted plan in place of a model."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

Headers = dict[str, str]


def test_a_run_without_a_configured_model_answers_model_not_configured_naming_the_variable(
    client: TestClient, acme: Headers, hollowbrook_files: dict[str, Any]
) -> None:
    base = "/v1/skills/hollowbrook/versions/1.0.0"
    assert client.put(base, json={"files": hollowbrook_files}, headers=acme).status_code == 200
    assert client.post(f"{base}/validate", headers=acme).status_code == 200
    assert client.post(f"{base}/publish", headers=acme).status_code == 201
    turn = client.post("/v1/turns", json={"skills": [{"name": "hollowbrook", "version": "1.0.0"}]}, headers=acme)
    assert turn.status_code == 201, turn.text

    run = client.post(f"/v1/turns/{turn.json()['id']}/run", json={"prompt": "Book a room."}, headers=acme)

    assert run.status_code == 503
    error = run.json()["error"]
    assert error["code"] == "model-not-configured"
    assert "SKILLHOUSE_MODEL" in error["message"]
    assert all(spelling in error["message"] for spelling in ("openai:MODEL", "anthropic:MODEL", "scripted"))
