"""``/api/runtime/tools/execute`` runs a built-in capability's declared operation through the guest and gateway.

The upstream is a loopback HTTPS server answering as api.github.com and api.resend.com (its own test
CA, reached through a fixed resolution); the credential comes from a stored binding named by
``secrets_ref`` and never shows up in an answer, even when the upstream echoes it.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient
from tests.api.tls_upstream import NAMES, Received, running_tls_upstream, write_test_pki
from tests.gateway.oauth_server import Client, authorization_server
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



@pytest.mark.parametrize("guest", ["wasm", "inprocess"])
def test_a_call_acts_for_the_subject_it_names(guest: str, tmp_path: Path) -> None:
    """``subject`` is to ``tools/execute`` what it is to a bound turn: a call to an ``oauth2-authorization-code``
    binding sends that person's own access token, and answers ``connection-required`` (nothing sent) for a
    person without a connection or a call that names nobody. The authorization server is https too (an https
    API's binding refuses a plain-http token endpoint), under its own test CA."""
    secret = "gh-app-client-secret-never-shown"
    redirect = "https://testserver/v1/connections/callback"
    (tmp_path / "auth").mkdir()
    auth_ca, leaf, key = write_test_pki(tmp_path / "auth", ("auth.local", "localhost"))
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(leaf, key)
    with running_tls_upstream(tmp_path) as (port, ca, received), \
            authorization_server([Client("gh-app", secret, ("repo",), (redirect,))], tls=tls) as auth, \
            scratch_database("sqlite", tmp_path) as database:
        both = tmp_path / "both-ca.pem"
        both.write_bytes(ca.read_bytes() + auth_ca.read_bytes())
        settings = Settings(data_dir=tmp_path, database_url=database.url, guest=guest, upstream_ca=both,
                            guest_cache=guest_cache(), secret_key=Fernet.generate_key().decode(),
                            resolve={**{(name, 443): f"127.0.0.1:{port}" for name in NAMES},
                                     ("auth.local", auth.port): f"127.0.0.1:{auth.port}"})
        app = create_app(settings, database)
        with database.transaction() as session:
            headers = {"Authorization": f"Bearer {create_token(session, 'acme', scope='admin')[0]}"}
        with TestClient(app) as client:
            bound = client.put("/v1/credentials", headers=headers, json={
                "origin": "https://api.github.com", "scheme": "oauth2-authorization-code", "value": secret,
                "client_id": "gh-app", "scopes": ["repo"], "redirect_uri": redirect,
                "authorization_url": f"https://localhost:{auth.port}/authorize",
                "token_url": f"https://auth.local:{auth.port}/token"})
            assert bound.status_code == 200, bound.text
            call = {**GITHUB, "operation": "get_issue",
                    "arguments": {"owner": "octo", "repo": "hello", "issue_number": 5}}
            nobody = client.post(EXECUTE, json=call, headers=headers)
            assert nobody.json()["result"]["error"]["code"] == "connection-required", nobody.text
            first = client.post(EXECUTE, json={**call, "subject": "ada@example.com"}, headers=headers)
            required = first.json()["result"]["error"]
            assert required["code"] == "connection-required" and received.requests == []
            consent = httpx.get(required["connect_url"], headers={"X-Person": "ada"}, verify=ssl.create_default_context(cafile=auth_ca), timeout=10)
            assert consent.status_code == 302, consent.text
            connected = client.get(consent.headers["location"])
            assert connected.status_code == 200, connected.text
            acting = client.post(EXECUTE, json={**call, "subject": "ada@example.com"}, headers=headers)
            assert acting.json()["result"]["status"] == 200, acting.text
            (sent,) = received.requests
            (issued,) = auth.issued.tokens
            assert sent["headers"]["authorization"] == f"Bearer {issued['access_token']}"
            other = client.post(EXECUTE, json={**call, "subject": "grace"}, headers=headers)
            assert other.json()["result"]["error"]["code"] == "connection-required" and len(received.requests) == 1
            spaced = client.post(EXECUTE, json={**call, "subject": " ada"}, headers=headers)
            assert spaced.status_code == 422 and spaced.json()["error"]["code"] == "invalid-subject"
            for answer in (nobody, first, acting, other):
                assert secret not in answer.text and issued["access_token"] not in answer.text
        app.state.gateway.close()
