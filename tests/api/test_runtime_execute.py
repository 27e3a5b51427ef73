"""``/api/runtime/tools/execute`` runs a built-in capability's declared operation through the guest and gateway.

The upstream is a loopback HTTPS server answering as api.github.com and api.resend.com (its own test
CA, reached through a fixed resolution); the credential comes from a stored binding named by
``secrets_ref`` and never shows up in an answer, even when the upstream echoes it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient
from tests.api.tls_upstream import NAMES, Received, running_tls_upstream
from tests.real_parts import guest_cache
from tests.scratch import scratch_database

from skillhouse.api import create_app
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings

EXECUTE = "/api/runtime/tools/execute"
CANARY = "ghp_canary0123456789never-shown"
GITHUB = {"tool_pack": "coding.v1", "manifest_ref": {"integration_id": "github.primary"}}
RESEND = {"tool_pack": "comms.v1", "manifest_ref": {"integration_id": "resend.primary"}}
Headers = dict[str, str]


# the default guest (the wasm component) and the in-process one give the same answers
@pytest.fixture(params=["wasm", "inprocess"])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[TestClient, Headers, Received]]:
    with running_tls_upstream(tmp_path) as (port, ca, received), scratch_database("sqlite", tmp_path) as database:
        settings = Settings(data_dir=tmp_path, database_url=database.url, guest=request.param, upstream_ca=ca,
                            guest_cache=guest_cache(),
                            resolve={(name, 443): f"127.0.0.1:{port}" for name in NAMES},
                            secret_key=Fernet.generate_key().decode())
        app = create_app(settings, database)
        with database.transaction() as session:
            secret, _ = create_token(session, "acme", scope="admin")
        with TestClient(app) as client:
            yield client, {"Authorization": f"Bearer {secret}"}, received
        app.state.gateway.close()


def bind_github_token(client: TestClient, headers: Headers) -> None:
    put = client.put("/v1/credentials", json={"host": "api.github.com", "scheme": "bearer", "value": CANARY},
                     headers=headers)
    assert put.status_code == 200, put.text


def test_get_issue_runs_as_declared_with_the_bound_credential_redacted_from_the_answer(
    world: tuple[TestClient, Headers, Received]
) -> None:
    client, headers, received = world
    bind_github_token(client, headers)
    body = {**GITHUB, "operation": "get_issue", "secrets_ref": "api.github.com/authorization",
            "arguments": {"owner": "octo", "repo": "hello", "issue_number": 42}}
    response = client.post(EXECUTE, json=body, headers=headers)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["tool"] == "github-coding_get_issue" and answer["resolved"]["source"] == "builtin"
    assert answer["result"]["status"] == 200
    assert json.loads(answer["result"]["body"])["number"] == 42
    assert CANARY not in response.text
    (request,) = received.requests
    assert (request["method"], request["host"], request["path"]) == ("GET", "api.github.com", "/repos/octo/hello/issues/42")
    assert request["headers"]["authorization"] == f"Bearer {CANARY}"
    assert request["headers"]["accept"] == "application/vnd.github+json"


def test_secrets_ref_must_name_a_binding_for_the_operations_host(world: tuple[TestClient, Headers, Received]) -> None:
    client, headers, received = world
    body: dict[str, Any] = {**GITHUB, "operation": "get_issue",
                            "arguments": {"owner": "octo", "repo": "hello", "issue_number": "1"}}
    unknown = client.post(EXECUTE, json={**body, "secrets_ref": "api.github.com/authorization"}, headers=headers)
    assert (unknown.status_code, unknown.json()["error"]["problems"][0]["code"]) == (422, "unknown-secret")
    elsewhere = client.post(EXECUTE, json={**body, "secrets_ref": "api.resend.com"}, headers=headers)
    assert elsewhere.json()["error"]["problems"][0] == {
        "path": "secrets_ref", "code": "secret-host-mismatch", "message": "bind a credential to api.github.com"}
    assert received.requests == []


def test_a_resent_email_is_sent_once_and_the_retry_is_a_replay(world: tuple[TestClient, Headers, Received]) -> None:
    client, headers, received = world
    email = {"from": "inn@hollowbrook.example", "to": ["ada@example.com"], "subject": "Your booking",
             "text": "See you on the first."}
    first, again = (client.post(EXECUTE, json={**RESEND, "operation": "send_email", "arguments": email}, headers=headers)
                    for _ in range(2))
    assert first.json()["result"]["status"] == 200 and "replayed" not in first.json()["result"]
    assert again.json()["result"]["replayed"] is True and again.json()["result"]["body"] == first.json()["result"]["body"]
    (sent,) = received.emails()
    assert sent["headers"]["idempotency-key"] and json.loads(sent["body"])["to"] == ["ada@example.com"]


def test_a_capability_without_a_declared_operation_answers_501(world: tuple[TestClient, Headers, Received]) -> None:
    client, headers, _ = world
    manifest = {"manifest_version": "coding.integration.v1", "integration_id": "github.mine", "provider": "github",
                "status": "active", "tool_pack": "coding.v1", "capabilities": ["create_issue"]}
    response = client.post(EXECUTE, json={"tool_pack": "coding.v1", "operation": "create_issue", "manifest": manifest},
                           headers=headers)
    assert (response.status_code, response.json()["error"]["code"]) == (501, "capability-not-declared")


def test_secrets_ref_with_a_header_injects_that_binding_alone(world: tuple[TestClient, Headers, Received]) -> None:
    client, headers, received = world
    bind_github_token(client, headers)
    other = client.put("/v1/credentials", json={"host": "api.github.com", "scheme": "header", "header": "X-Other-Key",
                                                "value": "other-secret-never-sent"}, headers=headers)
    assert other.status_code == 200, other.text
    arguments = {"owner": "octo", "repo": "hello", "issue_number": 7}
    narrowed = client.post(EXECUTE, json={**GITHUB, "operation": "get_issue", "arguments": arguments,
                                          "secrets_ref": "api.github.com/authorization"}, headers=headers)
    assert narrowed.status_code == 200, narrowed.text
    whole_host = client.post(EXECUTE, json={**GITHUB, "operation": "get_issue", "arguments": arguments,
                                            "secrets_ref": "api.github.com"}, headers=headers)
    assert whole_host.status_code == 200, whole_host.text
    first, second = received.requests
    assert first["headers"]["authorization"] == f"Bearer {CANARY}" and "x-other-key" not in first["headers"]
    assert second["headers"]["x-other-key"] == "other-secret-never-sent"
